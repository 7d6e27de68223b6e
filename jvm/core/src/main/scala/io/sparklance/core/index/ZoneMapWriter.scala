package io.sparklance.core.index


import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FloatingPointVector, BigIntVector, FieldVector, UInt4Vector, UInt8Vector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.storage.Storage

/**
 * Builds a zone map index ([[ZoneMapIndex]] describes the file): each fragment's zones, of `rowsPerZone` live rows,
 * are computed where the fragment is read ([[writeZones]], one run file per fragment), then the runs are
 * concatenated in fragment order into `zonemap.lance`, whose global buffer 1 holds the null rows
 * ([[RowIdTreeMap]]), as upstream writes it.
 */
object ZoneMapWriter {
  val DefaultRowsPerZone = 8192
  private val U64 = new ArrowType.Int(64, false)
  private val U32 = new ArrowType.Int(32, false)

  private[index] def schema(keys: ArrowType): Schema = new Schema(Seq(BTreeWriter.valuesField("min", keys),
    BTreeWriter.valuesField("max", keys), BTreeWriter.idsField("null_count", U32), BTreeWriter.idsField("nan_count", U32),
    BTreeWriter.idsField("fragment_id", U64), BTreeWriter.idsField("zone_start", U64),
    BTreeWriter.idsField("zone_length", U64)).asJava)

  /** `ZoneMapIndexDetails` as upstream records it: rows per zone (field 1), then fields 2 = 0 and 3 = 1. */
  def details(rowsPerZone: Int): ByteString = {
    val b = com.google.protobuf.ByteString.newOutput()
    val out = com.google.protobuf.CodedOutputStream.newInstance(b)
    out.writeUInt64(1, rowsPerZone.toLong)
    out.writeUInt64NoTag(2L << 3)
    out.writeUInt64NoTag(0L)
    out.writeUInt64(3, 1L)
    out.flush()
    b.toByteString
  }

  /**
   * Writes the zones of one fragment's live rows (`keys`, at physical offsets `addresses` & 0xFFFFFFFF) to a run
   * file at `path`, and its null rows beside it ([[ZoneRuns]]).
   */
  def writeZones(storage: Storage, path: String, fragmentId: Long, keys: FieldVector, addresses: BigIntVector,
      rowsPerZone: Int, allocator: BufferAllocator): Unit = {
    val n = keys.getValueCount
    val zones = (n + rowsPerZone - 1) / rowsPerZone
    val root = VectorSchemaRoot.create(schema(keys.getField.getType), allocator)
    val nulls = new RoaringBitmap()
    try {
      root.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(math.max(zones, 1)); v.allocateNew() }
      val order = KeyOrder.of(keys)
      var z = 0
      while (z < zones) {
        val from = z * rowsPerZone
        val to = math.min(n, from + rowsPerZone)
        var min = -1
        var max = -1
        var nullCount = 0
        var nanCount = 0
        var maxIsNaN = false
        var i = from
        while (i < to) {
          if (keys.isNull(i)) { nullCount += 1; nulls.add((addresses.get(i) & 0xFFFFFFFFL).toInt) }
          else if (isNaN(keys, i)) {
            // NaN is the largest value: the zone's max once it has one; min is the smallest number.
            nanCount += 1
            if (!maxIsNaN) { max = i; maxIsNaN = true }
          } else {
            if (min < 0 || order.compare(keys, i, keys, min) < 0) min = i
            if (!maxIsNaN && (max < 0 || order.compare(keys, i, keys, max) > 0)) max = i
          }
          i += 1
        }
        if (min >= 0) root.getVector(0).copyFromSafe(min, z, keys) else root.getVector(0).setNull(z)
        if (max >= 0) root.getVector(1).copyFromSafe(max, z, keys) else root.getVector(1).setNull(z)
        root.getVector(2).asInstanceOf[UInt4Vector].set(z, nullCount)
        root.getVector(3).asInstanceOf[UInt4Vector].set(z, nanCount)
        root.getVector(4).asInstanceOf[UInt8Vector].set(z, fragmentId)
        val first = addresses.get(from) & 0xFFFFFFFFL
        val last = addresses.get(to - 1) & 0xFFFFFFFFL
        root.getVector(5).asInstanceOf[UInt8Vector].set(z, first)
        root.getVector(6).asInstanceOf[UInt8Vector].set(z, last - first + 1)
        z += 1
      }
      ZoneRuns.write(storage, path, root, zones, fragmentId, nulls)
    } finally root.close()
  }

  private def isNaN(v: FieldVector, i: Int): Boolean = v match {
    case f: FloatingPointVector => java.lang.Double.isNaN(f.getValueAsDouble(i))
    case _ => false
  }

  /** Concatenates the runs (by fragment id) into the index file; returns it with its size. */
  def merge(storage: Storage, runs: Seq[(Long, String)], dir: String, keys: ArrowType, rowsPerZone: Int,
      allocator: BufferAllocator): Seq[(String, Long)] =
    Seq(ZoneMapIndex.File -> ZoneRuns.concat(storage, runs, Storage.join(dir, ZoneMapIndex.File), schema(keys),
      Map("rows_per_zone" -> rowsPerZone.toString, "null_bitmap" -> "1"), allocator))
}
