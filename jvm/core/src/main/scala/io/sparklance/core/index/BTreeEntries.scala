package io.sparklance.core.index

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt4Vector, UInt8Vector, VectorSchemaRoot}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.schema.LanceField
import io.sparklance.core.storage.Storage

/**
 * The entries of one B-tree index ([[BTreeIndex]]) in key order, for walks from either end: entry `r` is row `r` of
 * `page_data.lance`, its value and its row address. The index sorts its keys with nulls first, then in Arrow's
 * order of the key type (floats in IEEE total order: NaNs with the sign bit set first, `-0.0` before `0.0`, NaNs
 * without it last), so the first [[nullRows]] entries are the nulls, a count the lookup's `null_count`s give.
 * Entries are read a page (`batch_size` rows) at a time, the last page read kept; a walk that moves within a page
 * reads nothing more. Nulls found where the count says values are (or values among the nulls) make the file corrupt.
 */
final class BTreeEntries private (reader: LanceFileReader, lookupPath: String, val batchSize: Int,
    val nullRows: Long, allocator: BufferAllocator) extends AutoCloseable {
  private val fields: Seq[LanceField] = IndexFiles.fields(reader, "values", "ids")
  private var root: VectorSchemaRoot = _
  private var start = 0L

  def path: String = reader.path

  /** The entries of the index. */
  val numRows: Long = reader.numRows

  if (nullRows > numRows) {
    throw new CorruptFileException(lookupPath, s"its pages count $nullRows nulls, more than the $numRows entries of ${BTreeIndex.DataFile}")
  }

  /** The values of the page holding entry `r` (read if it is not the current one); entry `r` is its row [[row]]`(r)`. */
  def values(r: Long): FieldVector = { load(r); root.getVector(0) }

  /** The row address of entry `r`. */
  def address(r: Long): Long = { load(r); root.getVector(1).asInstanceOf[UInt8Vector].get((r - start).toInt) }

  /** The row of entry `r` in the vectors [[values]] returns. */
  def row(r: Long): Int = (r - start).toInt

  /** Whether entry `r` is null, checked against [[nullRows]]. */
  def isNull(r: Long): Boolean = {
    val isNull = values(r).isNull(row(r))
    if (isNull != (r < nullRows)) {
      throw new CorruptFileException(reader.path, s"entry $r is ${if (isNull) "null" else "not null"}, but the lookup " +
        s"counts $nullRows nulls, which sort first")
    }
    isNull
  }

  private def load(r: Long): Unit = {
    if (r < 0 || r >= numRows) throw new IndexOutOfBoundsException(s"entry $r of $numRows")
    if (root == null || r < start || r >= start + root.getRowCount) {
      if (root != null) { root.close(); root = null }
      val from = r / batchSize * batchSize
      root = reader.read(fields, from, math.min(numRows, from + batchSize), allocator)
      start = from
      if (!root.getVector(1).isInstanceOf[UInt8Vector]) {
        throw new CorruptFileException(reader.path, s"its ids column is ${root.getVector(1).getField.getType}, not uint64")
      }
    }
  }

  override def close(): Unit = {
    if (root != null) { root.close(); root = null }
    reader.close()
  }
}

object BTreeEntries {
  /** Opens the B-tree in `dir` for walks; the caller closes it. */
  def open(storage: Storage, dir: String, allocator: BufferAllocator): BTreeEntries = {
    import IndexFiles.SchemaMetadata
    val lookupPath = Storage.join(dir, BTreeIndex.LookupFile)
    val (batchSize, nulls) = IndexFiles.withReader(storage, lookupPath) { lookup =>
      if (lookup.schemaMetadataString("range_partitioned").contains("true")) {
        throw new UnsupportedFeatureException(s"The B-tree in $dir is range partitioned (several page files), which " +
          "this reader does not walk in order.")
      }
      val batch = lookup.schemaMetadataString("batch_size").map(IndexFiles.positiveInt(lookupPath, "batch_size", _))
        .getOrElse(BTreeIndex.DefaultBatchSize)
      val root = lookup.read(IndexFiles.fields(lookup, "null_count"), 0, lookup.numRows, allocator)
      try {
        val counts = root.getVector(0) match {
          case v: UInt4Vector => v
          case other => throw new CorruptFileException(lookupPath, s"its null_count column is ${other.getField.getType}, not uint32")
        }
        var n = 0L
        var i = 0
        while (i < root.getRowCount) { n += counts.get(i).toLong & 0xFFFFFFFFL; i += 1 }
        (batch, n)
      } finally root.close()
    }
    val reader = LanceFileReader.openImmutable(storage, Storage.join(dir, BTreeIndex.DataFile))
    try new BTreeEntries(reader, lookupPath, batchSize, nulls, allocator)
    catch { case e: Exception => reader.close(); throw e }
  }
}
