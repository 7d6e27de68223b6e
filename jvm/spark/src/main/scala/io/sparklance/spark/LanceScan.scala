package io.sparklance.spark

import java.util.OptionalLong

import scala.jdk.CollectionConverters._

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{MetadataColumn, table => lance}
import io.sparklance.core.schema.{BlobColumns, LanceField, LogicalType}

/**
 * Plans a scan of a pinned table version: the projection Spark asks for (nested fields pruned), LIMIT, and
 * COUNT(*) answered from the manifest without reading data files. The plan itself is the core's [[lance.Scan]].
 */
final class LanceScanBuilder(table: LanceTable, options: ReadOptions)
    extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownLimit
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
    def use(f: Filter) = predicate(f).map(lance.Scan.filterUse(table.snapshot.schema, _))
      .getOrElse(lance.Scan.FilterUse.Unused)
    val (mine, rest) = filters.partition(use(_) == lance.Scan.FilterUse.SelectsFragments)
    fragmentFilters = mine
    dataFilters = rest.filter(f => use(f) == lance.Scan.FilterUse.SkipsBatches || use(f) == lance.Scan.FilterUse.SelectsRows)
    rest
  }

  override def pushedFilters(): Array[Filter] = fragmentFilters ++ dataFilters

  private def predicate(f: Filter) = SparkPredicates.of(f, table.snapshot.schema, table.nanoseconds)

  private var required: StructType = table.schema
  private var limit: Option[Int] = None
  private var countOnly = false

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  override def isPartiallyPushed: Boolean = true

  override def pushAggregation(aggregation: Aggregation): Boolean = {
    val isCountStar = aggregation.groupByExpressions().isEmpty &&
      aggregation.aggregateExpressions().toSeq.forall(_.isInstanceOf[CountStar])
    countOnly = isCountStar && aggregation.aggregateExpressions().nonEmpty
    countOnly
  }

  override def supportCompletePushDown(aggregation: Aggregation): Boolean =
    aggregation.groupByExpressions().isEmpty && aggregation.aggregateExpressions().toSeq.forall(_.isInstanceOf[CountStar])

  private def coreScan: lance.Scan =
    table.snapshot.newScan().withFilters((fragmentFilters ++ dataFilters).toSeq.flatMap(predicate))
      .withBatchRows(options.batchSize)

  override def build(): Scan =
    if (countOnly) { LanceMicroBatchStream.refuseInBatch(options, table.name()); new LanceCountScan(table, coreScan, fragmentFilters) }
    else new LanceScan(table, coreScan, required, limit, options, fragmentFilters, dataFilters)
}

/** COUNT(*) from the manifest: physical rows minus deleted rows, summed over the (selected) fragments. */
final class LanceCountScan(table: LanceTable, scan: lance.Scan, fragmentFilters: Array[Filter]) extends Scan with Batch {
  override def readSchema(): StructType = StructType(Seq(StructField("count(*)", LongType, nullable = false)))
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = Array(CountPartition(scan.countRows()))
  override def createReaderFactory(): PartitionReaderFactory = CountReaderFactory
  override def description(): String = s"LanceCountScan(${table.name()}@${table.snapshot.version}" +
    (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") + ")"
}

final case class CountPartition(count: Long) extends InputPartition

object CountReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = new PartitionReader[InternalRow] {
    private var done = false
    override def next(): Boolean = { val more = !done; done = true; more }
    override def get(): InternalRow = InternalRow(partition.asInstanceOf[CountPartition].count)
    override def close(): Unit = ()
  }
}

