package io.sparklance.core.table

import java.time.Instant

import scala.collection.immutable.SortedMap
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{FileVersion, InvalidArgumentException, NotATableException}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter

/**
 * A Lance table at a root directory: the core's front door. Everything an engine does with a table goes through
 * it: pinning a [[Snapshot]] (by version, time, tag or branch), planning a [[Scan]] and reading its tasks, writing
 * data files and committing them ([[newAppend]], [[newOverwrite]], [[newRowDelta]], [[newSchemaChange]],
 * [[newColumns]]), and maintenance (tags, restore, compaction, cleanup, history).
 *
 * Holds no cached state: each call looks at the store again, so it always sees the latest commits. Cheap to make:
 * executors open the table again from its root and storage settings.
 */
final class Table private (val storage: Storage, val commits: CommitHandler, val root: String) {

  private def dataset(): Dataset = Dataset.open(storage, root, commits)

  // ------------------------------------------------------------------------------------------------ versions

  def latestVersion(): Long = dataset().latestVersion()

  /** The version `at` names, pinned. */
  def snapshot(at: TimeTravel): Snapshot = TimeTravel.checkout(dataset(), at)

  def latest(): Snapshot = snapshot(TimeTravel.Latest)

  /** The latest snapshot, or None when there is no table at the root yet. */
  def latestIfExists(): Option[Snapshot] =
    try Some(latest()) catch { case _: NotATableException => None }

  /** Every tag, by name. */
  def tags(): SortedMap[String, Tag] = dataset().tags()

  /** Creates tag `name` for `version`; a tag of that name must not exist. */
  def createTag(name: String, version: Long): Tag = TableOps.createTag(storage, root, name, version)

  def deleteTag(name: String): Unit = TableOps.deleteTag(storage, root, name)

  /** Every version, ascending, with what changed. */
  def history(): Seq[TableOps.HistoryEntry] = TableOps.history(storage, root)

  /** Commits the table as it was at `version` as a new version; returns the new version. */
  def restore(version: Long): Long = TableOps.restore(storage, root, version)

  /** Restores the version tag `name` points to; returns the new version. */
  def restoreTag(name: String): Long = restore(dataset().checkoutTag(name).version)

  // ------------------------------------------------------------------------------------------------ maintenance

  /**
   * Merges fragments smaller than `targetRowsPerFragment` rows and rewrites fragments with many deleted rows, as one
   * new version (see [[Compaction]]).
   */
  def compact(targetRowsPerFragment: Long): Compaction.Result =
    Compaction.compact(storage, root, Compaction.Options(targetRowsPerFragment = targetRowsPerFragment))

  /** Removes versions older than `olderThan` (but the latest and tagged ones) and the files only they need. */
  def cleanup(olderThan: Instant): Cleanup.Result = Cleanup.run(storage, root, olderThan, dryRun = false)

  /** What [[cleanup]] would remove, removing nothing. */
  def cleanupPlan(olderThan: Instant): Cleanup.Result = Cleanup.run(storage, root, olderThan, dryRun = true)

  /** Commits data files already written under `data/` (file names) as one appended version. */
  def appendFiles(names: Seq[String]): Long = TableOps.commitFiles(storage, root, names, overwrite = false)

  /** Commits data files already written under `data/` as one version replacing the table (or creating it). */
  def overwriteWithFiles(names: Seq[String]): Long = TableOps.commitFiles(storage, root, names, overwrite = true)

  // ------------------------------------------------------------------------------------------------ reads

  /** Reads a task of a scan of this table (planned anywhere, read here), in batches owned by the caller. */
  def read(task: ScanTask, allocator: BufferAllocator): TaskReader = new TaskReader(storage, task, allocator)

  // ------------------------------------------------------------------------------------------------ writes

  /**
   * Writes rows of `schema` into new data files of file version `version`, one fragment per file of at most
   * `maxRowsPerFile` rows, whose columns aim at pages of `maxPageBytes`. Nothing is part of the table until a commit
   * takes the [[WrittenFiles]].
   */
  def newDataWriter(schema: LanceSchema, version: FileVersion, maxRowsPerFile: Long, maxPageBytes: Long): DataWriter =
    new DataWriter(new FragmentWriter(storage, root, schema, version, FragmentWriter.Options(maxRowsPerFile, maxPageBytes)))

