package io.sparklance.core.table

import java.time.Instant

import scala.collection.immutable.SortedMap
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{FileVersion, InvalidArgumentException, NotATableException, TagNotFoundException}
import io.sparklance.core.commit.{CommitHandler, FileSystemCommitHandler}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.DataFile
import io.sparklance.core.index.{IndexAppend, IndexKind}
import io.sparklance.core.schema.{LanceSchema, LogicalType, PrimaryKey}
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.util.Parse
import io.sparklance.core.write.FragmentWriter
import io.sparklance.proto.TableProtos

/**
 * A Lance table at a root directory: the core's front door. Everything an engine does with a table goes through
 * it: pinning a [[Snapshot]] (by version, time, tag or branch), planning a [[Scan]] and reading its tasks, writing
 * data files and committing them ([[newAppend]], [[newOverwrite]], [[newRowDelta]], [[newSchemaChange]],
 * [[newColumns]]), and maintenance (tags, restore, compaction, cleanup, history).
 *
 * Holds no cached state: each call looks at the store again, so it always sees the latest commits. Cheap to make:
 * executors open the table again from its root and storage settings.
 */
final class Table private (val storage: Storage, handler: () => CommitHandler, val root: String) {

  /** Who decides a version of this table; made on first use, so that reading a scan's tasks never makes one. */
  lazy val commits: CommitHandler = handler()

  private def dataset(): Dataset = Dataset.open(storage, root, commits)

  // ------------------------------------------------------------------------------------------------ versions

  def latestVersion(): Long = dataset().latestVersion()

  /** The version `at` names, pinned. */
  def snapshot(at: TimeTravel): Snapshot = TimeTravel.checkout(dataset(), at)

  def latest(): Snapshot = snapshot(TimeTravel.Latest)

  /** The latest snapshot, or None when there is no table at the root yet. */
  def latestIfExists(): Option[Snapshot] =
    try Some(latest()) catch { case _: NotATableException => None }

  /** Every tag of the table, of any branch, by name. */
  def tags(): SortedMap[String, Tag] = dataset().tags()

  // ------------------------------------------------------------------------------------------------ branches

  /** The branch this table is (when its root is `<main root>/tree/<name>`); None for the main table. */
  def branchName: Option[String] = dataset().branchName

  /** Every branch of the table (pylance 14's `_refs/branches/`), by name. */
  def branches(): SortedMap[String, Branch] = dataset().branches()

  /**
   * Branch `name` of this table as a table of its own (under `tree/<name>/` of the main root): read, written and
   * maintained as any table; its tags are the table's. `main` is the main table.
   */
  def branch(name: String): Table = {
    val ds = dataset()
    if (name == "main") Table.open(storage, commits, ds.mainRoot)
    else Table.open(storage, commits, ds.branch(name).root)
  }

  /**
   * Creates branch `name` from the version `from` pins (of main, or of a branch with [[TimeTravel.OnBranch]] or a tag
   * on a branch), as pylance's `create_branch` does ([[Branches.create]]); a branch of that name must not exist.
   */
  def createBranch(name: String, from: TimeTravel): Branch = {
    val ds = dataset()
    val main = if (ds.branchName.isEmpty) ds else Dataset.open(storage, ds.mainRoot, commits)
    Branches.create(storage, ds.mainRoot, name, TimeTravel.checkout(main, from))
  }

  /**
   * Deletes branch `name` and its files ([[Branches.delete]]); a missing branch, or one another branch was made from,
   * is an error.
   */
  def deleteBranch(name: String): Unit = Branches.delete(storage, dataset().mainRoot, name)

  /**
   * Creates tag `name` for `version` (under `_refs/tags/`, as pylance keeps them); a tag of that name must not
   * exist. One writer creates a tag, as one commits a version: where the store has no put-if-absent, the same rules
   * apply.
   */
  def createTag(name: String, version: Long): Tag = {
    Tag.validateName(name)
    val now = Instant.now()
    val ds = dataset()
    val tag = tagOf(ds, name, version, createdAt = Some(now), updatedAt = now)
    if (!FileSystemCommitHandler.forStorage(storage).createIfAbsent(tagPath(ds, name), Tag.encode(tag))) {
      throw new InvalidArgumentException(s"Table $root already has a tag '$name'. Delete it first to move it.")
    }
    tag
  }

