package io.sparklance.core.index

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt4Vector, UInt8Vector, VectorSchemaRoot}

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

  /**
   * The zones of one zone map file, read whole: zone `i`'s bounds are rows `i` of [[min]] and [[max]] (vectors of the
   * column's type, null when the zone holds only nulls), and its counts and rows are checked as they are read.
   */
  final class Zones private[ZoneMapIndex] (val path: String, root: VectorSchemaRoot) {
    val count: Int = root.getRowCount
    val min: FieldVector = IndexFiles.column(path, root, "min")
    val max: FieldVector = IndexFiles.column(path, root, "max")
    private val nulls = IndexFiles.column(path, root, "null_count").asInstanceOf[UInt4Vector]
    private val nans = IndexFiles.column(path, root, "nan_count").asInstanceOf[UInt4Vector]
    private val fragment = IndexFiles.column(path, root, "fragment_id").asInstanceOf[UInt8Vector]
    private val start = IndexFiles.column(path, root, "zone_start").asInstanceOf[UInt8Vector]
    private val lengths = IndexFiles.column(path, root, "zone_length") match {
      case v: UInt8Vector => (i: Int) => v.get(i)
      case v: UInt4Vector => (i: Int) => v.get(i).toLong & 0xFFFFFFFFL
      case other => throw new CorruptFileException(path, s"its zone_length column is ${other.getField.getType}, not uint64")
    }
    def nullCount(i: Int): Long = nulls.get(i).toLong & 0xFFFFFFFFL
    def nanCount(i: Int): Long = nans.get(i).toLong & 0xFFFFFFFFL
    def fragmentId(i: Int): Long = fragment.get(i)
    def zoneStart(i: Int): Long = start.get(i)
    def zoneLength(i: Int): Long = lengths(i)

    /** Adds zone `i`'s rows, checked, to `builder`. */
    def addTo(i: Int, builder: RowSelection.Builder): Unit =
      IndexFiles.addZone(path, i, fragmentId(i), zoneStart(i), zoneLength(i), builder)
  }

  /** Reads the zone map in `dir` and hands its zones to `body`; they are valid only during the call. */
  def withZones[T](storage: Storage, dir: String, allocator: BufferAllocator)(body: Zones => T): T = {
    val path = Storage.join(dir, File)
    IndexFiles.withAll(storage, path, allocator)((_, root) => body(new Zones(path, root)))
  }

  def search(storage: Storage, dir: String, query: IndexQuery, allocator: BufferAllocator): RowSelection = {
    val builder = new RowSelection.Builder(exact = false)
    withZones(storage, dir, allocator) { zones =>
      var i = 0
      while (i < zones.count) {
        // A zone with NaNs may hold a match whatever its bounds: how upstream bounds NaNs (max is NaN, min skips
        // them) is not SQL's order, and a NaN with the sign bit may sort first.
        val hit = (query.matchesNull && zones.nullCount(i) != 0) ||
          (query.matchesValues && zones.nanCount(i) != 0) ||
          (query.matchesValues && !zones.min.isNull(i) && !zones.max.isNull(i) && query.overlaps(zones.min, i, zones.max, i))
        if (hit) zones.addTo(i, builder)
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
