package io.sparklance.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.{MultiAlias, UnresolvedAttribute, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.apache.spark.sql.catalyst.plans.Cross
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.sparklance.PlanFrames
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.index.{Distance, IvfIndex, VectorElement}
import io.sparklance.core.schema.LogicalType
import io.sparklance.core.table.VectorIndexUse

/**
 * The `vector_search` table function of [[LanceSqlExtensions]]: the `num_results` rows of a table nearest to a query
 * vector, as the other Lance connector's `VECTOR_SEARCH` returns them, with the arguments named
 * (`table => 'lance.db.items', query_vector => array(...), vector_column => 'emb', num_results => 10`) or
 * positional in the order of [[VectorSearch.Parameters]]:
 *
 * {{{
 *   SELECT * FROM vector_search('lance.db.items', array(0.1, 0.2, 0.3), 'emb', 10, 'cosine')
 *   SELECT * FROM vector_search('lance.db.items', array(0.1, 0.2, 0.3), 10)  -- the other connector's short form
 * }}}
 *
 * The short form of the other connector (table, query vector, number of results: a number third) and a call without
 * `vector_column` search the column `vector`, Lance's default. `limit` and `k` are the other connector's names for
 * `num_results`; its `fast_search` is taken as `false` (every fragment is searched) and refused when `true`.
 *
 * The output is the table's columns (or `columns`), then `_distance` (float, smaller is nearer: Lance's squared
 * `l2`, `cosine` or `dot` distance), then `_rowid` when `with_row_id` is true, nearest first, ties by row id. An array
 * of query vectors searches each: a leading `query_index` column (0-based) numbers them.
 *
 * Without a vector index the search is exact: each task keeps the nearest rows of its split, and Spark merges them
 * (Lance's flat search); a batch is one pass over the table, keeping each query's nearest rows per task. With a
 * vector index pylance built on the column for the distance asked ([[VectorIndexUse]]), the search is pylance's
 * index search, tuned by `nprobes`, `refine_factor` and (HNSW indexes) `ef`;
 * `bypass_vector_index => true` searches exactly. Rows whose vector is
 * null, holds a null or a NaN, or has no cosine (a zero vector) have no distance and are never returned, as in Lance.
 * `filter` (a SQL condition) is applied after the nearest rows are found, as Lance does by default, so fewer than
 * `num_results` rows may come back; with `prefilter => true` it is applied first. `lower_bound` (inclusive) and
 * `upper_bound` (exclusive) keep only distances in that range before the nearest are chosen; `offset` skips the first
 * rows of the result; `version` reads a version or tag of the table.
 */
object VectorSearch {
  val Name = "vector_search"

  /** Partitions an index search probes when the call gives no `nprobes`. */
  val DefaultNprobes = 20

  /** The arguments, in their positional order. */
  val Parameters: Seq[String] = Seq("table", "query_vector", "vector_column", "num_results", "distance_type", "columns",
    "filter", "nprobes", "refine_factor", "ef", "offset", "version", "lower_bound", "upper_bound", "bypass_vector_index",
    "prefilter", "with_row_id", "fast_search")

  /** The other connector's names for `num_results` (its VECTOR_SEARCH page: `num_results`, `limit` or `k`). */
  private val Aliases = Map("limit" -> "num_results", "k" -> "num_results")

  private val Required = Seq("table", "query_vector")

  /** The vector column searched when the call names none: Lance's default. */
  private val DefaultColumn = "vector"

  /** The other connector's positional order: table, query vector, number of results. */
  private val ShortForm = Seq("table", "query_vector", "num_results")

  /** The column of a batch's rows holding the query vector they are measured against. */
  private val QueryColumn = "__sparklance_query"

  /** The plan of one call, from the call's arguments (foldable expressions). */
  def plan(args: Seq[Expression]): LogicalPlan = LanceSparkException.translate {
    val supplied = values(args)
    val (queries, batch) = queryVectors(supplied("query_vector"))
    new Call(SparkSession.active, supplied, queries, batch).plan
  }

  /** The plan of a search of one query vector with `args` (the other arguments, evaluated, by name): [[RankedSearch]]'s hybrid search. */
  private[spark] def planOf(spark: SparkSession, args: Map[String, (Any, DataType)], query: Array[Double]): LogicalPlan = {
    checkNames(args.keys.toSeq)
    new Call(spark, args, Seq(query), batch = false).plan
  }

  /**
   * The search of one query vector as a DataFrame whose plan is built and analysed here, without SQL text to parse:
   * the entry point of the Python `LanceTable.search`, one py4j call. `vector` holds the query's values as
   * little-endian float64s; `arguments` is a JSON object of the table function's other arguments by name (strings,
   * numbers, booleans and, for `columns`, an array of strings; nulls are left out). The checks and the plan are the
   * SQL form's, but for a search its index serves whose rows are few enough to read on the driver: its rows are
   * computed here ([[DriverVectorSearch]]) and the DataFrame is over them, so that collecting it runs no job.
   */
  def search(spark: SparkSession, vector: Array[Byte], arguments: String): DataFrame =
    frame(spark, Seq(doubles(vector, vector.length / 8, 0, "the query vector")), batch = false, arguments)

  /**
   * The search of a batch of query vectors, as [[search]] does one: `vectors` holds the queries' values one query
   * after the other, `dim` each, as little-endian float64s; a leading `query_index` column (0-based) numbers them.
   */
  def searchBatch(spark: SparkSession, vectors: Array[Byte], dim: Int, arguments: String): DataFrame =
    frame(spark, batchQueries(vectors, dim), batch = true, arguments)

  /** The query vectors of a batch: `vectors` holds them one after the other, `dim` little-endian float64s each. */
  private def batchQueries(vectors: Array[Byte], dim: Int): Seq[Array[Double]] = {
    if (dim <= 0 || vectors.isEmpty || vectors.length % (8L * dim) != 0) {
      invalid(s"the query vectors hold ${vectors.length / 8} values, which is not a non-empty batch of vectors of $dim.")
    }
    val count = (vectors.length / (8L * dim)).toInt
    (0 until count).map(i => doubles(vectors, dim, i, s"query vector $i"))
  }

  /**
   * [[search]]'s rows as Arrow IPC stream bytes, with no DataFrame: the entry point of the Python
   * `LanceTable.to_table(nearest=...)`. A search whose rows are computed on the driver ([[DriverVectorSearch]]) is
   * written out as computed, with no Spark planning or collection; any other search runs its plan and its rows are
   * written out alike. The columns are [[search]]'s, each of its Lance type where it has one ([[SearchArrow]]).
   */
  def searchArrow(spark: SparkSession, vector: Array[Byte], arguments: String): Array[Byte] =
    arrow(spark, Seq(doubles(vector, vector.length / 8, 0, "the query vector")), batch = false, arguments)

  /** [[searchBatch]]'s rows as Arrow IPC stream bytes, as [[searchArrow]] gives one query's. */
  def searchBatchArrow(spark: SparkSession, vectors: Array[Byte], dim: Int, arguments: String): Array[Byte] =
    arrow(spark, batchQueries(vectors, dim), batch = true, arguments)

  private def arrow(spark: SparkSession, queries: Seq[Array[Double]], batch: Boolean, arguments: String): Array[Byte] =
    LanceSparkException.translate {
      call(spark, queries, batch, arguments).plan match {
        case local: LocalRelation => SearchArrow.bytes(local.schema, local.data)
        case plan =>
          val executed = PlanFrames.of(spark, plan).queryExecution
          SearchArrow.bytes(executed.analyzed.schema, executed.executedPlan.executeCollect().toSeq)
      }
    }

  private val json = new com.fasterxml.jackson.databind.ObjectMapper()

  private def frame(spark: SparkSession, queries: Seq[Array[Double]], batch: Boolean, arguments: String): DataFrame =
    LanceSparkException.translate(PlanFrames.of(spark, call(spark, queries, batch, arguments).plan))

  /** The call of `arguments` (a JSON object of the arguments by name, but the query vectors), checked. */
  private def call(spark: SparkSession, queries: Seq[Array[Double]], batch: Boolean, arguments: String): Call =
    LanceSparkException.translate {
      val parsed = try json.readValue(arguments, classOf[java.util.LinkedHashMap[String, Any]]) catch {
        case e: com.fasterxml.jackson.core.JsonProcessingException =>
          invalid(s"the arguments $arguments are not a JSON object: ${e.getOriginalMessage}")
      }
      if (parsed == null) invalid(s"the arguments $arguments are not a JSON object.")
      val pairs = parsed.asScala.toSeq.map { case (k, v) =>
        val key = k.toLowerCase(Locale.ROOT)
        Aliases.getOrElse(key, key) -> v
      }
      pairs.find(_._1 == "query_vector").foreach(_ => invalid("the query vectors are given apart from the other arguments."))
      checkNames(pairs.map(_._1))
      val supplied = pairs.collect { case (k, v) if v != null => k -> argument(k, v) }.toMap
      Required.filterNot(k => k == "query_vector" || supplied.contains(k)).foreach(k => invalid(s"the argument '$k' is required."))
      new Call(spark, supplied, queries, batch, onDriver = true)
    }

  /** Query vector `i` of `bytes` (little-endian float64s, `dim` per vector), each value checked to be finite. */
  private def doubles(bytes: Array[Byte], dim: Int, i: Int, what: String): Array[Double] = {
    if (dim == 0 || bytes.length % 8 != 0) invalid(s"$what holds ${bytes.length} bytes, not a non-empty array of float64s.")
    val in = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val out = new Array[Double](dim)
    var j = 0
    while (j < dim) {
      out(j) = in.getDouble((i * dim + j) * 8)
      if (out(j).isNaN || out(j).isInfinite) invalid(s"$what holds ${out(j)} at position $j.")
      j += 1
    }
    out
  }

  /** A value of the entry points' JSON arguments, as the table function's evaluated argument of that kind would be. */
  private def argument(key: String, value: Any): (Any, DataType) = value match {
    case s: String => (UTF8String.fromString(s), StringType)
    case b: java.lang.Boolean => (b, BooleanType)
    case n @ (_: java.lang.Integer | _: java.lang.Long) => (java.lang.Long.valueOf(n.asInstanceOf[Number].longValue()), LongType)
    case d: java.lang.Double => (d, DoubleType)
    case l: java.util.List[_] =>
      val names = l.asScala.map {
        case s: String => UTF8String.fromString(s)
        case other => invalid(s"argument '$key' must be an array of strings; it holds $other.")
      }
      (new GenericArrayData(names.toArray[Any]), ArrayType(StringType))
    case other => invalid(s"argument '$key' is $other, not a string, number, boolean or array of strings.")
  }

  /** Argument name -> value, from named and positional arguments; unknown, repeated or missing ones are errors. */
  private def values(args: Seq[Expression]): Map[String, (Any, DataType)] = {
    val shortForm = (args: Seq[Expression]) =>
      args(2).dataType match { case ByteType | ShortType | IntegerType | LongType => true; case _ => false }
    TableFunctionArguments.of(Name, args, Parameters, Aliases, Required, Some((ShortForm, shortForm))).values
  }

  /** Names given twice, and names of no argument, are errors. */
  private def checkNames(names: Seq[String]): Unit = {
    names.groupBy(identity).collect { case (k, vs) if vs.size > 1 => invalid(s"argument '$k' is given ${vs.size} times.") }
    names.filterNot(Parameters.contains).foreach { k =>
      invalid(s"there is no argument '$k'; the arguments are ${Parameters.mkString(", ")}.")
    }
  }

  /** One query vector, or several (a batch): each a non-empty array of numbers without nulls, all of one length. */
  private[spark] def queryVectors(value: (Any, DataType)): (Seq[Array[Double]], Boolean) = value match {
    case (a: ArrayData, ArrayType(inner: ArrayType, _)) =>
      if (a.numElements() == 0) invalid("argument 'query_vector' is an empty array of query vectors.")
      val qs = (0 until a.numElements()).map { i =>
        if (a.isNullAt(i)) invalid(s"query vector $i of 'query_vector' is null.")
        vector(a.getArray(i), inner.elementType, s"query vector $i of 'query_vector'")
      }
      if (qs.map(_.length).distinct.size > 1) invalid(s"the query vectors have different lengths: ${qs.map(_.length).distinct.mkString(", ")}.")
      (qs, true)
    case (a: ArrayData, ArrayType(et, _)) => (Seq(vector(a, et, "argument 'query_vector'")), false)
    case (_, t) => invalid(s"argument 'query_vector' must be an array of numbers, not ${t.catalogString}.")
  }

  private def vector(a: ArrayData, et: DataType, what: String): Array[Double] = {
    if (!et.isInstanceOf[NumericType]) invalid(s"$what must be an array of numbers, not array<${et.catalogString}>.")
    if (a.numElements() == 0) invalid(s"$what is empty.")
    (0 until a.numElements()).map { i =>
      if (a.isNullAt(i)) invalid(s"$what holds a null at position $i.")
      val x = a.get(i, et) match {
        case d: Decimal => d.toDouble
        case n: java.lang.Number => n.doubleValue()
        case other => invalid(s"$what holds $other at position $i, not a number.")
      }
      if (x.isNaN || x.isInfinite) invalid(s"$what holds $x at position $i.")
      x
    }.toArray
  }

  private def invalid(detail: String): Nothing = throw new InvalidArgumentException(s"$Name: $detail")

  /** One call's arguments, checked, and the plan they make. */
  private final class Call(spark: SparkSession, args: Map[String, (Any, DataType)], requested: Seq[Array[Double]],
      val batch: Boolean, onDriver: Boolean = false) {
    private val arguments = new TableFunctionArguments(Name, args)
    private def get(k: String): Option[(Any, DataType)] = arguments.raw(k)
    private def string(k: String): Option[String] = arguments.string(k)
    private def double(k: String): Option[Double] = arguments.double(k)
    private def bool(k: String): Option[Boolean] = arguments.bool(k)
    private def positive(k: String): Option[Long] = arguments.positive(k).map(_.toLong)

    val table: Seq[String] = CatalystSqlParser.parseMultipartIdentifier(string("table").get)
    val column: String = string("vector_column").getOrElse(DefaultColumn)
    val k: Long = positive("num_results").getOrElse(10L)
    val metric: Distance = Distance.named(string("distance_type").getOrElse("l2"), s"$Name distance_type")
    val offset: Long = arguments.count("offset").getOrElse(0).toLong
    val version: Option[String] = arguments.version("version")
    val lower: Option[Double] = double("lower_bound")
    val upper: Option[Double] = double("upper_bound")
    val prefilter: Boolean = bool("prefilter").getOrElse(false)
    val withRowId: Boolean = bool("with_row_id").getOrElse(false)
    val nprobes: Option[Long] = positive("nprobes")
    val refineFactor: Option[Long] = positive("refine_factor")
    /** The beam width of an HNSW index's graph search; other indexes ignore it. */
    val ef: Option[Long] = positive("ef")
    val bypassIndex: Boolean = bool("bypass_vector_index").getOrElse(false)
    // Lance's fast_search leaves out the fragments no index covers; this search always covers every fragment, which
    // is what fast_search => false asks for.
    if (bool("fast_search").contains(true)) {
      throw new UnsupportedFeatureException(s"$Name: argument fast_search => true (search only the fragments a vector " +
        "index covers) is not supported; sparklance searches every fragment. Leave fast_search out, or set it to false.")
    }
    private val filterText: Option[String] = string("filter")

    val filter: Option[Expression] = filterText.map { f =>
      try CatalystSqlParser.parseExpression(f)
      catch { case e: Exception => invalid(s"filter '$f' is not a SQL condition: ${e.getMessage.linesIterator.next()}") }
    }

    val columns: Option[Seq[String]] = get("columns").map {
      case (a: ArrayData, ArrayType(StringType, _)) =>
        (0 until a.numElements()).map { i =>
          if (a.isNullAt(i)) invalid("argument 'columns' holds a null column name.")
          a.getUTF8String(i).toString
        }
      case (_, t) => invalid(s"argument 'columns' must be an array of column names, not ${t.catalogString}.")
    }

    /**
     * The vector column is there, holds vectors of float or double, and of the query's length when the schema says.
     * Returns its name and the query vectors as Lance measures them: against a column of float16 vectors pylance casts
     * the query to float16 first (through float32), for its flat search, its refine and its index alike.
     */
    private def checkColumn(output: Seq[Attribute]): (String, Seq[Array[Double]]) = {
      val resolver = spark.sessionState.conf.resolver
      val attr = output.find(a => resolver(a.name, column)).getOrElse(
        invalid(s"vector_column '$column'${if (get("vector_column").isEmpty) " (the default when none is given)" else ""} " +
          s"is not a column of ${table.mkString(".")}; its columns are ${output.map(_.name).mkString(", ")}."))
      val logical = if (attr.metadata.contains(SparkSchemas.LogicalTypeKey)) {
        LogicalType.tryParse(attr.metadata.getString(SparkSchemas.LogicalTypeKey))
      } else None
      // Lance measures uint8 vectors (read as arrays of smallint) by hamming only, and hamming only them.
      val uint8 = attr.dataType == ArrayType(ShortType, true) || attr.dataType == ArrayType(ShortType, false)
      val uint8Elements = logical.exists {
        case LogicalType.FixedSizeList(LogicalType.Int(8, false), _) => true
        case _ => false
      }
      attr.dataType match {
        case ArrayType(FloatType | DoubleType, _) if metric != Distance.HAMMING =>
        case ArrayType(FloatType | DoubleType, _) =>
          invalid(s"distance_type 'hamming' measures vectors of uint8; vector_column '$column' is " +
            s"${attr.dataType.catalogString}. Use l2, cosine or dot.")
        case _ if uint8 && uint8Elements && metric == Distance.HAMMING =>
          requested.zipWithIndex.foreach { case (q, i) =>
            q.indices.find(j => q(j) != math.rint(q(j)) || q(j) < 0 || q(j) > 255).foreach { j =>
              invalid(s"query vector $i holds ${q(j)} at position $j; a hamming search of uint8 vectors takes whole " +
                "numbers from 0 to 255.")
            }
          }
        case _ if uint8 && uint8Elements =>
          invalid(s"vector_column '$column' holds vectors of uint8, which Lance measures by distance_type 'hamming' " +
            s"only, not ${metric.lanceName()}.")
        case t => invalid(s"vector_column '$column' is ${t.catalogString}; a vector column is a list of float or double " +
          "(or a fixed-size list of uint8 for hamming).")
      }
      logical.collect { case LogicalType.FixedSizeList(_, dim) if dim != requested.head.length =>
        invalid(s"the query vector has ${requested.head.length} values; vector_column '$column' holds vectors of $dim.")
      }
      val float16 = logical.exists { case LogicalType.FixedSizeList(LogicalType.HalfFloat, _) => true; case _ => false }
      (attr.name, if (float16) requested.map(VectorElement.FLOAT16.query) else requested)
    }

    // The table's columns keep the qualifier `__sparklance_t` through every node below the output, where they are
    // named with it: a column added here cannot take their place.
    private val qualifier = "__sparklance_t"
    private val rowId = UnresolvedAttribute("_rowid")
    private val distance = UnresolvedAttribute("_distance")
    private val queryIndex = UnresolvedAttribute("query_index")
    private val rest = UnresolvedAttribute("__sparklance_rest")
    private val order = Seq(SortOrder(distance, Ascending, NullsLast, Seq.empty), SortOrder(rowId, Ascending))
    private val sqlName = SearchTables.sqlName(table)

    private def relation(): LogicalPlan = SearchTables.relation(spark, table, version)

    def plan: LogicalPlan = {
      // Resolved once: an index search reads the version whose index it searched.
      val relation = this.relation()
      val tableColumns = relation.output.dropRight(2).map(_.name)
      val (resolvedColumn, queries) = checkColumn(relation.output.dropRight(2))
      val snapshot = relation.collectFirst { case r: DataSourceV2Relation => r.table }.collect { case t: LanceTable => t.snapshot }
      val index = if (bypassIndex) None else snapshot.flatMap(s => VectorIndexUse.plan(s, resolvedColumn, metric).toOption.map(s.version -> _))
      index match {
        case Some((searched, use)) => indexedPlan(use, searched, queries, relation, tableColumns)
        case None => exactPlan(Project(relation.output.dropRight(1), relation), queries, tableColumns)
      }
    }

    /** Lance's flat search: every row's distance, the nearest kept (per query for a batch). */
    private def exactPlan(relation: LogicalPlan, queries: Seq[Array[Double]], tableColumns: Seq[String]): LogicalPlan = {
      val (input, query) =
        if (!batch) (SubqueryAlias(qualifier, relation), Literal.create(new GenericArrayData(queries.head.map(Double.box)), ArrayType(DoubleType, false)))
        else {
          val index = AttributeReference("query_index", IntegerType, nullable = false)()
          val q = AttributeReference(QueryColumn, ArrayType(DoubleType, containsNull = false), nullable = false)()
          val rows = queries.zipWithIndex.map { case (v, i) => InternalRow(i, new GenericArrayData(v.map(Double.box))) }
          (Join(SubqueryAlias(qualifier, relation), LocalRelation(Seq(index, q), rows), Cross, None, JoinHint.NONE), UnresolvedAttribute(q.name))
        }
      search(input, exactDistance(query), tableColumns, batch, withRowId)
    }

    private def exactDistance(query: Expression): Expression = VectorDistance(UnresolvedAttribute.quoted(column), query,
      metric, column, lower.fold(Float.NegativeInfinity)(_.toFloat), upper.fold(Float.PositiveInfinity)(_.toFloat))

    /**
     * A search served by a vector index (docs/dev/vector-index-format.md §4): per query, the index finds
     * `num_results` rows (times `refine_factor`) on the driver. When the index covers every fragment and no refine is
     * asked, those rows are the result, with the index's distances. Otherwise the rows found and every row of the
     * fragments the index does not cover are measured exactly and the nearest kept, which is what pylance's refine
     * and its union with a flat search of unindexed fragments amount to. The index searches a batch's queries together;
     * each query's rows are then measured and kept on their own.
     */
    private def indexedPlan(use: VectorIndexUse, searched: Long, queries: Seq[Array[Double]], relation: LogicalPlan,
        tableColumns: Seq[String]): LogicalPlan = {
      // A filter applied first limits the index search to the rows it keeps, as Lance's prefilter does; it reads the
      // version whose index is searched.
      val allowed = if (!prefilter) None else filterText.map { f =>
        val ids = new org.roaringbitmap.longlong.Roaring64NavigableMap()
        spark.sql(s"SELECT _rowid FROM $sqlName VERSION AS OF '$searched' WHERE $f").collect().foreach(r => ids.addLong(r.getLong(0)))
        ids
      }
      val exact = refineFactor.isDefined || use.unindexedFragments.nonEmpty
      val probes = nprobes.fold(VectorSearch.DefaultNprobes)(_.toInt)
      val described = s"$use, nprobes=$probes${refineFactor.fold("")(r => s", refine_factor=$r")}" +
        (if (use.isHnsw) ef.fold("")(e => s", ef=$e") else "")
      val founds = use.search(queries, (k * refineFactor.getOrElse(1L)).min(Int.MaxValue).toInt, probes, allowed,
        ef.map(_.min(Int.MaxValue).toInt))
      val onDriver = if (!this.onDriver || (prefilter && filter.isDefined)) None else driverRows(use, queries, founds, exact, relation)
      onDriver.getOrElse(distributedPlan(use, queries, founds, exact, described, relation, tableColumns))
    }

    /**
     * The search's rows computed here ([[DriverVectorSearch]]), when its take is a driver lookup, the filter (after
     * the search) is one the driver evaluates, and every column asked for is there; else None.
     */
    private def driverRows(use: VectorIndexUse, queries: Seq[Array[Double]], founds: Seq[IvfIndex.Found], exact: Boolean,
        relation: LogicalPlan): Option[LogicalPlan] = {
      val lance = relation.collectFirst { case r: DataSourceV2Relation => (r.table, r.options) }
        .collect { case (t: LanceTable, options) => (t, options) }
      val attrs = relation.output.dropRight(2)
      val (id, fragmentId) = (relation.output(attrs.size), relation.output(attrs.size + 1))
      val distanceColumn = DriverVectorSearch.distanceColumn()
      val resolver = spark.sessionState.conf.resolver
      val wanted = columns.getOrElse(attrs.map(_.name)).map(c => attrs.find(a => resolver(a.name, c)))
      val postfilter: Option[Option[Expression]] = filter match {
        case None => Some(None)
        case Some(f) =>
          val input = attrs ++ Seq(id, fragmentId, distanceColumn)
          // Evaluated row by row here, bound to the columns, as DriverLookups evaluates a filter.
          PlanFrames.of(spark, Filter(f, LocalRelation(input))).queryExecution.analyzed match {
            case Filter(condition, _: LocalRelation) if condition.deterministic && BindReferences.bindReference(
                condition, input, allowFailures = true).find(_.isInstanceOf[Unevaluable]).isEmpty =>
              Some(Some(condition))
            case _ => None
          }
      }
      lance match {
        case Some((lanceTable, options)) if wanted.forall(_.isDefined) && postfilter.isDefined =>
          DriverVectorSearch.rows(DriverVectorSearch.Request(lanceTable, options, attrs, id, fragmentId, distanceColumn,
            attrs.find(a => resolver(a.name, column)).get.name, metric, queries, founds, use.unindexedFragments, exact,
            postfilter.get, k.toInt, offset.toInt, lower.fold(Float.NegativeInfinity)(_.toFloat),
            upper.fold(Float.PositiveInfinity)(_.toFloat), wanted.flatten, withRowId, batch))
        case _ => None
      }
    }

    /** The plan of a search served by the index whose rows are taken, measured and kept by Spark's operators. */
    private def distributedPlan(use: VectorIndexUse, queries: Seq[Array[Double]], founds: Seq[IvfIndex.Found],
        exact: Boolean, described: String, relation: LogicalPlan, tableColumns: Seq[String]): LogicalPlan = {
      val attrs = relation.output.dropRight(2)
      val (id, fragmentId) = (relation.output(attrs.size), relation.output(attrs.size + 1))
      def inFragments(ids: Seq[Long]): Expression = if (ids.isEmpty) Literal.FalseLiteral else In(fragmentId, ids.map(Literal(_)))
      val unindexed = use.unindexedFragments
      // The rows found (by any query of a batch, once), by row id, and the unindexed fragments: the scan takes just
      // those rows (Lance's take), so that a search the index serves alone reads a few rows, on the driver
      // (DriverLookups) when they are few enough.
      val ids = founds.flatMap(_.rowIds).distinct
      val taken = if (ids.isEmpty) Literal.FalseLiteral else In(id, ids.map(Literal(_)))
      val candidates = SubqueryAlias(qualifier, Project(attrs ++ Seq(id, fragmentId),
        Filter(if (unindexed.isEmpty) taken else Or(inFragments(unindexed), taken), relation)))
      val (lowest, highest) = (lower.fold(Float.NegativeInfinity)(_.toFloat), upper.fold(Float.PositiveInfinity)(_.toFloat))
      if (!batch) {
        val found = founds.head
        val measured =
          if (exact) exactDistance(Literal.create(new GenericArrayData(queries.head.map(Double.box)), ArrayType(DoubleType, false)))
          else IndexedDistance(rowId, found.rowIds.toSeq, found.distances.toSeq, described, lowest, highest)
        search(candidates, measured, tableColumns, batch = false, keepRowId = withRowId)
      } else if (exact) {
        // Each row paired with the queries it is measured for: those that found it, or all for an unindexed row.
        val paired = Generate(Inline(IndexCandidates(rowId, UnresolvedAttribute("_fragid"), founds.map(_.rowIds),
          unindexed, queries, described)), Nil, outer = false, None,
          Seq(queryIndex, UnresolvedAttribute(QueryColumn)), candidates)
        search(paired, exactDistance(UnresolvedAttribute(QueryColumn)), tableColumns, batch = true, keepRowId = withRowId)
      } else indexedBatch(founds, candidates, described, tableColumns, lowest, highest)
    }

    /**
     * A batch served by the index alone, as one plan: each row taken paired with the queries that found it and the
     * index's distance to each ([[IndexedMatches]]), the filter, the offset, ordered by query and distance. A query
     * found at most `num_results` rows, so nothing else is ranked; the offset is counted here unless a filter after
     * the search decides which rows it skips.
     */
    private def indexedBatch(founds: Seq[IvfIndex.Found], candidates: LogicalPlan, described: String,
        tableColumns: Seq[String], lowest: Float, highest: Float): LogicalPlan = {
      val postfilter = filter.isDefined && !prefilter
      val skip = if (postfilter) 0 else offset.toInt
      val filtered = filter.fold(candidates)(Filter(_, candidates))
      val matched = Generate(Inline(IndexedMatches(rowId, founds, skip, lowest, highest, described)), Nil, outer = false,
        None, Seq(queryIndex, distance), filtered)
      val skipped = if (skip == offset) matched else Filter(GreaterThan(rest, Literal(offset)), ranked(matched))
      val wanted = columns.getOrElse(tableColumns).map(c => UnresolvedAttribute(Seq(qualifier, c)))
      Project(Seq(queryIndex) ++ wanted ++ Seq(distance) ++ (if (withRowId) Seq(rowId) else Nil),
        Sort(SortOrder(queryIndex, Ascending) +: order, global = true, skipped))
    }

    /** The rows of `plan` numbered within each query, nearest first, as [[rest]]. */
    private def ranked(plan: LogicalPlan): LogicalPlan = {
      val window = WindowExpression(RowNumber(), WindowSpecDefinition(Seq(queryIndex), order, UnspecifiedFrame))
      Project(Seq(UnresolvedStar(None), Alias(window, rest.name)()), plan)
    }

    /**
     * The nearest rows of `input` (the table's rows, qualified; for a batch joined with the queries) by `measured`
     * (their distance), then the filter (unless applied before) and the offset, as Lance orders them.
     */
    private def search(input: LogicalPlan, measured: Expression, tableColumns: Seq[String], batch: Boolean,
        keepRowId: Boolean): LogicalPlan = {
      val prefiltered = if (prefilter) filter.fold(input)(Filter(_, input)) else input
      val measuredRows = Project(Seq(UnresolvedStar(None), Alias(measured, "_distance")()), prefiltered)
      // A batch keeps each query's nearest rows in one aggregate per query (NearestRows) and ranks what is left after the
      // filter to count the offset.
      val wanted = columns.getOrElse(tableColumns)
      // The columns a batch's rows carry through the aggregate: those returned, and those the filter tests after it.
      val carried = {
        val tested = if (prefilter) Nil else filter.toSeq.flatMap(_.collect { case a: UnresolvedAttribute => a.nameParts.last })
        val resolver = spark.sessionState.conf.resolver
        tableColumns.filter(c => (wanted ++ tested).exists(resolver(_, c)))
      }
      // The nearest `num_results`, then the filter (unless applied before), then the offset, as Lance orders them.
      // Rows without a distance sort last and are dropped after the nearest are taken, so that the distance is computed
      // once per row (a filter below the sort would compute it again).
      val nearest: LogicalPlan =
        if (!batch) Filter(IsNotNull(distance), Limit(Literal(k.toInt), Sort(order, global = true, measuredRows)))
        else {
          val fields = Seq("_distance" -> distance, "_rowid" -> rowId) ++ carried.map(c => c -> UnresolvedAttribute(Seq(qualifier, c)))
          val row = CreateNamedStruct(fields.flatMap { case (n, e) => Seq(Literal(n), e) })
          val found = UnresolvedAttribute("__sparklance_nearest")
          val grouped = Aggregate(Seq(queryIndex),
            Seq(queryIndex, Alias(NearestRows(row, k.toInt).toAggregateExpression(), found.name)()), measuredRows)
          Project(Seq(queryIndex, MultiAlias(Inline(found), fields.map(_._1))), grouped)
        }
      val postfiltered = if (prefilter) nearest else filter.fold(nearest)(Filter(_, nearest))
      val skipped =
        if (offset == 0) postfiltered
        else if (!batch) Offset(Literal(offset.toInt), Sort(order, global = true, postfiltered))
        else Filter(GreaterThan(rest, Literal(offset)), ranked(postfiltered))
      val result = if (batch) Sort(SortOrder(queryIndex, Ascending) +: order, global = true, skipped) else skipped
      val selected = wanted.map(c => if (batch) UnresolvedAttribute.quoted(c) else UnresolvedAttribute(Seq(qualifier, c)))
      val output: Seq[NamedExpression] =
        (if (batch) Seq(queryIndex) else Nil) ++ selected ++ Seq(distance) ++ (if (keepRowId) Seq(rowId) else Nil)
      Project(output, result)
    }
  }
}
