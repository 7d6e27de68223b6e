package io.sparklance.core.commit

import java.net.URI

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.{StorageException, UnsupportedFeatureException}
import io.sparklance.core.format.TableLayout
import io.sparklance.core.storage.{FileEntry, HadoopStorage, Storage}

/**
 * A [[CommitHandler]] that lets the store decide: a manifest is created with [[Storage.putIfAbsent]], whose winner
 * gets the version (shared/spec/table-format.md, "Conflict Resolution").
 *
 * Where the store offers no atomic put-if-absent ([[Storage.offersPutIfAbsent]]), committing is refused with an
 * error naming the settings that make it safe, unless the handler trusts that one writer commits at a time
 * ([[FileSystemCommitHandler.trustingOneWriter]], `sparklance.commit.unsafe`): it then checks and writes, which
 * two racing writers can both pass.
 */
final class FileSystemCommitHandler private (storage: Storage, checkThenWrite: Boolean) extends CommitHandler {

  override def listManifests(root: String): Seq[FileEntry] = storage.list(TableLayout.versionsDir(root))

  override def putManifest(root: String, version: Long, fileName: String, bytes: Array[Byte]): ManifestPut = {
    val path = TableLayout.manifestPath(root, fileName)
    try if (createIfAbsent(path, bytes)) ManifestPut.Committed else ManifestPut.Lost
    catch { case e: StorageException => ManifestPut.Unknown(e) }
  }

  /**
   * Creates `path` with `bytes` if nothing is there, as the commit of a manifest does: true if this call created
   * it. Also for other files that only one writer may create (tags).
   */
  def createIfAbsent(path: String, bytes: Array[Byte]): Boolean =
    if (storage.offersPutIfAbsent(path)) storage.putIfAbsent(path, bytes)
    else if (checkThenWrite) !storage.exists(path) && { storage.create(path, bytes); true }
    else throw FileSystemCommitHandler.refusal(path)
}

object FileSystemCommitHandler {

  /** Opt-in: commit on stores without an atomic put-if-absent, trusting that only one writer commits at a time. */
  val UnsafeCommits = "sparklance.commit.unsafe"

  /** Commits through the store's atomic put-if-absent; refuses stores without one. */
  def apply(storage: Storage): FileSystemCommitHandler = new FileSystemCommitHandler(storage, checkThenWrite = false)

  /** Like [[apply]], but on stores without put-if-absent checks then writes: the user's promise of one writer. */
  def trustingOneWriter(storage: Storage): FileSystemCommitHandler =
    new FileSystemCommitHandler(storage, checkThenWrite = true)

  /** The handler `conf` asks for: trusting one writer where `sparklance.commit.unsafe` is true. */
  def fromConf(storage: Storage, conf: Configuration): FileSystemCommitHandler =
    if (conf.getBoolean(UnsafeCommits, false)) trustingOneWriter(storage) else apply(storage)

  /** For a [[HadoopStorage]], the handler its Hadoop configuration asks for ([[fromConf]]); else [[apply]]. */
  def forStorage(storage: Storage): FileSystemCommitHandler = storage match {
    case hadoop: HadoopStorage => fromConf(hadoop, hadoop.conf)
    case other => apply(other)
  }

  private def refusal(path: String): UnsupportedFeatureException = {
    val scheme = try Option(new URI(path).getScheme).getOrElse("file") catch { case NonFatal(_) => "file" }
    val hadoop = org.apache.hadoop.util.VersionInfo.getVersion
    // S3A writes conditionally from Hadoop 3.4.2 (HADOOP-19256), which Spark ships from 4.1.
    val hint = if (scheme == "s3a" && Seq("2.", "3.0.", "3.1.", "3.2.", "3.3.", "3.4.0", "3.4.1").exists(hadoop.startsWith)) {
      s" This Spark's Hadoop ($hadoop) has no S3 conditional writes (S3A has them from Hadoop 3.4.2, in Spark 4.1 " +
        s"and later): configure an external manifest store (${ExternalManifestStore.Kind}=dynamodb, with the AWS SDK v2 " +
        "dynamodb module on the class path) (docs/spark-versions.md)."
    } else if (scheme == "s3a") {
      " S3A offers it with S3 conditional writes (fs.s3a.create.conditional.enabled=true, the default, on a store " +
        "that supports If-None-Match); for stores without them, configure an external manifest store " +
        s"(${ExternalManifestStore.Kind}=dynamodb)."
    } else s" Configure an external manifest store (${ExternalManifestStore.Kind}=dynamodb)."
    new UnsupportedFeatureException(
      s"Cannot commit to $path: the '$scheme' file system offers no atomic put-if-absent here, and committing " +
        s"without one could silently lose a concurrent writer's version.$hint To commit anyway because only one " +
        s"writer ever writes this table, set $UnsafeCommits=true.")
  }
}
