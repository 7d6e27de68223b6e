package io.sparklance.spark

import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.hadoop.conf.Configuration
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Cast, GenericInternalRow}
import org.apache.spark.sql.functions.{col, expr, lit, shiftrightunsigned, when}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{InvalidArgumentException, table => lance}
import io.sparklance.core.schema.BlobColumns
import io.sparklance.core.table.TimeTravel

/**
 * Data evolution: new columns whose values Spark computes from the existing ones (`SQL expressions`), written as one
 * new data file per fragment beside the fragment's files (no other column is rewritten), and committed with the new
 * schema as one Merge transaction. Rows deleted from a fragment get vacant slots (nulls; zeroed bytes in NOT NULL
 * columns), so the new file lines up with the fragment's other files row for row.
 */
object AddColumns {

  def run(spark: SparkSession, location: String, columns: Seq[(String, String)]): Long = LanceSparkException.translate {
    if (columns.isEmpty) throw new InvalidArgumentException("No columns to add: give at least one name and expression.")
    addComputed(spark, location, source => source.select(col("_rowaddr") +: columns.map { case (name, e) => expr(e).as(name) }: _*))
  }

  /**
   * New columns `names` with the values of those columns of `source` (`ALTER TABLE t ADD COLUMNS c FROM view`, the
   * other Lance connector's backfill): `source` holds `_rowaddr` (the rows' addresses in the latest version, read
   * from the table) and the columns; a row of the table that it has no row for gets nulls, a row of `source` whose
   * address is not a row of the table is ignored, and two rows with one address are an error.
   */
  def fromSource(spark: SparkSession, location: String, names: Seq[String], source: DataFrame, sourceName: String): Long =
    LanceSparkException.translate {
      checkSource(names, source, sourceName, "ADD COLUMNS")
      addComputed(spark, location, table => {
        val keyed = source.select(col(MetadataColumnName).as(SourceAddress) +: names.map(n => col(n).as(n)): _*)
        leftJoin(table.select(MetadataColumnName), keyed)
          .select(col(MetadataColumnName) +: names.map(col): _*)
      })
    }

  /**
   * Columns `names` of the table set, for the rows `source` has (matched by `_rowaddr`), to its values of those
   * columns (`ALTER TABLE t UPDATE COLUMNS c FROM view`, the other Lance connector's column update): each fragment
   * with a matched row gets a new data file holding the columns for all its rows ([[lance.ColumnUpdate]]); other
   * rows keep their values, other fragments and columns are not rewritten. A source column must be of the column's
   * type or one Spark casts to it without loss. Returns the new version, or the current one when no row matched.
   */
  def updateFromSource(spark: SparkSession, location: String, names: Seq[String], source: DataFrame,
      sourceName: String): Long = LanceSparkException.translate {
    checkSource(names, source, sourceName, "UPDATE COLUMNS")
    val Latest(conf, path, snapshot, table) = latest(spark, location)
    val targets = names.map(n => table.schema.fields.find(_.name.equalsIgnoreCase(n)).getOrElse(
      throw new InvalidArgumentException(s"Table $location has no column '$n' to update (its columns: " +
        s"${table.schema.fieldNames.mkString(", ")}).")))
    val change = snapshot.table.newColumnUpdate(snapshot, targets.map(_.name))
    val values = targets.zipWithIndex.map { case (t, i) =>
      val from = source.schema.fields.find(_.name.equalsIgnoreCase(names(i))).get.dataType
      if (!Cast.canUpCast(from, t.dataType)) {
        throw new InvalidArgumentException(s"Column '${names(i)}' of $sourceName is ${from.simpleString}, which " +
          s"cannot be stored in column '${t.name}' of type ${t.dataType.simpleString} without loss: cast it in the source.")
      }
      col(names(i)).cast(t.dataType).as(s"__sparklance_new_$i")
    }
    val keyed = source.select((col(MetadataColumnName).as(SourceAddress) +: values) :+ lit(true).as(Matched): _*)
    val touched = leftJoin(table.select(MetadataColumnName), keyed).where(col(Matched).isNotNull)
      .select(shiftrightunsigned(col(MetadataColumnName), 32)).distinct().collect().map(_.getLong(0)).toSeq
    if (touched.isEmpty) snapshot.version
    else {
      val rows = table.where(col("_fragid").isin(touched: _*)).select(col(MetadataColumnName) +: targets.map(t => col(t.name)): _*)
      val computed = leftJoin(rows, keyed)
        .select(col(MetadataColumnName) +: targets.zipWithIndex.map { case (t, i) =>
          when(col(Matched).isNotNull, col(s"__sparklance_new_$i")).otherwise(col(t.name)).as(t.name)
        }: _*)
      write(spark, conf, path, snapshot, computed, change.spec, change.commit, change.abort)
    }
  }

