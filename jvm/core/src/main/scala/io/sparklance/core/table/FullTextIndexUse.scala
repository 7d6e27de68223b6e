package io.sparklance.core.table

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.index.{FtsParams, FtsQuery, IndexKind}

/**
 * The INVERTED index a full-text query on a column uses: its text analysis ([[FtsParams]]), by which the query and
 * every row's text are tokenized. As in pylance (and the other connector), a full-text query needs such an index on
 * its column; rows the index does not cover yet (appended after it was built) are analysed the same way, and deleted
 * rows are never read. See docs/reading.md, "Full-text search".
 */
final class FullTextIndexUse private (val column: String, val indexName: String, val params: FtsParams)
    extends Serializable {
  /** Checks that `query` can run on this index: a phrase needs positions in the index (`with_position`). */
  def check(query: FtsQuery, function: String): Unit = query match {
    case _: FtsQuery.Phrase if !params.withPosition =>
      throw new InvalidArgumentException(s"$function on column $column: its full-text index '$indexName' was built " +
        "without positions (with_position = false), which phrase queries need. Rebuild the index with " +
        "with_position = true.")
    case _ =>
  }

  /** A matcher of `query` under this index's analysis (one per thread). */
  def matcher(query: FtsQuery): FtsQuery.Matcher = new FtsQuery.Matcher(query, params.tokenizer())

  override def toString: String = s"INVERTED index '$indexName' on $column"
}

object FullTextIndexUse {
  /** The full-text index on `column` of `snapshot`; `function` names the caller in the error when there is none. */
  def plan(snapshot: Snapshot, column: String, function: String): FullTextIndexUse = {
    val index = snapshot.schema.field(column).toSeq.flatMap { f =>
      snapshot.indexes.filter(i => i.kind == IndexKind.Inverted && i.fieldIds == Seq(f.id))
    }.headOption.getOrElse(throw new InvalidArgumentException(s"$function: column $column of ${snapshot.root} has " +
      "no full-text (INVERTED) index, which full-text search needs (as in pylance and the other Lance connector). " +
      s"Create one: ALTER TABLE ... CREATE INDEX ${column}_idx USING fts ($column), or with pylance's " +
      s"create_scalar_index('$column', 'INVERTED')."))
    new FullTextIndexUse(column, index.name, FtsParams.read(snapshot.storage, snapshot.indexDir(index), index.name))
  }
}
