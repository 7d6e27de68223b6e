package io.sparklance.core.table

import java.time.Instant

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.TableLayout
import io.sparklance.core.storage.{FileEntry, Storage}

/**
 * Removes old versions and the files only they need (upstream `cleanup_old_versions`; VACUUM in Delta Lake).
 *
 * Kept: the latest version, every version committed at or after `olderThan`, every tagged version and every
 * version a branch was made from (its first version reads that version's files, as pylance keeps them), with
 * every file any of them references (data files, deletion files, transaction files, manifests). Removed: the
 * manifests of the other versions, and files under `data/` (blob sidecar directories with their data files),
 * `_deletions/` and `_transactions/` that no kept version
 * references and that were last modified before `olderThan`, so that the files of a write still in progress
 * (written but not yet committed) are never taken. Index directories under `_indices/` that no kept version lists,
 * whose files were all last modified before `olderThan`, are removed too (an index being built is newer). Files
 * outside the table's own directories are left alone. With `dryRun`, nothing is deleted and the result lists what would be.
 */
object Cleanup {

  final case class Result(removedVersions: Seq[Long], removedFiles: Seq[String], removedBytes: Long)

  /**
   * Which versions a cleanup removes (upstream's `CleanupPolicy`): those committed before `olderThan` and numbered
   * below `beforeVersion`, of the bounds given (at least one), but never the latest or a tagged one. With
   * `errorIfTagged`, a tagged version that would otherwise be removed is an error naming its tags instead. Files no
   * kept version references are removed when a removed version referenced them, or when they were last modified
   * before `filesBefore` (files a write in progress has not committed yet are newer).
   */
  final case class Policy(olderThan: Option[Instant], beforeVersion: Option[Long], filesBefore: Instant,
      errorIfTagged: Boolean = false) {
    require(olderThan.isDefined || beforeVersion.isDefined, "a cleanup needs a time or a version bound")
  }

  object Policy {
    /** Versions and files older than `olderThan`, tagged versions kept: what VACUUM RETAIN n HOURS does. */
    def olderThan(instant: Instant): Policy = Policy(Some(instant), None, instant)
  }

  private[table] def run(table: Table, policy: Policy, dryRun: Boolean): Result = {
    val storage = table.storage
    val root = table.root
    val dataset = Dataset.open(storage, root, table.commits)
    val listing = dataset.listVersions()
    val latest = listing.entries.last.version
    // Tags and branches are the table's: those of this branch (main, or the branch this table is) keep versions.
    val tags = dataset.tags().filter(_._2.branch == dataset.branchName)
    val branchSources = dataset.branches().values.filter(_.parentBranch == dataset.branchName).map(_.parentVersion).toSet
    val tagged = tags.values.map(_.version).toSet ++ branchSources
    val snapshots = dataset.history()
    val cutoff = policy.filesBefore.toEpochMilli
    def old(s: Snapshot) = s.version != latest && policy.olderThan.forall(s.manifest.timestamp.isBefore) &&
      policy.beforeVersion.forall(s.version < _)
    if (policy.errorIfTagged) {
      val names = tags.values.filter(t => snapshots.exists(s => s.version == t.version && old(s))).map(_.name).toSeq.sorted
      if (names.nonEmpty) {
        throw new InvalidArgumentException(s"Cleanup of $root would remove versions that tags point to (tags " +
          s"${names.mkString(", ")}): drop those tags, or keep tagged versions (error_if_tagged_old_versions = false).")
      }
    }
    val (removed, kept) = snapshots.partition(s => old(s) && !tagged.contains(s.version))
    def files(s: Snapshot): Seq[String] = {
      val layout = s.layout
      s.fragments.flatMap { f =>
        f.files.map(layout.dataFilePath) ++ f.deletionFile.map(d => layout.deletionFilePath(f.id, d))
      } ++ s.manifest.transactionFile.map(TableLayout.transactionPath(root, _)) :+ s.manifest.path
    }
    val referenced = kept.flatMap(files).map(normalize).toSet
    val verified = removed.flatMap(files).map(normalize).toSet

    val removedManifests = listing.entries.filter(e => removed.exists(_.version == e.version))
    val candidates: Seq[FileEntry] = Seq("data", "_deletions", "_transactions").flatMap { dir =>
      storage.list(Storage.join(root, dir)).filter(e => !e.isDirectory)
    }
    val indexesKept = kept.flatMap(_.indexes.map(_.uuid)).toSet
    val indexDirs = storage.list(Storage.join(root, "_indices")).filter(_.isDirectory)
      .filterNot(d => indexesKept.contains(Storage.fileName(d.path)))
      .map(d => d -> storage.list(d.path).filter(!_.isDirectory))
      .filter(_._2.forall(_.modificationTime < cutoff))
    val indexFiles = indexDirs.flatMap(_._2)
    val orphans = candidates.filter { e =>
      val p = normalize(e.path)
      !referenced.contains(p) && (verified.contains(p) || e.modificationTime < cutoff)
    } ++ indexFiles
    // A blob sidecar directory (data/<data file without .lance>/, file version 2.2) goes with its data file: kept
    // while a kept version references the data file, removed as the data file would be (as pylance 14 removes them).
    val sidecarDirs = storage.list(Storage.join(root, "data")).filter(_.isDirectory).flatMap { d =>
      val dataFile = normalize(d.path.stripSuffix("/") + ".lance")
      val files = storage.list(d.path).filter(!_.isDirectory)
      val gone = !referenced.contains(dataFile) && (verified.contains(dataFile) || files.forall(_.modificationTime < cutoff))
      if (gone) Some(d -> files) else None
    }
    val manifestEntries = storage.list(TableLayout.versionsDir(root)).filter(e => removedManifests.exists(m => normalize(m.path) == normalize(e.path)))
    val doomed = manifestEntries ++ orphans ++ sidecarDirs.flatMap(_._2)
    if (!dryRun) {
      // Manifests first: once a version is gone, nothing can reach the files it alone referenced.
      manifestEntries.foreach(e => storage.delete(e.path))
      orphans.foreach(e => storage.delete(e.path))
      indexDirs.foreach { case (d, _) => storage.delete(d.path) }
      sidecarDirs.foreach { case (d, files) => files.foreach(f => storage.delete(f.path)); storage.delete(d.path) }
    }
    Result(removed.map(_.version), doomed.map(_.path), doomed.map(_.size).sum)
  }

  private def normalize(path: String): String = path.stripPrefix("file:").replaceAll("/+", "/")
}