  /**
   * Points the existing tag `name` at `version` (as pylance's `tags.update`), keeping when it was created; a tag
   * that does not exist is an error naming the tags that do.
   */
  def replaceTag(name: String, version: Long): Tag = {
    val ds = dataset()
    val all = ds.tags()
    val old = all.getOrElse(name, throw new TagNotFoundException(root, name, all.keys))
    val now = Instant.now()
    val tag = tagOf(ds, name, version, createdAt = old.createdAt, updatedAt = now)
    storage.overwrite(tagPath(ds, name), Tag.encode(tag))
    tag
  }

  /** Tags are the table's, of every branch: kept under `_refs/tags/` of the main root. */
  private def tagPath(ds: Dataset, name: String): String = Storage.join(ds.mainRoot, Tag.relativePath(name))

  /**
   * Tag `name` for `version` (which must exist) of this table (the branch it is, which the tag names), with the size
   * of the version's manifest.
   */
  private def tagOf(ds: Dataset, name: String, version: Long, createdAt: Option[Instant], updatedAt: Instant): Tag = {
    val manifest = ds.checkout(version).manifest.path
    Tag(name, version, ds.branchName, createdAt, Some(updatedAt), Some(storage.open(manifest).length))
  }

  /** Deletes tag `name`; deleting a tag that does not exist is an error naming the tags that do. */
  def deleteTag(name: String): Unit = {
    val ds = dataset()
    val all = ds.tags()
    if (!all.contains(name)) throw new TagNotFoundException(root, name, all.keys)
    storage.delete(tagPath(ds, name))
  }

  /**
   * Every version, ascending: when, by what operation, rows and fragments, and the rows it added and deleted
   * ([[History.of]]).
   */
  def history(): Seq[History.Entry] = History.of(storage, commits, root)

  /**
   * The properties each version's transaction was committed with ([[DataCommit.withProperties]]), newest version
   * first, read lazily: a streaming sink finds the last batch it committed by reading back only as far as that batch.
   */
  def committedProperties(): Iterator[(Long, Map[String, String])] = History.committedProperties(storage, commits, root)

  /**
   * The operation that made version `snapshot` of this table, as its transaction file names it (`Append`, `Delete`,
   * `Update`, `Overwrite`, `Rewrite`, `CreateIndex`, ...); None when the file is missing or unreadable.
   */
  def operationOf(snapshot: Snapshot): Option[String] = History.operationOf(storage, root, snapshot)

  /**
   * Commits the table as it was at `version` as a new version (earlier versions, including the ones restored over,
   * stay readable). Returns the new version.
   */
  def restore(version: Long): Long = {
    val latest = latestVersion()
    if (version == latest) {
      throw new InvalidArgumentException(s"Version $version of $root is already the latest: nothing to restore.")
    }
    commit(Transaction.create(latest, Operation.Restore(version)), Committer.Options())
  }

  /**
   * Sets and removes keys of the table's config (its properties) as one new version: an UpdateConfig transaction, as
   * pylance's `update_config` and `delete_config_keys` commit it; removing a key the config lacks does nothing. The
   * settings sparklance reads from the config (`batch_size`, `max_rows_per_file`, ...) must stay valid. Returns
   * the new version.
   */
  def updateConfig(upserts: Map[String, String], deletes: Set[String]): Long = {
    val both = upserts.keySet.intersect(deletes)
    if (both.nonEmpty) {
      throw new InvalidArgumentException(s"Table property ${both.toSeq.sorted.mkString(", ")} cannot be both set and removed.")
    }
    val snapshot = latest()
    val next = snapshot.config -- deletes ++ upserts
    ReadSettings(Settings.of(Map.empty, next))
    WriteSettings(Settings.of(Map.empty, next))
    commit(Transaction.create(snapshot.version, Operation.UpdateConfig(upserts, deletes)),
      Committer.Options(maxRetries = snapshot.commitRetries))
  }

