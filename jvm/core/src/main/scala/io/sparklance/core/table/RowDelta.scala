package io.sparklance.core.table

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import scala.collection.mutable

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.InconsistentTableException
import io.sparklance.core.format.{RowIdSequence, RowVersionSequence}
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.Deletions
import io.sparklance.proto.TableProtos

/**
 * Rows to delete, by row address (fragment id in the high 32 bits, row offset in the low 32), collected by the
 * tasks of a row-level change and merged on the machine that commits. Serializable as compact bytes.
 */
final class DeletedRows extends Serializable {
  private val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]

  def add(rowAddress: Long): Unit =
    byFragment.getOrElseUpdate(rowAddress >>> 32, new RoaringBitmap()).add((rowAddress & 0xFFFFFFFFL).toInt)

  def addAll(other: DeletedRows): Unit = other.byFragment.foreach { case (f, rows) =>
    byFragment.getOrElseUpdate(f, new RoaringBitmap()).or(rows)
  }

  def isEmpty: Boolean = byFragment.isEmpty

  private[table] def fragments: Seq[(Long, RoaringBitmap)] = byFragment.toSeq.sortBy(_._1)

  /** The rows as bytes: per fragment its id and a Roaring bitmap of offsets. */
  def toBytes: Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val data = new DataOutputStream(out)
    data.writeInt(byFragment.size)
    byFragment.foreach { case (fragment, rows) =>
      rows.runOptimize()
      data.writeLong(fragment)
      data.writeInt(rows.serializedSizeInBytes())
      rows.serialize(data)
    }
    data.flush()
    out.toByteArray
  }
}

object DeletedRows {
  def fromBytes(bytes: Array[Byte]): DeletedRows = {
    val rows = new DeletedRows
    val data = new DataInputStream(new ByteArrayInputStream(bytes))
    (0 until data.readInt()).foreach { _ =>
      val fragment = data.readLong()
      data.readInt()
      val bitmap = new RoaringBitmap()
      bitmap.deserialize(data)
      rows.byFragment.getOrElseUpdate(fragment, new RoaringBitmap()).or(bitmap)
    }
    rows
  }
}

/**
 * DELETE, UPDATE and MERGE of a pinned version as one commit ([[Table.newRowDelta]], [[Table.newDelete]]): the
 * deleted rows of every fragment are merged with its existing deletion vector into one new deletion file (a
 * fragment whose rows are all deleted leaves the table), and fragments of inserted rows are added. On tables with
 * stable row ids, updated rows come as fragments of their own with the old address of each row: they keep their
 * row ids and creation versions, and get the commit's version as their last-updated version (as upstream does).
 *
 * The commit builds on the version read; a concurrent change that deleted other rows of the same fragments is
 * merged, one that deleted or updated the same rows, or removed or rewrote those fragments, is a conflict.
 */
final class RowDelta private[table] (table: Table, snapshot: Snapshot, deletesOnly: Boolean) extends PendingCommit(table) {
  private val deleted = new DeletedRows
  private val inserted = mutable.ArrayBuffer.empty[TableProtos.DataFragment]
  private val updated = mutable.ArrayBuffer.empty[(Seq[TableProtos.DataFragment], Array[Long])]
  private val deletionFiles = mutable.ArrayBuffer.empty[String]
  retriesFrom(snapshot)

  /** Whether updated rows keep their identity (stable row ids): else an update is a delete and an insert. */
  def keepsRowIds: Boolean = snapshot.manifest.hasStableRowIds

  def withCommitRetries(n: Int): RowDelta = { commitRetries = n; this }

  def delete(rows: DeletedRows): RowDelta = { deleted.addAll(rows); this }

  def insert(written: WrittenFiles): RowDelta = { inserted ++= written.protos; this }

  /**
   * New versions of rows whose old versions are deleted, in `written`'s row order; `oldAddresses` holds each row's
   * old row address. Only on tables with stable row ids ([[keepsRowIds]]).
   */
  def update(written: WrittenFiles, oldAddresses: Array[Long]): RowDelta = {
    if (written.fragments.nonEmpty) updated += ((written.protos, oldAddresses))
    this
  }

  /** Writes the deletion files and commits; None when no row changed (nothing is committed then). */
  def commit(): Option[Long] = committing {
    val fragments = snapshot.fragments.map(f => f.id -> f).toMap
    val outcomes = deleted.fragments.map { case (id, rows) =>
      val fragment = fragments.getOrElse(id, throw new InconsistentTableException(snapshot.root, s"a row address " +
        s"names fragment $id, which version ${snapshot.version} does not have"))
      Deletions.delete(snapshot.storage, snapshot.layout, fragment, rows)
    }
    outcomes.foreach { case u: Deletions.Updated => deletionFiles += u.file; case _ => }
    val changed = outcomes.collect { case u: Deletions.Updated => u.fragment }
    val deletedRows = outcomes.collect { case u: Deletions.Updated => u.fragment.getId -> u.deleted }.toMap
    val removed = outcomes.collect { case Deletions.Removed(id) => id }
    val added = inserted.toSeq ++ updated.flatMap { case (fs, addresses) => withRowIds(fs, addresses) }
    if (changed.isEmpty && removed.isEmpty && added.isEmpty) None
    else {
      val op =
        if (deletesOnly && added.isEmpty) Operation.Delete(changed, removed, "", deletedRows)
        else Operation.Update(removed, changed, added, deletedRows)
      Some(table.commit(Transaction.create(snapshot.version, op), Committer.Options(maxRetries = commitRetries)))
    }
  }

  /** Deletes the deletion files written and `files` (the data files written for this change), unless unknown. */
  override def abort(files: Seq[String]): Unit = super.abort(deletionFiles.toSeq ++ files)

  /** The updated rows' fragments with the row ids and creation versions of the rows they replace. */
  private def withRowIds(fragments: Seq[TableProtos.DataFragment], addresses: Array[Long]): Seq[TableProtos.DataFragment] = {
    val byId = snapshot.fragments.map(f => f.id -> f).toMap
    val ids = mutable.HashMap.empty[Long, Option[RowIdSequence]]
    val created = mutable.HashMap.empty[Long, Option[RowVersionSequence]]
    var at = 0
    fragments.map { f =>
      val n = f.getPhysicalRows.toInt
      val rowIds = new Array[Long](n)
      val versions = new Array[Long](n)
      var hasCreated = true
      var i = 0
      while (i < n) {
        val address = addresses(at + i)
        val frag = byId(address >>> 32)
        val offset = (address & 0xFFFFFFFFL).toInt
        rowIds(i) = ids.getOrElseUpdate(frag.id, snapshot.rowIds(frag)).map(_(offset)).getOrElse(address)
        created.getOrElseUpdate(frag.id, snapshot.createdAtVersions(frag)) match {
          case Some(c) => versions(i) = c(offset)
          case None => hasCreated = false
        }
        i += 1
      }
      at += n
      val b = f.toBuilder.setInlineRowIds(RowIdSequence.encode(rowIds).toByteString)
      if (hasCreated) b.setInlineCreatedAtVersions(RowVersionSequence.encode(versions).toByteString)
      b.build()
    }
  }
}
