package io.sparklance.spark

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{DeltaBatchWrite, DeltaWrite, DeltaWriteBuilder, DeltaWriter, DeltaWriterFactory, LogicalWriteInfo, PhysicalWriteInfo, RowLevelOperation, RowLevelOperationBuilder, RowLevelOperationInfo, SupportsDelta, WriterCommitMessage}
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CommitStateUnknownException
import io.sparklance.core.file.FileVersion
import io.sparklance.core.scan.MetadataColumn
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.Deletions
import io.sparklance.proto.TableProtos

/**
 * DELETE, UPDATE and MERGE on a Lance table, through Spark's delta-based row-level operations: Spark scans the
 * pinned version for the rows to change with their row address (`_rowaddr`), and hands the writer the rows to
 * delete and the new rows to insert (an update is a delete and an insert). The driver merges the deleted rows of
 * every task into one new deletion file per fragment (dropping fragments whose rows are all deleted), and commits
 * them with the new rows' fragments as one Delete or Update transaction.
 *
 * On tables with stable row ids, an updated row keeps its row id and creation version and gets the commit's
 * version as its last-updated version (as upstream Lance does): Spark then hands the writer updates as such, with
 * the old row's address, and the updated rows go to fragments of their own whose row ids the driver fills in.
 */
final class LanceRowLevelOperationBuilder(table: LanceTable, info: RowLevelOperationInfo) extends RowLevelOperationBuilder {
  override def build(): RowLevelOperation = new LanceDeltaOperation(table, info.command())
}

final class LanceDeltaOperation(table: LanceTable, cmd: Command) extends RowLevelOperation with SupportsDelta {
  override def command(): Command = cmd

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = table.newScanBuilder(options)

  override def rowId(): Array[NamedReference] = Array(Expressions.column(MetadataColumn.RowAddress.name))

  override def representUpdateAsDeleteAndInsert(): Boolean = !table.snapshot.manifest.hasStableRowIds

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = new DeltaWriteBuilder {
    override def build(): DeltaWrite = new DeltaWrite {
      override def toBatch: DeltaBatchWrite = {
        val snapshot = table.snapshot
        val options = WriteOptions(info.options().asCaseSensitiveMap().asScala.toMap, snapshot.manifest.config)
        val version = LanceTables.fileVersion(snapshot)
        new LanceDeltaBatchWrite(table, WriteSpec(snapshot.root, snapshot.schema, version, options, table.hadoopConf),
          info.schema(), cmd)
      }
    }
  }
}

/**
 * What one task of a row-level operation did: deleted row offsets per fragment, fragments of new rows, and (stable
 * row ids) fragments of updated rows with the old address of each of their rows, in order.
 */
final case class LanceDeltaMessage(deleted: Array[Byte], fragments: Seq[Array[Byte]], files: Seq[String],
    updatedFragments: Seq[Array[Byte]] = Nil, updatedAddresses: Array[Long] = Array.emptyLongArray)
    extends WriterCommitMessage

object LanceDeltaMessage {
  def encode(deleted: collection.Map[Long, RoaringBitmap]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val data = new DataOutputStream(out)
    data.writeInt(deleted.size)
    deleted.foreach { case (fragment, rows) =>
      rows.runOptimize()
      data.writeLong(fragment)
      data.writeInt(rows.serializedSizeInBytes())
      rows.serialize(data)
    }
    data.flush()
    out.toByteArray
  }

  def decode(bytes: Array[Byte]): Seq[(Long, RoaringBitmap)] = {
    val data = new DataInputStream(new ByteArrayInputStream(bytes))
    (0 until data.readInt()).map { _ =>
      val fragment = data.readLong()
      data.readInt()
      val rows = new RoaringBitmap()
      rows.deserialize(data)
      fragment -> rows
    }
  }
}

final class LanceDeltaWriter(spec: WriteSpec, sparkSchema: StructType) extends DeltaWriter[InternalRow] {
  private val deleted = mutable.HashMap.empty[Long, RoaringBitmap]
  private var inserts: Option[LanceDataWriter] = None
  private var updates: Option[LanceDataWriter] = None
  private val updatedAddresses = mutable.ArrayBuilder.make[Long]

  override def delete(metadata: InternalRow, id: InternalRow): Unit = {
    val address = id.getLong(0)
    deleted.getOrElseUpdate(address >>> 32, new RoaringBitmap()).add((address & 0xFFFFFFFFL).toInt)
  }

  /** Only for tables with stable row ids (otherwise Spark sends an update as a delete and an insert). */
  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = {
    delete(metadata, id)
    updatedAddresses += id.getLong(0)
    updates.getOrElse { val w = new LanceDataWriter(spec, sparkSchema); updates = Some(w); w }.write(row)
  }

  override def insert(row: InternalRow): Unit =
    inserts.getOrElse { val w = new LanceDataWriter(spec, sparkSchema); inserts = Some(w); w }.write(row)

  override def commit(): WriterCommitMessage = {
    val written = inserts.map(_.commit().asInstanceOf[LanceCommitMessage]).getOrElse(LanceCommitMessage(Nil, Nil))
    val rewritten = updates.map(_.commit().asInstanceOf[LanceCommitMessage]).getOrElse(LanceCommitMessage(Nil, Nil))
    LanceDeltaMessage(LanceDeltaMessage.encode(deleted), written.fragments, written.files ++ rewritten.files,
      rewritten.fragments, updatedAddresses.result())
  }

