package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSession, SQLContext}
import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.sources.{BaseRelation, DataSourceRegister}
import org.apache.spark.sql.types.{ArrayType, DataType, DayTimeIntervalType, MapType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.table.TimeTravel

/**
 * The `lance` data source: `spark.read.format("lance").option("version", 3).load(path)`. The table version is
 * pinned when the DataFrame is created. Options are listed in [[ReadOptions]] and [[TimeTravel]].
 */
final class LanceDataSource extends TableProvider with DataSourceRegister with RelationProviderShim {

  override def shortName(): String = "lance"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = table(options.asScala.toMap).schema

  /**
   * The table at the path. Writes ask for it with the DataFrame's schema before it may exist: a missing table is
   * then a placeholder without write support, so that `save()` comes to [[createRelation]] for every save mode.
   */
  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table =
    try table(properties.asScala.toMap, Some(schema))
    catch {
      case e: LanceSparkException if e.cause.isInstanceOf[io.sparklance.core.NotATableException] =>
        new MissingTable(properties.asScala.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }.getOrElse(""),
          schema, e)
    }

  // The schema a write passes to getTable is the DataFrame's; reads without a schema infer it from the table.
  override def supportsExternalMetadata(): Boolean = true

  /**
   * The table at the path, pinned at the version the options name. `schema` is the one Spark passes to
   * [[getTable]]: the schema a reader gave, the one [[inferSchema]] returned, or, for a write, the DataFrame's. It
   * is checked when the table's schema is asked for, which only reads do.
   */
  private def table(options: Map[String, String], schema: Option[StructType] = None): LanceTable = {
    val lower = options.map { case (k, v) => k.toLowerCase -> v }
    val location = lower.getOrElse("path", throw new LanceSparkException(new InvalidArgumentException(
      "No path given: use spark.read.format(\"lance\").load(\"/path/to/table.lance\").")))
    if (lower.contains("paths")) {
      throw new LanceSparkException(new InvalidArgumentException(s"Several paths were given to one read; a Lance " +
        "table is one directory: load each table by itself and union the DataFrames."))
    }
    val conf = TableAccess.hadoopConf(SparkSession.active, options, s"the options of $location")
    val path = TableAccess.qualify(conf, location)
    val tt = LanceSparkException.translate(TimeTravel.fromOptions(options))
    new LanceTable(path, TableAccess.load(conf, path, tt), conf, ReadOptions.nanoseconds(options),
      requested = schema, pinnedByOptions = true, blobHandling = BlobHandling.of(options, "Option"))
  }

  /**
   * Which types a path write stores, asked by Spark 4 before the write ([[RelationProviderShim]]; Spark 3 does not
   * ask). `INTERVAL DAY TO SECOND` is stored as `duration:us`, as CTAS and `writeTo` store it (Spark refuses ANSI
   * intervals for a relation provider unless it says so); the rest as Spark decides.
   */
  override def writesDataType(dt: DataType, spark: DataType => Boolean): Boolean = dt match {
    case _: DayTimeIntervalType => true
    case ArrayType(et, _) => writesDataType(et, spark)
    case MapType(kt, vt, _) => writesDataType(kt, spark) && writesDataType(vt, spark)
    case st: StructType => st.fields.forall(f => writesDataType(f.dataType, spark))
    case other => spark(other)
  }

  /** `df.write.format("lance").mode(...).save(path)`: see [[PathWrites]]. */
  override def createRelation(sqlContext: SQLContext, mode: SaveMode, parameters: scala.collection.immutable.Map[String, String],
      data: DataFrame): BaseRelation = {
    val path = parameters.collectFirst { case (k, v) if k.equalsIgnoreCase("path") => v }.getOrElse(
      throw new LanceSparkException(new InvalidArgumentException(
        "No path given: use df.write.format(\"lance\").save(\"/path/to/table.lance\").")))
    PathWrites.save(sqlContext.sparkSession, path, mode, parameters, data)
    new WrittenRelation(sqlContext, data.schema)
  }
}

/** What `createRelation` returns after a write: Spark only needs a relation, it does not scan it. */
private final class WrittenRelation(context: SQLContext, written: StructType) extends BaseRelation {
  override def sqlContext: SQLContext = context
  override def schema: StructType = written
}

/**
 * A path without a table, as a write sees it before creating one, with the schema of the rows to be written (which
 * Spark asks a streaming sink for). Reading it fails with the error of the missing table; a streaming query's first
 * batch creates it ([[LanceStreamingWrite.forNewTable]]), and batch writes come to `createRelation`.
 */
private final class MissingTable(path: String, written: StructType, missing: LanceSparkException) extends Table
    with SupportsRead with SupportsWrite {
  override def name(): String = path
  override def schema(): StructType = written
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.STREAMING_WRITE, TableCapability.TRUNCATE)

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = throw missing

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new WriteBuilder with SupportsTruncate
      with SupportsStreamingUpdateAsAppend {
    private var complete = false
    override def truncate(): WriteBuilder = { complete = true; this }
    override def build(): Write = new Write {
      override def toStreaming: StreamingWrite = LanceStreamingWrite.forNewTable(path, info, complete)
    }
  }


}