  /**
   * Declares the table's unenforced primary key (lance-spark's `SET UNENFORCED PRIMARY KEY`, pylance's
   * `update_field_metadata` with the key's metadata) as one new version: each column, in the order given, gets
   * `lance-schema:unenforced-primary-key` and its position from 1. Lance records the key and never checks it. Columns
   * are top-level names or paths into structs (`s.x`) naming leaves (no structs, lists or maps), declared NOT NULL
   * with every struct around them; a table has one key, set once. Returns the new version.
   */
  def setPrimaryKey(columns: Seq[String]): Long = {
    if (columns.isEmpty) throw new InvalidArgumentException(s"A primary key of $root needs at least one column.")
    val twice = columns.diff(columns.distinct).distinct
    if (twice.nonEmpty) {
      throw new InvalidArgumentException(s"Primary key column ${twice.mkString(", ")} is listed more than once.")
    }
    val snapshot = latest()
    val schema = snapshot.schema
    val existing = PrimaryKey.fields(schema)
    if (existing.nonEmpty) {
      throw new InvalidArgumentException(s"$root already has an unenforced primary key " +
        s"(${existing.map(_.name).mkString(", ")}); it cannot be changed once set.")
    }
    val ids = columns.map { path =>
      val parts = path.split('.').toSeq
      val chain = parts.tail.scanLeft(schema.field(parts.head)) { (f, name) =>
        f.filter(_.logicalType == LogicalType.Struct).flatMap(_.child(name))
      }
      val field = chain.last.getOrElse(throw new InvalidArgumentException(s"No column '$path' in $root for its " +
        s"primary key: its columns are ${schema.fields.map(_.name).mkString(", ")} (name a struct's member as s.x)."))
      if (field.children.nonEmpty || field.logicalType == LogicalType.Struct) {
        throw new InvalidArgumentException(s"Primary key column '$path' is a ${field.logicalTypeName}: a key column " +
          "must be a primitive leaf (not a struct, list or map).")
      }
      chain.flatten.find(_.nullable).foreach { f =>
        throw new InvalidArgumentException(s"Primary key column '$path' must not be nullable, nor any struct around " +
          s"it, but '${f.name}' is: declare it NOT NULL when the table is created.")
      }
      field.id
    }
    val updates = ids.zipWithIndex.map { case (id, i) =>
      id -> Map(PrimaryKey.Key -> "true", PrimaryKey.PositionKey -> (i + 1).toString)
    }.toMap
    commit(Transaction.create(snapshot.version, Operation.UpdateConfig(Map.empty, Set.empty, fieldMetadata = updates)),
      Committer.Options(maxRetries = snapshot.commitRetries))
  }

  /**
   * Restores the version tag `name` points to, which must be a version of this table (of this branch); returns the
   * new version.
   */
  def restoreTag(name: String): Long = {
    val ds = dataset()
    val all = ds.tags()
    val tag = all.getOrElse(name, throw new TagNotFoundException(root, name, all.keys))
    if (tag.branch != ds.branchName) {
      def of(b: Option[String]) = b.map(n => s"branch '$n'").getOrElse("main")
      throw new InvalidArgumentException(s"Tag '$name' points to version ${tag.version} of ${of(tag.branch)}, not of " +
        s"${of(ds.branchName)} ($root): restore it on the branch it names.")
    }
    restore(ds.checkoutTag(name).version)
  }

  // ------------------------------------------------------------------------------------------------ maintenance

  /**
   * Merges fragments smaller than `targetRowsPerFragment` rows and rewrites fragments with many deleted rows, as one
   * new version (see [[Compaction]]).
   */
  def compact(targetRowsPerFragment: Long): Compaction.Result =
    compact(Compaction.Options(targetRowsPerFragment = targetRowsPerFragment))

  /** Compacts the table with these options ([[Compaction.Options]]). */
  def compact(options: Compaction.Options): Compaction.Result = Compaction.compact(this, options)

  /** Removes versions older than `olderThan` (but the latest and tagged ones) and the files only they need. */
  def cleanup(olderThan: Instant): Cleanup.Result = cleanup(Cleanup.Policy.olderThan(olderThan))

  /** What [[cleanup]] would remove, removing nothing. */
  def cleanupPlan(olderThan: Instant): Cleanup.Result = cleanupPlan(Cleanup.Policy.olderThan(olderThan))

  /** Removes the versions `policy` names and the files only they need ([[Cleanup.Policy]]). */
  def cleanup(policy: Cleanup.Policy): Cleanup.Result = Cleanup.run(this, policy, dryRun = false)

