package io.sparklance.spark

import java.time.Instant

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.{Dataset, Snapshot}
import io.sparklance.core.util.Timestamps

/**
 * Which version of a table a read pins: the latest, a version number, the latest version committed at or before
 * an instant, or a tag. Resolved once on the driver.
 */
sealed trait TimeTravel
object TimeTravel {
  case object Latest extends TimeTravel
  final case class AtVersion(version: Long) extends TimeTravel
  final case class AsOf(instant: Instant) extends TimeTravel
  final case class AtTag(name: String) extends TimeTravel

  /** From read options `version`, `timestamp`, `tag` (case-insensitive keys); at most one may be given. */
  def fromOptions(options: Map[String, String]): TimeTravel = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    val named = Seq("version", "timestamp", "tag").filter(o.contains)
    if (named.size > 1) {
      throw new InvalidArgumentException(s"Options ${named.mkString(" and ")} were both given; give at most one of " +
        "version, timestamp and tag.")
    }
    o.get("version").map(v => AtVersion(v.trim.toLongOption.getOrElse(throw new InvalidArgumentException(
      s"Option version must be a version number, not '$v'."))))
      .orElse(o.get("timestamp").map(t => AsOf(Timestamps.parse(t))))
      .orElse(o.get("tag").map(AtTag))
      .getOrElse(Latest)
  }

  def checkout(dataset: Dataset, tt: TimeTravel): Snapshot = tt match {
    case Latest => dataset.checkoutLatest()
    case AtVersion(v) => dataset.checkout(v)
    case AsOf(i) => dataset.checkoutAsOf(i)
    case AtTag(t) => dataset.checkoutTag(t)
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

  /** The latest version of the table at `path`. */
  def latestVersion(conf: org.apache.hadoop.conf.Configuration, path: String): Long =
    LanceSparkException.translate(Dataset.open(new HadoopStorage(conf), path).latestVersion())

}
