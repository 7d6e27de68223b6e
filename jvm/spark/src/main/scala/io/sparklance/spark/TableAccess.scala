package io.sparklance.spark

import scala.jdk.CollectionConverters._

import io.sparklance.core.{table => lance}
import io.sparklance.core.table.{Snapshot, TimeTravel}

/** How the Spark module reaches a table, on the driver: the settings that apply, its qualified path, a pinned snapshot. */
object TableAccess {
  /**
   * The session's Hadoop configuration plus the object-store and commit settings among `options` (catalog options,
   * or read and write options of a path): `hadoop.<key>` as `<key>`, `fs.<...>` and `sparklance.<...>` as they are.
   * So one catalog, or one read, can carry its own endpoint, credentials and commit settings, e.g.
   * `spark.sql.catalog.lance.fs.s3a.endpoint` or `.option("fs.s3a.endpoint", ...)`. A catalog's `storage.<key>`
   * options (Lance's object-store options, as the other Lance connector takes them) become S3A settings
   * (`Settings.hadoopSettingsOfStorageOptions`): this is the one place they are checked and mapped. `where` names
   * where the options were given, for errors (e.g. `catalog 'lance'`).
   */
  def hadoopConf(spark: org.apache.spark.sql.SparkSession, options: Map[String, String],
      where: String): org.apache.hadoop.conf.Configuration = {
    val conf = spark.sessionState.newHadoopConf()
    // Lance's object-store options (`storage.<key>`, the other connector's), below any fs.* key given beside them.
    val storage = options.collect { case (k, v) if k.toLowerCase(java.util.Locale.ROOT).startsWith("storage.") => k.drop(8) -> v }
    if (storage.nonEmpty) {
      LanceSparkException.translate(lance.Settings.hadoopSettingsOfStorageOptions(storage, where))
        .foreach { case (k, v) => conf.set(k, v) }
    }
    options.foreach { case (key, value) =>
      if (key.startsWith("hadoop.")) conf.set(key.stripPrefix("hadoop."), value)
      else if (key.startsWith("fs.") || key.startsWith("sparklance.")) conf.set(key, value)
    }
    // Session, catalog and per-access sparklance settings alike: a bad one is an error wherever it was given.
    LanceSparkException.translate(lance.Table.checkSettings(conf.getPropsWithPrefix("sparklance.").asScala.map {
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
    LanceSparkException.translate(lance.Table.forPath(path, conf).snapshot(tt))

  /** The latest version of the table at `path`. */
  def latestVersion(conf: org.apache.hadoop.conf.Configuration, path: String): Long =
    LanceSparkException.translate(lance.Table.forPath(path, conf).latestVersion())

}