  /** What [[cleanup]] with `policy` would remove, removing nothing. */
  def cleanupPlan(policy: Cleanup.Policy): Cleanup.Result = Cleanup.run(this, policy, dryRun = true)

  /**
   * Commits Lance data files already written under the table's `data/` directory (by any writer, e.g. tasks of a
   * pipeline; file names) as one appended version, one fragment per file (a new table takes the first file's schema).
   */
  def appendFiles(names: Seq[String]): Long = commitFiles(names, replace = false)

  /** Commits data files already written under `data/` as one version replacing the table (or creating it). */
  def overwriteWithFiles(names: Seq[String]): Long = commitFiles(names, replace = true)

  private def commitFiles(names: Seq[String], replace: Boolean): Long = {
    if (names.isEmpty) throw new InvalidArgumentException(s"No data files to commit to $root.")
    val readVersion = latestIfExists().map(_.version).getOrElse(0L)
    val files = names.map { name =>
      val reader = LanceFileReader.open(storage, Storage.join(root, s"data/$name"))
      try { (reader.metadata.schema, DataFile.entry(name, reader.fieldColumns, reader.version, reader.metadata.fileSize), reader.numRows) }
      finally reader.close()
    }
    val fragments = files.map { case (_, file, rows) =>
      TableProtos.DataFragment.newBuilder().addFiles(file).setPhysicalRows(rows).build()
    }
    val op = if (replace || readVersion == 0) Operation.overwrite(fragments, files.head._1) else Operation.Append(fragments)
    val first = files.head._2
    commit(Transaction.create(readVersion, op),
      Committer.Options(newTableFileVersion = s"${first.getFileMajorVersion}.${first.getFileMinorVersion}"))
  }

  // ------------------------------------------------------------------------------------------------ indexes

