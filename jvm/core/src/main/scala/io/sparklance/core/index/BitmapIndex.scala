package io.sparklance.core.index

import java.nio.ByteBuffer

import org.apache.arrow.memory.BufferAllocator

import io.sparklance.core.storage.Storage

/**
 * A bitmap index (docs/dev/scalar-indexes.md §4): `bitmap_page_lookup.lance` holds one row per distinct value,
 * `keys` ascending with the null key first, and `bitmaps`, the [[RowIdTreeMap]] of the rows holding it (row
 * addresses; stable row ids on tables that have them, which the caller must not search this way). A search reads
 * the keys, then the bitmaps of the keys that match. Exact.
 */
object BitmapIndex {
  val File = "bitmap_page_lookup.lance"

  def search(storage: Storage, dir: String, query: IndexQuery, allocator: BufferAllocator,
      physicalRows: Long => Long): RowSelection = {
    val path = Storage.join(dir, File)
    val builder = new RowSelection.Builder(exact = true)
    IndexFiles.withReader(storage, path) { reader =>
      val fields = IndexFiles.fields(reader, "keys", "bitmaps")
      val (keysField, bitmapsField) = (fields(0), fields(1))
      val hits = {
        val keys = reader.read(Seq(keysField), 0, reader.numRows, allocator)
        try {
          val k = keys.getVector(0)
          (0 until keys.getRowCount).filter { i =>
            if (k.isNull(i)) query.matchesNull else query.matchesValues && query.matches(k, i)
          }.map(_.toLong).toArray
        } finally keys.close()
      }
      if (hits.nonEmpty) {
        val bitmaps = reader.take(Seq(bitmapsField), hits, allocator)
        try {
          val b = bitmaps.getVector(0)
          (0 until bitmaps.getRowCount).foreach { i =>
            if (!b.isNull(i)) RowIdTreeMap.decodeInto(path, ByteBuffer.wrap(KeyOrder.bytes(b, i)), builder, physicalRows)
          }
        } finally bitmaps.close()
      }
    }
    builder.result()
  }
}
