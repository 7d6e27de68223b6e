package io.sparklance.core.table

import java.io.Closeable

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, ValueVector, VectorSchemaRoot}

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.schema.LanceSchema

/** One key of a sort order: a top-level column, ascending or descending, with nulls first or last. */
final case class SortKey(column: String, descending: Boolean, nullsFirst: Boolean) {
  override def toString: String =
    s"$column ${if (descending) "DESC" else "ASC"} NULLS ${if (nullsFirst) "FIRST" else "LAST"}"
}

/**
 * The first `k` rows of a read in the order of `keys` (rows equal on every key are in any order). A scan with a
 * top-N ([[Scan.withTopN]]) returns, per task, at most `k` rows: the task's first `k` in this order, sorted; the
 * caller takes the first `k` of all tasks' rows.
 */
final case class TopN(keys: Seq[SortKey], k: Int) {
  require(keys.nonEmpty, "a top-N needs at least one sort key")
  require(k >= 0, s"a top-N keeps 0 rows or more, not $k")

  override def toString: String = s"top $k by ${keys.mkString(", ")}"
}

object TopN {
  /**
   * Whether rows of a table with `schema` can be ordered by `column` in a scan: a top-level column of a type the
   * scan orders as SQL does (integers, floats, booleans, strings, binaries, dates, timestamps, decimals).
   */
  def orders(schema: LanceSchema, column: String): Boolean = !column.contains('.') &&
    schema.field(column).exists(f => f.children.isEmpty && ValueOrder.of(LanceFileReader.readField(f).getType).isDefined)
}

/**
 * The order of rows of one read's batches by a top-N's keys: row `i` of one batch against row `j` of another (or of
 * the same), both with the keys' columns (found by name).
 */
private[table] final class RowOrder(topN: TopN) {
  private val keys = topN.keys.toArray
  private var orders: Array[ValueOrder] = _

  /** The key columns of `root`, in the keys' order. */
  def keyVectors(root: VectorSchemaRoot): Array[ValueVector] = {
    val vectors = keys.map { k =>
      Option(root.getVector(k.column): ValueVector).getOrElse(
        throw new IllegalStateException(s"a top-N by ${k.column} reads batches without that column"))
    }
    if (orders == null) orders = vectors.map(v => ValueOrder.of(v.getField.getType).getOrElse(
      throw new IllegalStateException(s"column ${v.getField.getName} of type ${v.getField.getType} has no order")))
    vectors
  }

  def compare(a: Array[ValueVector], i: Int, b: Array[ValueVector], j: Int): Int = {
    var c = 0
    var n = 0
    while (c == 0 && n < keys.length) {
      val k = keys(n)
      val aNull = a(n).isNull(i)
      val bNull = b(n).isNull(j)
      c =
        if (aNull && bNull) 0
        else if (aNull) (if (k.nullsFirst) -1 else 1)
        else if (bNull) (if (k.nullsFirst) 1 else -1)
        else {
          val v = Integer.signum(orders(n).compare(a(n), i, b(n), j))
          if (k.descending) -v else v
        }
      n += 1
    }
    c
  }
}

/**
 * The first `k` rows of a stream of batches (all with the same fields) in a top-N's order: [[add]] each batch, then
 * take the [[result]]. Keeps at most `k` rows, sorted; a batch's rows that do not come before the `k`-th kept row
 * are dropped without copying. Owns the batches added. Not thread safe.
 */
private[table] final class TopRows(topN: TopN, allocator: BufferAllocator) extends Closeable {
  private val order = new RowOrder(topN)
  private var kept: VectorSchemaRoot = _
  private var keptKeys: Array[ValueVector] = _

  def add(batch: VectorSchemaRoot): Unit = try {
    val n = batch.getRowCount
    val keys = order.keyVectors(batch)
    val full = kept != null && kept.getRowCount >= topN.k
    val last = if (kept == null) -1 else kept.getRowCount - 1
    val candidates = new Array[Int](n)
    var m = 0
    var i = 0
    while (i < n) {
      if (!full || order.compare(keys, i, keptKeys, last) < 0) { candidates(m) = i; m += 1 }
      i += 1
    }
    if (m > 0 && topN.k > 0) merge(batch, keys, candidates, m)
  } finally batch.close()

  /** Kept rows and the batch's candidates, merged in order: the first `k` of them become the kept rows. */
  private def merge(batch: VectorSchemaRoot, keys: Array[ValueVector], candidates: Array[Int], m: Int): Unit = {
    val sorted = new Array[Integer](m)
    var i = 0
    while (i < m) { sorted(i) = candidates(i); i += 1 }
    java.util.Arrays.sort(sorted, (x: Integer, y: Integer) => order.compare(keys, x, keys, y))
    val keptRows = if (kept == null) 0 else kept.getRowCount
    val total = math.min(topN.k.toLong, keptRows.toLong + m).toInt
    // Each output row: from the kept rows (>= 0, its row) or from the batch (< 0, -1 - its row).
    val from = new Array[Int](total)
    var a = 0
    var b = 0
    var o = 0
    while (o < total) {
      val takeKept = a < keptRows && (b >= m || order.compare(keptKeys, a, keys, sorted(b)) <= 0)
      if (takeKept) { from(o) = a; a += 1 } else { from(o) = -1 - sorted(b); b += 1 }
      o += 1
    }
    val vectors = batch.getFieldVectors.asScala.toIndexedSeq.zipWithIndex.map { case (bv, c) =>
      val out = bv.getField.createVector(allocator)
      try {
        out.allocateNew()
        val kv: FieldVector = if (kept == null) null else kept.getVector(c)
        var r = 0
        while (r < total) {
          val f = from(r)
          if (f >= 0) out.copyFromSafe(f, r, kv) else out.copyFromSafe(-1 - f, r, bv)
          r += 1
        }
        out.setValueCount(total)
        out
      } catch { case NonFatal(e) => out.close(); throw e }
    }
    val next = new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, total)
    if (kept != null) kept.close()
    kept = next
    keptKeys = order.keyVectors(kept)
  }

  /** The kept rows, sorted, owned by the caller, or None when no row was kept. */
  def result(): Option[VectorSchemaRoot] = {
    val r = Option(kept).filter(_.getRowCount > 0)
    if (r.isEmpty && kept != null) kept.close()
    kept = null
    r
  }

  override def close(): Unit = if (kept != null) { kept.close(); kept = null }
}
