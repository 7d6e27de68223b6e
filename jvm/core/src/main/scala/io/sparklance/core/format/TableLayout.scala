package io.sparklance.core.format

import io.sparklance.core.InconsistentTableException
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * Where a table version's files live: data files under `data/` of the table root or of a base path
 * (`Manifest.base_paths`; a base that is a dataset root keeps its data under `data/` too), deletion files under
 * `_deletions/`, index files under `_indices/<uuid>/` (of the base path an index's `base_id` names: a shallow clone's
 * indexes stay in its source, upstream's `indice_files_dir`). Plain data, so scans can carry it to executors.
 */
final case class TableLayout(root: String, version: Long, basePaths: Map[Int, (String, Boolean)]) {

  def dataFilePath(file: DataFile): String = Storage.join(dataDir(file.baseId, file.path), file.path)

  def deletionFilePath(fragmentId: Long, d: DeletionFile): String =
    Storage.join(baseRoot(d.baseId, s"the deletion file of fragment $fragmentId"), d.relativePath(fragmentId))

  /**
   * The directory of index `uuid`'s files: under the root's `_indices/`, or under the base path `baseId` names
   * (its `_indices/` for a dataset root; a base that is not one is the indices directory itself).
   */
  def indexDir(baseId: Option[Int], uuid: String): String = baseId match {
    case None => Storage.join(root, s"_indices/$uuid")
    case Some(id) =>
      val (path, isDatasetRoot) = base(id, s"index $uuid")
      Storage.join(if (isDatasetRoot) Storage.join(path, "_indices") else path, uuid)
  }

  private def base(id: Int, what: String): (String, Boolean) = basePaths.getOrElse(id,
    throw new InconsistentTableException(root, s"version $version references base path id $id for $what, but its " +
      "manifest defines no such base path"))

  private def baseRoot(baseId: Option[Int], what: String): String =
    baseId.map(id => base(id, what)._1).getOrElse(root)

  private def dataDir(baseId: Option[Int], what: String): String = baseId match {
    case None => Storage.join(root, "data")
    case Some(id) =>
      val (path, isDatasetRoot) = base(id, what)
      if (isDatasetRoot) Storage.join(path, "data") else path
  }
}

object TableLayout {

  /** The directory of a table's manifests. */
  def versionsDir(root: String): String = Storage.join(root, "_versions")

  /** A manifest of the table at `root`, by file name (named by its [[ManifestNaming]] scheme). */
  def manifestPath(root: String, fileName: String): String = Storage.join(versionsDir(root), fileName)

  /** A transaction file of the table at `root`, by the name a manifest records (`{read_version}-{uuid}.txn`). */
  def transactionPath(root: String, fileName: String): String = Storage.join(root, s"_transactions/$fileName")

  def of(root: String, manifest: Manifest): TableLayout =
    TableLayout(root, manifest.version, manifest.basePaths.map { case (id, b: TableProtos.BasePath) =>
      id -> ((b.getPath.stripSuffix("/"), b.getIsDatasetRoot))
    })
}
