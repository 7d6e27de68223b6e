package io.sparklance.core.table

import scala.collection.mutable

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.BigIntVector
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.MetadataColumn
import io.sparklance.core.index.{IndexKind, InvertedIndex}

/**
 * Ranked full-text search: the rows of a table version that best match a query on text columns with full-text
 * (INVERTED) indexes, by BM25 score, as pylance 14's `to_table(full_text_query=...)` ranks them (measured against it,
 * docs/full-text-search.md "Ranked search"):
 *
 *  - the query is analysed by each column's index and matches a row holding any of its tokens (Lance's `MatchQuery`
 *    with operator OR); a row's score is the largest of its columns' scores;
 *  - a row of a fragment the index covers is scored from the index alone, its segments together
 *    ([[InvertedIndex.scores]]: its documents, deleted ones included, make the statistics);
 *  - a row of a fragment the index does not cover (appended after it was built) is scored as Lance's flat search
 *    scores it: with statistics of the index's documents and of those rows together, counting only the live rows
 *    there that have a token (and, when the search is restricted first, only the rows allowed);
 *  - deleted rows and rows not in `allowed` are never returned; a query with no token matches nothing.
 *
 * The hits are the best `count`, highest score first; rows of equal score (pylance orders them as it finds them)
 * come by row id.
 */
object FullTextRanking {

  /** A row found: its `_rowid` (the row address, or the stable row id on tables with them) and its score. */
  final case class Hit(rowId: Long, score: Float)

  /**
   * The best `count` rows of `snapshot` for `query` on `columns` (every column with a full-text index when empty).
   * `allowed` holds the only row ids that may be returned, when the caller filters first; `function` names the
   * caller in errors.
   */
  def search(snapshot: Snapshot, columns: Seq[String], query: String, count: Int,
      allowed: Option[Roaring64NavigableMap], function: String): IndexedSeq[Hit] = {
    val searched = if (columns.nonEmpty) columns else indexedColumns(snapshot, function)
    val best = new java.util.HashMap[java.lang.Long, java.lang.Float]()
    searched.distinct.foreach { column =>
      scores(snapshot, column, query, allowed, function).forEach { (id, score) =>
        val was = best.get(id)
        if (was == null || was < score) best.put(id, score)
      }
    }
    val hits = new Array[Hit](best.size)
    var i = 0
    best.forEach { (id, score) => hits(i) = Hit(id, score); i += 1 }
    java.util.Arrays.sort(hits, Ordering.by((h: Hit) => (-h.score, h.rowId)))
    hits.toIndexedSeq.take(count)
  }

  /** The string columns of `snapshot` with a full-text index, in schema order. */
  private def indexedColumns(snapshot: Snapshot, function: String): Seq[String] = {
    val indexed = snapshot.indexes.filter(_.kind == IndexKind.Inverted).flatMap(_.fieldIds).toSet
    val names = snapshot.schema.fields.filter(f => indexed.contains(f.id)).map(_.name)
    if (names.isEmpty) throw new io.sparklance.core.InvalidArgumentException(s"$function: ${snapshot.root} has no " +
      "full-text (INVERTED) index, which full-text search needs. Create one with ALTER TABLE ... CREATE INDEX ... " +
      "USING fts (column), or with pylance's create_scalar_index(column, 'INVERTED').")
    names
  }

  /** The score of every live, allowed row of `snapshot` matching `query` on `column`, by row id. */
  private def scores(snapshot: Snapshot, column: String, query: String, allowed: Option[Roaring64NavigableMap],
      function: String): java.util.HashMap[java.lang.Long, java.lang.Float] = {
    val use = FullTextIndexUse.plan(snapshot, column, function)
    val field = snapshot.schema.field(column).get
    val segments = use.segments(snapshot)
    def covers(f: io.sparklance.core.format.Fragment) = segments.exists(_.covers(f.id))
    val index = InvertedIndex.union(segments.map(s => InvertedIndex.open(snapshot.storage, snapshot.indexDir(s), s.name)))
    val tokenizer = index.params.tokenizer()
    val tokens = tokenizer.tokenize(query).texts.toSeq
    val out = new java.util.HashMap[java.lang.Long, java.lang.Float]()
    if (tokens.isEmpty) return out
    val live = LiveRowIds.of(snapshot, covers)
    index.scores(tokens, all = false, boost = 1.0f).forEach { (id, score) =>
      if (live.contains(id) && allowed.forall(_.contains(id))) out.put(id, score)
    }
    val unindexed = snapshot.fragments.filterNot(covers).map(_.id)
    if (unindexed.nonEmpty) flatScores(snapshot, field, unindexed, index, tokens, tokenizer, allowed, out)
    out
  }

  /**
   * Scores the rows of the `unindexed` fragments holding any of `tokens` into `out`, as Lance's flat search does: the
   * live (and allowed) rows there with at least one token join the index's documents in the statistics.
   */
  private def flatScores(snapshot: Snapshot, field: io.sparklance.core.schema.LanceField, unindexed: Seq[Long],
      index: InvertedIndex, tokens: Seq[String], tokenizer: io.sparklance.core.index.FtsTokenizer,
      allowed: Option[Roaring64NavigableMap], out: java.util.HashMap[java.lang.Long, java.lang.Float]): Unit = {
    val distinct = tokens.distinct.toArray
    val order = tokens.map(t => distinct.indexOf(t)).toArray
    // Per matching row: its row id, its token count and how often it holds each distinct query token.
    val matching = mutable.ArrayBuffer.empty[(Long, Int, Array[Int])]
    val holding = new Array[Long](distinct.length)
    var docs = 0L
    var totalTokens = 0L
    val scan = snapshot.newScan().withProjection(Seq(field)).withMetadataColumns(Seq(MetadataColumn.RowId))
      .withFilters(Seq(Predicate.In(MetadataColumn.FragmentId.name, unindexed)))
    val allocator = new RootAllocator()
    try {
      scan.planTasks(Long.MaxValue).foreach { task =>
        val reader = snapshot.table.read(task, allocator)
        try {
          Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.foreach { batch =>
            try {
              val texts = batch.getVector(field.name)
              val ids = batch.getVector(MetadataColumn.RowId.name).asInstanceOf[BigIntVector]
              var r = 0
              while (r < batch.getRowCount) {
                val id = ids.get(r)
                if (!texts.isNull(r) && allowed.forall(_.contains(id))) {
                  val found = tokenizer.tokenize(FullTextIndexBuild.text(texts, r)).texts
                  if (found.nonEmpty) {
                    docs += 1
                    totalTokens += found.length
                    val counts = distinct.map(t => found.count(_ == t))
                    var k = 0
                    while (k < counts.length) { if (counts(k) > 0) holding(k) += 1; k += 1 }
                    if (counts.exists(_ > 0)) matching += ((id, found.length, counts))
                  }
                }
                r += 1
              }
            } finally batch.close()
          }
        } finally reader.close()
      }
    } finally allocator.close()
    val n = index.numDocs + docs
    val avgdl = InvertedIndex.averageLength(index.totalTokens + totalTokens, n)
    val idf = distinct.indices.map(k => InvertedIndex.idf(n, index.documentFrequency(distinct(k)) + holding(k)))
    matching.foreach { case (id, length, counts) =>
      var score = 0.0f
      order.foreach { k =>
        if (counts(k) > 0) score += idf(k) * InvertedIndex.termWeight(counts(k), length, avgdl)
      }
      out.put(id, score)
    }
  }
}
