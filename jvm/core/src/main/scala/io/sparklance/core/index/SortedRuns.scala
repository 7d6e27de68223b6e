package io.sparklance.core.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt8Vector, VectorSchemaRoot}

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.Storage

/**
 * Sorted runs (Lance files of `values` and `ids`, sorted by [[KeyOrder]] then id, as [[BTreeWriter.writeRun]]
 * writes them) merged into one sorted stream, reading a chunk of each run at a time.
 */
private[index] object SortedRuns {
  private val ChunkRows = 1 << 16

  /** Calls `visit(values, row, id)` for every row of the runs, in key order (ties by id). */
  def merge(storage: Storage, runs: Seq[String], allocator: BufferAllocator)(visit: (FieldVector, Int, Long) => Unit): Unit = {
    val cursors = runs.map(new Cursor(storage, _, allocator))
    try {
      val live = cursors.filter(_.hasRow)
      if (live.isEmpty) return
      val order = KeyOrder.of(live.head.values)
      val heap = mutable.PriorityQueue.empty[Cursor](new Ordering[Cursor] {
        // A max-heap: the smallest key (then id) is the greatest.
        def compare(a: Cursor, b: Cursor): Int = {
          val c = order.compare(b.values, b.row, a.values, a.row)
          if (c != 0) c else java.lang.Long.compareUnsigned(b.ids.get(b.row), a.ids.get(a.row))
        }
      })
      def before(a: Cursor, b: Cursor): Boolean = {
        val c = order.compare(a.values, a.row, b.values, b.row)
        c < 0 || (c == 0 && java.lang.Long.compareUnsigned(a.ids.get(a.row), b.ids.get(b.row)) <= 0)
      }
      live.foreach(heap.enqueue(_))
      while (heap.nonEmpty) {
        // The smallest run gives rows until it passes the next smallest: runs over disjoint keys are copied
        // through without touching the heap.
        val c = heap.dequeue()
        var more = true
        if (heap.isEmpty) {
          while (more) { visit(c.values, c.row, c.ids.get(c.row)); more = c.advance() }
        } else {
          val next = heap.head
          while (more && before(c, next)) { visit(c.values, c.row, c.ids.get(c.row)); more = c.advance() }
          if (more) heap.enqueue(c)
        }
      }
    } finally cursors.foreach(_.close())
  }

  /** Reads a run file in chunks: the current row's key and address. */
  private final class Cursor(storage: Storage, path: String, allocator: BufferAllocator) extends AutoCloseable {
    private val reader = LanceFileReader.open(storage, path)
    private val fields = reader.metadata.schema.fields
    private var chunk: VectorSchemaRoot = _
    private var start = 0L
    var row = 0
    var values: FieldVector = _
    var ids: UInt8Vector = _
    load(0L)

    def hasRow: Boolean = chunk != null && row < chunk.getRowCount

    private def load(from: Long): Unit = {
      if (chunk != null) chunk.close()
      chunk = null
      if (from < reader.numRows) {
        chunk = reader.read(fields, from, math.min(reader.numRows, from + ChunkRows), allocator)
        values = chunk.getVector(0)
        ids = chunk.getVector(1).asInstanceOf[UInt8Vector]
      }
      start = from
      row = 0
    }

    /** Moves to the next row; false at the end of the run. */
    def advance(): Boolean = {
      row += 1
      if (row >= chunk.getRowCount) load(start + chunk.getRowCount)
      hasRow
    }

    override def close(): Unit = {
      try if (chunk != null) chunk.close() catch { case NonFatal(_) => () }
      reader.close()
    }
  }
}
