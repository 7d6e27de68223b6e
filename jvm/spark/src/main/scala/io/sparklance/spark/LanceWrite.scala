package io.sparklance.spark

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriter, DataWriterFactory, LogicalWriteInfo, PhysicalWriteInfo, SupportsDynamicOverwrite, SupportsTruncate, Write, WriteBuilder, WriterCommitMessage}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{FileVersion, InvalidArgumentException, table => lance}
import io.sparklance.core.schema.LanceSchema

/**
 * What every task of one write needs, in plain serializable form: the table root, the Lance schema it writes
 * (as bytes), the file version, the writer options and the Hadoop configuration that reopens the table.
 */
final case class WriteSpec(root: String, schemaBytes: Array[Byte], fileVersion: String, options: WriteOptions,
    conf: SerializableConfiguration, fileTag: String = "") {
  def schema: LanceSchema = LanceSchema.fromBytes(root, schemaBytes)
  def version: FileVersion = FileVersion.parse(fileVersion).get
  def table: lance.Table = lance.Table.forPath(root, conf.value)
}

object WriteSpec {
  def apply(root: String, schema: LanceSchema, version: FileVersion, options: WriteOptions, conf: Configuration): WriteSpec = {
    LanceSparkException.translate(SparkSchemas.refuseHalfFloats(schema.fields, "write"))
    WriteSpec(root, schema.toBytes, version.toString, options, new SerializableConfiguration(conf))
  }
}

/** The files one task wrote. */
final case class LanceCommitMessage(written: lance.WrittenFiles) extends WriterCommitMessage

/**
 * Writes the rows of one task into new data files. Rows are collected into Arrow batches of `batch_rows` and handed
 * to the core's data writer; nothing is visible until the driver commits. A failed task deletes its files.
 */
final class LanceDataWriter(spec: WriteSpec, sparkSchema: StructType) extends DataWriter[InternalRow] {
  private val schema = spec.schema
  private val allocator = new RootAllocator(Long.MaxValue)
  private val rows = new ArrowRowWriter(schema.fields, sparkSchema, allocator, spec.options.invalidUtf8)
  private val files = spec.table.newDataWriter(schema, spec.version, spec.options.maxRowsPerFile, spec.options.maxPageBytes,
    spec.fileTag)

  override def write(row: InternalRow): Unit = {
    rows.write(row)
    if (rows.rowCount >= spec.options.batchRows) flush()
  }

  private def flush(): Unit = if (rows.rowCount > 0) {
    LanceSparkException.translate(files.write(rows.finishBatch()))
    rows.reset()
  }

  /** Flushes the last rows and finishes the files: what this writer wrote. */
  def finish(): lance.WrittenFiles = {
    flush()
    LanceSparkException.translate(files.finish())
  }

  override def commit(): WriterCommitMessage = LanceCommitMessage(finish())

  override def abort(): Unit = files.abort()

  override def close(): Unit = {
    try files.close() finally try rows.close() finally allocator.close()
  }
}

final class LanceDataWriterFactory(spec: WriteSpec, sparkSchema: StructType) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new LanceDataWriter(spec, sparkSchema)
}

/**
 * The driver side of one write: commits the files of every task as one new version (an append, or an overwrite
 * that replaces the table's data and, for a new or replaced table, its schema), or none.
 */
final class LanceBatchWrite(spec: WriteSpec, sparkSchema: StructType, readVersion: Long, overwrite: Boolean,
    newTable: Option[NewTable]) extends BatchWrite {

  @volatile var committedVersion: Option[Long] = None

  // Blob descriptors are never written: refused when the write is planned (ArrowRowWriter refuses nested ones).
  sparkSchema.fields.find(f => BlobHandling.isDescriptor(f.dataType)).foreach(f => BlobHandling.refuseWrite(f.name))

  private val pending: lance.DataCommit = {
    val table = spec.table
    (newTable match {
      case Some(t) => t.overwrite(table, readVersion, spec.version)
      case None if overwrite || readVersion == 0 => table.newOverwrite(readVersion, spec.schema, spec.version, Map.empty)
      case None => table.newAppend(readVersion)
    }).withCommitRetries(spec.options.commitRetries)
  }

  private val watch = JobWatch.start()

  /** The tasks' writers, naming their files with the commit's tag. */
  def writerFactory: LanceDataWriterFactory = new LanceDataWriterFactory(spec.copy(fileTag = pending.fileTag), sparkSchema)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = writerFactory

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit =
    committedVersion = Some(LanceSparkException.translate(pending.commit(LanceBatchWrite.written(messages))))

  /** Deletes the files of every task, once none runs (including tasks whose results Spark dropped). */
  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    watch.foreach(_.awaitTasks())
    pending.abort(LanceBatchWrite.written(messages).flatMap(_.files))
  }
}

object LanceBatchWrite {
  private[spark] def written(messages: Array[WriterCommitMessage]): Seq[lance.WrittenFiles] =
    messages.toSeq.collect { case m: LanceCommitMessage => m.written }
}

/**
 * Builds the write of a `LanceTable`: an append, or with `truncate()` (INSERT OVERWRITE, `mode("overwrite")`,
 * `writeTo(...).overwrite(lit(true))`) an overwrite of all its rows, keeping its schema (so is a dynamic overwrite,
 * `writeTo(...).overwritePartitions()`: a Lance table is one partition); for a streaming query,
 * its sink ([[LanceStreamingWrite]]; `truncate()` in complete output mode; update mode appends the updated rows, as
 * the other Lance connector's sink does).
 */
