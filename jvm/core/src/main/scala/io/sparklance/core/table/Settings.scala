package io.sparklance.core.table

import io.sparklance.core.{FileVersion, InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.util.Parse

/**
 * The settings of one read or write of a table, resolved in one place. A key (case-insensitive) takes its value
 * from the first of these that has it:
 *  1. the call's options (a read or write option);
 *  2. the table's properties (its manifest config), which is how statements that take no options are tuned;
 *  3. the setting's default.
 * Storage and commit settings (`fs.*`, `sparklance.*`) are file-system settings that the engine layers before it
 * opens the table (per call > catalog > session; see `Table.forPath`). A bad value is an error naming the key and
 * where it was given.
 */
final class Settings private (options: Map[String, String], properties: Map[String, String]) {

  /** The value of the first of `keys` given, and where it was given ("Option k" or "Table property k"). */
  def lookup(keys: String*): Option[(String, String)] =
    Parse.first(keys.iterator.flatMap(k => options.get(k).map(v => (s"Option $k", v))))
      .orElse(Parse.first(keys.iterator.flatMap(k => properties.get(k).map(v => (s"Table property $k", v)))))

  def string(keys: String*): Option[String] = lookup(keys: _*).map(_._2)

  /** A positive whole number (the first of `keys` given), else `default`. */
  def positive(default: Long, keys: String*): Long = lookup(keys: _*) match {
    case None => default
    case Some((where, v)) => Parse.long(v.trim).filter(_ > 0).getOrElse(
      throw new InvalidArgumentException(s"$where must be a positive number, not '$v'."))
  }

  /** A whole number, zero or more (the first of `keys` given), else `default`. */
  def count(default: Long, keys: String*): Long = lookup(keys: _*) match {
    case None => default
    case Some((where, v)) => Parse.long(v.trim).filter(_ >= 0).getOrElse(
      throw new InvalidArgumentException(s"$where must be a whole number, 0 or more, not '$v'."))
  }

  def flag(default: Boolean, keys: String*): Boolean = lookup(keys: _*).map { case (w, v) => (w, v.trim.toLowerCase) } match {
    case None => default
    case Some((_, "true")) => true
    case Some((_, "false")) => false
    case Some((where, other)) => throw new InvalidArgumentException(s"$where must be true or false, not '$other'.")
  }

  /** One of `allowed` (compared lower-case), else `default`. */
  def choice(default: String, allowed: Seq[String], keys: String*): String = lookup(keys: _*) match {
    case None => default
    case Some((where, v)) if allowed.contains(v.trim.toLowerCase) => v.trim.toLowerCase
    case Some((where, v)) => throw new InvalidArgumentException(
      s"$where must be ${allowed.init.map(a => s"'$a'").mkString(", ")} or '${allowed.last}', not '$v'.")
  }

  /** A Lance file version to write (`file_format_version`, or the other connector's `data_storage_version`). */
  def fileVersion: Option[FileVersion] = lookup("file_format_version", "data_storage_version").map { case (where, v) =>
    if (Set("legacy", "0.1").contains(v.trim.toLowerCase)) {
      throw new UnsupportedFeatureException(s"File format version '$v' (the legacy Lance file format, 0.1) is not " +
        "written by sparklance: write 2.0, 2.1 or 2.2 (stable).")
    }
    FileVersion.parse(v).getOrElse(throw new InvalidArgumentException(
      s"$where must be one of 2.0, 2.1, 2.2 (or stable), not '$v'."))
  }
}

object Settings {
  /**
   * The Hadoop settings that Lance's object-store options stand for (pylance's `storage_options`, the other
   * connector's `storage.<key>`): S3A's, see [[io.sparklance.core.storage.StorageOptions]]. `where` names where the
   * options were given, for errors.
   */
  def hadoopSettingsOfStorageOptions(options: Map[String, String], where: String): Map[String, String] =
    io.sparklance.core.storage.StorageOptions.hadoopSettings(options, where)

  def of(options: Map[String, String], properties: Map[String, String]): Settings =
    new Settings(lower(options), lower(properties))

  private def lower(m: Map[String, String]): Map[String, String] = m.map { case (k, v) => k.toLowerCase -> v }
}

/**
 * How data files are written and committed, from [[Settings]]:
 *  - `max_rows_per_file` (also `max_row_per_file`; default 1048576): rows per data file, each file one fragment;
 *  - `max_page_bytes` (default 8388608): the page size columns aim at;
 *  - `batch_rows` (also `batch_size`; default 8192, at most 1048576): rows buffered per batch before a write;
 *  - `commit_retries` (default 20, at most 1000): attempts at a new version when other writers commit first;
 *  - `file_format_version` (also `data_storage_version`): the file version of a table being created or replaced.
 */
final case class WriteSettings(maxRowsPerFile: Long, maxPageBytes: Long, batchRows: Int, commitRetries: Int,
    fileVersion: Option[FileVersion])

object WriteSettings {
  def apply(s: Settings): WriteSettings = WriteSettings(
    s.positive(1024L * 1024, "max_rows_per_file", "max_row_per_file"),
    s.positive(8L << 20, "max_page_bytes"),
    math.min(s.positive(8192, "batch_rows", "batch_size"), 1L << 20).toInt,
    commitRetries(s),
    s.fileVersion)

  /** `commit_retries` alone: what a commit that takes no other write setting reads. */
  def commitRetries(s: Settings): Int = math.min(s.positive(20, "commit_retries"), 1000).toInt

  /** The settings of a write that passes no options to a table with `properties`. */
  def of(properties: Map[String, String]): WriteSettings = WriteSettings(Settings.of(Map.empty, properties))
}

/**
 * How a scan is read, from [[Settings]]: `batch_size` (default 8192) rows per batch, and `rows_per_partition`, the
 * most rows one task reads (larger fragments are split by row ranges), when given; without it, tasks are sized by
 * bytes ([[Scan.TaskSizing]]).
 */
final case class ReadSettings(batchRows: Int, rowsPerTask: Option[Long])

object ReadSettings {
  /** The rows per task of a read that must count rows (a stream's micro-batch) and was given no `rows_per_partition`. */
  val DefaultRowsPerTask: Long = 1L << 20

  def apply(s: Settings): ReadSettings =
    ReadSettings(s.positive(8192, "batch_size").min(Int.MaxValue / 2).toInt,
      s.lookup("rows_per_partition").map(_ => s.positive(DefaultRowsPerTask, "rows_per_partition")))
}
