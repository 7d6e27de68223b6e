package io.sparklance.core.table

import java.time.Instant

import io.sparklance.core.format.TableLayout
import io.sparklance.core.storage.{FileEntry, Storage}

/**
 * Removes old versions and the files only they need (upstream `cleanup_old_versions`; VACUUM in Delta Lake).
 *
 * Kept: the latest version, every version committed at or after `olderThan`, and every tagged version, with
 * every file any of them references (data files, deletion files, transaction files, manifests). Removed: the
 * manifests of the other versions, and files under `data/`, `_deletions/` and `_transactions/` that no kept version
 * references and that were last modified before `olderThan`, so that the files of a write still in progress
 * (written but not yet committed) are never taken. Index directories under `_indices/` that no kept version lists,
 * whose files were all last modified before `olderThan`, are removed too (an index being built is newer). Files
 * outside the table's own directories are left alone. With `dryRun`, nothing is deleted and the result lists what would be.
 */
object Cleanup {

  final case class Result(removedVersions: Seq[Long], removedFiles: Seq[String], removedBytes: Long)

  private[table] def run(table: Table, olderThan: Instant, dryRun: Boolean): Result = {
    val storage = table.storage
    val root = table.root
    val dataset = Dataset.open(storage, root, table.commits)
    val listing = dataset.listVersions()
    val latest = listing.entries.last.version
    val tagged = dataset.tags().values.map(_.version).toSet
    val snapshots = dataset.history()
    val cutoff = olderThan.toEpochMilli
    val (kept, removed) = snapshots.partition { s =>
      s.version == latest || tagged.contains(s.version) || !s.manifest.timestamp.isBefore(olderThan)
    }
    val referenced = kept.flatMap { s =>
      val layout = s.layout
      s.fragments.flatMap { f =>
        f.files.map(layout.dataFilePath) ++ f.deletionFile.map(d => layout.deletionFilePath(f.id, d))
      } ++ s.manifest.transactionFile.map(TableLayout.transactionPath(root, _)) :+ s.manifest.path
    }.map(normalize).toSet

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
    val orphans = candidates.filter(e => !referenced.contains(normalize(e.path)) && e.modificationTime < cutoff) ++
      indexFiles
    val manifestEntries = storage.list(TableLayout.versionsDir(root)).filter(e => removedManifests.exists(m => normalize(m.path) == normalize(e.path)))
    val doomed = manifestEntries ++ orphans
    if (!dryRun) {
      // Manifests first: once a version is gone, nothing can reach the files it alone referenced.
      manifestEntries.foreach(e => storage.delete(e.path))
      orphans.foreach(e => storage.delete(e.path))
      indexDirs.foreach { case (d, _) => storage.delete(d.path) }
    }
    Result(removed.map(_.version), doomed.map(_.path), doomed.map(_.size).sum)
  }

  private def normalize(path: String): String = path.stripPrefix("file:").replaceAll("/+", "/")
}
