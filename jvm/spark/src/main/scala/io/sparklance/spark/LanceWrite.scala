package io.sparklance.spark

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriter, DataWriterFactory, LogicalWriteInfo, PhysicalWriteInfo, SupportsTruncate, Write, WriteBuilder, WriterCommitMessage}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{CommitStateUnknownException, InvalidArgumentException}
import io.sparklance.core.file.FileVersion
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter
import io.sparklance.proto.{FileProtos, TableProtos}

/**
 * What every task of one write needs, in plain serializable form: the table root, the Lance schema it writes
 * (as protobuf bytes), the file version and the writer options.
 */
final case class WriteSpec(root: String, schemaBytes: Array[Byte], fileVersion: String, options: WriteOptions,
    conf: SerializableConfiguration) {
  def schema: LanceSchema = {
    val s = FileProtos.Schema.parseFrom(schemaBytes)
    LanceSchema.fromProtos(root, s.getFieldsList.asScala.toSeq,
      s.getMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap)
  }
  def version: FileVersion = FileVersion.parse(fileVersion).get
}

object WriteSpec {
  def apply(root: String, schema: LanceSchema, version: FileVersion, options: WriteOptions, conf: Configuration): WriteSpec = {
    val s = FileProtos.Schema.newBuilder().addAllFields(schema.toProtos.asJava)
    schema.metadata.foreach { case (k, v) => s.putMetadata(k, com.google.protobuf.ByteString.copyFrom(v)) }
    WriteSpec(root, s.build().toByteArray, version.toString, options, new SerializableConfiguration(conf))
  }
}

/** The fragments one task wrote (protobuf bytes, ids unassigned) and the absolute paths of its files. */
final case class LanceCommitMessage(fragments: Seq[Array[Byte]], files: Seq[String]) extends WriterCommitMessage {
  def protos: Seq[TableProtos.DataFragment] = fragments.map(TableProtos.DataFragment.parseFrom)
}

/**
 * Writes the rows of one task into new data files. Rows are collected into Arrow batches of `batch_rows` and handed
 * to the core's fragment writer; nothing is visible until the driver commits. A failed task deletes its files.
 */
final class LanceDataWriter(spec: WriteSpec, sparkSchema: StructType) extends DataWriter[InternalRow] {
  private val schema = spec.schema
  private val allocator = new RootAllocator(Long.MaxValue)
  private val rows = new ArrowRowWriter(schema.fields, sparkSchema, allocator, spec.options.invalidUtf8)
  private val files = new FragmentWriter(new HadoopStorage(spec.conf.value), spec.root, schema, spec.version,
    FragmentWriter.Options(spec.options.maxRowsPerFile, spec.options.maxPageBytes))

  override def write(row: InternalRow): Unit = {
    rows.write(row)
    if (rows.rowCount >= spec.options.batchRows) flush()
  }

  private def flush(): Unit = if (rows.rowCount > 0) {
    LanceSparkException.translate(files.write(rows.finishBatch()))
    rows.reset()
  }

