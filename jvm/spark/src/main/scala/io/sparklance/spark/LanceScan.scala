package io.sparklance.spark

import java.util.OptionalLong

import scala.jdk.CollectionConverters._

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.arrow.memory.RootAllocator
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, NamedReference, NullOrdering, SortDirection, SortOrder}
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, Count, CountStar, Max, Min}
import org.apache.spark.sql.connector.expressions.filter.{Predicate => V2Predicate}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, LongType, StructField, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{MetadataColumn, table => lance}
import io.sparklance.core.schema.{BlobColumns, LanceField, LogicalType}

/**
 * Plans a scan of a pinned table version: the projection Spark asks for (nested fields pruned), LIMIT, ORDER BY ...
 * LIMIT (each task returns only its first rows in that order: [[lance.Scan.withTopN]]), and COUNT(*), COUNT(c),
 * MIN(c), MAX(c) answered from the table's metadata without reading data files where it answers them exactly
 * ([[lance.Scan.aggregateFromMetadata]]). The plan itself is the core's [[lance.Scan]].
 */
final class LanceScanBuilder(table: LanceTable, options: ReadOptions)
    extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownLimit with SupportsPushDownTopN
    with SupportsPushDownAggregates with SupportsPushDownFilters {

  private var fragmentFilters: Array[Filter] = Array.empty
  private var dataFilters: Array[Filter] = Array.empty

  /**
   * Filters the core's scan can use ([[lance.Scan.filterUse]]): those on `_fragid` select fragments exactly, so they
   * are not returned to Spark; those on data columns let the scan skip batches where no row matches, and those on
   * `_rowid` or `_rowaddr` make it read only the rows they name; both are returned to Spark too, which evaluates
   * them on the rows the scan returns. Others are Spark's alone.
   */
  override def pushFilters(filters: Array[Filter]): Array[Filter] = if (!options.pushDownFilters) filters else {
    def use(f: Filter) = if (onDescriptors(f)) lance.Scan.FilterUse.Unused
      else predicate(f).map(lance.Scan.filterUse(table.snapshot.schema, _)).getOrElse(lance.Scan.FilterUse.Unused)
    val (mine, rest) = filters.partition(use(_) == lance.Scan.FilterUse.SelectsFragments)
    fragmentFilters = mine
    dataFilters = rest.filter(f => use(f) == lance.Scan.FilterUse.SkipsBatches || use(f) == lance.Scan.FilterUse.SelectsRows)
    rest
  }

  override def pushedFilters(): Array[Filter] = fragmentFilters ++ dataFilters

  /** Whether `f` reads blob descriptors (`blob_handling = blobs_descriptions`), which Spark alone evaluates. */
  private def onDescriptors(f: Filter): Boolean = table.blobHandling == BlobHandling.Descriptions &&
    f.references.exists(r => table.snapshot.schema.field(r.takeWhile(_ != '.')).exists(_.isBlobV2))

  private def predicate(f: Filter) = SparkPredicates.of(f, table.snapshot.schema, table.nanoseconds)

  private var required: StructType = table.schema
  private var limit: Option[Int] = None
  private var topN: Option[lance.TopN] = None
  private var aggregated: Option[LanceAggregateScan] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  /**
   * Takes `ORDER BY ... LIMIT n` when every key is a top-level column the core's scan orders ([[lance.TopN.orders]])
   * and no filter on data is pushed (Spark pushes a top-N only when it keeps no filter above the scan, and the
   * batch filters keep rows Spark would drop). Each task then returns its first `n` rows; Spark still sorts them.
   */
  override def pushTopN(orders: Array[SortOrder], n: Int): Boolean = {
    val keys = orders.toSeq.map { o =>
      o.expression() match {
        case ref: NamedReference if ref.fieldNames().length == 1 && lance.TopN.orders(table.snapshot.schema, ref.fieldNames()(0)) &&
            table.snapshot.schema.field(ref.fieldNames()(0)).exists(f => !f.isBlob && !f.isBlobV2) =>
          Some(lance.SortKey(ref.fieldNames()(0), o.direction() == SortDirection.DESCENDING, o.nullOrdering() == NullOrdering.NULLS_FIRST))
        case _ => None
      }
    }
    val pushed = options.pushDownTopN && dataFilters.isEmpty && keys.nonEmpty && keys.forall(_.isDefined)
    if (pushed) topN = Some(lance.TopN(keys.flatten, n))
    pushed
  }

  /** Always: Spark sorts and limits the rows of all tasks (each returns up to the limit). */
  override def isPartiallyPushed: Boolean = true

  override def supportCompletePushDown(aggregation: Aggregation): Boolean = {
    aggregated = aggregateScan(aggregation)
    aggregated.isDefined
  }

  override def pushAggregation(aggregation: Aggregation): Boolean = {
    if (aggregated.isEmpty) aggregated = aggregateScan(aggregation)
    aggregated.isDefined
  }

  /**
   * The scan of one row answering `aggregation` from the table's metadata: without GROUP BY, COUNT(*), COUNT(c),
   * MIN(c) and MAX(c) of top-level columns, where the core answers every one exactly; else None, and Spark
   * aggregates the rows read.
   */
  private def aggregateScan(aggregation: Aggregation): Option[LanceAggregateScan] = {
    def column(e: Expression): Option[String] = e match {
      case ref: NamedReference if ref.fieldNames().length == 1 && table.snapshot.schema.field(ref.fieldNames()(0)).isDefined =>
        Some(ref.fieldNames()(0))
      case _ => None
    }
    val aggregates = aggregation.aggregateExpressions().toSeq.map {
      case _: CountStar => Some(lance.Aggregate.CountRows)
      case c: Count if !c.isDistinct => column(c.column()).map(lance.Aggregate.Count(_))
      case m: Min => column(m.column()).map(lance.Aggregate.Min(_))
      case m: Max => column(m.column()).map(lance.Aggregate.Max(_))
      case _ => None
    }
    if (!options.pushDownAggregates || aggregation.groupByExpressions().nonEmpty || aggregates.isEmpty ||
        aggregates.exists(_.isEmpty)) None
    else LanceAggregateScan.of(table, coreScan, aggregates.flatten, fragmentFilters)
  }

  private def coreScan: lance.Scan =
    table.snapshot.newScan().withFilters((fragmentFilters ++ dataFilters).toSeq.flatMap(predicate))
      .withBatchRows(options.batchSize)

  override def build(): Scan = aggregated match {
    case Some(scan) => LanceMicroBatchStream.refuseInBatch(options, table.name()); scan
    case None => new LanceScan(table, coreScan, required, limit, options, fragmentFilters, dataFilters, topN = topN)
  }
}