final class LanceWriteBuilder(table: LanceTable, info: LogicalWriteInfo) extends WriteBuilder with SupportsTruncate
    with SupportsDynamicOverwrite with SupportsStreamingUpdateAsAppend {
  private var overwrite = false

  override def truncate(): WriteBuilder = { overwrite = true; this }

  override def overwriteDynamicPartitions(): WriteBuilder = truncate()

  override def build(): Write = new Write {
    override def toBatch: BatchWrite = {
      val passed = info.options().asCaseSensitiveMap().asScala.toMap
      LanceOptions.checkWrite(passed, table.tableName)
      WriteOptions.checkWriteMode(passed, if (overwrite) "overwrite" else "append", table.tableName)
      val options = WriteOptions(passed, table.snapshot.config)
      val version = table.snapshot.fileVersion
      options.checkKeeps(version, table.snapshot.hasStableRowIds, table.tableName)
      val spec = WriteSpec(table.snapshot.root, table.snapshot.schema, version, options, table.hadoopConf)
      new LanceBatchWrite(spec, info.schema(), table.snapshot.version, overwrite, None)
    }

    override def toStreaming: StreamingWrite = LanceStreamingWrite.forTable(table, info, complete = overwrite)
  }
}

/**
 * Options of a write (`df.write.option(...)`, `writeTo(...).option(...)`), falling back to table properties
 * (the manifest's config) and then to defaults; precedence: write option > table property > default.
 *
 *  - `max_rows_per_file` (default 1048576; also `max_row_per_file`): rows per data file; each file is one fragment.
 *  - `max_page_bytes` (default 8388608): the page size columns aim at.
 *  - `batch_rows` (default 8192; also `batch_size`): rows buffered per Arrow batch in a task.
 *  - `commit_retries` (default 20): attempts at a new version when other writers commit first.
 *  - `file_format_version` (tables being created or replaced; default 2.2 for a new table, the table's own version
 *    when it is replaced): the Lance file version (2.0, 2.1, 2.2) of the data files and of the table.
 *  - `invalid_utf8` (default `error`): a STRING that is not valid UTF-8 fails the write (`error`) or is stored with
 *    U+FFFD in place of each invalid sequence (`replace`).
 */
final case class WriteOptions(maxRowsPerFile: Long, maxPageBytes: Long, batchRows: Int, commitRetries: Int,
    fileFormatVersion: Option[FileVersion], invalidUtf8: ArrowRowWriter.InvalidUtf8 = ArrowRowWriter.InvalidUtf8.Refuse,
    stableRowIds: Option[Boolean] = None) {

  /**
   * Rows added to an existing table are written in its file version and get row ids its way (stable or not): another
   * one asked for is an error.
   */
  def checkKeeps(tableVersion: FileVersion, tableStableRowIds: Boolean, table: String): Unit = {
    fileFormatVersion.filter(_ != tableVersion).foreach { v =>
      throw new LanceSparkException(new InvalidArgumentException(s"Option file_format_version is $v but $table " +
        s"keeps its files in version $tableVersion, which rows added to it are written in. Leave the option out, " +
        "or replace the table (mode overwrite, CREATE OR REPLACE) to change its file version."))
    }
    stableRowIds.filter(_ != tableStableRowIds).foreach { v =>
      throw new LanceSparkException(new InvalidArgumentException(s"Option enable_stable_row_ids is $v but $table " +
        s"${if (tableStableRowIds) "has" else "has no"} stable row ids, which are chosen when a table is created. " +
        "Leave the option out."))
    }
  }
}

object WriteOptions {
  /** The options of a write over a table's properties, resolved by the core's [[lance.Settings]]. */
  def apply(options: Map[String, String], tableConfig: Map[String, String]): WriteOptions = LanceSparkException.translate {
    val settings = lance.Settings.of(options, tableConfig)
    val core = lance.WriteSettings(settings)
    val invalidUtf8 = ArrowRowWriter.InvalidUtf8.parse(settings.choice("error", Seq("error", "replace"), "invalid_utf8")).get
    val stableRowIds = LanceOptions.value(options, "enable_stable_row_ids").map { v =>
      io.sparklance.core.util.Parse.boolean(v).getOrElse(throw new InvalidArgumentException(
        s"Option enable_stable_row_ids must be true or false, not '$v'."))
    }
    WriteOptions(core.maxRowsPerFile, core.maxPageBytes, core.batchRows, core.commitRetries, core.fileVersion, invalidUtf8,
      stableRowIds)
  }

  /**
   * Checks the other Lance connector's `write_mode` option against what a write of a catalog table does (`append`
   * for INSERT INTO and `writeTo(...).append()`, `overwrite` for INSERT OVERWRITE and `overwrite(...)`).
   */
  def checkWriteMode(options: Map[String, String], does: String, table: String): Unit =
    LanceOptions.value(options, "write_mode").map(_.toLowerCase).foreach { w =>
      if (w != does) {
        throw new LanceSparkException(new InvalidArgumentException(s"Option write_mode is '$w' but this write of " +
          s"$table is an $does. Leave the option out: the statement or method decides."))
      }
    }
}