  override def commit(): WriterCommitMessage = {
    flush()
    val fragments = LanceSparkException.translate(files.finish())
    LanceCommitMessage(fragments.map(_.toByteArray), files.files)
  }

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
 * The driver side of one write: commits the fragments of every task as one new version (an append, or an
 * overwrite that replaces the table's data and, for a new or replaced table, its schema), or none.
 */
final class LanceBatchWrite(spec: WriteSpec, sparkSchema: StructType, readVersion: Long, overwrite: Boolean,
    newSchema: Option[LanceSchema], config: Map[String, String]) extends BatchWrite {

  @volatile private var stateUnknown = false
  @volatile var committedVersion: Option[Long] = None

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new LanceDataWriterFactory(spec, sparkSchema)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val fragments = messages.toSeq.collect { case m: LanceCommitMessage => m.protos }.flatten
    val op =
      if (overwrite || readVersion == 0) {
        val schema = newSchema.getOrElse(spec.schema)
        Operation.Overwrite(fragments, schema.toProtos, schema.metadata, config, Some(spec.fileVersion))
      } else Operation.Append(fragments)
    val storage = new HadoopStorage(spec.conf.value)
    try {
      committedVersion = Some(LanceSparkException.translate(Committer.commit(storage, spec.root,
        Transaction.create(readVersion, op), Committer.Options(maxRetries = spec.options.commitRetries,
          newTableFileVersion = spec.fileVersion))))
    } catch {
      case e: LanceSparkException if e.cause.isInstanceOf[CommitStateUnknownException] =>
        stateUnknown = true
        throw e
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    // A commit whose outcome is unknown may have made these files part of the table: keep them.
    if (stateUnknown) return
    val storage = new HadoopStorage(spec.conf.value)
    messages.toSeq.collect { case m: LanceCommitMessage => m.files }.flatten.foreach { f =>
      try storage.delete(f) catch { case NonFatal(_) => }
    }
  }
}

/**
 * Builds the write of a `LanceTable`: an append, or with `truncate()` (INSERT OVERWRITE, `mode("overwrite")`,
 * `writeTo(...).overwrite(lit(true))`) an overwrite of all its rows, keeping its schema.
 */
final class LanceWriteBuilder(table: LanceTable, info: LogicalWriteInfo) extends WriteBuilder with SupportsTruncate {
  private var overwrite = false

  override def truncate(): WriteBuilder = { overwrite = true; this }

  override def build(): Write = new Write {
    override def toBatch: BatchWrite = {
      val passed = info.options().asCaseSensitiveMap().asScala.toMap
      LanceOptions.checkWrite(passed, table.tableName)
      WriteOptions.checkWriteMode(passed, if (overwrite) "overwrite" else "append", table.tableName)
      val options = WriteOptions(passed, table.snapshot.manifest.config)
      val version = LanceTables.fileVersion(table.snapshot)
      options.checkKeeps(version, table.tableName)
      val spec = WriteSpec(table.snapshot.root, table.snapshot.schema, version, options, table.hadoopConf)
      new LanceBatchWrite(spec, info.schema(), table.snapshot.version, overwrite, None, Map.empty)
    }
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
    fileFormatVersion: Option[FileVersion], invalidUtf8: ArrowRowWriter.InvalidUtf8 = ArrowRowWriter.InvalidUtf8.Refuse) {

  /** Rows added to an existing table are written in its file version: another one asked for is an error. */
  def checkKeeps(tableVersion: FileVersion, table: String): Unit =
    fileFormatVersion.filter(_ != tableVersion).foreach { v =>
      throw new LanceSparkException(new InvalidArgumentException(s"Option file_format_version is $v but $table " +
        s"keeps its files in version $tableVersion, which rows added to it are written in. Leave the option out, " +
        "or replace the table (mode overwrite, CREATE OR REPLACE) to change its file version."))
    }
}

object WriteOptions {
  def apply(options: Map[String, String], tableConfig: Map[String, String]): WriteOptions = {
    val o = tableConfig.map { case (k, v) => k.toLowerCase -> v } ++ options.map { case (k, v) => k.toLowerCase -> v }
    def positive(key: String, default: Long): Long = o.get(key) match {
      case None => default
      case Some(v) => v.trim.toLongOption.filter(_ > 0).getOrElse(throw new LanceSparkException(new InvalidArgumentException(
        s"Option $key must be a positive integer, not '$v'.")))
    }
    val version = o.get("file_format_version").orElse(o.get("data_storage_version")).map { v =>
      if (Set("legacy", "0.1").contains(v.trim.toLowerCase)) {
        throw new LanceSparkException(new io.sparklance.core.UnsupportedFeatureException(s"File format version " +
          s"'$v' (the legacy Lance file format, 0.1) is not written by sparklance: write 2.0, 2.1 or 2.2 (stable)."))
      }
      FileVersion.parse(v).getOrElse(throw new LanceSparkException(new InvalidArgumentException(
        s"Option file_format_version must be one of 2.0, 2.1, 2.2 (or stable), not '$v'.")))
    }
    // The other Lance connector's names for the same settings: max_row_per_file, and batch_size for batch_rows.
    val rowsPerFile = positive("max_rows_per_file", positive("max_row_per_file", 1024L * 1024))
    val batchRows = positive("batch_rows", positive("batch_size", 8192))
    val invalidUtf8 = o.get("invalid_utf8").map(v => ArrowRowWriter.InvalidUtf8.parse(v).getOrElse(throw new LanceSparkException(
      new InvalidArgumentException(s"Option invalid_utf8 must be 'error' or 'replace', not '$v'."))))
    WriteOptions(rowsPerFile, positive("max_page_bytes", 8L << 20), math.min(batchRows, 1L << 20).toInt,
      math.min(positive("commit_retries", 20), 1000).toInt, version, invalidUtf8.getOrElse(ArrowRowWriter.InvalidUtf8.Refuse))
  }

  /**
   * Checks the other Lance connector's `write_mode` option against what a write of a catalog table does (`append`
   * for INSERT INTO and `writeTo(...).append()`, `overwrite` for INSERT OVERWRITE and `overwrite(...)`).
   */
  def checkWriteMode(options: Map[String, String], does: String, table: String): Unit =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase("write_mode") => v.trim.toLowerCase }.foreach { w =>
      if (w != does) {
        throw new LanceSparkException(new InvalidArgumentException(s"Option write_mode is '$w' but this write of " +
          s"$table is an $does. Leave the option out: the statement or method decides."))
      }
    }
}