  override def abort(): Unit = { inserts.foreach(_.abort()); updates.foreach(_.abort()) }

  override def close(): Unit = try inserts.foreach(_.close()) finally updates.foreach(_.close())
}

final class LanceDeltaWriterFactory(spec: WriteSpec, sparkSchema: StructType) extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] = new LanceDeltaWriter(spec, sparkSchema)
}

/**
 * The driver side of a row-level operation: new deletion files for the fragments that lost rows, then one commit
 * on top of the version the operation read. A concurrent change that deleted other rows of the same fragments is
 * merged by the commit; one that deleted or updated the same rows, or removed or compacted those fragments, fails
 * the statement (run it again). Files written for a commit that did not happen are deleted.
 */
final class LanceDeltaBatchWrite(table: LanceTable, spec: WriteSpec, sparkSchema: StructType, cmd: Command)
    extends DeltaBatchWrite {
  @volatile private var stateUnknown = false
  private val deletionFiles = mutable.ArrayBuffer.empty[String]

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory =
    new LanceDeltaWriterFactory(spec, sparkSchema)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = LanceSparkException.translate {
    val deltas = messages.toSeq.collect { case m: LanceDeltaMessage => m }
    val deleted = mutable.HashMap.empty[Long, RoaringBitmap]
    deltas.foreach(d => LanceDeltaMessage.decode(d.deleted).foreach { case (f, rows) =>
      deleted.getOrElseUpdate(f, new RoaringBitmap()).or(rows)
    })
    val snapshot = table.snapshot
    val fragments = snapshot.fragments.map(f => f.id -> f).toMap
    val outcomes = deleted.toSeq.sortBy(_._1).map { case (id, rows) =>
      val fragment = fragments.getOrElse(id, throw new IllegalStateException(s"row address of unknown fragment $id"))
      Deletions.delete(snapshot, fragment, rows)
    }
    outcomes.foreach { case u: Deletions.Updated => deletionFiles += u.file; case _ => }
    val updated = outcomes.collect { case u: Deletions.Updated => u.fragment }
    val deletedRows = outcomes.collect { case u: Deletions.Updated => u.fragment.getId -> u.deleted }.toMap
    val removed = outcomes.collect { case Deletions.Removed(id) => id }
    val added = deltas.flatMap(_.fragments).map(TableProtos.DataFragment.parseFrom) ++
      deltas.flatMap(d => withRowIds(snapshot, d.updatedFragments.map(TableProtos.DataFragment.parseFrom), d.updatedAddresses))
    // A statement that changed no row commits nothing.
    if (updated.nonEmpty || removed.nonEmpty || added.nonEmpty) {
      val op =
        if (cmd == Command.DELETE && added.isEmpty) Operation.Delete(updated, removed, "", deletedRows)
        else Operation.Update(removed, updated, added, deletedRows)
      try {
        Committer.commit(new HadoopStorage(spec.conf.value), spec.root, Transaction.create(snapshot.version, op),
          Committer.Options(maxRetries = spec.options.commitRetries))
      } catch {
        case e: CommitStateUnknownException => stateUnknown = true; throw e
      }
    }
  }

  /**
   * The updated rows' fragments with the row ids and creation versions of the rows they replace (their old
   * addresses, in order).
   */
  private def withRowIds(snapshot: io.sparklance.core.table.Snapshot, fragments: Seq[TableProtos.DataFragment],
      addresses: Array[Long]): Seq[TableProtos.DataFragment] = {
    val byId = snapshot.fragments.map(f => f.id -> f).toMap
    val ids = mutable.HashMap.empty[Long, Option[io.sparklance.core.table.RowIdSequence]]
    val created = mutable.HashMap.empty[Long, Option[io.sparklance.core.table.RowVersionSequence]]
    var at = 0
    fragments.map { f =>
      val n = f.getPhysicalRows.toInt
      val rowIds = new Array[Long](n)
      val versions = new Array[Long](n)
      var hasCreated = true
      (0 until n).foreach { i =>
        val address = addresses(at + i)
        val frag = byId(address >>> 32)
        val offset = (address & 0xFFFFFFFFL).toInt
        rowIds(i) = ids.getOrElseUpdate(frag.id, snapshot.rowIds(frag)).map(_(offset)).getOrElse(address)
        created.getOrElseUpdate(frag.id, snapshot.createdAtVersions(frag)) match {
          case Some(c) => versions(i) = c(offset)
          case None => hasCreated = false
        }
      }
      at += n
      val b = f.toBuilder.setInlineRowIds(io.sparklance.core.table.RowIdSequence.encode(rowIds).toByteString)
      if (hasCreated) b.setInlineCreatedAtVersions(io.sparklance.core.table.RowVersionSequence.encode(versions).toByteString)
      b.build()
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    if (stateUnknown) return
    val storage = new HadoopStorage(spec.conf.value)
    val files = deletionFiles.toSeq ++ messages.toSeq.collect { case m: LanceDeltaMessage => m.files }.flatten
    files.foreach(f => try storage.delete(f) catch { case NonFatal(_) => })
  }
}