final class LanceScan(table: LanceTable, base: lance.Scan, required: StructType, limit: Option[Int],
    options: ReadOptions, fragmentFilters: Array[Filter], dataFilters: Array[Filter],
    listFilters: Seq[lance.Predicate] = Nil)
    extends Scan with Batch with SupportsReportStatistics {

  private val snapshot = table.snapshot

  /**
   * This scan, also using `predicates` on list items (found by [[ListItemFilters]] among the conditions Spark keeps
   * above the scan), or this scan itself when it uses them all already.
   */
  def withListFilters(predicates: Seq[lance.Predicate]): LanceScan = {
    val added = predicates.distinct.filterNot(listFilters.contains)
    if (added.isEmpty || !options.pushDownFilters) this
    else new LanceScan(table, base.withFilters(base.fragmentFilters ++ base.dataFilters ++ added), required, limit,
      options, fragmentFilters, dataFilters, listFilters ++ added)
  }

  /**
   * The Lance fields the required schema names, pruned to the nested fields it keeps, each with its Spark field: a
   * blob v2 column reads its bytes, and a blob column's virtual columns (`<column>__blob_pos`, `__blob_size`) the
   * positions or sizes of its blobs ([[BlobColumns.virtualColumn]]).
   */
  private lazy val columns: Seq[(LanceField, StructField)] = required.fields.toSeq.flatMap { sf =>
    snapshot.schema.field(sf.name) match {
      case Some(f) if f.isBlobV2 => Some(BlobColumns.view(f, BlobColumns.Data) -> SparkSchemas.toSpark(f, table.nanoseconds))
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
    limit.map(s.withLimit).getOrElse(s)
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
      (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") +
      (if (dataFilters.nonEmpty) s", batches where ${dataFilters.mkString(" and ")}" else "") +
      (if (listFilters.nonEmpty) s", lists where ${listFilters.mkString(" and ")}" else "") +
      (if (!scan.indexUse.isEmpty) s", using ${scan.indexUse}" else "") +
      (if (scan.selectsRows && scan.indexUse.isEmpty) ", rows taken by id" else "") + ")"

  override def planInputPartitions(): Array[InputPartition] = {
    val conf = table.hadoopConfFor(SparkSession.active.sparkContext)
    tasks.map(t => LancePartition(snapshot.root, t, conf): InputPartition).toArray
  }

  /** The scan's tasks: of at most `rows_per_partition` rows when that is given, else sized as Spark sizes file splits. */
  private def tasks: Seq[lance.ScanTask] = options.rowsPerPartition match {
    case Some(rows) => scan.planTasks(rows)
    case None => scan.planTasks(LanceScan.taskSizing(SparkSession.active, tableRowBytes, readShare))
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
    val stats = estimateStatistics()
    stats.numRows().getAsLong <= options.driverLookupRows && stats.sizeInBytes().getAsLong <= LanceScan.DriverLookupBytes
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
   * What the scan reads, for Spark's planner (broadcast or not, join order): the rows of the fragments it keeps (only
   * those an index selected, where one is used), and the bytes of their data files in proportion to those rows,
   * scaled as Spark scales a Parquet scan's files: by Spark's size of a row of the columns read (their default sizes
   * and 8 bytes of the row's own, `EstimationUtils.getSizePerRow`) against a row of the table. Spark's thresholds
   * (`autoBroadcastJoinThreshold`) are set for that scale, so joins are planned as over Parquet. Not the real bytes
   * of the columns read (which size the tasks): sorted keys compress far below their default size's share, so
   * scans of key columns looked small enough to broadcast where Parquet's do not (6 of the 22 TPC-H queries planned
   * other joins; docs/performance.md). A fragment whose file sizes the manifest does not record counts its rows at
   * the table's default row size, never nothing: an estimate of 0 would broadcast any table.
   */
  override def estimateStatistics(): Statistics = {
    val (rows, bytes) = scan.estimateFileBytes(tableRowBytes)
    // Spark's size of a row (EstimationUtils.getSizePerRow): 8 bytes of a row's own, and the columns' default sizes.
    val share = (readSchema.defaultSize + 8).toDouble / (tableRowBytes + 8)
    val readBytes = math.max(1L, (bytes * math.min(1.0, share)).toLong)
    val readRows = limit.map(l => math.min(rows, l.toLong)).getOrElse(rows)
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(readBytes)
      override def numRows(): OptionalLong = OptionalLong.of(readRows)
    }
  }

  /**
   * What makes two scans read the same rows: the version (table or branch root, and number), the columns, the pushed filters, the limit
   * and the read options. Spark compares scans by this (`BatchScanExec` equality) to run a subtree a query holds
   * twice only once, as it does for Parquet (`ReusedExchange`, `ReusedSubquery`: TPC-H q2's region, q15's revenue).
   */
  private def identity: (String, Long, StructType, Option[Int], ReadOptions, Seq[Filter], Seq[Filter], Seq[lance.Predicate]) =
    (snapshot.root, snapshot.version, readSchema, limit, options, fragmentFilters.toSeq, dataFilters.toSeq, listFilters)

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
