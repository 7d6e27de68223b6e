package io.sparklance.core.index

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt8Vector, VectorSchemaRoot}

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.Storage

/**
 * Sorted runs (Lance files of `values` and `ids`, sorted by [[KeyOrder]] then id, as [[BTreeWriter.writeRun]]
 * writes them, or the same held in memory by a build's [[HeldRuns]]) merged into one sorted stream, reading a chunk of
 * each run at a time.
 */
private[index] object SortedRuns {
  private val ChunkRows = 1 << 16

  /** Calls `visit(values, row, id)` for every row of the runs, in key order (ties by id). */
  def merge(storage: Storage, runs: Seq[String], allocator: BufferAllocator, held: Option[HeldRuns])(
      visit: (FieldVector, Int, Long) => Unit): Unit =
    mergeRanges(storage, runs, allocator, held) { (values, ids, from, to) =>
      var row = from
      while (row < to) { visit(values, row, ids.get(row)); row += 1 }
    }

  /**
   * Calls `visit(values, ids, from, to)` for rows [from, to) of a chunk of one run, so that the rows of all runs
   * come in key order (ties by id). A run whose keys do not interleave with the others' comes in whole chunks. Runs
   * `held` in memory are taken from there; the others are read from their files.
   */
  def mergeRanges(storage: Storage, runs: Seq[String], allocator: BufferAllocator, held: Option[HeldRuns])(
      visit: (FieldVector, UInt8Vector, Int, Int) => Unit): Unit = {
    // The runs' next chunks are decoded on a thread of their own while the current ones are merged.
    val decoder = new Background("sparklance-index-run-reader")
    val cursors = mutable.ArrayBuffer.empty[Cursor]
    try {
      runs.foreach(r => cursors += new Cursor(storage, r, held.flatMap(_.take(r)), allocator, decoder))
      val live = cursors.filter(_.hasRow)
      if (live.nonEmpty) {
        val order = KeyOrder.of(live.head.values)
        // Whether row `i` of `a`'s chunk comes before the current row of `b`.
        def before(a: Cursor, i: Int, b: Cursor): Boolean = {
          val c = order.compare(a.values, i, b.values, b.row)
          c < 0 || (c == 0 && java.lang.Long.compareUnsigned(a.ids.get(i), b.ids.get(b.row)) <= 0)
        }
        val heap = mutable.PriorityQueue.empty[Cursor](new Ordering[Cursor] {
          // A max-heap: the smallest key (then id) is the greatest.
          def compare(a: Cursor, b: Cursor): Int = {
            val c = order.compare(b.values, b.row, a.values, a.row)
            if (c != 0) c else java.lang.Long.compareUnsigned(b.ids.get(b.row), a.ids.get(a.row))
          }
        })
        live.foreach(heap += _)
        while (heap.nonEmpty) {
          // The smallest run gives rows until it passes the next smallest.
          val c = heap.dequeue()
          var more = true
          while (more) {
            val rows = c.chunkRows
            var end = rows
            if (heap.nonEmpty && !before(c, rows - 1, heap.head)) {
              end = c.row
              while (before(c, end, heap.head)) end += 1
            }
            visit(c.values, c.ids, c.row, end)
            more = end == rows && c.nextChunk()
            if (!more) c.row = end
          }
          if (c.hasRow) heap += c
        }
      }
    } finally {
      cursors.foreach(c => try c.close() catch { case NonFatal(_) => () })
      decoder.close()
    }
  }

  /**
   * Reads a run in chunks, the next one decoded by `decoder` ahead of use: the current row's key and address. A run
   * `held` in memory (now the cursor's) is one chunk; any other is read from its file.
   */
  private final class Cursor(storage: Storage, path: String, held: Option[VectorSchemaRoot], allocator: BufferAllocator,
      decoder: Background) extends AutoCloseable {
    private val reader = if (held.isEmpty) Some(LanceFileReader.open(storage, path)) else None
    private val numRows = held.map(_.getRowCount.toLong).getOrElse(reader.get.numRows)
    private var chunk: VectorSchemaRoot = _
    private var ahead: Option[java.util.concurrent.Future[VectorSchemaRoot]] = None
    private var start = 0L
    var row = 0
    var values: FieldVector = _
    var ids: UInt8Vector = _
    use(held.getOrElse(read(0L)), 0L)

    def hasRow: Boolean = chunk != null && row < chunk.getRowCount

    private def read(from: Long): VectorSchemaRoot = reader match {
      case Some(r) if from < numRows => r.read(r.metadata.schema.fields, from, math.min(numRows, from + ChunkRows), allocator)
      case _ => null
    }

    /** Makes `root` (rows from `from`, or null past the end) the current chunk, and starts decoding the next one. */
    private def use(root: VectorSchemaRoot, from: Long): Unit = {
      chunk = root
      start = from
      row = 0
      if (root != null) {
        values = root.getVector(0)
        ids = root.getVector(1).asInstanceOf[UInt8Vector]
        val next = from + root.getRowCount
        if (next < numRows) ahead = Some(decoder.submit(() => read(next)))
      }
    }

    /** The rows of the current chunk. */
    def chunkRows: Int = chunk.getRowCount

    /** Moves to the first row of the next chunk; false at the end of the run. */
    def nextChunk(): Boolean = {
      val next = start + chunk.getRowCount
      chunk.close()
      chunk = null
      val root = ahead.map(Background.await).orNull
      ahead = None
      use(root, next)
      hasRow
    }

    override def close(): Unit = {
      try if (chunk != null) chunk.close() catch { case NonFatal(_) => () }
      try ahead.foreach(f => Background.await(f).close()) catch { case NonFatal(_) => () }
      reader.foreach(_.close())
    }
  }
}
