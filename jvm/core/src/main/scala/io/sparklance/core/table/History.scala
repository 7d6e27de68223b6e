package io.sparklance.core.table

import java.time.Instant

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.format.{Manifest, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TransactionProtos

/** The history of a table's versions ([[Table.history]]). */
object History {

  /** One line of a table's history. */
  final case class Entry(version: Long, timestamp: Instant, operation: String, rows: Long, fragments: Int,
      rowsAdded: Long, rowsDeleted: Long, writtenBy: String)

  /**
   * Every version, ascending: when, by what operation (from its transaction file), rows and fragments, and the
   * rows it added (live rows its fragments gained, new fragments included) and deleted (live rows its fragments
   * lost, removed fragments included). A compaction both adds and deletes the rows it moved.
   */
  def of(storage: Storage, commits: CommitHandler, root: String): Seq[Entry] = {
    var previous = Map.empty[Long, Long]
    Dataset.open(storage, root, commits).history().map { s =>
      val m = s.manifest
      val op = operationOf(storage, root, s).getOrElse("Unknown")
      val live = m.fragments.map(f => f.id -> f.numRows).toMap
      val added = live.map { case (id, n) => n - previous.getOrElse(id, 0L) }.filter(_ > 0).sum
      val deleted = previous.map { case (id, n) => n - live.getOrElse(id, 0L) }.filter(_ > 0).sum
      previous = live
      Entry(m.version, m.timestamp, op, m.numRows, m.fragments.size, added, deleted, m.writerLibrary.getOrElse(""))
    }
  }

  /**
   * The properties of each version's transaction, newest version first, read as the iterator reaches them; a
   * version whose transaction file is missing or unreadable has none.
   */
  def committedProperties(storage: Storage, commits: CommitHandler, root: String): Iterator[(Long, Map[String, String])] =
    Dataset.open(storage, root, commits).newestFirst().map { s =>
      s.version -> transactionOf(storage, root, s.manifest).map(_.getTransactionPropertiesMap.asScala.toMap).getOrElse(Map.empty)
    }

  /** The operation that made `snapshot` (`Append`, `Delete`, `Rewrite`, ...), from its transaction file, if readable. */
  def operationOf(storage: Storage, root: String, snapshot: Snapshot): Option[String] =
    transactionOf(storage, root, snapshot.manifest).map(_.getOperationCase.name.toLowerCase.capitalize)

  private def transactionOf(storage: Storage, root: String, m: Manifest): Option[TransactionProtos.Transaction] =
    m.transactionFile.flatMap { name =>
      try Some(TransactionProtos.Transaction.parseFrom(storage.readAll(TableLayout.transactionPath(root, name))))
      catch { case NonFatal(_) => None }
    }
}