  private def checkSource(names: Seq[String], source: DataFrame, sourceName: String, statement: String): Unit = {
    if (names.isEmpty) throw new InvalidArgumentException(s"No columns: name at least one column of the source of $statement.")
    val fields = source.schema.fields.map(_.name)
    (MetadataColumnName +: names).find(n => !fields.exists(_.equalsIgnoreCase(n))).foreach { n =>
      throw new InvalidArgumentException(s"$sourceName has no column '$n' (its columns: ${fields.mkString(", ")}). " +
        s"The source of $statement ... FROM holds $MetadataColumnName, read from the table, and the columns.")
    }
  }

  /**
   * `rows` (of the table, with `_rowaddr`) left-joined to `keyed` (with its addresses as [[SourceAddress]]), in SQL
   * over temporary views: Spark 3.5's `Dataset.join` fails on a condition between the table's metadata column and a
   * source that reads the same table (its self-join check expects a bare Join after analysis).
   */
  private def leftJoin(rows: DataFrame, keyed: DataFrame): DataFrame = {
    val id = java.util.UUID.randomUUID().toString.replace("-", "")
    val (left, right) = (s"__sparklance_rows_$id", s"__sparklance_source_$id")
    rows.createOrReplaceTempView(left)
    keyed.createOrReplaceTempView(right)
    // Analysed when made: the views have done their work once it exists.
    try rows.sparkSession.sql(s"SELECT * FROM $left l LEFT JOIN $right r ON l.$MetadataColumnName = r.$SourceAddress")
    finally { rows.sparkSession.catalog.dropTempView(left); rows.sparkSession.catalog.dropTempView(right) }
  }

  /** The latest version of the table at `location`: its settings, path, snapshot, and Spark's read of it. */
  private final case class Latest(conf: Configuration, path: String, snapshot: lance.Snapshot, table: DataFrame)

  private def latest(spark: SparkSession, location: String): Latest = {
    val conf = LanceCatalog.settingsFor(spark, location)
    val path = TableAccess.qualify(conf, location)
    val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
    Latest(conf, path, snapshot, spark.read.format("lance").option("version", snapshot.version.toString).load(path))
  }

  private val MetadataColumnName = "_rowaddr"
  private val SourceAddress = "__sparklance_source_rowaddr"
  private val Matched = "__sparklance_matched"

  /**
   * Adds the columns `compute` gives from the latest version of the table (read by Spark): its first column is
   * `_rowaddr`, the others are the new columns, shaped by the column properties kept in the table's config
   * ([[ColumnProperties]]; a `BINARY` column with `<column>.lance.encoding = blob` becomes a blob column, blob v2 at
   * file version 2.2, as at CREATE).
   */
  private def addComputed(spark: SparkSession, location: String, compute: DataFrame => DataFrame): Long = {
    val Latest(conf, path, snapshot, table) = latest(spark, location)
    val computed = compute(table)
    val (newColumns, _) = ColumnProperties(StructType(computed.schema.fields.tail.map(f => f.copy(nullable = true))),
      snapshot.config)
    val change = snapshot.table.newColumns(snapshot, newColumns.fields.toSeq.map(f =>
      BlobColumns.forVersion(SparkSchemas.toLance(StructType(Seq(f))), snapshot.fileVersion)))
    write(spark, conf, path, snapshot, computed, change.spec, change.commit, change.abort)
  }