  /**
   * A scalar index of `kind` (e.g. "btree") named `name` on `column` of `snapshot`, to build ([[IndexBuild]]) and
   * commit as one version. Options are checked now: an unknown option, column, kind or a taken name (unless
   * `replace`) is an error before anything is written. Without `train` the index is created empty, covering no
   * fragment (filters read the table as without it), as pylance's `train=False` creates it; OPTIMIZE INDEX
   * ([[newIndexUpdate]]) then indexes every fragment.
   */
  def newIndex(snapshot: Snapshot, name: String, column: String, kind: String, options: Map[String, String],
      replace: Boolean, train: Boolean = true): IndexBuild = {
    val lower = options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }
    val (field, k) = IndexBuild.check(snapshot, name, column, kind, lower, replace)
    new IndexBuild(this, snapshot, name, field, k, lower, replace, train = train)
  }

  /** Runs a task of an index build (on any machine, from its [[IndexBuild.Task]]); returns what its commit takes. */
  def runIndexTask(task: IndexBuild.Task): String = IndexBuild.run(storage, task)

  /**
   * A full-text (INVERTED) index named `name` on string column `column` of `snapshot`, to build
   * ([[FullTextIndexBuild]], one partition per fragment) and commit as one version; checked now like [[newIndex]].
   */
  def newFullTextIndex(snapshot: Snapshot, name: String, column: String, options: Map[String, String],
      replace: Boolean): FullTextIndexBuild =
    FullTextIndexBuild.create(this, snapshot, name, column,
      options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }, replace)

  /** Runs a task of a full-text index build (on any machine); returns what its commit takes. */
  def runFullTextIndexTask(task: FullTextIndexBuild.Task): String = FullTextIndexBuild.run(storage, task)

  /**
   * A vector index of type `kind` (`ivf_flat`, `ivf_pq`, `ivf_sq`) named `name` on vector column `column` of
   * `snapshot`, to build ([[VectorIndexBuild]]) and commit as one version. Checked now like [[newIndex]]; a vector
   * index type not built here is an [[io.sparklance.core.UnsupportedFeatureException]].
   */
  def newVectorIndex(snapshot: Snapshot, name: String, column: String, kind: String, options: Map[String, String],
      replace: Boolean): VectorIndexBuild =
    VectorIndexBuild.create(this, snapshot, name, column, kind,
      options.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v }, replace)

  /** Runs a task of a vector index build (on any machine); returns what its commit takes. */
  def runVectorIndexTask(task: VectorIndexBuild.Task): String = VectorIndexBuild.run(storage, task)

  /** Runs a graph task of an IVF_HNSW_* vector index build on this table's storage: the graph's path. */
  def runVectorGraphTask(task: VectorIndexBuild.GraphTask): String = VectorIndexBuild.runGraph(storage, task)

  /**
   * Index `name` brought up to date with `snapshot` (OPTIMIZE INDEX), to commit in its place: its rows merged with
   * those of the fragments it does not cover (appended or rewritten since it was built), which alone are read, as
   * upstream's `optimize_indices` does ([[IndexBuild]]), with the kind, column and options it was built with. An
   * index whose files this writer cannot merge (another layout, or missing) is rebuilt over every fragment.
   */
  def newIndexUpdate(snapshot: Snapshot, name: String): IndexBuild = newIndexUpdate(snapshot, name, Map.empty)

  /**
   * Full-text index `name` brought up to date with `snapshot` (OPTIMIZE INDEX), to run ([[FullTextIndexBuild]]) and
   * commit in its place: its segments as one index, without the documents of rows no longer in the table, and the
   * fragments it does not cover analysed into new partitions beside its own, holding the documents pylance 14's
   * `optimize_indices` keeps. Options are refused (the analysis is kept).
   */
  def newFullTextIndexUpdate(snapshot: Snapshot, name: String, requested: Map[String, String],
      merge: Option[Int] = None): FullTextIndexBuild = {
    val segments = snapshot.indexes.filter(_.name == name)
    if (!segments.exists(_.kind == IndexKind.Inverted)) {
      throw new InvalidArgumentException(s"Table $root has no full-text index named '$name'.")
    }
    val (base, unmerged) = IndexSegments.pick(segments, merge)
    FullTextIndexBuild.update(this, snapshot, name, base, unmerged, requested)
  }

  /** Whether `name` is a full-text index of `snapshot` (updated with [[newFullTextIndexUpdate]]). */
  def isFullTextIndex(snapshot: Snapshot, name: String): Boolean =
    snapshot.indexes.exists(i => i.name == name && i.kind == IndexKind.Inverted)

  /**
   * [[newIndexUpdate]] with options of the index's kind (`rows_per_zone`, ...): each must be the one the index was
   * built with, since the new entries are built with those. With `merge` (`num_indices_to_merge`), only the newest
   * `merge` segments are merged, as pylance 14 does it ([[IndexSegments]]).
   */
  def newIndexUpdate(snapshot: Snapshot, name: String, requested: Map[String, String],
      merge: Option[Int] = None): IndexBuild = {
    val segments = snapshot.indexes.filter(_.name == name)
    val existing = segments.headOption.getOrElse(throw new InvalidArgumentException(
      s"Table $root has no index named '$name'. Its indexes: " +
        (if (snapshot.indexes.isEmpty) "none." else snapshot.indexes.map(_.name).distinct.mkString(", ") + ".")))
    if (existing.kind == IndexKind.Vector) {
      throw new InvalidArgumentException(s"Index '$name' of $root is a vector index: bring it up to date with " +
        "newVectorIndexUpdate.")
    }
    if (existing.kind == IndexKind.Inverted) {
      throw new InvalidArgumentException(s"Index '$name' of $root is a full-text index: bring it up to date with " +
        "newFullTextIndexUpdate.")
    }
    if (!IndexKind.buildable.contains(existing.kind)) {
      throw new io.sparklance.core.UnsupportedFeatureException(s"Cannot rebuild index '$name' of $root: it is a " +
        s"${existing.kind} index, which sparklance does not build. Optimize it with pylance (optimize_indices).")
    }
    val column = (existing.fieldIds match {
      case Seq(id) => snapshot.schema.field(id).map(_.name)
      case _ => None
    }).getOrElse(throw new io.sparklance.core.UnsupportedFeatureException(
      s"Cannot rebuild index '$name' of $root: it does not index one column of the table."))
    val options = IndexBuild.optionsOf(snapshot, existing)
    requested.foreach { case (key, value) =>
      if (!options.get(key).exists(own => own == value || Parse.double(own).exists(o => Parse.double(value).contains(o)))) {
        throw new InvalidArgumentException(s"Index '$name' of $root was built with " + (options.get(key) match {
          case Some(own) => s"$key = $own; its new entries are built with that too, not $key = $value. Leave $key " +
            s"out, or rebuild the index with CREATE INDEX ... WITH (replace = true, $key = $value)."
          case None => s"options ${if (options.isEmpty) "(none recorded)" else options.keys.toSeq.sorted.mkString(", ")}" +
            s", and $key is not one of them: leave it out."
        }))
      }
    }
    val (field, kind) = IndexBuild.check(snapshot, name, column, existing.kind.name, options, replace = true)
    val keys = LanceFileReader.readField(if (kind == IndexKind.LabelList) field.children.head else field).getType
    // pylance 14 rebuilds an NGRAM index of a table with stable row ids over the live rows of every fragment, where it
    // merges one of row addresses with the new fragments' rows. An RTREE index of stable row ids is rebuilt likewise:
    // its rows cannot be told apart by fragment.
    val rebuilt = (kind == IndexKind.NGram || kind == IndexKind.RTree) && snapshot.hasStableRowIds
    if (rebuilt && merge.isDefined) {
      throw new io.sparklance.core.UnsupportedFeatureException(s"Cannot optimize index '$name' of $root with " +
        s"num_indices_to_merge: it is a $kind index of a table with stable row ids, which sparklance (as pylance 14) " +
        "rebuilds over every fragment into one segment. Leave num_indices_to_merge out.")
    }
    val (base, unmerged) = IndexSegments.pick(segments, merge)
    val mergeable = !rebuilt && base.forall { s =>
      s.kind == kind && s.fieldIds == existing.fieldIds && (try IndexAppend.mergeable(storage, snapshot.indexDir(s), kind, keys)
      catch {
        case NonFatal(e) =>
          Table.log.warn(s"Rebuilding index '$name' of $root over every fragment: its segment ${s.uuid} cannot be " +
            s"merged (${e.getMessage}).")
          false
      })
    }
    if (mergeable) new IndexBuild(this, snapshot, name, field, kind, options, replace = true, base, unmerged = unmerged)
    else new IndexBuild(this, snapshot, name, field, kind, options, replace = true)
  }

  /**
   * Vector index `name` brought up to date with `snapshot` (OPTIMIZE INDEX), to build ([[VectorIndexBuild]]) and
   * commit in its place: the rows of the fragments its segments do not cover, which alone are read, placed and
   * encoded with the model its segments share, written with their live rows into one segment, as upstream's
   * `optimize_indices` does. Segments of a type not extended (IVF_RQ, IVF_SQ for cosine or dot, ...) are an
   * [[io.sparklance.core.UnsupportedFeatureException]]; options given are refused (the model is kept).
   */
  def newVectorIndexUpdate(snapshot: Snapshot, name: String, requested: Map[String, String],
      merge: Option[Int] = None): VectorIndexBuild =
    VectorIndexBuild.update(this, snapshot, name, requested, merge = merge)

  /** [[newVectorIndexUpdate]] without options. */
  def newVectorIndexUpdate(snapshot: Snapshot, name: String): VectorIndexBuild = newVectorIndexUpdate(snapshot, name, Map.empty)

  /** Whether `name` is a vector index of `snapshot` (updated with [[newVectorIndexUpdate]], not [[newIndexUpdate]]). */
  def isVectorIndex(snapshot: Snapshot, name: String): Boolean =
    snapshot.indexes.exists(i => i.name == name && i.kind == IndexKind.Vector)

  /**
   * Drops every index named `name` (all its delta indexes) as one version: the manifest stops listing them; their
   * files stay until a cleanup of old versions. Returns the new version.
   */
  def dropIndex(name: String): Long = {
    val snapshot = latest()
    val dropped = snapshot.indexes.filter(_.name == name)
    if (dropped.isEmpty) {
      throw new InvalidArgumentException(s"Table $root has no index named '$name'. Its indexes: " +
        (if (snapshot.indexes.isEmpty) "none." else snapshot.indexes.map(_.name).distinct.mkString(", ") + "."))
    }
    commit(Transaction.create(snapshot.version, Operation.CreateIndex(Nil, dropped.map(_.proto))),
      Committer.Options(maxRetries = snapshot.commitRetries))
  }

  // ------------------------------------------------------------------------------------------------ reads

  /** Reads a task of a scan of this table (planned anywhere, read here), in batches owned by the caller. */
  def read(task: ScanTask, allocator: BufferAllocator): TaskReader = new TaskReader(storage, task, allocator)

  // ------------------------------------------------------------------------------------------------ writes

  /**
   * Writes rows of `schema` into new data files of file version `version`, one fragment per file of at most
   * `maxRowsPerFile` rows, whose columns aim at pages of `maxPageBytes`, named with `fileTag` (the pending commit's
   * [[PendingCommit.fileTag]], or none). Nothing is part of the table until a commit takes the [[WrittenFiles]].
   */
  def newDataWriter(schema: LanceSchema, version: FileVersion, maxRowsPerFile: Long, maxPageBytes: Long,
      fileTag: String = ""): DataWriter =
    new DataWriter(new FragmentWriter(storage, root, schema, version,
      FragmentWriter.Options(maxRowsPerFile, maxPageBytes, fileTag)))

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

  /** Rewrites columns `names` in place, fragment by fragment ([[ColumnUpdate]]); write their files with [[newColumnWriter]]. */
  def newColumnUpdate(snapshot: Snapshot, names: Seq[String]): ColumnUpdate = new ColumnUpdate(this, snapshot, names)

  /**
   * Writes the files of columns added by a [[NewColumns]] or rewritten by a [[ColumnUpdate]] (on any machine, from
   * its [[NewColumns.Spec]]).
   */
  def newColumnWriter(spec: NewColumns.Spec): NewColumns.Writer = new NewColumns.Writer(storage, root, spec)

  /**
   * Drops whole fragments of `snapshot` from the table by metadata alone; `predicate` describes why (e.g. the SQL
   * condition). Returns the new version, or None when no fragment was given.
   */
  def deleteFragments(snapshot: Snapshot, ids: Seq[Long], predicate: String): Option[Long] =
    if (ids.isEmpty) None
    else Some(commit(Transaction.create(snapshot.version, Operation.Delete(Nil, ids, predicate)),
      Committer.Options(maxRetries = snapshot.commitRetries)))

  /** Deletes files written for a commit that did not happen; best effort. */
  def discard(files: Seq[String]): Unit = files.foreach { f =>
    try storage.delete(f) catch { case NonFatal(_) => () }
    if (f.endsWith(".lance")) io.sparklance.core.file.BlobSidecars.deleteAll(storage, f)
  }

  /**
   * Deletes the data files named with `fileTag` ([[PendingCommit.fileTag]]): those of a write that did not commit,
   * including files of writers whose results were lost; best effort. Nothing for an empty tag.
   */
  private[table] def discardTagged(fileTag: String): Unit = if (fileTag.nonEmpty) {
    val listed = try storage.list(Storage.join(root, "data")) catch { case NonFatal(_) => Nil }
    val tagged = listed.filter(e => Storage.fileName(e.path).startsWith(fileTag + "-"))
    discard(tagged.filterNot(_.isDirectory).map(_.path))
    // Blob sidecar directories of data files whose writers' results were lost.
    tagged.filter(_.isDirectory).foreach(d => io.sparklance.core.file.BlobSidecars.deleteDirectory(storage, d.path))
  }

  private[table] def commit(txn: Transaction, options: Committer.Options): Long =
    Committer.commit(storage, commits, root, txn, options)

  override def toString: String = s"Table($root)"
}

object Table {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[Table])

  /**
   * The table at `root` of `storage`, whose versions `commits` decides (the table may not exist yet: the first
   * commit creates it).
   */
  def open(storage: Storage, commits: CommitHandler, root: String): Table = new Table(storage, () => commits, root.stripSuffix("/"))

  /**
   * The table at `root` (a path or URI any Hadoop file system serves: `file:`, `s3a:`, `hdfs:`, ...), with that
   * file system's settings and sparklance's own (`sparklance.*`: commit and read settings) from `conf`.
   */
  def forPath(root: String, conf: Configuration): Table = {
    val storage = new HadoopStorage(conf)
    new Table(storage, () => CommitHandler.fromConf(storage, conf), root.stripSuffix("/"))
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
