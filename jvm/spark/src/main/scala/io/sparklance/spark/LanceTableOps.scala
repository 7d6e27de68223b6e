package io.sparklance.spark

import java.sql.Timestamp

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._

import io.sparklance.core.{table => lance}

/**
 * Table maintenance from Spark (Scala, Java, and Python through py4j), on a table named by its path: history as a
 * DataFrame, tags, and restoring an earlier version. Errors are [[LanceSparkException]]s with the core's class.
 */
object LanceTableOps {

  /**
   * The table at `path`, with the session's settings and, for a table of a Lance catalog, that catalog's (its
   * object-store and commit settings apply to maintenance as to reads and writes).
   */
  private def table(spark: SparkSession, path: String): lance.Table =
    lance.Table.forPath(path, LanceCatalog.settingsFor(spark, path))

  /**
   * Every version: `version`, `timestamp`, `operation`, `rows`, `fragments`, `rows_added`, `rows_deleted`,
   * `written_by`; ascending.
   */
  def history(spark: SparkSession, path: String): DataFrame = LanceSparkException.translate {
    val rows = table(spark, path).history().map { h =>
      Row(h.version, Timestamp.from(h.timestamp), h.operation, h.rows, h.fragments, h.rowsAdded, h.rowsDeleted, h.writtenBy)
    }
    spark.createDataFrame(java.util.List.of(rows: _*), StructType(Seq(
      StructField("version", LongType, nullable = false), StructField("timestamp", TimestampType, nullable = false),
      StructField("operation", StringType, nullable = false), StructField("rows", LongType, nullable = false),
      StructField("fragments", IntegerType, nullable = false), StructField("rows_added", LongType, nullable = false),
      StructField("rows_deleted", LongType, nullable = false), StructField("written_by", StringType, nullable = false))))
  }

  /** The branches of the table at `path`, ascending by name. */
  def branchList(spark: SparkSession, path: String): Seq[lance.Branch] =
    LanceSparkException.translate(table(spark, path).branches().values.toSeq)

  /** The branches: `name`, `parent_branch` (null for main), `parent_version`, `created_at`; ascending by name. */
  def branches(spark: SparkSession, path: String): DataFrame = LanceSparkException.translate {
    val rows = branchList(spark, path).map { b =>
      Row(b.name, b.parentBranch.orNull, b.parentVersion, b.createdAt.map(Timestamp.from).orNull)
    }
    spark.createDataFrame(java.util.List.of(rows: _*), StructType(Seq(
      StructField("name", StringType, nullable = false), StructField("parent_branch", StringType),
      StructField("parent_version", LongType, nullable = false), StructField("created_at", TimestampType))))
  }

  /**
   * Creates branch `name` from the latest version of the table at `path` (main, or the branch `path` is), or from
   * `version` of it, or from the version tag `tag` points to (on whichever branch the tag names).
   */
  def createBranch(spark: SparkSession, path: String, name: String, version: Option[Long], tag: Option[String]): Unit =
    LanceSparkException.translate {
      val t = table(spark, path)
      val from = tag.map(lance.TimeTravel.AtTag.apply).getOrElse {
        val at = version.map(lance.TimeTravel.AtVersion.apply).getOrElse(lance.TimeTravel.Latest)
        t.branchName.map(lance.TimeTravel.OnBranch(_, at)).getOrElse(at)
      }
      t.createBranch(name, from)
    }

  /** [[createBranch]] from the latest version, for Python. */
  def createBranch(spark: SparkSession, path: String, name: String): Unit = createBranch(spark, path, name, None, None)

  /** [[createBranch]] from `version`, for Python. */
  def createBranchAt(spark: SparkSession, path: String, name: String, version: Long): Unit =
    createBranch(spark, path, name, Some(version), None)

  /** [[createBranch]] from the version of tag `tag`, for Python. */
  def createBranchFromTag(spark: SparkSession, path: String, name: String, tag: String): Unit =
    createBranch(spark, path, name, None, Some(tag))

  /** Deletes branch `name` and its files; refused while another branch was made from it. */
  def deleteBranch(spark: SparkSession, path: String, name: String): Unit =
    LanceSparkException.translate(table(spark, path).deleteBranch(name))

