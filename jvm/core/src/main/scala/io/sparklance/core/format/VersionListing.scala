package io.sparklance.core.format

import io.sparklance.core.{InconsistentTableException, NotATableException, StorageException, VersionNotFoundException}
import io.sparklance.core.storage.{FileEntry, Storage}
import io.sparklance.proto.TableProtos

/** A manifest file found in `_versions/`. */
final case class VersionEntry(version: Long, path: String, size: Long = -1L) {

  /**
   * The manifest's bytes and message, read from `storage` for the table at `root`. A manifest removed while it was
   * being read (by a cleanup) is a [[VersionNotFoundException]]; one that holds another version than its name says
   * is an [[InconsistentTableException]].
   */
  def read(storage: Storage, root: String): (Array[Byte], TableProtos.Manifest) = {
    val bytes =
      try storage.readAll(path, size)
      catch {
        case e: StorageException if Storage.isNotFound(e) =>
          throw new VersionNotFoundException(root, s"the manifest of version $version ($path) disappeared while " +
            "reading; it was probably removed by a cleanup. Retry with a newer version.")
      }
    val proto = ManifestFile.decode(path, bytes)
    if (proto.getVersion != version) {
      throw new InconsistentTableException(root, s"manifest $path holds version ${proto.getVersion}, not $version " +
        "as its name says")
    }
    (bytes, proto)
  }
}

/** The manifests of a table, ascending by version, and the naming scheme they share. Never empty. */
final case class VersionListing(naming: ManifestNaming, entries: IndexedSeq[VersionEntry]) {
  def describe: String =
    if (entries.size == 1) s"The table has only version ${entries.head.version}."
    else s"The table has ${entries.size} versions, from ${entries.head.version} to ${entries.last.version}."

  /**
   * The manifest of `version` of the table at `root`. A detached version (one pylance committed with
   * `detached=True`: its number, an unsigned 64-bit value, has the top bit set, so it is negative as a `Long`) is
   * not in the listing: its manifest is found by name, `_versions/d<version>.manifest`, if `storage` has it.
   */
  def entry(storage: Storage, root: String, version: Long): VersionEntry =
    if (ManifestNaming.isDetached(version)) {
      val path = TableLayout.manifestPath(root, ManifestNaming.detachedFileName(version))
      if (!storage.exists(path)) {
        throw new VersionNotFoundException(root, s"detached version ${ManifestNaming.show(version)} does not exist " +
          s"(no manifest $path).")
      }
      VersionEntry(version, path)
    } else entries.find(_.version == version).getOrElse(
      throw new VersionNotFoundException(root, s"version $version does not exist. $describe"))
}

object VersionListing {
  /**
   * The listing of the table at `root` from the entries of its `_versions/` directory (names that are not
   * manifests are skipped); `rootIsEmpty` tells, for the error when there is no manifest, whether the directory
   * holds anything at all.
   */
  def of(root: String, versionsDir: Seq[FileEntry], rootIsEmpty: => Boolean): VersionListing = {
    val entries = versionsDir.filterNot(_.isDirectory).flatMap { e =>
      ManifestNaming.classify(e.name).map { case (naming, v) => (naming, v, e) }
    }
    if (entries.isEmpty) {
      throw new NotATableException(root, if (rootIsEmpty) "the directory is empty or does not exist"
        else "it has no manifests under _versions/")
    }
    val schemes = entries.map(_._1).distinct
    if (schemes.size > 1) {
      val sample = schemes.map(s => s"${s.name} (e.g. ${entries.find(_._1 == s).get._3.name})").mkString(" and ")
      throw new InconsistentTableException(root, s"its _versions/ directory mixes the manifest naming schemes $sample. " +
        "A table must use one scheme; remove the manifests of the wrong scheme or migrate them with pylance.")
    }
    VersionListing(schemes.head, entries.map(e => VersionEntry(e._2, e._3.path, e._3.size)).sortBy(_.version).toIndexedSeq)
  }
}