/**
 * Aggregates answered from the table's metadata ([[lance.Scan.aggregateFromMetadata]]): one row, computed when the
 * scan is planned, read by one task.
 */
final class LanceAggregateScan private (table: LanceTable, aggregates: Seq[lance.Aggregate], row: InternalRow,
    schema: StructType, fragmentFilters: Array[Filter], sources: Seq[String]) extends Scan with Batch {
  override def readSchema(): StructType = schema
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = Array(AggregatePartition(row))
  override def createReaderFactory(): PartitionReaderFactory = AggregateReaderFactory
  override def description(): String = s"LanceAggregateScan(${table.name()}@${table.snapshot.version}, " +
    s"${aggregates.mkString(", ")} from metadata (${sources.mkString(", ")})" +
    (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") + ")"
}

object LanceAggregateScan {
  /** The scan answering `aggregates` of `scan`'s rows, or None when the metadata does not answer them all exactly. */
  def of(table: LanceTable, scan: lance.Scan, aggregates: Seq[lance.Aggregate], fragmentFilters: Array[Filter]): Option[LanceAggregateScan] =
    LanceSparkException.translate {
      val fields = aggregates.map {
        case lance.Aggregate.CountRows => StructField("count(*)", LongType, nullable = false)
        case a @ lance.Aggregate.Count(_) => StructField(a.toString.toLowerCase, LongType, nullable = false)
        case a @ lance.Aggregate.Min(c) => StructField(a.toString.toLowerCase, columnType(table, c), nullable = true)
        case a @ lance.Aggregate.Max(c) => StructField(a.toString.toLowerCase, columnType(table, c), nullable = true)
      }
      val allocator = new RootAllocator(Long.MaxValue)
      try scan.aggregateFromMetadata(aggregates, allocator).map { answer =>
        val root = answer.row
        val vectors = root.getFieldVectors.asScala.toIndexedSeq
        val converted = vectors.zip(fields).map { case (v, f) => SparkArrow.convert(v, f.dataType, allocator) }
        try {
          val columns = converted.zip(fields).map { case (v, f) => DirectColumnVector.of(f.dataType, v) }
          val row = new ColumnarBatch(columns.toArray, 1).getRow(0).copy()
          new LanceAggregateScan(table, aggregates, row, StructType(fields), fragmentFilters, answer.sources)
        } finally {
          converted.zip(vectors).foreach { case (c, v) => if (c ne v) c.close() }
          root.close()
        }
      } finally allocator.close()
    }

