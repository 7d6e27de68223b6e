package io.sparklance.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.sparklance.PlanFrames
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.table.FullTextRanking

/**
 * The other Lance connector's ranked search table functions, registered by [[LanceSqlExtensions]]:
 *
 *  - `search(table, query [, num_results, search_columns, columns, filter, offset, version, with_row_id,
 *    prefilter])`: the `num_results` rows that best match a full-text query, with their BM25 `_score` (float), best
 *    first, as pylance's `to_table(full_text_query=...)` ranks them ([[FullTextRanking]]). `search_columns` are the
 *    text columns searched (every column with a full-text index when absent; a row scores its best column's score).
 *    `filter` (a SQL condition) is applied after the best rows are found, as pylance does by default, so fewer rows
 *    may come back; with `prefilter => true` it is applied first. `offset` skips the first rows of the ranking.
 *    `query` is also `search_query`, and `num_results` also `limit` or `k` (default 10).
 *  - `hybrid_search(table, query_vector, query [, num_results, ...])`: a vector search ([[VectorSearch]]) and a
 *    full-text search of `candidates` rows each (default and least: `num_results + offset`), fused by reciprocal
 *    rank fusion as the other connector documents it: `_relevance_score` = the sum over the searches that found a row
 *    of 1 / (rank + `rrf_k`), ranks 0-based, `rrf_k` 60 by default; `_distance` and `_score` are null for a row the
 *    other search did not find. Both searches read the same version and apply `filter` (before or after, as
 *    `prefilter` says).
 *
 * Positional calls follow the order of [[SearchParameters]] and [[HybridParameters]]: the other connector's short
 * forms `search('lance.db.t', 'query', 5)` and `hybrid_search('lance.db.t', array(...), 'query', 5)` are their
 * first three and four. The table columns come first (or `columns`; `array('*')` is all of them), then the scores,
 * then `_rowid` when `with_row_id` is true or `columns` names it. Rows of equal rank come by row id.
 */
object RankedSearch {
  val SearchName = "search"
  val HybridName = "hybrid_search"

  val SearchParameters: Seq[String] = Seq("table", "query", "num_results", "search_columns", "columns", "filter",
    "offset", "version", "with_row_id", "prefilter")

  val HybridParameters: Seq[String] = Seq("table", "query_vector", "query", "num_results", "vector_column",
    "search_columns", "columns", "candidates", "rrf_k", "filter", "offset", "version", "distance_type", "nprobes", "ef",
    "refine_factor", "lower_bound", "upper_bound", "bypass_vector_index", "prefilter", "with_row_id")

  private val SearchAliases = Map("search_query" -> "query", "limit" -> "num_results", "k" -> "num_results")
  private val HybridAliases = SearchAliases ++ Map("num_candidates" -> "candidates", "candidate_count" -> "candidates")

  /** The vector search's arguments a hybrid search passes on as they are. */
  private val VectorArguments = Seq("vector_column", "distance_type", "nprobes", "ef", "refine_factor", "lower_bound",
    "upper_bound", "bypass_vector_index", "filter", "prefilter")

  /** The plan of a `search` call. */
  def searchPlan(args: Seq[Expression]): LogicalPlan = LanceSparkException.translate {
    val a = TableFunctionArguments.of(SearchName, args, SearchParameters, SearchAliases, Seq("table", "query"))
    val call = new Call(SparkSession.active, SearchName, a)
    call.plan(call.textHits(call.k + call.offset), Seq(call.score), call.byScore, skip = call.offset, postfilter = true)
  }

  /** The plan of a `hybrid_search` call. */
  def hybridPlan(args: Seq[Expression]): LogicalPlan = LanceSparkException.translate {
    val a = TableFunctionArguments.of(HybridName, args, HybridParameters, HybridAliases,
      Seq("table", "query_vector", "query"))
    new Call(SparkSession.active, HybridName, a).hybrid()
  }

