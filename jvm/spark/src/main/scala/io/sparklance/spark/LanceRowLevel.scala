package io.sparklance.spark

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{DeltaBatchWrite, DeltaWrite, DeltaWriteBuilder, DeltaWriter, DeltaWriterFactory, LogicalWriteInfo, PhysicalWriteInfo, RowLevelOperation, RowLevelOperationBuilder, RowLevelOperationInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.{MetadataColumn, table => lance}

/**
 * DELETE, UPDATE and MERGE on a Lance table, through Spark's delta-based row-level operations: Spark scans the
 * pinned version for the rows to change with their row address (`_rowaddr`), and hands the writer the rows to
 * delete and the new rows to insert (an update is a delete and an insert). On tables with stable row ids, Spark
 * hands the writer updates as such, with the old row's address, so that the core keeps their row ids. The core's
 * [[lance.RowDelta]] does the rest: deletion files, row-id bookkeeping, the commit.
 */
final class LanceRowLevelOperationBuilder(table: LanceTable, info: RowLevelOperationInfo) extends RowLevelOperationBuilder {
  override def build(): RowLevelOperation = new LanceDeltaOperation(table, info.command())
}

final class LanceDeltaOperation(table: LanceTable, cmd: Command) extends RowLevelOperation with DeltaOperationShim {
  override def command(): Command = cmd

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = table.newScanBuilder(options)

  override def rowId(): Array[NamedReference] = Array(Expressions.column(MetadataColumn.RowAddress.name))

  override def updatesAsDeleteAndInsert: Boolean = !table.snapshot.hasStableRowIds

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = new DeltaWriteBuilder {
    override def build(): DeltaWrite = new DeltaWrite {
      override def toBatch: DeltaBatchWrite = {
        val snapshot = table.snapshot
        val options = WriteOptions(info.options().asCaseSensitiveMap().asScala.toMap, snapshot.config)
        new LanceDeltaBatchWrite(table, WriteSpec(snapshot.root, snapshot.schema, snapshot.fileVersion, options, table.hadoopConf),
          info.schema(), cmd)
      }
    }
  }
}

/**
 * What one task of a row-level operation did: the rows it deleted, the files of new rows, and (stable row ids) the
 * files of updated rows with the old address of each of their rows, in order.
 */
final case class LanceDeltaMessage(deleted: Array[Byte], inserted: lance.WrittenFiles, updated: lance.WrittenFiles,
    updatedAddresses: Array[Long]) extends WriterCommitMessage {
  def files: Seq[String] = inserted.files ++ updated.files
}

final class LanceDeltaWriter(spec: WriteSpec, sparkSchema: StructType) extends DeltaWriter[InternalRow] {
  private val deleted = new lance.DeletedRows
  private var inserts: Option[LanceDataWriter] = None
  private var updates: Option[LanceDataWriter] = None
  private val updatedAddresses = mutable.ArrayBuilder.make[Long]

  override def delete(metadata: InternalRow, id: InternalRow): Unit = deleted.add(id.getLong(0))

  /** Only for tables with stable row ids (otherwise Spark sends an update as a delete and an insert). */
  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = {
    delete(metadata, id)
    updatedAddresses += id.getLong(0)
    updates.getOrElse { val w = new LanceDataWriter(spec, sparkSchema); updates = Some(w); w }.write(row)
  }

  override def insert(row: InternalRow): Unit =
    inserts.getOrElse { val w = new LanceDataWriter(spec, sparkSchema); inserts = Some(w); w }.write(row)

  override def commit(): WriterCommitMessage = {
    def written(w: Option[LanceDataWriter]) = w.map(_.finish()).getOrElse(lance.WrittenFiles.empty)
    LanceDeltaMessage(deleted.toBytes, written(inserts), written(updates), updatedAddresses.result())
  }

  override def abort(): Unit = { inserts.foreach(_.abort()); updates.foreach(_.abort()) }

  override def close(): Unit = try inserts.foreach(_.close()) finally updates.foreach(_.close())
}

final class LanceDeltaWriterFactory(spec: WriteSpec, sparkSchema: StructType) extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] = new LanceDeltaWriter(spec, sparkSchema)
}

/**
 * The driver side of a row-level operation: the core's [[lance.RowDelta]] on the version the operation read, fed
 * with every task's deleted, inserted and updated rows, committed as one Delete or Update. A concurrent change
 * that deleted other rows of the same fragments is merged by the commit; one that deleted or updated the same rows,
 * or removed or compacted those fragments, fails the statement (run it again). Files written for a commit that did
 * not happen are deleted.
 */
final class LanceDeltaBatchWrite(table: LanceTable, spec: WriteSpec, sparkSchema: StructType, cmd: Command)
    extends DeltaBatchWrite {
  private val delta = {
    val snapshot = table.snapshot
    (if (cmd == Command.DELETE) snapshot.table.newDelete(snapshot) else snapshot.table.newRowDelta(snapshot))
      .withCommitRetries(spec.options.commitRetries)
  }

  private val watch = JobWatch.start()

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory =
    new LanceDeltaWriterFactory(spec.copy(fileTag = delta.fileTag), sparkSchema)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = LanceSparkException.translate {
    messages.toSeq.collect { case m: LanceDeltaMessage => m }.foreach { m =>
      delta.delete(lance.DeletedRows.fromBytes(m.deleted)).insert(m.inserted).update(m.updated, m.updatedAddresses)
    }
    delta.commit()
  }

  /** Deletes the files of every task, once none runs (including tasks whose results Spark dropped). */
  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    watch.foreach(_.awaitTasks())
    delta.abort(messages.toSeq.collect { case m: LanceDeltaMessage => m.files }.flatten)
  }
}