  private def columnType(table: LanceTable, column: String): DataType =
    table.snapshot.schema.field(column).map(f => SparkSchemas.toSpark(f, table.nanoseconds).dataType).getOrElse(
      throw new IllegalStateException(s"no column $column"))
}

final case class AggregatePartition(row: InternalRow) extends InputPartition

object AggregateReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = new PartitionReader[InternalRow] {
    private var done = false
    override def next(): Boolean = { val more = !done; done = true; more }
    override def get(): InternalRow = partition.asInstanceOf[AggregatePartition].row
    override def close(): Unit = ()
  }
}

final class LanceScan(table: LanceTable, base: lance.Scan, required: StructType, limit: Option[Int],
    options: ReadOptions, fragmentFilters: Array[Filter], dataFilters: Array[Filter],
    listFilters: Seq[lance.Predicate] = Nil, topN: Option[lance.TopN] = None)
    extends Scan with Batch with SupportsReportStatistics with SupportsRuntimeV2Filtering {

  private val snapshot = table.snapshot

  /** The runtime filters Spark handed the scan ([[filter]]); none until it does. */
  @volatile private var runtime: LanceScan.RuntimeFilters = LanceScan.RuntimeFilters.None

  /**
   * This scan, also using `predicates` on list items (found by [[ListItemFilters]] among the conditions Spark keeps
   * above the scan), or this scan itself when it uses them all already.
   */
  def withListFilters(predicates: Seq[lance.Predicate]): LanceScan = {
    val added = predicates.distinct.filterNot(listFilters.contains)
    if (added.isEmpty || !options.pushDownFilters) this
    else if (topN.isDefined) this // a top-N reads no filtered batches: Spark filters the rows itself
    else new LanceScan(table, base.withFilters(base.fragmentFilters ++ base.dataFilters ++ added), required, limit,
      options, fragmentFilters, dataFilters, listFilters ++ added)
  }

  /**
   * The Lance fields the required schema names, pruned to the nested fields it keeps, each with its Spark field: a
   * blob v2 column reads its bytes (or, with `blob_handling = blobs_descriptions`, its whole descriptors, however
   * few of their fields Spark asks for: they are read as one struct anyway), and a blob column's virtual columns (`<column>__blob_pos`, `__blob_size`) the
   * positions or sizes of its blobs ([[BlobColumns.virtualColumn]]).
   */
  private lazy val columns: Seq[(LanceField, StructField)] = required.fields.toSeq.flatMap { sf =>
    snapshot.schema.field(sf.name) match {
      case Some(f) if f.isBlobV2 && table.blobHandling == BlobHandling.Descriptions =>
        Some(BlobHandling.projection(f) -> BlobHandling.descriptorField(SparkSchemas.toSpark(f, table.nanoseconds)))
      case Some(f) if f.isBlobV2 => Some(BlobHandling.bytes(f) -> SparkSchemas.toSpark(f, table.nanoseconds))
      case Some(f) =>
        val pruned = prune(f, sf.dataType)
        Some(pruned -> SparkSchemas.toSpark(pruned, table.nanoseconds))
      case None => LanceSparkException.translate(BlobColumns.virtualColumn(snapshot.schema, sf.name))
        .map(_ -> StructField(sf.name, LongType, nullable = true))
    }
  }

  private lazy val projection: Seq[LanceField] = columns.map(_._1)

  private lazy val metadataColumns: Seq[MetadataColumn] =
    required.fields.toSeq.flatMap(f => if (snapshot.schema.field(f.name).isEmpty) MetadataColumn.byName(f.name) else None)

  private def prune(f: LanceField, dt: org.apache.spark.sql.types.DataType): LanceField = (f.logicalType, dt) match {
    case (LogicalType.Struct, st: StructType) if st.fields.length < f.children.size =>
      f.withChildren(st.fields.toIndexedSeq.flatMap(c => f.child(c.name).map(prune(_, c.dataType))))
    case _ => f
  }

  private lazy val scan: lance.Scan = {
    val s = base.withProjection(projection).withMetadataColumns(metadataColumns)
    val limited = limit.map(s.withLimit).getOrElse(s)
    LanceSparkException.translate(topN.map(limited.withTopN).getOrElse(limited))
  }

  override lazy val readSchema: StructType = LanceSparkException.translate {
    SparkSchemas.refuseHalfFloats(projection, "read")
    StructType(columns.map(_._2) ++
      metadataColumns.map(m => StructField(m.name, LongType, nullable = false)))
  }

  override def toBatch: Batch = { LanceMicroBatchStream.refuseInBatch(options, table.name()); this }

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    LanceMicroBatchStream.of(table, readSchema, options)

  override def description(): String =
    s"LanceScan(${table.name()}@${snapshot.version}, columns=[${readSchema.fieldNames.mkString(", ")}]" +
      limit.map(l => s", limit=$l").getOrElse("") +
      topN.map(t => s", $t per task").getOrElse("") +
      (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") +
      (if (dataFilters.nonEmpty) s", batches where ${dataFilters.mkString(" and ")}" else "") +
      (if (listFilters.nonEmpty) s", lists where ${listFilters.mkString(" and ")}" else "") +
      (if (runtime.described.nonEmpty) s", runtime filter ${runtime.described.mkString(" and ")}" +
        (if (runtime.matchNothing) " (reads nothing)" else "") else "") +
      (if (!scan.indexUse.isEmpty) s", using ${scan.indexUse}" else "") +
      scan.topNIndexUse.map(u => s", $u").getOrElse("") +
      (if (scan.selectsRows && scan.indexUse.isEmpty) ", rows taken by id" else "") + ")"

  override def planInputPartitions(): Array[InputPartition] = if (runtime.matchNothing) Array.empty else {
    val conf = table.hadoopConfFor(SparkSession.active.sparkContext)
    tasks.map(t => LancePartition(snapshot.root, t, conf): InputPartition).toArray
  }

  /**
   * The scan's tasks: of at most `rows_per_partition` rows when that is given, else sized as Spark sizes file splits;
   * each carries the runtime filters Spark handed the scan, if any.
   */
  private def tasks: Seq[lance.ScanTask] = {
    val filtered = runtime.scan.getOrElse(scan)
    options.rowsPerPartition match {
      case Some(rows) => filtered.planTasks(rows)
      case None => filtered.planTasks(LanceScan.taskSizing(SparkSession.active, tableRowBytes, readShare)
        .copy(spreadBytes = fileBytes._2.toDouble))
    }
  }

  /**
   * The columns on which Spark may hand the scan, when the query runs, an `IN` of the keys of a broadcast join's
   * other side (dynamic pruning, which Spark plans on any column a scan names here, not only partition columns):
   * the top-level columns read whose values the core's batches compare ([[lance.Scan.filterUse]]). The scan then
   * reads such a column first and the other columns only for the rows whose key is among those values (late
   * materialization, [[lance.TaskReader]]), skipping batches without one. None unless `runtime_filter_push_down =
   * true` (off by default: docs/reading.md), none with `pushDownFilters = false`, and none for a scan that returns only some rows (LIMIT, a top-N: a
   * filter there would change which rows) or is read on the driver.
   */
  override def filterAttributes(): Array[NamedReference] =
    if (!options.runtimeFilters || !options.pushDownFilters || limit.isDefined || topN.isDefined || isDriverLookup) Array.empty
    else readSchema.fieldNames.filter { name =>
      snapshot.schema.field(name).exists(f => !f.isBlob && !f.isBlobV2) &&
        lance.Scan.filterUse(snapshot.schema, lance.Predicate.IsNotNull(name)) == lance.Scan.FilterUse.SkipsBatches
    }.map(name => Expressions.column("`" + name.replace("`", "``") + "`"))

  /**
   * Takes the runtime filters Spark hands the scan when the query runs (an `IN` of a join's keys on a column of
   * [[filterAttributes]]), before it plans the scan's partitions again: translated as the filters of a query are
   * ([[SparkPredicates.runtimeIn]]); one the core cannot use is ignored, and so is one of more keys than one in
   * [[LanceScan.RuntimeKeysRatio]] of the rows the scan reads; an `IN` without a value (the other side has no row)
   * leaves the scan no partition. Spark evaluates nothing again: the join drops the rows a batch keeps
   * that match no key.
   */
  override def filter(predicates: Array[V2Predicate]): Unit = LanceSparkException.translate {
    val columns = filterAttributes().map(_.fieldNames().head).toSet
    val ins = predicates.toSeq.flatMap(SparkPredicates.runtimeIn).filter(in => columns.contains(SparkPredicates.columnOf(in)))
    if (ins.exists(_.values.isEmpty)) runtime = LanceScan.RuntimeFilters(Nil, ins.map(LanceScan.describe), None, matchNothing = true)
    else {
      val rows = scan.countRows()
      val usable = ins.filter(_.values.length.toLong * LanceScan.RuntimeKeysRatio <= rows).flatMap { in =>
        SparkPredicates.of(in, snapshot.schema, table.nanoseconds)
          .filter(lance.Scan.filterUse(snapshot.schema, _) == lance.Scan.FilterUse.SkipsBatches).map(in -> _)
      }
      if (usable.nonEmpty) {
        val predicates = usable.map(_._2)
        runtime = LanceScan.RuntimeFilters(predicates, usable.map(u => LanceScan.describe(u._1)),
          Some(scan.withFilters(scan.fragmentFilters ++ scan.dataFilters ++ predicates)), matchNothing = false)
      }
    }
  }

  /**
   * The share of a row's bytes the scan reads as Spark would guess it (its columns' default sizes against the
   * table's), for data files whose column sizes the core cannot read ([[lance.Scan.columnShare]]).
   */
  private def readShare: Double = math.min(1.0, math.max(1.0 / tableRowBytes, readSchema.defaultSize.toDouble / tableRowBytes))

  private def tableRowBytes: Long = math.max(1, SparkSchemas.toSpark(snapshot.schema, table.nanoseconds).defaultSize)

  override def createReaderFactory(): PartitionReaderFactory = LanceReaderFactory(readSchema, options.columnar)

  /**
   * Whether this scan is a lookup small enough to read on the driver ([[DriverLookups]]): an index, or a condition
   * on `_rowid` or `_rowaddr` (such as a vector search's rows), selects the rows of every fragment it reads, or of
   * all but fragments small enough themselves, and in all it reads at most `driver_lookup_rows` rows
   * ([[ReadOptions]]) and 64 MB (estimated).
   */
  def isDriverLookup: Boolean = options.driverLookupRows > 0 && scan.selectsRows && {
    val (rows, bytes) = readBytes
    limit.fold(rows)(l => math.min(rows, l.toLong)) <= options.driverLookupRows && bytes <= LanceScan.DriverLookupBytes
  }

  /**
   * Reads the scan here, on the driver, handing each row (of [[readSchema]]) to `f`; a row is valid only during the
   * call (copy it to keep it).
   */
  def foreachRowOnDriver(f: InternalRow => Unit): Unit = LanceSparkException.translate {
    tasks.foreach { task =>
      val reader = new LanceColumnarReader(snapshot.root, table.hadoopConf, task, readSchema)
      try while (reader.next()) reader.get().rowIterator().asScala.foreach(f) finally reader.close()
    }
  }

  /**
   * What the scan reads, for Spark's planner (broadcast or not, join order): the rows of the fragments it keeps (their
   * live rows, or those an index selected), and the bytes of the pages of the columns it reads for those rows, from
   * the data files' column metadata ([[lance.Scan.estimate]]): the bytes Spark counts for a file source, its files'
   * bytes, without the guess of Spark's Parquet scale (files' bytes times the read columns' default sizes against a
   * row's), which charged a scan for columns it does not read. At least a byte per value read: runs and small
   * dictionaries store millions of values in a few bytes, and a broadcast holds them decoded. Files that do not
   * record their columns (older writers, or a manifest without file sizes) fall back on Spark's Parquet scale, at
   * the table's default row size where sizes are missing, never 0: an estimate of 0 would broadcast any table.
   * With filters on data, the rows and bytes those filters keep, at most, by a sample of the filtered columns
   * ([[lance.Scan.filterSelectivity]]), unless `estimate_filtered_rows` is false.
   */
  override def estimateStatistics(): Statistics = {
    val (rows, readBytes) = plannerBytes
    val readRows = limit.orElse(topN.map(_.k)).map(l => math.min(rows, l.toLong)).getOrElse(rows)
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(readBytes)
      override def numRows(): OptionalLong = OptionalLong.of(readRows)
    }
  }

  /**
   * The rows the scan reads and the bytes of the data files they stand for, whatever columns it reads: by these
   * bytes the scan is spread over a task per core or not ([[lance.Scan.TaskSizing]]), as Spark spreads a Parquet
   * scan by its files' bytes.
   */
  private lazy val fileBytes: (Long, Long) = scan.estimateFileBytes(tableRowBytes)

  /** The rows the scan returns and their bytes for the planner ([[estimateStatistics]]). */
  private lazy val plannerBytes: (Long, Long) = {
    val (rows, bytes) =
      if (options.estimateFilteredRows) LanceSparkException.translate(scan.estimate(tableRowBytes, plannerShare))
      else readBytes
    (rows, math.max(1L, bytes))
  }

  /** The rows the scan reads, before its filters, and their bytes. */
  private lazy val readBytes: (Long, Long) = {
    val (rows, bytes) = scan.estimateRead(tableRowBytes, plannerShare)
    (rows, math.max(1L, bytes))
  }

  /**
   * Where the files do not tell: Spark's size of a row (EstimationUtils.getSizePerRow), 8 bytes of a row's own and
   * the columns' default sizes, against a row of the table, as Spark scales a Parquet scan.
   */
  private def plannerShare: Double = math.min(1.0, (readSchema.defaultSize + 8).toDouble / (tableRowBytes + 8))

  /**
   * What makes two scans read the same rows: the version (table or branch root, and number), the columns, the pushed filters, the limit
   * and the read options. Spark compares scans by this (`BatchScanExec` equality) to run a subtree a query holds
   * twice only once, as it does for Parquet (`ReusedExchange`, `ReusedSubquery`: TPC-H q2's region, q15's revenue).
   */
  private def identity: (String, Long, StructType, Option[Int], ReadOptions, Seq[Filter], Seq[Filter], Seq[lance.Predicate], Option[lance.TopN], LanceScan.RuntimeFilters) =
    (snapshot.root, snapshot.version, readSchema, limit, options, fragmentFilters.toSeq, dataFilters.toSeq, listFilters, topN, runtime)

  override def equals(other: Any): Boolean = other match {
    case o: LanceScan => identity == o.identity
    case _ => false
  }

  override def hashCode(): Int = identity.hashCode()
}

