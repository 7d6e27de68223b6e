package io.sparklance.core.table

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import io.sparklance.core.scan.FragmentReader

/** Every live row of a table version, fragment by fragment, in batches: what tools that copy or dump a table read. */
object LiveRows {

  /**
   * Hands `f` each batch of at most `batchRows` physical rows of every fragment (deleted rows skipped), with every
   * column of the schema; the batch is closed after `f` returns.
   */
  def foreach(snapshot: Snapshot, batchRows: Long, allocator: BufferAllocator)(f: VectorSchemaRoot => Unit): Unit =
    snapshot.fragments.foreach { fragment =>
      val reader = new FragmentReader(snapshot.storage, snapshot.layout, fragment, snapshot.schema.fields, Nil,
        snapshot.deletionVector(fragment), None)
      try {
        var from = 0L
        while (from < fragment.physicalRows) {
          val to = math.min(fragment.physicalRows, from + batchRows)
          val batch = reader.read(from, to, allocator)
          try f(batch) finally batch.close()
          from = to
        }
      } finally reader.close()
    }
}
