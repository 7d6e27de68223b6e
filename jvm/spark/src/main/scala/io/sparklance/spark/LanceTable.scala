package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.util.SerializableConfiguration
import org.apache.spark.sql.connector.catalog.{MetadataColumn => SparkMetadataColumn, SupportsDeleteV2, SupportsMetadataColumns, SupportsRead, SupportsRowLevelOperations, SupportsWrite, Table, TableCapability}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, RowLevelOperationBuilder, RowLevelOperationInfo, WriteBuilder}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.types.{DataType, LongType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.{MetadataColumn, table => lance}
import io.sparklance.core.schema.BlobColumns
import io.sparklance.core.table.Snapshot

/**
 * One pinned version of a Lance table, as Spark sees it: its schema (docs/types.md), its metadata columns
 * (`_rowid`, `_rowaddr`, `_fragid`) and, in `properties`, what `DESCRIBE TABLE EXTENDED` shows. `requested` is a
 * schema the reader gave (`spark.read.schema(...)`); `pinnedByOptions` says the version was chosen by the read's
 * options (a table read by path), not by the statement (a table of a catalog). `blobHandling` says how blob v2
 * columns read: as their bytes or as their descriptors ([[BlobHandling]]). `readDefaults` are read options its
 * catalog sets for every read, below the read's own options.
 */
final class LanceTable(val tableName: String, val snapshot: Snapshot, val hadoopConf: Configuration,
    val nanoseconds: SparkSchemas.NanosecondMapping = SparkSchemas.NanosecondMapping.TruncateToMicros,
    writable: Boolean = false, requested: Option[StructType] = None, pinnedByOptions: Boolean = false,
    val blobHandling: BlobHandling = BlobHandling.Bytes, readDefaults: Map[String, String] = Map.empty)
    extends Table with SupportsRead with SupportsWrite with SupportsMetadataColumns with SupportsRowLevelOperations
    with SupportsDeleteV2 {

  override def name(): String = tableName

  private var broadcastConf: (org.apache.spark.SparkContext, Broadcast[SerializableConfiguration]) = _

  /**
   * The Hadoop configuration broadcast to the executors of `sc`, once per table and context: a table read by path
   * serves every query of its DataFrame, which would otherwise each broadcast it again.
   */
  def hadoopConfFor(sc: org.apache.spark.SparkContext): Broadcast[SerializableConfiguration] = synchronized {
    if (broadcastConf == null || (broadcastConf._1 ne sc)) {
      // Spark's own wrapper: its Kryo serializer knows it (spark.serializer applies to broadcasts).
      broadcastConf = (sc, sc.broadcast(new SerializableConfiguration(hadoopConf)))
    }
    broadcastConf._2
  }

  /**
   * The table's columns (docs/types.md); for a read given a schema (`spark.read.schema(...)`), the columns that
   * schema names, in its order, each of the same type as in the table: a given schema projects, never converts.
   */
  override lazy val schema: StructType = LanceSparkException.translate {
    val bytes = SparkSchemas.toSpark(snapshot.schema, nanoseconds)
    val full = if (blobHandling == BlobHandling.Descriptions) BlobHandling.descriptors(bytes, snapshot.schema.fields) else bytes
    requested.filterNot(r => PathWrites.sameType(r, full)).map(SparkSchemas.project(full, _, tableName)).getOrElse(full)
  }

  /**
   * Tables of the catalog are written through DataSourceV2 (INSERT, `writeTo`); tables loaded by path through the
   * `lance` data source are written by its `save()` support for every save mode, so they do not offer it here.
   * Streaming queries write and read both ([[LanceStreamingWrite]], [[LanceMicroBatchStream]]).
   *
   * From Spark 4.3 on, `SCAN_MERGING` lets Spark fuse scans of this table that differ only in their columns into
   * one scan of the union (its `MergeSubplans`: the scalar subqueries of TPC-DS q9 read `store_sales` once per
   * filter, not once per aggregate), as it does for Parquet. A scan [[LanceScanBuilder]] builds depends only on the
   * pinned snapshot, the read options, the columns and the filters pushed, which Spark pushes again to rebuild it;
   * Spark merges no scan that took a limit, a top-N or an aggregate.
   */
  override def capabilities(): util.Set[TableCapability] = {
    val set =
      if (writable) util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE,
        TableCapability.OVERWRITE_DYNAMIC, TableCapability.STREAMING_WRITE, TableCapability.MICRO_BATCH_READ)
      else util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.STREAMING_WRITE, TableCapability.TRUNCATE,
        TableCapability.MICRO_BATCH_READ)
    LanceTable.ScanMerging.foreach(set.add)
    set
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new LanceWriteBuilder(this, info)

  /**
   * DELETE without reading data: when the condition selects whole fragments (`DELETE FROM t` with no condition, or
   * conditions on `_fragid`), the fragments are dropped from the next version by metadata alone. Any other
   * condition goes through the row-level operation.
   */
  override def canDeleteWhere(predicates: Array[Predicate]): Boolean =
    writable && predicates.forall(p => p.name() == "ALWAYS_TRUE" || selectsFragments(p))

  private def selectsFragments(p: Predicate): Boolean = SparkPredicates.of(p).exists(
    lance.Scan.filterUse(snapshot.schema, _) == lance.Scan.FilterUse.SelectsFragments)

  override def deleteWhere(predicates: Array[Predicate]): Unit = LanceSparkException.translate {
    val scan = snapshot.newScan().withFilters(predicates.toSeq.filter(selectsFragments).flatMap(p => SparkPredicates.of(p)))
    snapshot.table.deleteFragments(snapshot, scan.fragmentIds, predicates.mkString(" AND "))
  }

  /** DELETE, UPDATE and MERGE ([[LanceRowLevelOperationBuilder]]), on tables of the catalog. */
  override def newRowLevelOperationBuilder(info: RowLevelOperationInfo): RowLevelOperationBuilder =
    if (writable) new LanceRowLevelOperationBuilder(this, info)
    else throw new LanceSparkException(new io.sparklance.core.UnsupportedFeatureException(s"${info.command()} needs " +
      s"the table through the lance catalog: use lance.`$tableName` instead of the path data source."))

  override def properties(): util.Map[String, String] =
    (snapshot.properties ++ Map("provider" -> "lance", "latest_version" -> snapshot.latestVersion().toString)).asJava

  override def metadataColumns(): Array[SparkMetadataColumn] = MetadataColumn.all.map { c =>
    new SparkMetadataColumn {
      override def name(): String = c.name
      override def dataType(): DataType = LongType
      override def isNullable: Boolean = false
      override def comment(): String = c match {
        case MetadataColumn.RowId => "stable row id (the row address when the table has no stable row ids)"
        case MetadataColumn.RowAddress => "row address: fragment id << 32 | row offset"
        case _ => "fragment id"
      }
    }
  }.toArray ++ BlobColumns.of(snapshot.schema).flatMap { blob =>
    Seq(BlobColumns.PositionSuffix -> "position of each blob's bytes in the file holding them",
      BlobColumns.SizeSuffix -> "size of each blob in bytes").map { case (suffix, what) =>
      new SparkMetadataColumn {
        override def name(): String = blob.name + suffix
        override def dataType(): DataType = LongType
        override def isNullable: Boolean = true
        override def comment(): String = s"blob column ${blob.name}: the $what (null for a null blob)"
      }
    }
  }

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = {
    val passed = options.asCaseSensitiveMap().asScala.toMap
    LanceOptions.checkRead(passed, tableName)
    // A table of the catalog was pinned by the statement (VERSION AS OF, or Spark's versionAsOf option), not by
    // these options: a version asked for here would be ignored, so it is refused.
    if (!pinnedByOptions) {
      passed.keys.find(k => Set("version", "timestamp", "tag", "branch").contains(k.toLowerCase)).foreach { k =>
        throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(s"Option $k does not apply " +
          s"to $tableName, a table of a catalog: use SELECT ... FROM $tableName VERSION AS OF <version or 'tag'> " +
          "(or TIMESTAMP AS OF), or the options versionAsOf / timestampAsOf."))
      }
      // The table's schema, which blob_handling shapes, was fixed when the catalog loaded it.
      LanceOptions.value(passed, BlobHandling.Key).foreach { v =>
        if (BlobHandling.parse(Some(v), s"Option ${BlobHandling.Key}") != blobHandling) {
          throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(s"Option " +
            s"${BlobHandling.Key} does not apply to $tableName, a table of a catalog: set it on the catalog, " +
            s"spark.sql.catalog.<catalog>.${BlobHandling.Key} = $v, or read the table by path."))
        }
      }
    }
    val defaults = readDefaults.filter { case (k, _) => !passed.keys.exists(_.equalsIgnoreCase(k)) }
    new LanceScanBuilder(this, ReadOptions(defaults ++ passed, snapshot.config))
  }

  override def toString: String = s"LanceTable($tableName@${snapshot.version})"
}

object LanceTable {
  /** Spark's `SCAN_MERGING` capability where the running Spark has it (4.3 on), looked up by name so that every line
   *  compiles this file. */
  private val ScanMerging: Option[TableCapability] = TableCapability.values().find(_.name == "SCAN_MERGING")
}