  /** The root of branch `name` of the table at `path` (which must exist), to read and write it as a table. */
  def branchPath(spark: SparkSession, path: String, name: String): String =
    LanceSparkException.translate(table(spark, path).branch(name).root)

  /** The tags of the table at `path`, ascending by name. */
  def tagList(spark: SparkSession, path: String): Seq[lance.Tag] =
    LanceSparkException.translate(table(spark, path).tags().values.toSeq)

  /** The tags: `name`, `version`, ascending by name. */
  def tags(spark: SparkSession, path: String): DataFrame = LanceSparkException.translate {
    val rows = tagList(spark, path).map(t => Row(t.name, t.version))
    spark.createDataFrame(java.util.List.of(rows: _*), StructType(Seq(
      StructField("name", StringType, nullable = false), StructField("version", LongType, nullable = false))))
  }

  def createTag(spark: SparkSession, path: String, name: String, version: Long): Unit =
    LanceSparkException.translate(table(spark, path).createTag(name, version))

  /** Moves the existing tag `name` to `version`. */
  def replaceTag(spark: SparkSession, path: String, name: String, version: Long): Unit =
    LanceSparkException.translate(table(spark, path).replaceTag(name, version))

  /** The versions the table's tags point to, by tag name (one read of `_refs/tags/`). */
  def tagVersions(spark: SparkSession, path: String): Map[String, Long] =
    LanceSparkException.translate(table(spark, path).tags().map { case (n, t) => n -> t.version }.toMap)

  def deleteTag(spark: SparkSession, path: String, name: String): Unit =
    LanceSparkException.translate(table(spark, path).deleteTag(name))

  /** Commits the table as it was at `version` as a new version; returns the new version. */
  def restore(spark: SparkSession, path: String, version: Long): Long =
    LanceSparkException.translate(table(spark, path).restore(version))

  /**
   * Compacts the table (merges small fragments, drops deleted rows; see `Compaction`) as one new version. Returns
   * `version` (null when there was nothing to do), `fragments_removed`, `fragments_added`.
   */
  def optimize(spark: SparkSession, path: String, targetRowsPerFragment: Long): DataFrame =
    optimize(spark, path, Map("target_rows_per_fragment" -> targetRowsPerFragment.toString))

  /** [[optimize]] with options given as a Java map (from Python). */
  def optimizeWith(spark: SparkSession, path: String, options: java.util.Map[String, String]): DataFrame =
    optimize(spark, path, options.asScala.toMap)

  /** Compaction with options ([[LanceOptions.checkOptimize]], [[lance.Compaction.Options]]); what it did. */
  def compact(spark: SparkSession, path: String, options: Map[String, String]): lance.Compaction.Result =
    LanceSparkException.translate {
      LanceOptions.checkOptimize(options, path)
      table(spark, path).compact(lance.Compaction.Options(lance.Settings.of(options, Map.empty)))
    }

  /** [[compact]], as a row as above. */
  def optimize(spark: SparkSession, path: String, options: Map[String, String]): DataFrame = LanceSparkException.translate {
    val r = compact(spark, path, options)
    spark.createDataFrame(java.util.Collections.singletonList(Row(r.version.map(Long.box).orNull, r.fragmentsRemoved, r.fragmentsAdded)),
      StructType(Seq(StructField("version", LongType), StructField("fragments_removed", IntegerType, nullable = false),
        StructField("fragments_added", IntegerType, nullable = false))))
  }

  def optimize(spark: SparkSession, path: String): DataFrame = optimize(spark, path, 1024L * 1024)

  /**
   * Removes versions older than `retainHours` (except the latest and tagged ones) and the files only they need;
   * with `dryRun`, only lists them. Returns one row per removed file: `path`, and the removed versions' numbers in
   * `versions` on every row.
   */
  def vacuum(spark: SparkSession, path: String, retainHours: Double, dryRun: Boolean): DataFrame =
    vacuum(spark, path, Some(retainHours), dryRun, Map.empty)

