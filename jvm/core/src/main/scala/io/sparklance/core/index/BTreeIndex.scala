package io.sparklance.core.index

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{UInt4Vector, UInt8Vector}

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * A B-tree index (docs `format/table/index/scalar/btree.md`): `page_data.lance` holds every indexed value with its
 * row address (`values`, `ids`), sorted with nulls first, in pages of `batch_size` rows (page `p` is rows
 * [p * batch_size, (p + 1) * batch_size)); `page_lookup.lance` holds one row per page: its first and last value
 * `min` and `max` (so `min` is null in a page with nulls, and both in a page of nulls only), `null_count` and
 * `page_idx`, with `batch_size` in its
 * schema metadata. A search reads the lookup, then only the pages whose [min, max] can hold a match. Exact.
 */
object BTreeIndex {
  val LookupFile = "page_lookup.lance"
  val DataFile = "page_data.lance"
  val DefaultBatchSize = 4096

  def search(storage: Storage, dir: String, query: IndexQuery, allocator: BufferAllocator): RowSelection = {
    val lookupPath = Storage.join(dir, LookupFile)
    import IndexFiles.SchemaMetadata
    val (pages, batchSize) = IndexFiles.withAll(storage, lookupPath, allocator) { (reader, root) =>
      val batch = reader.schemaMetadataString("batch_size").map(s => IndexFiles.positiveInt(lookupPath,
        "batch_size", s)).getOrElse(DefaultBatchSize)
      val min = IndexFiles.column(lookupPath, root, "min")
      val max = IndexFiles.column(lookupPath, root, "max")
      val nulls = IndexFiles.column(lookupPath, root, "null_count").asInstanceOf[UInt4Vector]
      val index = IndexFiles.column(lookupPath, root, "page_idx").asInstanceOf[UInt4Vector]
      val wanted = (0 until root.getRowCount).filter { i =>
        (query.matchesNull && nulls.get(i) != 0) ||
          (query.matchesValues && !max.isNull(i) && query.overlaps(min, i, max, i))
      }.map(i => index.get(i).toLong & 0xFFFFFFFFL)
      (wanted.distinct.sorted, batch)
    }
    val builder = new RowSelection.Builder(exact = true)
    if (pages.isEmpty) return builder.result()
    val dataPath = Storage.join(dir, DataFile)
    IndexFiles.withReader(storage, dataPath) { reader =>
      val fields = IndexFiles.fields(reader, "values", "ids")
      pages.foreach { p =>
        val from = p * batchSize
        if (from >= reader.numRows) {
          throw new CorruptFileException(lookupPath, s"page $p starts at row $from, past the ${reader.numRows} rows of $DataFile")
        }
        val root = reader.read(fields, from, math.min(reader.numRows, from + batchSize), allocator)
        try {
          val values = root.getVector(0)
          val ids = root.getVector(1).asInstanceOf[UInt8Vector]
          var i = 0
          while (i < root.getRowCount) {
            val hit = if (values.isNull(i)) query.matchesNull else query.matchesValues && query.matches(values, i)
            if (hit) builder.addAddress(ids.get(i))
            i += 1
          }
        } finally root.close()
      }
    }
    builder.result()
  }

  /** The rows per page of the B-tree in `dir` (its lookup's `batch_size`). */
  def batchSize(storage: Storage, dir: String): Int = {
    import IndexFiles.SchemaMetadata
    val path = Storage.join(dir, LookupFile)
    IndexFiles.withReader(storage, path)(_.schemaMetadataString("batch_size"))
      .map(IndexFiles.positiveInt(path, "batch_size", _)).getOrElse(DefaultBatchSize)
  }
}