  /**
   * Writes the rows of `computed` (`_rowaddr`, then the columns of `spec`) as one file per fragment, in tasks by
   * fragment, and commits the files; on failure deletes them.
   */
  private def write(spark: SparkSession, conf: Configuration, path: String, snapshot: lance.Snapshot,
      computed: DataFrame, spec: lance.NewColumns.Spec, commit: Seq[lance.NewColumns.File] => Long,
      abort: Seq[String] => Unit): Long = {
    val newColumns = StructType(computed.schema.fields.tail)
    val serializableConf = new SerializableConfiguration(conf)
    val batchRows = WriteOptions(Map.empty, Map.empty).batchRows
    val partitions = math.max(1, math.min(snapshot.fragments.size, spark.sparkContext.defaultParallelism * 2))
    val rdd = computed.repartition(partitions, expr("shiftright(_rowaddr, 32)")).sortWithinPartitions("_rowaddr")
      .queryExecution.toRdd
    val written = scala.collection.mutable.ArrayBuffer.empty[lance.NewColumns.File]
    val watch = new JobWatch(spark.sparkContext)
    try {
      spark.sparkContext.runJob(rdd, (ctx: TaskContext, rows: Iterator[InternalRow]) =>
        writeFragments(lance.Table.forPath(path, serializableConf.value).newColumnWriter(spec), newColumns, batchRows, rows),
        (_: Int, r: Seq[lance.NewColumns.File]) => written.synchronized { written ++= r })
      commit(written.toSeq)
    } catch {
      case NonFatal(e) =>
        watch.awaitTasks() // tasks still running when the job failed write files that `written` does not list
        abort(written.map(_.path).toSeq)
        throw e
    }
  }

  /**
   * Writes the rows of one task (sorted by row address) as one file per fragment, with vacant slots for the rows the
   * task has none for (deleted rows; for ADD COLUMNS also rows the source lacks, which read as null since new columns
   * are nullable), so that each file holds every physical row of its fragment.
   */
  private def writeFragments(writer: lance.NewColumns.Writer, columns: StructType, batchRows: Int,
      rows: Iterator[InternalRow]): Seq[lance.NewColumns.File] = {
    val allocator = new RootAllocator(Long.MaxValue)
    val rowWriter = new ArrowRowWriter(writer.schema.fields, columns, allocator)
    var fragment = -1L
    var next = 0L
    def flush(): Unit = if (rowWriter.rowCount > 0) { writer.write(rowWriter.finishBatch()); rowWriter.reset() }
    def put(row: InternalRow): Unit = { rowWriter.write(row); if (rowWriter.rowCount >= batchRows) flush() }
    def padTo(offset: Long): Unit = while (next < offset) {
      rowWriter.writeVacant()
      if (rowWriter.rowCount >= batchRows) flush()
      next += 1
    }
    def finishFragment(): Unit = if (fragment >= 0) { padTo(writer.physicalRows(fragment)); flush() }
    try {
      val values = new GenericInternalRow(columns.length)
      rows.foreach { row =>
        val address = row.getLong(0)
        val f = address >>> 32
        if (f != fragment) {
          finishFragment()
          fragment = f
          next = 0
          writer.startFragment(f)
        }
        if ((address & 0xFFFFFFFFL) < next) {
          throw new InvalidArgumentException(s"The new columns have more than one row for row address $address " +
            s"(fragment $f, row ${address & 0xFFFFFFFFL}): give each row of the table at most one row of values.")
        }
        padTo(address & 0xFFFFFFFFL)
        var i = 0
        while (i < columns.length) { values.update(i, row.get(i + 1, columns(i).dataType)); i += 1 }
        put(values)
        next += 1
      }
      finishFragment()
      writer.finish()
    } catch {
      case NonFatal(e) =>
        writer.abort()
        throw e
    } finally {
      try writer.close() finally try rowWriter.close() finally allocator.close()
    }
  }
}
