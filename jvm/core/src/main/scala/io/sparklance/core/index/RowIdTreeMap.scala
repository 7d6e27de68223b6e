package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CorruptFileException

/**
 * Upstream's serialized `RowIdTreeMap` (docs/dev/scalar-indexes.md §2), how bitmap and label-list indexes store the
 * rows of a key and zone indexes their null rows:
 * {{{
 *   u32 entries, then per fragment (ascending): u32 fragment id, u32 size, a portable Roaring bitmap of the row
 *   offsets (size bytes; size 0 means every row of the fragment)
 * }}}
 * Little endian. The values are row addresses, or stable row ids on tables that have them.
 */
object RowIdTreeMap {

  /** Adds the rows of the map in `bytes` to `into`; `path` names the file for errors. */
  def decodeInto(path: String, bytes: ByteBuffer, into: RowSelection.Builder, physicalRows: Long => Long): Unit = {
    val b = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    def need(n: Int, what: String): Unit = if (b.remaining < n) {
      throw new CorruptFileException(path, s"a row id map ends inside its $what")
    }
    need(4, "entry count")
    val entries = b.getInt() & 0xFFFFFFFFL
    var e = 0L
    while (e < entries) {
      need(8, "entry header")
      val fragment = b.getInt() & 0xFFFFFFFFL
      val size = b.getInt()
      if (size == 0) into.addRange(fragment, 0, physicalRows(fragment))
      else {
        if (size < 0 || size > b.remaining) {
          throw new CorruptFileException(path, s"a row id map entry of fragment $fragment has $size bytes, past its end")
        }
        val slice = b.slice()
        slice.limit(size)
        val rows = new RoaringBitmap()
        try rows.deserialize(slice) catch {
          case ex: Exception => throw new CorruptFileException(path, s"the row id map of fragment $fragment is not a " +
            s"valid Roaring bitmap: ${ex.getMessage}", ex)
        }
        into.addAll(fragment, rows)
        b.position(b.position() + size)
      }
      e += 1
    }
  }

  /** The serialized map of `rows` (fragment id to row offsets), fragments ascending. */
  def encode(rows: scala.collection.Map[Long, RoaringBitmap]): Array[Byte] = {
    val sorted = rows.toSeq.filter(!_._2.isEmpty).sortBy(_._1)
    sorted.foreach(_._2.runOptimize())
    val size = 4 + sorted.map(8 + _._2.serializedSizeInBytes()).sum
    val b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(sorted.size)
    sorted.foreach { case (fragment, bitmap) =>
      b.putInt(fragment.toInt).putInt(bitmap.serializedSizeInBytes())
      bitmap.serialize(b)
    }
    b.array()
  }
}
