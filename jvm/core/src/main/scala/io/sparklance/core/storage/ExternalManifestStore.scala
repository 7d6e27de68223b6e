package io.sparklance.core.storage

import java.net.URI
import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.slf4j.LoggerFactory

import io.sparklance.core.{InvalidArgumentException, StorageException}
import io.sparklance.core.table.ManifestNaming

/**
 * A key-value store with put-if-absent that decides which writer gets a table version, for object stores that
 * cannot (shared/spec/table-format.md, "External Manifest Store"). It maps (table, version) to the path of that
 * version's manifest: first the staged copy a writer uploaded, then the final `_versions/` file.
 *
 * Tables and paths are named as pylance names them, so that both can share one store: the table is its root's
 * path inside the bucket (`warehouse/db/t.lance`, no scheme, bucket or leading slash), a manifest is its path
 * inside the bucket.
 */
trait ExternalManifestStore {

  /** Records `path` for the version if nothing is recorded for it; false, recording nothing, otherwise. */
  def putIfNotExists(table: String, version: Long, path: String, size: Long): Boolean

  /** Replaces the record of a version that is recorded (the final path once the manifest is in place). */
  def putIfExists(table: String, version: Long, path: String, size: Long): Unit

  /** The recorded path of the table's latest version, if any. */
  def latest(table: String): Option[(Long, String)]
}

object ExternalManifestStore {

  /** Hadoop configuration key: `dynamodb`, or the class name of an [[ExternalManifestStore]] with a
   *  `(Configuration)` constructor. Unset: no external store. */
  val Kind = "sparklance.commit.external-store"

  def fromConf(conf: Configuration): Option[ExternalManifestStore] =
    Option(conf.get(Kind)).map(_.trim).filter(_.nonEmpty).map {
      case "dynamodb" => new DynamoDbManifestStore(conf)
      case className => storeClass(className).getConstructor(classOf[Configuration]).newInstance(conf)
    }

  /** Checks a value of [[Kind]] without making a store: `dynamodb`, or a store class on the classpath. */
  def checkKind(kind: String): Unit = if (kind != "dynamodb") storeClass(kind)

  private def storeClass(className: String): Class[_ <: ExternalManifestStore] = {
    val cls =
      try Class.forName(className, false, Option(Thread.currentThread().getContextClassLoader).getOrElse(getClass.getClassLoader))
      catch {
        case _: ClassNotFoundException | _: LinkageError => throw new InvalidArgumentException(s"$Kind is " +
          s"'$className', which is neither 'dynamodb' nor a class on the classpath. Set it to 'dynamodb' or to the " +
          "class name of an io.sparklance.core.storage.ExternalManifestStore.")
      }
    if (!classOf[ExternalManifestStore].isAssignableFrom(cls)) {
      throw new InvalidArgumentException(s"$Kind is '$className', which is not an " +
        "io.sparklance.core.storage.ExternalManifestStore. Set it to 'dynamodb' or to the class name of one.")
    }
    cls.asSubclass(classOf[ExternalManifestStore])
  }

  /** A path's key in its bucket or file system: the URI path without the leading slash. */
  def keyOf(path: String): String = {
    val p = try new URI(path).getPath catch { case NonFatal(_) => path }
    Option(p).getOrElse(path).stripPrefix("/").stripSuffix("/")
  }
}

/**
 * The external-store commit over a [[HadoopStorage]] (shared/spec/table-format.md, "External Store Commit"):
 *  1. stage the manifest under a unique name beside its final one (`<final name>-<uuid>`, which no listing takes
 *     for a manifest);
 *  2. record the staged path in the store with put-if-absent - the commit point: the loser removes its staged copy
 *     and tries the next version;
 *  3. copy the staged manifest to its final name;
 *  4. record the final path, and remove the staged copy.
 * A writer that dies after step 2 leaves a version that readers finish ([[repair]], run before every listing of
 * `_versions/`): they copy the staged manifest to its final name and record it, so the version is never lost and
 * the next writer never stalls on it.
 */
final class ExternalManifestCommits(storage: HadoopStorage, store: ExternalManifestStore) {

  private val log = LoggerFactory.getLogger(classOf[ExternalManifestCommits])

  /** A manifest's table root and version, if `path` is a manifest under a table's `_versions/`. */
  private def manifestOf(path: String): Option[(String, Long)] = {
    val dir = path.substring(0, math.max(path.lastIndexOf('/'), 0))
    ManifestNaming.classify(Storage.fileName(path)).collect {
      case (_, version) if dir.endsWith("/_versions") => (dir.stripSuffix("/_versions"), version)
    }
  }

  // A staged manifest is named `<final name>-<uuid>`.
  private def stagedName(target: String): String = s"$target-${UUID.randomUUID()}"
  private def finalName(staged: String): String = staged.substring(0, staged.lastIndexOf(".manifest") + ".manifest".length)

  /** Whether a put-if-absent of `path` is a manifest commit. */
  def handles(path: String): Boolean = manifestOf(path).isDefined

  def putIfAbsent(path: String, bytes: Array[Byte]): Boolean = {
    val (root, version) = manifestOf(path).getOrElse(throw new IllegalArgumentException(s"$path is not a manifest"))
    val table = ExternalManifestStore.keyOf(root)
    // A version already in place (a repaired one, or one committed before the store was configured) is taken.
    if (storage.exists(path)) return false
    val staged = stagedName(path)
    storage.create(staged, bytes)
    val won =
      try store.putIfNotExists(table, version, ExternalManifestStore.keyOf(staged), bytes.length.toLong)
      catch {
        case NonFatal(e) =>
          // Unknown whether the record was written: keep the staged manifest, a reader may need it.
          throw new StorageException(path, s"record version $version of $root in the external manifest store", e)
      }
    if (!won) {
      quietly(storage.delete(staged))
      return false
    }
    // Committed. The rest completes it; if it fails here, the next reader does it.
    try finish(root, table, version, staged, path)
    catch { case NonFatal(e) => log.warn(s"Version $version of $root is committed; finishing it is left to readers: $e") }
    true
  }

  /**
   * Steps 3 and 4 for a recorded staged manifest. Several finishers may race (the writer, readers repairing): one
   * that finds the staged manifest gone checks that another finished the version before it complains.
   */
  private def finish(root: String, table: String, version: Long, staged: String, target: String): Unit = {
    if (!storage.exists(target)) {
      val bytes = try Some(storage.readAll(staged)) catch { case e: StorageException if Storage.isNotFound(e) => None }
      bytes match {
        // The store chose these bytes for the version: every finisher writes the same manifest.
        case Some(b) => storage.publishChosen(target, b)
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
   * version whose staged manifest is gone as well cannot be finished; reading the table is refused then (the
   * store and the table disagree, and guessing could lose data).
   */
  def repair(versionsDir: String): Unit = {
    val root = versionsDir.stripSuffix("/").stripSuffix("/_versions")
    val table = ExternalManifestStore.keyOf(root)
    store.latest(table).foreach { case (version, recorded) =>
      val name = recorded.substring(recorded.lastIndexOf('/') + 1)
      if (ManifestNaming.classify(name).isEmpty) {
        val staged = Storage.join(versionsDir, name)
        finish(root, table, version, staged, finalName(staged))
      }
    }
  }

  private def sizeOf(path: String): Long = {
    val in = storage.open(path)
    try in.length finally in.close()
  }

  private def quietly(body: => Unit): Unit = try body catch { case NonFatal(_) => () }
}
