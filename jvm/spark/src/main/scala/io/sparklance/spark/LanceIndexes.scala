package io.sparklance.spark

import java.sql.Timestamp

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.index.IndexMetadata
import io.sparklance.core.table.{FullTextIndexBuild, IndexBuild, Table, TimeTravel, VectorIndexBuild}

/**
 * Scalar indexes from Spark: built with one Spark task per fragment (each sorts its fragment's keys; the driver
 * merges them and commits one CreateIndex version), listed and dropped.
 */
object LanceIndexes {

  /**
   * Builds and commits index `name` of `kind` on `column`; returns the new version's index as one row (the columns of
   * [[list]]).
   */
  def create(spark: SparkSession, location: String, name: String, kind: String, column: String,
      options: Map[String, String], replace: Boolean, train: Boolean = true): Seq[Row] = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val path = TableAccess.qualify(conf, location)
    val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
    if (!train && (VectorIndexBuild.isVector(kind) || FullTextIndexBuild.isFullText(kind))) {
      throw new UnsupportedFeatureException(s"Index $name: train = false (an empty index, filled by OPTIMIZE INDEX) " +
        "is supported for scalar indexes (btree, bitmap, zonemap, bloomfilter, label_list, ngram), " +
        s"not for $kind indexes, " +
        "which sparklance trains when they are created. Leave train out.")
    }
    if (VectorIndexBuild.isVector(kind)) {
      runVector(spark, conf, snapshot.table.newVectorIndex(snapshot, name, column, kind, options, replace))
    } else if (FullTextIndexBuild.isFullText(kind)) {
      runFullText(spark, conf, snapshot.table.newFullTextIndex(snapshot, name, column, options, replace))
    } else run(spark, conf, snapshot.table.newIndex(snapshot, name, column, kind, options, replace, train))
  }

  /**
   * Runs a vector index build: the model is trained here (on a sample), then one Spark task per slice of a fragment
   * places and encodes its rows; for IVF_HNSW_* a second job builds each partition's graph, one Spark task per
   * partition; the driver writes the index files from their runs (and graphs) and commits.
   */
  private def runVector(spark: SparkSession, conf: org.apache.hadoop.conf.Configuration, build: VectorIndexBuild): Seq[Row] =
    indexJob(spark, build.column.name, runs => build.commit(runs, graphs(spark, conf, build, runs)), () => build.abort()) { sc =>
      if (sc.isLocal) (build.tasksInThisProcess, new RunInThisProcess(VectorIndexBuild.runInThisProcess))
      else (build.tasks, new RunAnywhere[VectorIndexBuild.Task](build.root, new SerializableConfiguration(conf),
        _.runVectorIndexTask(_)))
    }

  /**
   * Runs a full-text index build: one Spark task per fragment analyses its rows and writes them as a partition of
   * the index; the driver writes the index's metadata and commits.
   */
  private def runFullText(spark: SparkSession, conf: org.apache.hadoop.conf.Configuration,
      build: FullTextIndexBuild): Seq[Row] =
    indexJob(spark, build.column.name, build.commit, () => build.abort()) { _ =>
      (build.tasks, new RunAnywhere[FullTextIndexBuild.Task](build.root, new SerializableConfiguration(conf),
        _.runFullTextIndexTask(_)))
    }

  /**
   * The graphs of an IVF_HNSW_* build's partitions, built by one Spark job, one task per partition (none otherwise).
   * The tasks share the application's cores: each takes `spark.task.cpus` threads, or more when there are fewer
   * graphs than cores.
   */
  private def graphs(spark: SparkSession, conf: org.apache.hadoop.conf.Configuration, build: VectorIndexBuild,
      runs: Seq[String]): Seq[String] = {
    val sc = spark.sparkContext
    val tasks = build.graphTasks(runs, sc.defaultParallelism, sc.getConf.getInt("spark.task.cpus", 1))
    if (tasks.isEmpty) Nil
    else {
      val work = if (sc.isLocal) new RunInThisProcess(VectorIndexBuild.runGraphInThisProcess)
        else new RunAnywhere[VectorIndexBuild.GraphTask](build.root, new SerializableConfiguration(conf), _.runVectorGraphTask(_))
      sc.runJob(sc.parallelize(tasks, tasks.size), work).toSeq.flatten
    }
  }

  /**
   * Runs a build's tasks as Spark tasks, one per fragment, then commits it; the new index as one row. In local mode
   * the tasks run in this JVM: their sorted runs reach the merge without files, and they use the build's storage, so
   * no Hadoop configuration is shipped with them. The functions are named classes, which Spark's closure cleaner
   * passes over.
   */
  private def run(spark: SparkSession, conf: org.apache.hadoop.conf.Configuration, build: IndexBuild): Seq[Row] =
    indexJob(spark, build.column.name, build.commit, () => build.abort()) { sc =>
      if (sc.isLocal) (build.tasksInThisProcess, new RunInThisProcess(IndexBuild.runInThisProcess))
      else (build.tasks, new RunAnywhere[IndexBuild.Task](build.root, new SerializableConfiguration(conf), _.runIndexTask(_)))
    }

  /**
   * Runs the tasks `plan` picks for this context (with the function that runs them) as one Spark job, one task each,
   * then `commit`s their runs; the new index as one row. Anything failing aborts the build.
   */
  private def indexJob[T: scala.reflect.ClassTag](spark: SparkSession, column: String, commit: Seq[String] => IndexMetadata,
      abort: () => Unit)(plan: org.apache.spark.SparkContext => (Seq[T], (TaskContext, Iterator[T]) => Array[String])): Seq[Row] = {
    val sc = spark.sparkContext
    val watch = new JobWatch(sc)
    try {
      val (tasks, work) = plan(sc)
      val runs = if (tasks.isEmpty) Nil else sc.runJob(sc.parallelize(tasks, tasks.size), work).toSeq.flatten
      val index = commit(runs)
      Seq(Row(index.name, index.kind.name, Seq(column), index.uuid, index.fragmentBitmap.getCardinality,
        index.createdAt.map(Timestamp.from).orNull))
    } catch {
      case NonFatal(e) =>
        watch.awaitTasks() // tasks still running when the job failed may write into the build's directory
        abort()
        throw e
    }
  }

  /**
   * The tasks of a partition run in the driver's JVM by `run` (a build's `runInThisProcess`), on the build's storage.
   * A named class, which Spark's closure cleaner passes over.
   */
  private final class RunInThisProcess[T](run: T => String)
      extends ((TaskContext, Iterator[T]) => Array[String]) with Serializable {
    override def apply(context: TaskContext, tasks: Iterator[T]): Array[String] = tasks.map(run).toArray
  }

  /** The tasks of a partition run on any executor by `run`, on the table at `root` opened with `conf`. */
  private final class RunAnywhere[T](root: String, conf: SerializableConfiguration, run: (Table, T) => String)
      extends ((TaskContext, Iterator[T]) => Array[String]) with Serializable {
    override def apply(context: TaskContext, tasks: Iterator[T]): Array[String] = {
      val table = Table.forPath(root, conf.value)
      tasks.map(run(table, _)).toArray
    }
  }

  /**
   * What an OPTIMIZE INDEX did to one index: its name, how many fragments no segment covered before and the index
   * covers now, its segments before and after, the segments it committed (none when it changed nothing), and the
   * newest segment as a row of [[segmentColumns]].
   */
  final case class Maintained(name: String, fragmentsIndexed: Long, segmentsBefore: Long, segmentsAfter: Long,
      segmentsAdded: Long, newest: Row)

  /**
   * Brings index `name` up to date with the latest version: the fragments it does not cover (appended since it was
   * built, or rewritten by compaction) are read, one Spark task each, and merged with the old index into a new one
   * committed in its place, with the same kind, column and options (`options` given must be those). A vector index's
   * new rows are placed and encoded with its model, one Spark task per slice of a fragment, and written with its
   * old rows into one segment on the driver (options are refused). An index that covers every fragment, in one
   * segment, is returned as it is, and nothing is committed. With `merge` (`num_indices_to_merge`), only the newest
   * `merge` segments are merged with the fragments no segment covers (none: those form a new delta segment), as
   * pylance 14's `optimize_indices` does.
   */
  def optimize(spark: SparkSession, location: String, name: String, options: Map[String, String] = Map.empty,
      merge: Option[Int] = None): Maintained = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val path = TableAccess.qualify(conf, location)
    val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
    val before = snapshot.indexes.filter(_.name == name)
    val uncovered = snapshot.indexCoverage(name).unindexed
    val t = snapshot.table
    val rows =
      if (t.isVectorIndex(snapshot, name)) runVector(spark, conf, t.newVectorIndexUpdate(snapshot, name, options, merge))
      else if (t.isFullTextIndex(snapshot, name)) runFullText(spark, conf, t.newFullTextIndexUpdate(snapshot, name, options, merge))
      else run(spark, conf, t.newIndexUpdate(snapshot, name, options, merge))
    val after = TableAccess.load(conf, path, TimeTravel.Latest).indexes.filter(_.name == name)
    Maintained(name, uncovered.count(id => after.exists(_.covers(id))).toLong, before.size.toLong, after.size.toLong,
      after.count(a => !before.exists(_.uuid == a.uuid)).toLong, rows.head)
  }

  /** The names of the indexes of the latest version. */
  def indexNames(spark: SparkSession, location: String): Seq[String] = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest).indexes.map(_.name).distinct
  }

  /** How many fragments of the latest version no segment of index `name` covers. */
  def uncoveredFragments(spark: SparkSession, location: String, name: String): Long = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest).indexCoverage(name).unindexedFragments
  }

  /** Drops every index named `name`; returns the new version. */
  def drop(spark: SparkSession, location: String, name: String): Long = LanceSparkException.translate {
    Table.forPath(location, LanceCatalog.settingsFor(spark, location)).dropIndex(name)
  }

  /**
   * The columns of a row describing one segment of an index (CREATE INDEX's result, [[segments]]): `name`, `type`
   * (`BTREE`, `VECTOR`, ...), `columns`, `uuid`, `fragments` (how many of the version's fragments it covers),
   * `created_at`.
   */
  val segmentColumns: StructType = StructType(Seq(StructField("name", StringType, nullable = false),
    StructField("type", StringType, nullable = false),
    StructField("columns", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("uuid", StringType, nullable = false), StructField("fragments", IntegerType, nullable = false),
    StructField("created_at", TimestampType)))

  /**
   * The columns of SHOW INDEXES: lance-spark's (`name`, `fields`, `index_type` as pylance's statistics name it, in
   * lower case, and the fragments and rows the index covers and does not), then sparklance's `num_segments`,
   * `uuids` (its segments', in the manifest's order) and `created_at` (of its newest segment).
   */
  val indexColumns: StructType = StructType(Seq(StructField("name", StringType),
    StructField("fields", ArrayType(StringType)), StructField("index_type", StringType),
    StructField("num_indexed_fragments", LongType), StructField("num_indexed_rows", LongType),
    StructField("num_unindexed_fragments", LongType), StructField("num_unindexed_rows", LongType),
    StructField("num_segments", LongType, nullable = false),
    StructField("uuids", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("created_at", TimestampType)))

  /** The indexes of the latest version, one row per index (of all its segments): the [[indexColumns]]. */
  def list(spark: SparkSession, location: String): Seq[Row] = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val snapshot = TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest)
    snapshot.indexes.map(_.name).distinct.map { name =>
      val segments = snapshot.indexes.filter(_.name == name)
      val newest = segments.last
      val fields = newest.fieldIds.map(id => snapshot.schema.field(id).map(_.name).getOrElse(id.toString))
      val c = snapshot.indexCoverage(name)
      Row(name, fields, snapshot.indexTypeName(newest).toLowerCase(java.util.Locale.ROOT), c.indexedFragments,
        c.indexedRows, c.unindexedFragments, c.unindexedRows, segments.size.toLong, segments.map(_.uuid),
        segments.flatMap(_.createdAt).sortBy(_.toEpochMilli).lastOption.map(Timestamp.from).orNull)
    }
  }

  /**
   * The segments of the indexes of the latest version, one row each (an index pylance or OPTIMIZE INDEX extended with
   * delta segments has several): the [[segmentColumns]]. For Python's `LanceTable.list_indices`.
   */
  def segments(spark: SparkSession, location: String): DataFrame = LanceSparkException.translate {
    val conf = LanceCatalog.settingsFor(spark, location)
    val snapshot = TableAccess.load(conf, TableAccess.qualify(conf, location), TimeTravel.Latest)
    val rows = snapshot.indexes.map { i =>
      val columns = i.fieldIds.map(id => snapshot.schema.field(id).map(_.name).getOrElse(s"<field $id>"))
      Row(i.name, i.kind.name, columns, i.uuid, snapshot.fragmentsCovered(i), i.createdAt.map(Timestamp.from).orNull)
    }
    spark.createDataFrame(java.util.List.of(rows: _*), segmentColumns)
  }
}
