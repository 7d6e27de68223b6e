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
 * file and its null rows beside it (`.nulls`, a portable Roaring bitmap of offsets), then concatenated in fragment
 * order into the index file, whose global buffer 1 holds every null row ([[RowIdTreeMap]]), as upstream writes them.
 */
object ZoneRuns {

  def write(storage: Storage, path: String, zones: VectorSchemaRoot, count: Int, nulls: RoaringBitmap): Unit = {
    zones.setRowCount(count)
    zones.getFieldVectors.asScala.foreach(_.setValueCount(count))
    BTreeWriter.writeFile(storage, path, zones.getSchema, Map.empty, Iterator.single(zones))
    nulls.runOptimize()
    val bytes = ByteBuffer.allocate(nulls.serializedSizeInBytes())
    nulls.serialize(bytes)
    storage.create(path + ".nulls", bytes.array())
  }

  /** Writes the runs (by fragment id) into the index file at `path`; returns its size. Removes nothing. */
  def concat(storage: Storage, runs: Seq[(Long, String)], path: String, schema: Schema, metadata: Map[String, String],
      allocator: BufferAllocator): Long = {
    val lance = ArrowSchemas.fromArrow(schema)
    val w = LanceFileWriter.create(storage, path,
      lance.copy(metadata = metadata.map { case (k, v) => k -> v.getBytes("UTF-8") }), FileVersion.V2_2)
    try {
      val nulls = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap]
      runs.sortBy(_._1).foreach { case (fragment, run) =>
        val r = LanceFileReader.open(storage, run)
        try {
          if (r.numRows > 0) {
            val root = r.read(r.metadata.schema.fields, 0, r.numRows, allocator)
            try w.write(root) finally root.close()
          }
        } finally r.close()
        val b = new RoaringBitmap()
        b.deserialize(ByteBuffer.wrap(storage.readAll(run + ".nulls")))
        if (!b.isEmpty) nulls(fragment) = b
      }
      w.addGlobalBuffer(RowIdTreeMap.encode(nulls))
      w.finish()
    } finally w.close()
  }

  /** Removes a run and its null rows. */
  def delete(storage: Storage, run: String): Unit = {
    storage.delete(run)
    storage.delete(run + ".nulls")
  }
}
