package io.sparklance.spark

import java.sql.Timestamp

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.table.{IndexBuild, Table, TimeTravel}

/**
 * Scalar indexes from Spark: built with one Spark task per fragment (each sorts its fragment's keys; the driver
 * merges them and commits one CreateIndex version), listed and dropped.
 */
object LanceIndexes {

  /** Builds and commits index `name` of `kind` on `column`; returns the new version's index as one row. */
  def create(spark: SparkSession, location: String, name: String, kind: String, column: String,
      options: Map[String, String], replace: Boolean): DataFrame = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val path = TableAccess.qualify(conf, location)
    val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
    run(spark, conf, snapshot.table.newIndex(snapshot, name, column, kind, options, replace))
  }

  /** Runs a build's tasks as Spark tasks, then commits it; the new index as one row. */
  private def run(spark: SparkSession, conf: org.apache.hadoop.conf.Configuration, build: IndexBuild): DataFrame = {
    val serializableConf = new SerializableConfiguration(conf)
    // In local mode the tasks run in this JVM, so their sorted runs can reach the merge without files.
    val tasks = if (spark.sparkContext.isLocal) build.tasksInThisProcess else build.tasks
    val root = build.root
    try {
      val runs = if (tasks.isEmpty) Nil else spark.sparkContext.parallelize(tasks, tasks.size)
        .map(t => Table.forPath(root, serializableConf.value).runIndexTask(t)).collect().toSeq
      val index = build.commit(runs)
      describe(spark, Seq(Row(index.name, index.kind.name, Seq(build.column.name), index.uuid,
        index.fragmentBitmap.getCardinality, index.createdAt.map(Timestamp.from).orNull)))
    } catch {
      case NonFatal(e) => build.abort(); throw e
    }
  }

  /**
   * Brings index `name` up to date with the latest version: the fragments it does not cover (appended since it was
   * built, or rewritten by compaction) are read, one Spark task each, and merged with the old index into a new one
   * committed in its place, with the same kind, column and options. An index that covers every fragment is
   * returned as it is, and nothing is committed.
   */
  def optimize(spark: SparkSession, location: String, name: String): DataFrame = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val snapshot = TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest)
    run(spark, conf, snapshot.table.newIndexUpdate(snapshot, name))
  }

  /**
   * Brings every index of the latest version up to date, one after the other (each in a version of its own, as
   * [[optimize]] does); one row per index.
   */
  def optimizeAll(spark: SparkSession, location: String): DataFrame = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val names = TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest).indexes.map(_.name).distinct
    names.map(optimize(spark, location, _)).reduceOption(_ union _).getOrElse(describe(spark, Nil))
  }

  /** Drops every index named `name`; returns the new version. */
  def drop(spark: SparkSession, location: String, name: String): Long = LanceSparkException.translate {
    Table.forPath(location, LanceCatalog.settingsFor(spark, location)).dropIndex(name)
  }

  /**
   * The indexes of the latest version, one row per index (delta indexes of one name each have a row): `name`,
   * `type`, `columns`, `uuid`, `fragments` (how many of the version's fragments it covers), `created_at`.
   */
  def list(spark: SparkSession, location: String): DataFrame = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val snapshot = TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest)
    describe(spark, snapshot.indexes.map { i =>
      val columns = i.fieldIds.map(id => snapshot.schema.field(id).map(_.name).getOrElse(s"<field $id>"))
      Row(i.name, i.kind.name, columns, i.uuid, snapshot.fragmentsCovered(i), i.createdAt.map(Timestamp.from).orNull)
    })
  }

  private def describe(spark: SparkSession, rows: Seq[Row]): DataFrame =
    spark.createDataFrame(java.util.List.of(rows: _*), StructType(Seq(
      StructField("name", StringType, nullable = false), StructField("type", StringType, nullable = false),
      StructField("columns", ArrayType(StringType, containsNull = false), nullable = false),
      StructField("uuid", StringType, nullable = false), StructField("fragments", IntegerType, nullable = false),
      StructField("created_at", TimestampType))))
}
