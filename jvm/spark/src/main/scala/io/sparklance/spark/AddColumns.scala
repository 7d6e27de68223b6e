package io.sparklance.spark

import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.functions.{col, expr}
import org.apache.spark.sql.types.StructType

import io.sparklance.core.{CommitStateUnknownException, InvalidArgumentException}
import io.sparklance.core.file.{FileVersion, LanceFileWriter}
import io.sparklance.core.schema.SchemaChanges
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TableProtos

/**
 * Data evolution: new columns whose values Spark computes from the existing ones (`SQL expressions`), written as one
 * new data file per fragment beside the fragment's files (no other column is rewritten), and committed with the new
 * schema as one Merge transaction. Rows deleted from a fragment get nulls, so the new file lines up with the
 * fragment's other files row for row.
 */
object AddColumns {

  def run(spark: SparkSession, given: String, columns: Seq[(String, String)]): Long = LanceSparkException.translate {
    if (columns.isEmpty) throw new InvalidArgumentException("No columns to add: give at least one name and expression.")
    val conf = spark.sessionState.newHadoopConf()
    val path = LanceTables.qualify(conf, given)
    val snapshot = LanceTables.load(conf, path, TimeTravel.Latest)
    val source = spark.read.format("lance").option("version", snapshot.version.toString).load(path)
    val computed = source.select(col("_rowaddr") +: columns.map { case (name, e) => expr(e).as(name) }: _*)
    val newColumns = StructType(computed.schema.fields.tail.map(f => f.copy(nullable = true)))
    val edit = SchemaChanges.of(snapshot.manifest)
    newColumns.fields.foreach(f => edit.add(Nil, SparkSchemas.toLance(StructType(Seq(f)))))
    val added = edit.addedSince(snapshot.manifest.proto.getFieldsList.asScala.toSeq)
    val version = LanceTables.fileVersion(snapshot)
    val spec = WriteSpec(path, added, version, WriteOptions(Map.empty, Map.empty), conf)
    val physical = snapshot.fragments.map(f => f.id -> f.physicalRows).toMap
    val partitions = math.max(1, math.min(snapshot.fragments.size, spark.sparkContext.defaultParallelism * 2))
    val rdd = computed.repartition(partitions, expr("shiftright(_rowaddr, 32)")).sortWithinPartitions("_rowaddr")
      .queryExecution.toRdd
    val written = scala.collection.mutable.ArrayBuffer.empty[(Long, Array[Byte], String)]
    try {
      spark.sparkContext.runJob(rdd, (ctx: TaskContext, rows: Iterator[InternalRow]) =>
        writeFragments(spec, newColumns, physical, rows), (_: Int, r: Seq[(Long, Array[Byte], String)]) =>
        written.synchronized { written ++= r })
      val files = written.map { case (id, file, _) => id -> TableProtos.DataFile.parseFrom(file) }.toMap
      val fragments = snapshot.fragments.map(f => files.get(f.id).map(d => f.proto.toBuilder.addFiles(d).build()).getOrElse(f.proto))
      try Committer.commit(new HadoopStorage(conf), path, Transaction.create(snapshot.version, Operation.Merge(fragments, edit.result)))
      catch { case e: CommitStateUnknownException => written.clear(); throw e }
    } catch {
      case e: Throwable =>
        val storage = new HadoopStorage(conf)
        written.foreach { case (_, _, p) => try storage.delete(p) catch { case NonFatal(_) => } }
        throw e
    }
  }

  /** Writes the rows of one task (sorted by row address) as one file per fragment; returns (fragment, DataFile, path). */
  private def writeFragments(spec: WriteSpec, columns: StructType, physical: Map[Long, Long],
      rows: Iterator[InternalRow]): Seq[(Long, Array[Byte], String)] = {
    val schema = spec.schema
    val storage = new HadoopStorage(spec.conf.value)
    val allocator = new RootAllocator(Long.MaxValue)
    val out = scala.collection.mutable.ArrayBuffer.empty[(Long, Array[Byte], String)]
    val rowWriter = new ArrowRowWriter(schema.fields, columns, allocator)
    val nulls = new GenericInternalRow(columns.length)
    var file: LanceFileWriter = null
    var fragment = -1L
    var next = 0L
    def flush(): Unit = if (rowWriter.rowCount > 0) { file.write(rowWriter.finishBatch()); rowWriter.reset() }
    def put(row: InternalRow): Unit = { rowWriter.write(row); if (rowWriter.rowCount >= spec.options.batchRows) flush() }
    def finishFile(): Unit = if (file != null) {
      while (next < physical(fragment)) { put(nulls); next += 1 }
      flush()
      val size = file.finish()
      out += ((fragment, io.sparklance.core.table.DataFile.entry(Storage.fileName(file.path), file.fieldColumns,
        spec.version, size).toByteArray, file.path))
      file = null
    }
    try {
      val values = new GenericInternalRow(columns.length)
      rows.foreach { row =>
        val address = row.getLong(0)
        val f = address >>> 32
        if (f != fragment) {
          finishFile()
          fragment = f
          next = 0
          file = LanceFileWriter.create(storage, Storage.join(spec.root, s"data/${UUID.randomUUID()}.lance"), schema, spec.version)
        }
        val offset = address & 0xFFFFFFFFL
        while (next < offset) { put(nulls); next += 1 }
        var i = 0
        while (i < columns.length) { values.update(i, row.get(i + 1, columns(i).dataType)); i += 1 }
        put(values)
        next += 1
      }
      finishFile()
      out.toSeq
    } catch {
      case e: Throwable =>
        if (file != null) { file.close(); try storage.delete(file.path) catch { case NonFatal(_) => } }
        out.foreach { case (_, _, p) => try storage.delete(p) catch { case NonFatal(_) => } }
        throw e
    } finally {
      rowWriter.close()
      allocator.close()
    }
  }

}