object LanceScan {
  /** The most bytes (estimated from the manifest's file sizes) a scan reads on the driver. */
  private val DriverLookupBytes = 64L << 20

  /**
   * The runtime filters of a scan: the core's predicates, how the description names them, the scan that uses them
   * (None: the scan's own), and whether one of them matches no row. Equal filters make equal scans (their identity);
   * the scan is left out of it, being made from the predicates.
   */
  private[spark] final case class RuntimeFilters(predicates: Seq[lance.Predicate], described: Seq[String],
      scan: Option[lance.Scan], matchNothing: Boolean) {
    override def equals(other: Any): Boolean = other match {
      case o: RuntimeFilters => predicates == o.predicates && matchNothing == o.matchNothing
      case _ => false
    }
    override lazy val hashCode: Int = (predicates, matchNothing).hashCode()
  }

  private[spark] object RuntimeFilters {
    val None: RuntimeFilters = RuntimeFilters(Nil, Nil, scala.None, matchNothing = false)
  }

  /**
   * A runtime `IN` of more keys than one in this many of the rows a scan reads is ignored: in a join on a foreign
   * key each key matches a row at least, so such an `IN` keeps more rows than late materialization pays for
   * ([[lance.TaskReader]]), and its keys still cost every task their copy and their hash table. TPC-H SF1 q21:
   * `l_orderkey IN` the 730k orders of status F, half of lineitem's rows, made the query about 2x slower.
   */
  val RuntimeKeysRatio = 32