  private final class Call(spark: SparkSession, function: String, a: TableFunctionArguments) {
    private val table = CatalystSqlParser.parseMultipartIdentifier(a.string("table").get)
    val k: Int = a.positive("num_results").getOrElse(10)
    val offset: Int = a.count("offset").getOrElse(0)
    private val query = a.string("query").get
    private val prefilter = a.bool("prefilter").getOrElse(false)
    private val filterText = a.string("filter")
    private val filter = filterText.map { f =>
      try CatalystSqlParser.parseExpression(f)
      catch { case e: Exception => a.invalid(s"filter '$f' is not a SQL condition: ${e.getMessage.linesIterator.next()}") }
    }

    // Resolved once: every search of the call reads this version.
    private val relation = SearchTables.relation(spark, table, a.version("version"))
    private val snapshot = relation.collectFirst { case r: DataSourceV2Relation => r.table }
      .collect { case t: LanceTable => t.snapshot }
      .getOrElse(a.invalid(s"${table.mkString(".")} is not a Lance table."))
    private val attrs = relation.output.dropRight(2)
    private val rowId = relation.output(attrs.size).asInstanceOf[AttributeReference]
    private val resolver = spark.sessionState.conf.resolver

    private val requested = a.strings("columns").map(cs => if (cs == Seq("*")) attrs.map(_.name) else cs)
    private val withRowId = a.bool("with_row_id").getOrElse(false) || requested.exists(_.exists(resolver(_, "_rowid")))
    private val wanted = requested.getOrElse(attrs.map(_.name)).filterNot(resolver(_, "_rowid")).map { c =>
      attrs.find(x => resolver(x.name, c)).getOrElse(a.invalid(s"'$c' in columns is not a column of " +
        s"${table.mkString(".")}; its columns are ${attrs.map(_.name).mkString(", ")}."))
    }
    private val searchColumns = a.strings("search_columns").getOrElse(Nil).map { c =>
      attrs.find(x => resolver(x.name, c)).map(_.name).getOrElse(a.invalid(s"'$c' in search_columns is not a column " +
        s"of ${table.mkString(".")}; its columns are ${attrs.map(_.name).mkString(", ")}."))
    }

    val score: AttributeReference = AttributeReference("_score", FloatType, nullable = false)()
    private val hitId = AttributeReference("__sparklance_hit", LongType, nullable = false)()
    def byScore: Seq[SortOrder] = Seq(SortOrder(score, Descending), SortOrder(rowId, Ascending))

    /** The row ids the filter keeps, when it is applied first. */
    private lazy val allowed: Option[Roaring64NavigableMap] = if (!prefilter) None else filterText.map { f =>
      val ids = new Roaring64NavigableMap()
      spark.sql(s"SELECT _rowid FROM ${SearchTables.sqlName(table)} VERSION AS OF '${snapshot.version}' WHERE $f")
        .collect().foreach(r => ids.addLong(r.getLong(0)))
      ids
    }

    /** The best `count` rows for the full-text query: row id and score. */
    def textHits(count: Int): Seq[InternalRow] =
      FullTextRanking.search(snapshot, searchColumns, query, count, allowed, function)
        .map(h => InternalRow(h.rowId, h.score))

    /**
     * The table's rows of `hits` (each its row id, then the values of `scores`), the filter applied unless it was
     * applied first (and `postfilter`), ordered by `order`, the first `skip` skipped: the table columns asked for,
     * `scores`, and `_rowid` when asked for.
     */
    def plan(hits: Seq[InternalRow], scores: Seq[AttributeReference], order: Seq[SortOrder], skip: Int,
        postfilter: Boolean): LogicalPlan = {
      val ids = hits.map(_.getLong(0)).distinct
      val taken = Filter(if (ids.isEmpty) Literal.FalseLiteral else In(rowId, ids.map(Literal(_))), relation)
      val found = LocalRelation(hitId +: scores, hits)
      val joined: LogicalPlan = Join(taken, found, Inner, Some(EqualTo(rowId, hitId)), JoinHint.NONE)
      val filtered = if (postfilter && !prefilter) filter.fold(joined)(Filter(_, joined)) else joined
      val sorted = Sort(order, global = true, filtered)
      val skipped = if (skip == 0) sorted else Offset(Literal(skip), sorted)
      Project(wanted ++ scores ++ (if (withRowId) Seq(rowId) else Nil), skipped)
    }