  /** Adds rows to the table as it is after `readVersion`. */
  def newAppend(readVersion: Long): DataCommit = new DataCommit(this, readVersion, None)

  /**
   * Replaces every row and the schema (or creates the table when `readVersion` is 0) with files written in
   * `version`; `config` is stored as table config.
   */
  def newOverwrite(readVersion: Long, schema: LanceSchema, version: FileVersion, config: Map[String, String]): DataCommit =
    new DataCommit(this, readVersion, Some(DataCommit.Replace(schema, version, config)))

  /** Deletes, updates and inserts rows of `snapshot` as one commit ([[RowDelta]]). */
  def newRowDelta(snapshot: Snapshot): RowDelta = new RowDelta(this, snapshot, deletesOnly = false)

  /** Deletes rows of `snapshot`; committed as a Delete (or as an Update when rows are inserted too). */
  def newDelete(snapshot: Snapshot): RowDelta = new RowDelta(this, snapshot, deletesOnly = true)

  /** Changes the schema of `snapshot` without touching data ([[SchemaChange]]). */
  def newSchemaChange(snapshot: Snapshot): SchemaChange = new SchemaChange(this, snapshot)

  /** Adds columns with values to every fragment of `snapshot` ([[NewColumns]]). */
  def newColumns(snapshot: Snapshot, columns: Seq[LanceSchema]): NewColumns = new NewColumns(this, snapshot, columns)

  /** Writes the files of columns added by a [[NewColumns]] (on any machine, from its [[NewColumns.Spec]]). */
  def newColumnWriter(spec: NewColumns.Spec): NewColumns.Writer = new NewColumns.Writer(storage, root, spec)

  /**
   * Drops whole fragments of `snapshot` from the table by metadata alone; `predicate` describes why (e.g. the SQL
   * condition). Returns the new version, or None when no fragment was given.
   */
  def deleteFragments(snapshot: Snapshot, ids: Seq[Long], predicate: String, commitRetries: Int): Option[Long] =
    if (ids.isEmpty) None
    else Some(commit(Transaction.create(snapshot.version, Operation.Delete(Nil, ids, predicate)),
      Committer.Options(maxRetries = commitRetries)))

  /** Deletes files written for a commit that did not happen; best effort. */
  def discard(files: Seq[String]): Unit = files.foreach(f => try storage.delete(f) catch { case NonFatal(_) => () })

  private[table] def commit(txn: Transaction, options: Committer.Options): Long =
    Committer.commit(storage, commits, root, txn, options)

  override def toString: String = s"Table($root)"
}

object Table {

  /**
   * The table at `root` of `storage`, whose versions `commits` decides (the table may not exist yet: the first
   * commit creates it).
   */
  def open(storage: Storage, commits: CommitHandler, root: String): Table = new Table(storage, commits, root.stripSuffix("/"))

  /**
   * The table at `root` (a path or URI any Hadoop file system serves: `file:`, `s3a:`, `hdfs:`, ...), with that
   * file system's settings and sparklance's own (`sparklance.*`: commit and read settings) from `conf`.
   */
  def forPath(root: String, conf: Configuration): Table = {
    val storage = new HadoopStorage(conf)
    open(storage, CommitHandler.fromConf(storage, conf), root)
  }

  /**
   * Checks sparklance's settings among `settings` (keys `sparklance.*`: storage and commit settings), wherever they
   * were given: every key must be one this version knows and every value must parse, on every file system, so that
   * a misspelt or malformed setting is an error even where it would not be read (a local table ignores the
   * object-store settings).
   */
  def checkSettings(settings: Map[String, String]): Unit = {
    val known = HadoopStorage.Settings ++ CommitHandler.Settings
    settings.foreach { case (key, value) =>
      val check = known.getOrElse(key, throw new InvalidArgumentException(s"Unknown setting $key. The sparklance " +
        s"settings are: ${known.keys.toSeq.sorted.mkString(", ")} (docs/configuration.md)."))
      check(value.trim).foreach(expected =>
        throw new InvalidArgumentException(s"Setting $key must be $expected, not '$value'."))
    }
  }

  /**
   * Checks that a new table may be created at `root`: the directory is missing, empty, or holds only what a Lance
   * table holds.
   */
  def checkCanCreate(root: String, conf: Configuration): Unit = Dataset.checkCanCreate(new HadoopStorage(conf), root)
}
