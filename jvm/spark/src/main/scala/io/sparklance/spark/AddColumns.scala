package io.sparklance.spark

import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.functions.{col, expr}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{InvalidArgumentException, table => lance}
import io.sparklance.core.table.TimeTravel

/**
 * Data evolution: new columns whose values Spark computes from the existing ones (`SQL expressions`), written as one
 * new data file per fragment beside the fragment's files (no other column is rewritten), and committed with the new
 * schema as one Merge transaction. Rows deleted from a fragment get nulls, so the new file lines up with the
 * fragment's other files row for row.
 */
object AddColumns {

  def run(spark: SparkSession, location: String, columns: Seq[(String, String)]): Long = LanceSparkException.translate {
    if (columns.isEmpty) throw new InvalidArgumentException("No columns to add: give at least one name and expression.")
    write(spark, location, source => source.select(col("_rowaddr") +: columns.map { case (name, e) => expr(e).as(name) }: _*))
  }

  /**
   * New columns `names` with the values of those columns of `source` (`ALTER TABLE t ADD COLUMNS c FROM view`, the
   * other Lance connector's backfill): `source` holds `_rowaddr` (the rows' addresses in the latest version, read
   * from the table) and the columns; a row of the table that it has no row for gets nulls, a row of `source` whose
   * address is not a row of the table is ignored, and two rows with one address are an error.
   */
  def fromSource(spark: SparkSession, location: String, names: Seq[String], source: DataFrame, sourceName: String): Long =
    LanceSparkException.translate {
      if (names.isEmpty) throw new InvalidArgumentException("No columns to add: name at least one column of the source.")
      val fields = source.schema.fields.map(_.name)
      def has(n: String) = fields.exists(_.equalsIgnoreCase(n))
      (MetadataColumnName +: names).find(n => !has(n)).foreach { n =>
        throw new InvalidArgumentException(s"$sourceName has no column '$n' (its columns: ${fields.mkString(", ")}). " +
          s"The source of ADD COLUMNS ... FROM holds $MetadataColumnName, read from the table, and the new columns.")
      }
      write(spark, location, table => {
        val keyed = source.select(col(MetadataColumnName).as(SourceAddress) +: names.map(n => col(n).as(n)): _*)
        table.select(MetadataColumnName).join(keyed, col(MetadataColumnName) === col(SourceAddress), "left")
          .select(col(MetadataColumnName) +: names.map(col): _*)
      })
    }

  private val MetadataColumnName = "_rowaddr"
  private val SourceAddress = "__sparklance_source_rowaddr"

  /**
   * Writes and commits the columns `compute` gives from the latest version of the table (read by Spark): its first
   * column is `_rowaddr`, the others are the new columns.
   */
  private def write(spark: SparkSession, location: String, compute: DataFrame => DataFrame): Long = {
    val conf = LanceCatalog.settingsFor(spark, location)
    val path = TableAccess.qualify(conf, location)
    val snapshot = TableAccess.load(conf, path, TimeTravel.Latest)
    val computed = compute(spark.read.format("lance").option("version", snapshot.version.toString).load(path))
    val newColumns = StructType(computed.schema.fields.tail.map(f => f.copy(nullable = true)))
    val change = snapshot.table.newColumns(snapshot, newColumns.fields.toSeq.map(f => SparkSchemas.toLance(StructType(Seq(f)))))
    val spec = change.spec
    val serializableConf = new SerializableConfiguration(conf)
    val batchRows = WriteOptions(Map.empty, Map.empty).batchRows
    val partitions = math.max(1, math.min(snapshot.fragments.size, spark.sparkContext.defaultParallelism * 2))
    val rdd = computed.repartition(partitions, expr("shiftright(_rowaddr, 32)")).sortWithinPartitions("_rowaddr")
      .queryExecution.toRdd
    val written = scala.collection.mutable.ArrayBuffer.empty[lance.NewColumns.File]
    try {
      spark.sparkContext.runJob(rdd, (ctx: TaskContext, rows: Iterator[InternalRow]) =>
        writeFragments(lance.Table.forPath(path, serializableConf.value).newColumnWriter(spec), newColumns, batchRows, rows),
        (_: Int, r: Seq[lance.NewColumns.File]) => written.synchronized { written ++= r })
      change.commit(written.toSeq)
    } catch {
      case NonFatal(e) =>
        change.abort(written.map(_.path).toSeq)
        throw e
    }
  }

  /**
   * Writes the rows of one task (sorted by row address) as one file per fragment, nulls for the rows the task has
   * none for (deleted rows), so that each file holds every physical row of its fragment.
   */
  private def writeFragments(writer: lance.NewColumns.Writer, columns: StructType, batchRows: Int,
      rows: Iterator[InternalRow]): Seq[lance.NewColumns.File] = {
    val allocator = new RootAllocator(Long.MaxValue)
    val rowWriter = new ArrowRowWriter(writer.schema.fields, columns, allocator)
    val nulls = new GenericInternalRow(columns.length)
    var fragment = -1L
    var next = 0L
    def flush(): Unit = if (rowWriter.rowCount > 0) { writer.write(rowWriter.finishBatch()); rowWriter.reset() }
    def put(row: InternalRow): Unit = { rowWriter.write(row); if (rowWriter.rowCount >= batchRows) flush() }
    def padTo(offset: Long): Unit = while (next < offset) { put(nulls); next += 1 }
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
