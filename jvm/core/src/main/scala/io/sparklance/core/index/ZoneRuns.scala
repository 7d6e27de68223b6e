package io.sparklance.core.index

import java.nio.ByteBuffer

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.types.pojo.Schema
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.FileVersion
import io.sparklance.core.file.{LanceFileReader, LanceFileWriter}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage

/**
 * The zones of zone indexes (zone maps, bloom filters), built per fragment: each fragment's zone rows in a run
 * file and its null rows beside it (`.nulls`, a [[RowIdTreeMap]], as label list runs keep their null lists), then
 * concatenated in fragment
 * order into the index file, whose global buffer 1 holds every null row ([[RowIdTreeMap]]), as upstream writes them.
 */
object ZoneRuns {

  /** Writes `count` zone rows of fragment `fragmentId` to the run at `path`, and the offsets of its null rows. */
  def write(storage: Storage, path: String, zones: VectorSchemaRoot, count: Int, fragmentId: Long, nulls: RoaringBitmap): Unit = {
    zones.setRowCount(count)
    zones.getFieldVectors.asScala.foreach(_.setValueCount(count))
    BTreeWriter.writeFile(storage, path, zones.getSchema, Map.empty, Iterator.single(zones))
    writeNulls(storage, path, Map(fragmentId -> nulls))
  }

  /** Writes rows of a run (by their upper 32 bits: fragment id, or a row id's) beside it, as a [[RowIdTreeMap]]. */
  def writeNulls(storage: Storage, run: String, rows: scala.collection.Map[Long, RoaringBitmap]): Unit =
    storage.create(run + ".nulls", RowIdTreeMap.encode(rows))

  /** The rows [[writeNulls]] wrote beside every run, together. */
  def readNulls(storage: Storage, runs: Seq[String]): Map[Long, RoaringBitmap] = {
    val rows = new RowSelection.Builder(exact = true)
    runs.foreach(run => RowIdTreeMap.decodeInto(run + ".nulls", ByteBuffer.wrap(storage.readAll(run + ".nulls")), rows, _ => 0L))
    rows.result().byFragment
  }

  /** Writes the runs (by fragment id) into the index file at `path`; returns its size. Removes nothing. */
  def concat(storage: Storage, runs: Seq[(Long, String)], path: String, schema: Schema, metadata: Map[String, String],
      allocator: BufferAllocator): Long = {
    val lance = ArrowSchemas.fromArrow(schema)
    val w = LanceFileWriter.create(storage, path,
      lance.copy(metadata = metadata.map { case (k, v) => k -> v.getBytes("UTF-8") }), FileVersion.V2_2)
    try {
      runs.sortBy(_._1).foreach { case (_, run) =>
        val r = LanceFileReader.open(storage, run)
        try {
          if (r.numRows > 0) {
            val root = r.read(r.metadata.schema.fields, 0, r.numRows, allocator)
            try w.write(root) finally root.close()
          }
        } finally r.close()
      }
      w.addGlobalBuffer(RowIdTreeMap.encode(readNulls(storage, runs.map(_._2))))
      w.finish()
    } finally w.close()
  }

  /** Removes a run and its null rows. */
  def delete(storage: Storage, run: String): Unit = {
    storage.delete(run)
    storage.delete(run + ".nulls")
  }
}
