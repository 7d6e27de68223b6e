package io.sparklance.core.index

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{UInt4Vector, UInt8Vector}

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * A zone map index (docs/dev/scalar-indexes.md §6.1): `zonemap.lance` holds one row per zone of a fragment's live
 * rows, its `min` and `max` non-null values (null when the zone holds only nulls), `null_count`, `nan_count` (a
 * zone with NaNs is always searched),
 * `fragment_id`, `zone_start` (the physical offset of its first row) and `zone_length` (physical rows it spans).
 * A search returns every row of the zones that can hold a match: not exact, the rows must still be filtered.
 */
object ZoneMapIndex {
  val File = "zonemap.lance"

  def search(storage: Storage, dir: String, query: IndexQuery, allocator: BufferAllocator): RowSelection = {
    val path = Storage.join(dir, File)
    val builder = new RowSelection.Builder(exact = false)
    IndexFiles.withAll(storage, path, allocator) { (_, root) =>
      val min = IndexFiles.column(path, root, "min")
      val max = IndexFiles.column(path, root, "max")
      val nulls = IndexFiles.column(path, root, "null_count").asInstanceOf[UInt4Vector]
      val nans = IndexFiles.column(path, root, "nan_count").asInstanceOf[UInt4Vector]
      val fragment = IndexFiles.column(path, root, "fragment_id").asInstanceOf[UInt8Vector]
      val start = IndexFiles.column(path, root, "zone_start").asInstanceOf[UInt8Vector]
      val length = IndexFiles.column(path, root, "zone_length") match {
        case v: UInt8Vector => (i: Int) => v.get(i)
        case v: UInt4Vector => (i: Int) => v.get(i).toLong & 0xFFFFFFFFL
        case other => throw new CorruptFileException(path, s"its zone_length column is ${other.getField.getType}, not uint64")
      }
      var i = 0
      while (i < root.getRowCount) {
        // A zone with NaNs may hold a match whatever its bounds: how upstream bounds NaNs (max is NaN, min skips
        // them) is not SQL's order, and a NaN with the sign bit may sort first.
        val hit = (query.matchesNull && nulls.get(i) != 0) ||
          (query.matchesValues && nans.get(i) != 0) ||
          (query.matchesValues && !min.isNull(i) && !max.isNull(i) && query.overlaps(min, i, max, i))
        if (hit) IndexFiles.addZone(path, i, fragment.get(i), start.get(i), length(i), builder)
        i += 1
      }
    }
    builder.result()
  }

  /** The rows per zone of the zone map in `dir` (its file's `rows_per_zone`), if recorded. */
  def rowsPerZone(storage: Storage, dir: String): Option[Int] = {
    import IndexFiles.SchemaMetadata
    val path = Storage.join(dir, File)
    IndexFiles.withReader(storage, path)(_.schemaMetadataString("rows_per_zone")).map(IndexFiles.positiveInt(path, "rows_per_zone", _))
  }
}