  /** A runtime `IN` as the description shows it: its values listed when few, else counted. */
  private def describe(in: org.apache.spark.sql.sources.In): String =
    if (in.values.length <= 8) in.toString
    else s"In(${in.attribute}, ${in.values.length} values)"

  /**
   * Task sizes from the settings Spark sizes its file sources' splits by: `spark.sql.files.maxPartitionBytes` at
   * most per task, `spark.sql.files.openCostInBytes` at least, and the scan spread over
   * `spark.sql.files.minPartitionNum` tasks (by default the leaf nodes' parallelism: the cores) when it is small.
   * Unlike Spark's file sources, tasks count only the bytes of the columns read (their pages' bytes,
   * [[lance.Scan.columnShare]], or `readShare`, their default sizes against a row's, where the files do not tell),
   * so unread columns do not add tasks: a wave of tasks that leaves a core idle costs
   * as much as a full one. Not one task per fragment either: each task costs a scheduling round and, under an
   * aggregate, a partial result of its own.
   */
  def taskSizing(spark: SparkSession, defaultRowBytes: Long, readShare: Double): lance.Scan.TaskSizing = {
    val conf = spark.sessionState.conf
    val parallelism = conf.filesMinPartitionNum.getOrElse(
      spark.conf.getOption("spark.sql.leafNodeDefaultParallelism").map(_.toInt).getOrElse(spark.sparkContext.defaultParallelism))
    lance.Scan.TaskSizing(conf.filesMaxPartitionBytes, conf.filesOpenCostInBytes, parallelism, defaultRowBytes, readShare)
  }
}

/** One partition: a task of the core's scan, and what reopens the table on an executor. Plain data. */
final case class LancePartition(root: String, task: lance.ScanTask, conf: Broadcast[SerializableConfiguration])
    extends InputPartition