  /**
   * VACUUM with the other Lance connector's options too ([[LanceOptions.checkVacuum]]): `before_version`,
   * `before_timestamp_millis` (instead of `retainHours`), `delete_unverified`, `error_if_tagged_old_versions`. Without
   * a time or version bound, versions older than 7 days go. Rows as above.
   */
  def vacuum(spark: SparkSession, path: String, retainHours: Option[Double], dryRun: Boolean,
      options: Map[String, String]): DataFrame = LanceSparkException.translate {
    val r = cleanup(spark, path, retainHours, dryRun, options)
    val versions = r.removedVersions.map(Long.box).toArray
    spark.createDataFrame(java.util.List.of(r.removedFiles.map(f => Row(f, versions.toSeq)): _*), StructType(Seq(
      StructField("path", StringType, nullable = false), StructField("versions", ArrayType(LongType, containsNull = false)))))
  }

  /** The cleanup [[vacuum]] runs (or, with `dryRun`, plans): what it removed. */
  def cleanup(spark: SparkSession, path: String, retainHours: Option[Double], dryRun: Boolean,
      options: Map[String, String]): lance.Cleanup.Result = LanceSparkException.translate {
    LanceOptions.checkVacuum(options, path)
    val settings = lance.Settings.of(options, Map.empty)
    retainHours.filter(_ < 0).foreach { h =>
      throw new io.sparklance.core.InvalidArgumentException(s"retainHours must not be negative, not $h.")
    }
    val now = java.time.Instant.now()
    val weekAgo = now.minus(java.time.Duration.ofDays(7))
    val timestamp = settings.lookup("before_timestamp_millis").map(_ => settings.count(0, "before_timestamp_millis"))
    if (timestamp.isDefined && retainHours.isDefined) {
      throw new io.sparklance.core.InvalidArgumentException("VACUUM takes RETAIN n HOURS or before_timestamp_millis, " +
        "not both.")
    }
    val beforeVersion = settings.lookup("before_version").map(_ => settings.positive(1, "before_version"))
    val olderThan = timestamp.map(java.time.Instant.ofEpochMilli)
      .orElse(retainHours.map(h => now.minusMillis((h * 3600 * 1000).toLong)))
      .orElse(if (beforeVersion.isEmpty) Some(weekAgo) else None)
    val filesBefore =
      if (settings.flag(default = false, "delete_unverified")) now
      else olderThan.getOrElse(weekAgo)
    val policy = lance.Cleanup.Policy(olderThan, beforeVersion, filesBefore,
      errorIfTagged = settings.flag(default = false, "error_if_tagged_old_versions"))
    val t = table(spark, path)
    if (dryRun) t.cleanupPlan(policy) else t.cleanup(policy)
  }

  /**
   * Adds columns computed from the existing ones (`names(i)` = the SQL expression `expressions(i)`), writing only
   * the new columns (one new data file per fragment); returns the new version. See [[AddColumns]].
   */
  def addColumns(spark: SparkSession, path: String, names: java.util.List[String], expressions: java.util.List[String]): Long = {
    if (names.size != expressions.size) {
      throw new LanceSparkException(new io.sparklance.core.InvalidArgumentException(
        s"${names.size} column names but ${expressions.size} expressions: give one expression per column."))
    }
    AddColumns.run(spark, path, names.asScala.toSeq.zip(expressions.asScala.toSeq))
  }

  /** The path of a table of a Lance catalog named `<catalog>.<namespace>.<table>` (or ``<catalog>.`/path` ``). */
  def locate(spark: SparkSession, name: String): String =
    LanceSqlParser.location(spark, spark.sessionState.sqlParser.parseMultipartIdentifier(name))

  /**
   * Commits data files already written under the table's `data/` (file names) as one version: an append, or with
   * `overwrite` an overwrite with the first file's schema (a new table is created). Returns the new version.
   */
  def commitFiles(spark: SparkSession, path: String, names: java.util.List[String], overwrite: Boolean): Long =
    LanceSparkException.translate {
      val t = table(spark, path)
      if (overwrite) t.overwriteWithFiles(names.asScala.toSeq) else t.appendFiles(names.asScala.toSeq)
    }

  /** Restores the version a tag points to. */
  /** Declares the table's unenforced primary key (see `Table.setPrimaryKey`); returns the new version. */
  def setPrimaryKey(spark: SparkSession, path: String, columns: Seq[String]): Long =
    LanceSparkException.translate(table(spark, path).setPrimaryKey(columns))

  def restoreTag(spark: SparkSession, path: String, tag: String): Long =
    LanceSparkException.translate(table(spark, path).restoreTag(tag))
}
