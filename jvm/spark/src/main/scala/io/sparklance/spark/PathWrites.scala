package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.sql.{Column, DataFrame, SaveMode, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Cast
import org.apache.spark.sql.connector.write.{DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.{ArrayType, BinaryType, DataType, MapType, StringType, StructType}

import io.sparklance.core.{InvalidArgumentException, NotATableException, TableExistsException, table => lance}
import io.sparklance.core.table.{Snapshot, TimeTravel}

/**
 * `df.write.format("lance").mode(m).save(path)`: every save mode over a table named by its path.
 *
 *  - `errorifexists` (the default) and `ignore` create the table, or fail / do nothing when one is there;
 *  - `append` adds the rows (creating the table if there is none); columns are matched to the table's by name,
 *    missing nullable columns are written as nulls, and types are widened only where Spark's up-cast is lossless;
 *  - `overwrite` replaces the table's rows and schema with the DataFrame's in one new version (earlier versions stay
 *    readable by time travel).
 *
 * A table created or replaced from a DataFrame has nullable columns (as Spark's file sources do), so later appends
 * may carry nulls; CREATE TABLE with NOT NULL columns keeps them NOT NULL.
 *
 * The rows are written by one Spark job; its files are committed as one version, or deleted if the job fails.
 */
object PathWrites {

  def save(spark: SparkSession, location: String, requestedMode: SaveMode, options: Map[String, String],
      data: DataFrame): Unit = {
    LanceOptions.checkWrite(options, location)
    val mode = withWriteMode(requestedMode, options, location)
    val conf = TableAccess.hadoopConf(spark, options, s"the write to $location")
    val path = branchRoot(conf, TableAccess.qualify(conf, location), options)
    val existing: Option[Snapshot] =
      try Some(TableAccess.load(conf, path, TimeTravel.Latest))
      catch {
        case e: LanceSparkException if e.cause.isInstanceOf[NotATableException] =>
          LanceSparkException.translate(lance.Table.checkCanCreate(path, conf))
          None
      }
    (existing, mode) match {
      case (Some(s), SaveMode.ErrorIfExists) =>
        throw new LanceSparkException(new TableExistsException(path, s"it is at version ${s.version}. Use " +
          "mode(\"append\") to add rows, mode(\"overwrite\") to replace them, or mode(\"ignore\") to skip the write."))
      case (Some(_), SaveMode.Ignore) => ()
      case (Some(s), SaveMode.Append) =>
        val aligned = align(data, SparkSchemas.toSpark(s.schema), path)
        val options0 = WriteOptions(options, s.config)
        val version = s.fileVersion
        options0.checkKeeps(version, s.hasStableRowIds, path)
        run(spark, WriteSpec(path, s.schema, version, options0, conf), aligned, s.version, overwrite = false, None)
      case (Some(s), SaveMode.Overwrite) =>
        val table = NewTable(path, SparkSchemas.asNullable(data.schema), options, Some(s.fileVersion))
        run(spark, WriteSpec(path, table.schema, table.version, WriteOptions(options, Map.empty), conf), data, s.version,
          overwrite = true, Some(table))
      case (None, _) =>
        val table = NewTable(path, SparkSchemas.asNullable(data.schema), options)
        run(spark, WriteSpec(path, table.schema, table.version, WriteOptions(options, Map.empty), conf), data, 0L,
          overwrite = true, Some(table))
    }
  }

  /**
   * Where a write goes: the table at `path`, or with option `branch` (but `main`), that branch of it, which must
   * exist (a branch is created from a version, never by a write).
   */
  private def branchRoot(conf: org.apache.hadoop.conf.Configuration, path: String, options: Map[String, String]): String =
    LanceOptions.value(options, "branch") match {
      case None | Some("main") => path
      case Some(b) => LanceSparkException.translate(lance.Table.forPath(path, conf).branch(b).root)
    }

  /**
   * The save mode, with the other Lance connector's `write_mode` option (`append` or `overwrite`): it sets the mode
   * of a write that left Spark's default (`errorifexists`), and must agree with a mode given otherwise.
   */
  private def withWriteMode(mode: SaveMode, options: Map[String, String], path: String): SaveMode =
    LanceOptions.value(options, "write_mode").map(_.toLowerCase) match {
      case None => mode
      case Some(w @ ("append" | "overwrite")) =>
        val asked = if (w == "append") SaveMode.Append else SaveMode.Overwrite
        if (mode != SaveMode.ErrorIfExists && mode != asked) {
          throw new LanceSparkException(new InvalidArgumentException(s"Option write_mode is '$w' but the save mode " +
            s"of this write of $path is '$mode'. Give one of them, or make them agree."))
        }
        asked
      case Some(other) => throw new LanceSparkException(new InvalidArgumentException(s"Option write_mode must be " +
        s"'append' or 'overwrite', not '$other'."))
    }

  /** Runs the write job and commits its fragments as one version, or deletes them when anything fails. */
  private def run(spark: SparkSession, spec: WriteSpec, data: DataFrame, readVersion: Long, overwrite: Boolean,
      newTable: Option[NewTable]): Long = {
    val batch = new LanceBatchWrite(spec, data.schema, readVersion, overwrite, newTable)
    val factory = batch.writerFactory
    val rdd = data.queryExecution.toRdd
    // Indexed by partition, so that fragments are committed (and get row ids) in the DataFrame's order.
    val messages = new Array[WriterCommitMessage](rdd.partitions.length)
    def done: Array[WriterCommitMessage] = messages.synchronized(messages.filter(_ != null))
    try {
      spark.sparkContext.runJob(rdd, (ctx: TaskContext, rows: Iterator[InternalRow]) => writeTask(factory, ctx, rows),
        rdd.partitions.indices, (i: Int, m: WriterCommitMessage) => messages.synchronized { messages(i) = m })
      batch.commit(done)
      batch.committedVersion.get
    } catch {
      case NonFatal(e) =>
        batch.abort(done)
        throw e
    }
  }

  private def writeTask(factory: DataWriterFactory, ctx: TaskContext, rows: Iterator[InternalRow]): WriterCommitMessage = {
    val writer = factory.createWriter(ctx.partitionId(), ctx.taskAttemptId())
    try {
      rows.foreach(writer.write)
      writer.commit()
    } catch {
      case NonFatal(e) =>
        try writer.abort() catch { case NonFatal(s) => e.addSuppressed(s) }
        throw e
    } finally writer.close()
  }

  /**
   * The DataFrame's columns in the table's order and types, matched by name (case-insensitively). Missing nullable
   * columns become nulls; a missing NOT NULL column, an extra column, or a type Spark cannot up-cast losslessly is an
   * error listing every difference.
   */
  def align(data: DataFrame, table: StructType, path: String): DataFrame = {
    val byName = data.schema.fields.map(f => f.name.toLowerCase -> f).toMap
    val problems = ArrayBuffer.empty[String]
    val columns: Seq[Column] = table.fields.toSeq.map { t =>
      byName.get(t.name.toLowerCase) match {
        case None if t.nullable => lit(null).cast(t.dataType).as(t.name)
        case None => problems += s"column '${t.name}' (${t.dataType.sql}, NOT NULL) is missing"; lit(null)
        case Some(f) if sameType(f.dataType, t.dataType) => col(quoted(f.name)).as(t.name)
        case Some(f) if widens(f.dataType, t.dataType) => col(quoted(f.name)).cast(t.dataType).as(t.name)
        case Some(f) =>
          problems += s"column '${t.name}' is ${t.dataType.sql} in the table but ${f.dataType.sql} in the data"; lit(null)
      }
    }
    val known = table.fields.map(_.name.toLowerCase).toSet
    data.schema.fields.filterNot(f => known.contains(f.name.toLowerCase)).foreach { f =>
      problems += s"column '${f.name}' (${f.dataType.sql}) is not in the table"
    }
    if (problems.nonEmpty) {
      throw new LanceSparkException(new InvalidArgumentException(s"Cannot append to $path: the data does not match " +
        s"the table's schema: ${problems.mkString("; ")}. Select and cast the columns to the table's schema, or use " +
        "mode(\"overwrite\") to replace the table and its schema."))
    }
    data.select(columns: _*)
  }

  /** Lossless widening (Spark's up-cast), but never into text: a number is not silently written as a string. */
  private def widens(from: DataType, to: DataType): Boolean =
    Cast.canUpCast(from, to) && !hasText(to)

  private def hasText(t: DataType): Boolean = t match {
    case StringType | BinaryType => true
    case ArrayType(e, _) => hasText(e)
    case MapType(k, v, _) => hasText(k) || hasText(v)
    case s: StructType => s.fields.exists(f => hasText(f.dataType))
    case _ => false
  }

  private def quoted(name: String): String = "`" + name.replace("`", "``") + "`"

  /** Equal types, ignoring nullability and field metadata. */
  def sameType(a: DataType, b: DataType): Boolean = (a, b) match {
    case (x: StructType, y: StructType) =>
      x.length == y.length && x.fields.zip(y.fields).forall { case (f, g) => f.name == g.name && sameType(f.dataType, g.dataType) }
    case (ArrayType(x, _), ArrayType(y, _)) => sameType(x, y)
    case (MapType(k1, v1, _), MapType(k2, v2, _)) => sameType(k1, k2) && sameType(v1, v2)
    case _ => a == b
  }

}
