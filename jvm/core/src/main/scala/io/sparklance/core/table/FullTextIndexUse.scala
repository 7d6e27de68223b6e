package io.sparklance.core.table

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.index.{FtsParams, FtsQuery, FuzzyExpansion, IndexKind, IndexMetadata, InvertedIndex}

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

  /** The segments of this index in `snapshot`: its INVERTED indexes of this name on this column. */
  def segments(snapshot: Snapshot): Seq[IndexMetadata] = snapshot.schema.field(column).toSeq.flatMap { f =>
    snapshot.indexes.filter(i => i.kind == IndexKind.Inverted && i.fieldIds == Seq(f.id) && i.name == indexName)
  }

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

  /**
   * `query` with its fuzzy tokens expanded in `use`'s index of `snapshot` (a query that is not fuzzy as it is): the
   * query split by the index's base tokenizer alone, as pylance splits a fuzzy query ([[FtsParams.splitter]]); per
   * query token, the union over the index's partitions of what Lance expands it to in each ([[FuzzyExpansion]]).
   * Two cases pylance answers otherwise are refused rather than answered wrongly: rows appended after the index was
   * built (pylance matches them by the query's own tokens, not their expansions), and an index of several
   * partitions where `max_expansions` cut an expansion (pylance then expands each partition differently).
   */
  def expand(snapshot: Snapshot, use: FullTextIndexUse, query: FtsQuery, function: String): FtsQuery = query match {
    case m @ FtsQuery.Match(text, _, _, Some(fuzzy)) =>
      val segments = use.segments(snapshot)
      def refuse(why: String): Nothing = throw new UnsupportedFeatureException(s"$function on column ${use.column}: " +
        s"fuzzy matching (fuzziness=${fuzzy.fuzziness}) $why. Search with pylance, or without fuzziness.")
      if (snapshot.fragments.exists(f => !segments.exists(_.covers(f.id)))) {
        refuse(s"of rows appended after its full-text index '${use.indexName}' was built is not supported (pylance " +
          "matches those by the query's own tokens); bring the index up to date first with ALTER TABLE ... OPTIMIZE INDEX " +
          s"${use.indexName}")
      }
      val tokens = new java.util.ArrayList[String](java.util.Arrays.asList(use.params.splitter().tokenize(text).texts: _*))
      val expansions = segments.flatMap { i =>
        InvertedIndex.open(snapshot.storage, snapshot.indexDir(i), i.name).partitions.map { p =>
          FuzzyExpansion.of(p.dictionary, tokens, fuzzy.fuzziness, fuzzy.prefixLength, fuzzy.maxExpansions)
        }
      }
      if (expansions.size > 1 && expansions.exists(_.capped)) {
        refuse(s"reached max_expansions=${fuzzy.maxExpansions} in an index of ${expansions.size} partitions, where " +
          "pylance expands each partition apart; raise max_expansions")
      }
      val groups = (0 until tokens.size).map { k =>
        expansions.flatMap(e => e.groups.get(k).toArray(new Array[String](0))).distinct
      }
      m.copy(fuzzy = Some(fuzzy.copy(groups = groups)))
    case other => other
  }
}
