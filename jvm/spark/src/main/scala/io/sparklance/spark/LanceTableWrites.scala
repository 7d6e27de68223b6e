package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.connector.catalog.{StagedTable, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.{BinaryType, StructType}

import io.sparklance.core.{FileVersion, UnsupportedFeatureException, table => lance}
import io.sparklance.core.schema.{BlobColumns, LanceSchema}

/**
 * How a new Lance table is made from Spark: its schema, file version and table config from `TBLPROPERTIES` /
 * write options. Properties Spark reserves for itself are not stored; the rest go to the manifest's table config.
 */
final case class NewTable(root: String, schema: LanceSchema, version: FileVersion, config: Map[String, String],
    stableRowIds: Option[Boolean]) {

  /**
   * The commit that makes this table (or replaces the table at version `readVersion`, 0 for none) with the files
   * written in `fileVersion`.
   */
  def overwrite(table: lance.Table, readVersion: Long, fileVersion: FileVersion): lance.DataCommit = {
    val commit = table.newOverwrite(readVersion, schema, fileVersion, config)
    stableRowIds.fold(commit)(commit.withStableRowIds)
  }

  /** Commits the table with no rows as a new version after `readVersion` (0 for a table that does not exist). */
  def commitEmpty(conf: Configuration, readVersion: Long, options: WriteOptions): Long =
    LanceSparkException.translate(overwrite(lance.Table.forPath(root, conf), readVersion, version)
      .withCommitRetries(options.commitRetries).commit(Nil))
}

object NewTable {
  /** Properties Spark sets on every table; they are not Lance table config. */
  private val Reserved = Set("provider", "owner", "comment", "external", "is_managed_location", "location")
  /** Properties that shape the table rather than being stored as config. */
  private val Shaping = Set("file_format_version", "data_storage_version")
  /** The other connector's property (pylance's write parameter) for a table with stable row ids, fixed when the
   * table is created. */
  private val StableRowIds = "enable_stable_row_ids"

  /**
   * The table `properties` describe at `root`. Its file version is the one the properties name, else `current` (the
   * version of the table being replaced: replacing keeps it, as pylance's overwrite does), else 2.2.
   */
  def apply(root: String, sparkSchema: StructType, properties: Map[String, String],
      current: Option[FileVersion] = None): NewTable = {
    properties.get("location").filter(l => l.stripSuffix("/") != root.stripSuffix("/")).foreach { l =>
      throw new LanceSparkException(new UnsupportedFeatureException(s"LOCATION '$l' is not supported: a table of a " +
        s"Lance catalog lives at $root. To write a table elsewhere, name it by path: lance.`$l`."))
    }
    val options = WriteOptions(properties, Map.empty)
    val (shaped, tableProperties) = ColumnProperties(sparkSchema, properties)
    val config = tableProperties.filter { case (k, _) =>
      !Reserved.contains(k.toLowerCase) && !Shaping.contains(k.toLowerCase) && !k.equalsIgnoreCase(StableRowIds) &&
        !k.startsWith("option.")
    }
    val version = options.fileFormatVersion.orElse(current).getOrElse(FileVersion.V2_2)
    NewTable(root, BlobColumns.forVersion(SparkSchemas.toLance(shaped), version), version, config, options.stableRowIds)
  }

  /**
   * Refuses setting or removing, on an existing table, a property that shapes a new table (its file version, stable
   * row ids): changing it later would not change the files written. A column property (`<column>.arrow.<key>`,
   * `<column>.lance.<key>`) is checked by [[ColumnProperties.checkSetOnExistingTable]]: it may name a column the
   * table does not have yet, which it shapes when that column is added.
   */
  def checkCanAlter(upserts: Map[String, String], deletes: Set[String], columns: Seq[String], table: String): Unit = {
    val keys = upserts.keySet ++ deletes
    keys.toSeq.sorted.find(k => Shaping.contains(k.toLowerCase) || k.equalsIgnoreCase(StableRowIds)).foreach { k =>
      throw new LanceSparkException(new UnsupportedFeatureException(s"Table property $k shapes the table when it is " +
        "created and cannot be set or removed afterwards. Rewrite the table (CREATE OR REPLACE TABLE ... AS SELECT) " +
        "with it instead."))
    }
    keys.toSeq.sorted.filter(k => ColumnProperties.isColumnProperty(k, columns) || ColumnProperties.isColumnPropertyForm(k))
      .foreach(k => ColumnProperties.checkSetOnExistingTable(k, upserts.get(k), columns, table))
  }

  def checkNoPartitioning(partitions: Array[org.apache.spark.sql.connector.expressions.Transform]): Unit =
    if (partitions.nonEmpty) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"PARTITIONED BY " +
        s"(${partitions.map(_.describe()).mkString(", ")}) is not supported: Lance tables are not partitioned. " +
        "Create the table without PARTITIONED BY."))
    }
}

/**
 * A table being created or replaced (CTAS, RTAS, `writeTo(...).create()/createOrReplace()`): the write commits
 * the new schema and every row as one new version, so a failed write leaves the table as it was, and a replaced
 * table's earlier versions stay readable by time travel.
 */
final class LanceStagedTable(tableName: String, table: NewTable, readVersion: Long, conf: Configuration,
    options: WriteOptions, onAbort: () => Unit = () => ()) extends StagedTable with SupportsWrite {
  @volatile private var write: Option[LanceBatchWrite] = None

  override def name(): String = tableName

  /**
   * The new table's columns as the rows to write give them: a blob v2 column comes from a `BINARY` column with a blob
   * property (file version 2.2), whose values are the blobs' bytes.
   */
  override def schema(): StructType = {
    val spark = SparkSchemas.toSpark(table.schema)
    StructType(spark.fields.zip(table.schema.fields).map { case (f, l) => if (l.isBlobV2) f.copy(dataType = BinaryType) else f })
  }

  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new WriteBuilder with SupportsTruncate {
    override def truncate(): WriteBuilder = this
    override def build(): Write = new Write {
      override def toBatch: BatchWrite = {
        val passed = info.options().asCaseSensitiveMap().asScala.toMap
        LanceOptions.checkWrite(passed, tableName)
        val writeOptions = WriteOptions(passed, Map.empty)
        val merged = options.copy(maxRowsPerFile = writeOptions.maxRowsPerFile, maxPageBytes = writeOptions.maxPageBytes,
          batchRows = writeOptions.batchRows, invalidUtf8 = writeOptions.invalidUtf8)
        // `writeTo(...).option("file_format_version", ...)` picks the version as a table property would.
        val version = writeOptions.fileFormatVersion.getOrElse(table.version)
        val w = new LanceBatchWrite(WriteSpec(table.root, table.schema, version, merged, conf), info.schema(),
          readVersion, overwrite = true, Some(table))
        write = Some(w)
        w
      }
    }
  }

  override def commitStagedChanges(): Unit =
    if (!write.exists(_.committedVersion.isDefined)) table.commitEmpty(conf, readVersion, options)

  override def abortStagedChanges(): Unit = onAbort()
}
