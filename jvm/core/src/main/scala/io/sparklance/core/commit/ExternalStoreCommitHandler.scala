package io.sparklance.core.commit

import java.util.UUID

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.sparklance.core.StorageException
import io.sparklance.core.format.{ManifestNaming, TableLayout}
import io.sparklance.core.storage.{FileEntry, Storage}

/**
 * A [[CommitHandler]] for stores without an atomic put-if-absent: an [[ExternalManifestStore]] decides who gets a
 * version (shared/spec/table-format.md, "External Store Commit"), and any [[Storage]] holds the manifests:
 *  1. stage the manifest under a unique name beside its final one (`<final name>-<uuid>`, which no listing takes
 *     for a manifest);
 *  2. record the staged path in the store with put-if-absent - the commit point: the loser removes its staged copy
 *     and tries the next version;
 *  3. copy the staged manifest to its final name ([[Storage.publish]]: the store chose its bytes);
 *  4. record the final path, and remove the staged copy.
 * A writer that stops after step 2 leaves a version that readers finish before every listing of `_versions/`
 * ([[listManifests]]): they copy the staged manifest to its final name and record it, so the version is never
 * lost and the next writer never stalls on it.
 */
final class ExternalStoreCommitHandler(storage: Storage, store: ExternalManifestStore) extends CommitHandler {

  private val log = LoggerFactory.getLogger(classOf[ExternalStoreCommitHandler])

  override def listManifests(root: String): Seq[FileEntry] = {
    finishLatest(root)
    storage.list(TableLayout.versionsDir(root))
  }

  override def putManifest(root: String, version: Long, fileName: String, bytes: Array[Byte]): ManifestPut = {
    val target = TableLayout.manifestPath(root, fileName)
    val table = ExternalManifestStore.keyOf(root)
    try {
      // A version already in place (a finished one, or one committed before the store was configured) is taken.
      if (storage.exists(target)) ManifestPut.Lost
      else {
        val staged = s"$target-${UUID.randomUUID()}"
        storage.create(staged, bytes)
        if (record(root, table, version, target, staged, bytes.length.toLong)) {
          // Committed. The rest completes it; if it fails here, the next reader does it.
          try finish(root, table, version, staged, target)
          catch { case NonFatal(e) => log.warn(s"Version $version of $root is committed; finishing it is left to readers: $e") }
          ManifestPut.Committed
        } else {
          quietly(storage.delete(staged))
          ManifestPut.Lost
        }
      }
    } catch { case e: StorageException => ManifestPut.Unknown(e) }
  }

  /** Step 2. A failure leaves the staged manifest in place: the record may be written, and a reader may need it. */
  private def record(root: String, table: String, version: Long, target: String, staged: String, size: Long): Boolean =
    try store.putIfNotExists(table, version, ExternalManifestStore.keyOf(staged), size)
    catch {
      case NonFatal(e) =>
        throw new StorageException(target, s"record version $version of $root in the external manifest store", e)
    }

  /**
   * Steps 3 and 4 for a recorded staged manifest. Several finishers may race (the writer, readers): one that finds
   * the staged manifest gone checks that another finished the version before it complains.
   */
  private def finish(root: String, table: String, version: Long, staged: String, target: String): Unit = {
    if (!storage.exists(target)) {
      val bytes = try Some(storage.readAll(staged)) catch { case e: StorageException if Storage.isNotFound(e) => None }
      bytes match {
        case Some(b) => storage.publish(target, b)
        case None if storage.exists(target) => ()
        case None =>
          throw new StorageException(root, s"finish version $version of",
            new java.io.FileNotFoundException(s"the external manifest store records version $version at $staged, " +
              "which does not exist, and the version's final manifest is missing too"))
      }
    }
    store.putIfExists(table, version, ExternalManifestStore.keyOf(target), sizeOf(target))
    quietly(storage.delete(staged))
  }

  /**
   * Finishes the latest version if its writer stopped after recording it: its manifest is then only staged. A
   * version whose staged manifest is gone as well cannot be finished; reading the table is refused then (the store
   * and the table disagree, and guessing could lose data).
   */
  private def finishLatest(root: String): Unit = {
    val table = ExternalManifestStore.keyOf(root)
    store.latest(table).foreach { case (version, recorded) =>
      val name = recorded.substring(recorded.lastIndexOf('/') + 1)
      if (ManifestNaming.classify(name).isEmpty) {
        val staged = TableLayout.manifestPath(root, name)
        finish(root, table, version, staged, staged.substring(0, staged.lastIndexOf(".manifest") + ".manifest".length))
      }
    }
  }

  private def sizeOf(path: String): Long = {
    val in = storage.open(path)
    try in.length finally in.close()
  }

  private def quietly(body: => Unit): Unit = try body catch { case NonFatal(_) => () }
}