    /** The hybrid search: both searches' `candidates` best rows, fused, the `num_results` best after `offset`. */
    def hybrid(): LogicalPlan = {
      val candidates = math.max(a.positive("candidates").getOrElse(0).toLong, k.toLong + offset).min(Int.MaxValue).toInt
      val rrfK = a.double("rrf_k").getOrElse(60.0)
      if (rrfK.isNaN || rrfK < 0) a.invalid(s"argument 'rrf_k' must be 0 or more, not $rrfK.")
      val (vector, batch) = VectorSearch.queryVectors(a.raw("query_vector").get)
      if (batch) a.invalid("a hybrid search takes one query vector, not an array of them.")
      // The vector search, of the same version, with the filter as asked; its rows nearest first.
      val vectorArgs: Map[String, (Any, DataType)] = VectorArguments.flatMap(n => a.raw(n).map(n -> _)).toMap ++ Map(
        "table" -> ((UTF8String.fromString(a.string("table").get), StringType)),
        "num_results" -> ((java.lang.Long.valueOf(candidates.toLong), LongType)),
        "version" -> ((java.lang.Long.valueOf(snapshot.version), LongType)),
        "columns" -> ((new GenericArrayData(Array.empty[Any]), ArrayType(StringType))),
        "with_row_id" -> ((java.lang.Boolean.TRUE, BooleanType)))
      val nearest = PlanFrames.of(spark, VectorSearch.planOf(spark, vectorArgs, vector.head)).collect()
        .map(r => (r.getAs[Long]("_rowid"), r.getAs[Float]("_distance"))).sortBy { case (id, d) => (d, id) }
      // The full-text search, its filter applied after it unless applied first, best first.
      val text = textHits(candidates).map(r => (r.getLong(0), r.getFloat(1)))
      val matched = if (prefilter || filter.isEmpty) text else {
        val ids = PlanFrames.of(spark, Project(Seq(rowId), Filter(filter.get, Filter(
          if (text.isEmpty) Literal.FalseLiteral else In(rowId, text.map(t => Literal(t._1))), relation)))).collect()
          .map(_.getLong(0)).toSet
        text.filter(t => ids.contains(t._1))
      }
      val fused = new java.util.HashMap[java.lang.Long, Array[Any]]()
      def entry(id: Long): Array[Any] = fused.computeIfAbsent(id, _ => Array[Any](null, null, 0.0))
      nearest.zipWithIndex.foreach { case ((id, d), rank) =>
        val e = entry(id); e(0) = d; e(2) = e(2).asInstanceOf[Double] + 1.0 / (rank + rrfK)
      }
      matched.zipWithIndex.foreach { case ((id, s), rank) =>
        val e = entry(id); e(1) = s; e(2) = e(2).asInstanceOf[Double] + 1.0 / (rank + rrfK)
      }
      val ranked = Seq.newBuilder[(Long, Array[Any])]
      fused.forEach((id, e) => ranked += ((id.longValue(), e)))
      val best = ranked.result().sortBy { case (id, e) => (-e(2).asInstanceOf[Double], id) }.slice(offset, offset + k)
      val distance = AttributeReference("_distance", FloatType, nullable = true)()
      val textScore = AttributeReference("_score", FloatType, nullable = true)()
      val relevance = AttributeReference("_relevance_score", FloatType, nullable = false)()
      val rows = best.map { case (id, e) => InternalRow(id, e(0), e(1), e(2).asInstanceOf[Double].toFloat) }
      plan(rows, Seq(distance, textScore, relevance), Seq(SortOrder(relevance, Descending), SortOrder(rowId, Ascending)),
        skip = 0, postfilter = false)
    }
  }
}
