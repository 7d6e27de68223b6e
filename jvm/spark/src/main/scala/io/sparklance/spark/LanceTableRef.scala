package io.sparklance.spark

import java.time.Instant

import scala.jdk.CollectionConverters._

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.{Dataset, ManifestNaming, Snapshot}
import io.sparklance.core.util.Timestamps

/**
 * Which version of a table a read pins: the latest, a version number, the latest version committed at or before
 * an instant, or a tag; on the main branch or on a named branch. Resolved once on the driver.
 */
sealed trait TimeTravel
object TimeTravel {
  case object Latest extends TimeTravel
  final case class AtVersion(version: Long) extends TimeTravel
  final case class AsOf(instant: Instant) extends TimeTravel
  final case class AtTag(name: String) extends TimeTravel
  /** A point on a branch (pylance's `tree/<branch>/`); never a tag, which names its branch itself. */
  final case class OnBranch(branch: String, at: TimeTravel) extends TimeTravel

  /**
   * From read options `version`, `timestamp`, `tag` (case-insensitive keys; at most one may be given) and `branch`.
   * Versions are unsigned 64-bit numbers: pylance's detached versions are above 2^63.
   */
  def fromOptions(options: Map[String, String]): TimeTravel = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    val named = Seq("version", "timestamp", "tag").filter(o.contains)
    if (named.size > 1) {
      throw new InvalidArgumentException(s"Options ${named.mkString(" and ")} were both given; give at most one of " +
        "version, timestamp and tag.")
    }
    val point = o.get("version").map(v => AtVersion(ManifestNaming.parseVersion(v).getOrElse(
      throw new InvalidArgumentException(s"Option version must be a version number, not '$v'."))))
      .orElse(o.get("timestamp").map(t => AsOf(Timestamps.parse(t))))
      .orElse(o.get("tag").map(AtTag))
      .getOrElse(Latest)
    o.get("branch").map(_.trim) match {
      case None | Some("main") => point
      case Some(b) if o.contains("tag") =>
        throw new InvalidArgumentException(s"Options branch ('$b') and tag were both given; a tag names its branch " +
          "itself: give only the tag.")
      case Some(b) => OnBranch(b, point)
    }
  }

  def checkout(dataset: Dataset, tt: TimeTravel): Snapshot = tt match {
    case Latest => dataset.checkoutLatest()
    case AtVersion(v) => dataset.checkout(v)
    case AsOf(i) => dataset.checkoutAsOf(i)
    case AtTag(t) => dataset.checkoutTag(t)
    case OnBranch(b, at) => checkout(dataset.branch(b), at)
  }
}

object LanceTables {
  /**
   * The session's Hadoop configuration plus the object-store and commit settings among `options` (catalog options,
   * or read and write options of a path): `hadoop.<key>` as `<key>`, `fs.<...>` and `sparklance.<...>` as they are.
   * So one catalog, or one read, can carry its own endpoint, credentials and commit settings, e.g.
   * `spark.sql.catalog.lance.fs.s3a.endpoint` or `.option("fs.s3a.endpoint", ...)`.
   */
  def hadoopConf(spark: org.apache.spark.sql.SparkSession, options: Map[String, String]): org.apache.hadoop.conf.Configuration = {
    val conf = spark.sessionState.newHadoopConf()
    options.foreach { case (key, value) =>
      if (key.startsWith("hadoop.")) conf.set(key.stripPrefix("hadoop."), value)
      else if (key.startsWith("fs.") || key.startsWith("sparklance.")) conf.set(key, value)
    }
    // Session, catalog and per-access sparklance settings alike: a bad one is an error wherever it was given.
    LanceSparkException.translate(HadoopStorage.checkSettings(conf.getPropsWithPrefix("sparklance.").asScala.map {
      case (k, v) => s"sparklance.$k" -> v }.toMap))
    conf
  }

  /**
   * The path of a table as every JVM of the application must see it. Executors run in working directories of their
   * own, so a relative path is resolved here, on the driver, against the working directory of its file system (the
   * local one: the driver's current directory) and returned as a qualified URI; absolute paths and URIs are
   * returned as given.
   */
  def qualify(conf: org.apache.hadoop.conf.Configuration, path: String): String = {
    val p =
      try new org.apache.hadoop.fs.Path(path)
      catch { case _: IllegalArgumentException => return path } // not a path at all: opening it reports the error
    if (p.isAbsolute) path
    else LanceSparkException.translate {
      try p.getFileSystem(conf).makeQualified(p).toString
      catch { case e: java.io.IOException => throw new io.sparklance.core.StorageException(path, "resolve the relative path", e) }
    }
  }

  /** Opens and pins a table version on the driver, translating core errors for Spark. */
  def load(conf: org.apache.hadoop.conf.Configuration, path: String, tt: TimeTravel): Snapshot =
    LanceSparkException.translate {
      val storage = new HadoopStorage(conf)
      TimeTravel.checkout(Dataset.open(storage, path), tt)
    }

  /**
   * The Lance file version new data files of a table are written with: the one its manifest records (pylance's
   * `data_storage_version`), else 2.2.
   */
  def fileVersion(snapshot: Snapshot): io.sparklance.core.file.FileVersion =
    snapshot.manifest.dataStorageVersion.flatMap(io.sparklance.core.file.FileVersion.parse)
      .getOrElse(io.sparklance.core.file.FileVersion.V2_2)

  /** The latest version of the table at `path`. */
  def latestVersion(conf: org.apache.hadoop.conf.Configuration, path: String): Long =
    LanceSparkException.translate(Dataset.open(new HadoopStorage(conf), path).latestVersion())

}
