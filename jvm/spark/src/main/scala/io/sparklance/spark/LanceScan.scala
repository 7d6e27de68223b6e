package io.sparklance.spark

import java.util.OptionalLong

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.{EqualTo, Filter, GreaterThan, GreaterThanOrEqual, In, LessThan, LessThanOrEqual}
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.scan.MetadataColumn
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.FileProtos

/**
 * Plans a scan of a pinned table version: the projection Spark asks for (nested fields pruned), LIMIT, and
 * COUNT(*) answered from the manifest without reading data files.
 */
final class LanceScanBuilder(table: LanceTable, options: ReadOptions, hadoopConf: Configuration)
    extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownLimit
    with SupportsPushDownAggregates with SupportsPushDownFilters {

  private var fragmentFilters: Array[Filter] = Array.empty
  private var dataFilters: Array[Filter] = Array.empty

  /**
   * Filters on `_fragid` select fragments exactly, so they are applied by planning only those fragments and not
   * returned to Spark. Filters on data columns ([[DataFilters]]) let the scan skip batches where no row matches;
   * they are returned to Spark too, which evaluates them on the rows the scan returns. Others are Spark's alone.
   */
  override def pushFilters(filters: Array[Filter]): Array[Filter] = if (!options.pushDownFilters) filters else {
    val (mine, rest) = filters.partition(FragmentFilters.applies)
    fragmentFilters = mine
    dataFilters = rest.filter(DataFilters.applies(table.snapshot.schema, _))
    rest
  }

  override def pushedFilters(): Array[Filter] = fragmentFilters ++ dataFilters

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

  override def build(): Scan =
    if (countOnly) new LanceCountScan(table, fragmentFilters)
    else new LanceScan(table, required, limit, options, hadoopConf, fragmentFilters, dataFilters)
}

/** Filters on the `_fragid` metadata column, decided per fragment id. */
object FragmentFilters {
  private val Column = MetadataColumn.FragmentId.name

  private def id(v: Any): Option[Long] = v match {
    case n: java.lang.Number => Some(n.longValue())
    case _ => None
  }

  def applies(f: Filter): Boolean = f match {
    case EqualTo(Column, v) => id(v).isDefined
    case In(Column, vs) => vs.forall(v => id(v).isDefined)
    case GreaterThan(Column, v) => id(v).isDefined
    case GreaterThanOrEqual(Column, v) => id(v).isDefined
    case LessThan(Column, v) => id(v).isDefined
    case LessThanOrEqual(Column, v) => id(v).isDefined
    case _ => false
  }

  /** The fragments every filter keeps. */
  def select(fragments: Seq[io.sparklance.core.table.Fragment], filters: Seq[Filter]): Seq[io.sparklance.core.table.Fragment] =
    fragments.filter(f => filters.forall(keeps(_, f.id)))

  def keeps(f: Filter, fragment: Long): Boolean = f match {
    case EqualTo(_, v) => id(v).contains(fragment)
    case In(_, vs) => vs.exists(v => id(v).contains(fragment))
    case GreaterThan(_, v) => id(v).exists(fragment > _)
    case GreaterThanOrEqual(_, v) => id(v).exists(fragment >= _)
    case LessThan(_, v) => id(v).exists(fragment < _)
    case LessThanOrEqual(_, v) => id(v).exists(fragment <= _)
    case _ => true
  }
}

/** DataSourceV2 predicates on `_fragid`, as the V1 filters [[FragmentFilters]] decides. */
object FragmentPredicates {
  import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
  import org.apache.spark.sql.connector.expressions.filter.Predicate

  def toFilter(p: Predicate): Option[Filter] = {
    val children = p.children().toSeq
    def column = children.headOption.collect { case r: NamedReference if r.fieldNames().toSeq == Seq(MetadataColumn.FragmentId.name) => r }
    def values = children.drop(1).map { case l: Literal[_] => Option(l.value()); case _ => None }
    if (column.isEmpty || values.exists(_.isEmpty)) return None
    val vs = values.flatten
    val name = MetadataColumn.FragmentId.name
    val f: Option[Filter] = (p.name(), vs) match {
      case ("=", Seq(v)) => Some(EqualTo(name, v))
      case ("<", Seq(v)) => Some(LessThan(name, v))
      case ("<=", Seq(v)) => Some(LessThanOrEqual(name, v))
      case (">", Seq(v)) => Some(GreaterThan(name, v))
      case (">=", Seq(v)) => Some(GreaterThanOrEqual(name, v))
      case ("IN", all) if all.nonEmpty => Some(In(name, all.toArray))
      case _ => None
    }
    f.filter(FragmentFilters.applies)
  }
}

