package io.sparklance.core.table

import java.time.Instant

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.commit.FileSystemCommitHandler
import io.sparklance.core.format.{DataFile, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TransactionProtos

/**
 * Table maintenance that is not a data change: tags (`_refs/tags/`, as pylance keeps them), restoring an earlier
 * version as a new one, and the history of versions.
 */
object TableOps {

  /** Creates tag `name` for `version`; a tag of that name must not exist. */
  def createTag(storage: Storage, root: String, name: String, version: Long): Tag = {
    Tag.validateName(name)
    val snapshot = Dataset.open(storage, root).checkout(version)
    val now = Instant.now()
    val tag = Tag(name, version, None, Some(now), Some(now), Some(storage.open(snapshot.manifest.path).length))
    // One writer creates a tag, as one commits a version: where the store has no put-if-absent, the same rules.
    if (!FileSystemCommitHandler.forStorage(storage).createIfAbsent(Storage.join(root, Tag.relativePath(name)), Tag.encode(tag))) {
      throw new InvalidArgumentException(s"Table $root already has a tag '$name'. Delete it first to move it.")
    }
    tag
  }

  /** Deletes tag `name`; deleting a tag that does not exist is an error naming the tags that do. */
  def deleteTag(storage: Storage, root: String, name: String): Unit = {
    val tags = Dataset.open(storage, root).tags()
    if (!tags.contains(name)) throw new io.sparklance.core.TagNotFoundException(root, name, tags.keys)
    storage.delete(Storage.join(root, Tag.relativePath(name)))
  }

  /**
   * Commits the table as it was at `version` as a new version (earlier versions, including the ones restored over,
   * stay readable). Returns the new version.
   */
  def restore(storage: Storage, root: String, version: Long): Long = {
    val ds = Dataset.open(storage, root)
    val latest = ds.latestVersion()
    if (version == latest) {
      throw new InvalidArgumentException(s"Version $version of $root is already the latest: nothing to restore.")
    }
    Committer.commit(storage, ds.commits, root, Transaction.create(latest, Operation.Restore(version)), Committer.Options())
  }

  /**
   * Commits Lance data files already written under the table's `data/` directory (by any writer, e.g. tasks of a
   * pipeline) as one new version: an append, or an overwrite (also for a new table) whose schema is the first
   * file's. One fragment per file. Returns the new version.
   */
  def commitFiles(storage: Storage, root: String, names: Seq[String], overwrite: Boolean): Long = {
    if (names.isEmpty) throw new InvalidArgumentException(s"No data files to commit to $root.")
    val readVersion = try Dataset.open(storage, root).latestVersion() catch { case _: io.sparklance.core.NotATableException => 0L }
    var schema: Option[io.sparklance.core.schema.LanceSchema] = None
    val fragments = names.map { name =>
      val reader = io.sparklance.core.file.LanceFileReader.open(storage, Storage.join(root, s"data/$name"))
      try {
        if (schema.isEmpty) schema = Some(reader.metadata.schema)
        val file = DataFile.entry(name, reader.fieldColumns, reader.version, reader.metadata.fileSize)
        io.sparklance.proto.TableProtos.DataFragment.newBuilder().addFiles(file).setPhysicalRows(reader.numRows).build()
      } finally reader.close()
    }
    val op = if (overwrite || readVersion == 0) Operation.overwrite(fragments, schema.get) else Operation.Append(fragments)
    val first = fragments.head.getFiles(0)
    Committer.commit(storage, root, Transaction.create(readVersion, op),
      Committer.Options(newTableFileVersion = s"${first.getFileMajorVersion}.${first.getFileMinorVersion}"))
  }

  /** One line of a table's history. */
  final case class HistoryEntry(version: Long, timestamp: Instant, operation: String, rows: Long, fragments: Int,
      rowsAdded: Long, rowsDeleted: Long, writtenBy: String)

  /**
   * Every version, ascending: when, by what operation (from its transaction file), rows and fragments, and the
   * rows it added (live rows its fragments gained, new fragments included) and deleted (live rows its fragments
   * lost, removed fragments included). A compaction both adds and deletes the rows it moved.
   */
  def history(storage: Storage, root: String): Seq[HistoryEntry] = {
    var previous = Map.empty[Long, Long]
    Dataset.open(storage, root).history().map { s =>
      val m = s.manifest
      val op = m.transactionFile.flatMap { name =>
        try {
          val t = TransactionProtos.Transaction.parseFrom(storage.readAll(TableLayout.transactionPath(root, name)))
          Some(t.getOperationCase.name.toLowerCase.capitalize)
        } catch { case scala.util.control.NonFatal(_) => None }
      }.getOrElse("Unknown")
      val live = m.fragments.map(f => f.id -> f.numRows).toMap
      val added = live.map { case (id, n) => n - previous.getOrElse(id, 0L) }.filter(_ > 0).sum
      val deleted = previous.map { case (id, n) => n - live.getOrElse(id, 0L) }.filter(_ > 0).sum
      previous = live
      HistoryEntry(m.version, m.timestamp, op, m.numRows, m.fragments.size, added, deleted, m.writerLibrary.getOrElse(""))
    }
  }
}
