package io.sparklance.core.commit

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.storage.{FileEntry, HadoopStorage, Storage}
import io.sparklance.core.util.Parse

/**
 * The commit seam: decides which writer gets a version of a table, beside [[Storage]], which only moves bytes.
 *
 * Contract every implementation must keep:
 *  - `putManifest(root, version, fileName, bytes)` makes `bytes` the manifest of `version` at
 *    `_versions/<fileName>` only if no writer has that version yet. When several writers race on one version,
 *    at most one of them gets [[ManifestPut.Committed]], and from then on every listing and read of the table
 *    shows that writer's complete manifest; the others get [[ManifestPut.Lost]], and their bytes never become
 *    that version. [[ManifestPut.Unknown]] means the implementation cannot tell: the manifest may be committed
 *    (now or once a reader finishes it), so the caller must not remove anything the manifest references.
 *    An implementation that cannot decide safely on the table's store throws instead
 *    ([[io.sparklance.core.UnsupportedFeatureException]], saying what to configure).
 *  - `listManifests(root)` is a consistent listing of `_versions/` (a missing directory lists as empty) in which
 *    every version that was committed is complete: work a committed version still needs (a manifest only staged
 *    by a writer that stopped) is finished before listing. Entries whose names are not manifests may be listed
 *    too; readers take only what [[io.sparklance.core.format.ManifestNaming]] recognises.
 */
trait CommitHandler {

  /** The entries of the table's `_versions/` directory, with every committed version complete. */
  def listManifests(root: String): Seq[FileEntry]

  /** Commits `bytes` as the manifest of `version`, named `fileName` under `_versions/`, if no writer has it. */
  def putManifest(root: String, version: Long, fileName: String, bytes: Array[Byte]): ManifestPut
}

/** The outcome of one [[CommitHandler.putManifest]]. */
sealed trait ManifestPut

object ManifestPut {
  /** The version is this writer's. */
  case object Committed extends ManifestPut

  /** Another writer has this version; nothing of this writer's is visible as it. */
  case object Lost extends ManifestPut

  /** Whether the version is this writer's is not known (a storage or store failure); `cause` says what failed. */
  final case class Unknown(cause: Throwable) extends ManifestPut
}

object CommitHandler {

  /**
   * The `sparklance.commit.*` settings the handlers read, each with a check of its value (trimmed) that returns what
   * a bad value should have been (or throws an error of its own).
   */
  val Settings: Map[String, String => Option[String]] = Map(
    FileSystemCommitHandler.UnsafeCommits -> (v => if (Parse.boolean(v).isEmpty) Some("true or false") else None),
    ExternalManifestStore.Kind -> (v => { ExternalManifestStore.checkKind(v); None }),
    DynamoDbManifestStore.TableKey -> nonEmpty,
    DynamoDbManifestStore.RegionKey -> nonEmpty,
    DynamoDbManifestStore.EndpointKey -> nonEmpty)

  private def nonEmpty(v: String): Option[String] = if (v.isEmpty) Some("a non-empty name") else None

  /**
   * The handler the settings in `conf` ask for: through the external manifest store of
   * `sparklance.commit.external-store` when one is set ([[ExternalManifestStore.fromConf]]), else through the
   * file system's put-if-absent (with `sparklance.commit.unsafe`, a check-then-write where it has none).
   */
  def fromConf(storage: Storage, conf: Configuration): CommitHandler =
    ExternalManifestStore.fromConf(conf) match {
      case Some(store) => new ExternalStoreCommitHandler(storage, store)
      case None => FileSystemCommitHandler.fromConf(storage, conf)
    }

  /**
   * The handler for a storage object: for a [[HadoopStorage]], the one its Hadoop configuration asks for
   * ([[fromConf]]); for any other storage, its own put-if-absent.
   */
  def forStorage(storage: Storage): CommitHandler = storage match {
    case hadoop: HadoopStorage => fromConf(hadoop, hadoop.conf)
    case other => FileSystemCommitHandler(other)
  }
}