/** COUNT(*) from the manifest: physical rows minus deleted rows, summed over the (selected) fragments. */
final class LanceCountScan(table: LanceTable, fragmentFilters: Array[Filter]) extends Scan with Batch {
  override def readSchema(): StructType = StructType(Seq(StructField("count(*)", LongType, nullable = false)))
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = Array(CountPartition(
    FragmentFilters.select(table.snapshot.fragments, fragmentFilters.toSeq).map(_.numRows).sum))
  override def createReaderFactory(): PartitionReaderFactory = CountReaderFactory
  override def description(): String = s"LanceCountScan(${table.name()}@${table.snapshot.version})"
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

final class LanceScan(table: LanceTable, required: StructType, limit: Option[Int], options: ReadOptions,
    hadoopConf: Configuration, fragmentFilters: Array[Filter] = Array.empty, dataFilters: Array[Filter] = Array.empty)
    extends Scan with Batch with SupportsReportStatistics {

  private val snapshot = table.snapshot

  /** The Lance fields the required schema names, pruned to the nested fields it keeps. */
  private lazy val projection: Seq[LanceField] = required.fields.toSeq.flatMap { sf =>
    snapshot.schema.field(sf.name).map(f => prune(f, sf.dataType))
  }

  private lazy val metadataColumns: Seq[MetadataColumn] =
    required.fields.toSeq.flatMap(f => if (snapshot.schema.field(f.name).isEmpty) MetadataColumn.byName(f.name) else None)

  private def prune(f: LanceField, dt: org.apache.spark.sql.types.DataType): LanceField = (f.logicalType, dt) match {
    case (LogicalType.Struct, st: StructType) if st.fields.length < f.children.size =>
      f.copy(children = st.fields.toIndexedSeq.flatMap(c => f.child(c.name).map(prune(_, c.dataType))))
    case _ => f
  }

  override lazy val readSchema: StructType = StructType(
    projection.map(f => SparkSchemas.toSpark(f, table.nanoseconds)) ++
      metadataColumns.map(m => StructField(m.name, LongType, nullable = false)))

  override def toBatch: Batch = this

  override def description(): String =
    s"LanceScan(${table.name()}@${snapshot.version}, columns=[${readSchema.fieldNames.mkString(", ")}]" +
      limit.map(l => s", limit=$l").getOrElse("") +
      (if (fragmentFilters.nonEmpty) s", fragments where ${fragmentFilters.mkString(" and ")}" else "") +
      (if (dataFilters.nonEmpty) s", batches where ${dataFilters.mkString(" and ")}" else "") + ")"

  override def planInputPartitions(): Array[InputPartition] = {
    // Spark's own wrapper: its Kryo serializer knows it (spark.serializer applies to broadcasts).
    val conf = SparkSession.active.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
    val fieldsBytes = FileProtos.Schema.newBuilder().addAllFields(projection.flatMap(_.flatten).map(_.proto).asJava)
      .build().toByteArray
    val context = ScanContext(snapshot.layout, snapshot.manifest.path, fieldsBytes, metadataColumns.map(_.name),
      snapshot.manifest.hasStableRowIds, options.batchSize, limit, conf,
      dataFilters.toSeq.filter(f => DataFilters.columns(f).forall(c => projection.exists(_.name == c))))
    // Split large fragments by row ranges; pack small ranges together until a partition holds about
    // rows_per_partition rows.
    val fragments = FragmentFilters.select(snapshot.fragments, fragmentFilters.toSeq)
    val slices = fragments.flatMap { fragment =>
      val bytes = fragment.proto.toByteArray
      (0L until fragment.physicalRows by options.rowsPerPartition).map { from =>
        FragmentSlice(bytes, from, math.min(fragment.physicalRows, from + options.rowsPerPartition))
      }
    }
    val groups = scala.collection.mutable.ArrayBuffer.empty[Vector[FragmentSlice]]
    var current = Vector.empty[FragmentSlice]
    var rows = 0L
    slices.foreach { s =>
      if (current.nonEmpty && rows + (s.to - s.from) > options.rowsPerPartition) {
        groups += current; current = Vector.empty; rows = 0
      }
      current :+= s
      rows += s.to - s.from
    }
    if (current.nonEmpty) groups += current
    groups.map(g => LancePartition(g, context): InputPartition).toArray
  }

  override def createReaderFactory(): PartitionReaderFactory = LanceReaderFactory(readSchema, options.columnar)

  override def estimateStatistics(): Statistics = {
    val m = snapshot.manifest
    val bytes = m.fragments.flatMap(_.files.flatMap(_.fileSizeBytes)).sum
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(math.max(bytes, 1L))
      override def numRows(): OptionalLong = OptionalLong.of(m.numRows)
    }
  }
}

/** What every partition of a scan shares: where the table is, the projection and the read settings. */
final case class ScanContext(
    layout: io.sparklance.core.table.TableLayout,
    manifestPath: String,
    fields: Array[Byte],
    metadataColumns: Seq[String],
    stableRowIds: Boolean,
    batchSize: Int,
    limit: Option[Int],
    conf: Broadcast[SerializableConfiguration],
    filters: Seq[Filter] = Nil)

/** Rows [from, to) of one fragment (its `DataFragment` protobuf). */
final case class FragmentSlice(fragment: Array[Byte], from: Long, to: Long)

/** One partition: slices of one or more fragments, read in order on an executor. Plain data. */
final case class LancePartition(slices: Seq[FragmentSlice], context: ScanContext) extends InputPartition
