package io.sparklance.core.table

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, VectorSchemaRoot}

import io.sparklance.core.MetadataColumn

/** Test reads of whole scans: every task of `scan`, each row with its row address, batches closed as they go. */
object ScanRows {
  def apply[T](table: Table, scan: Scan, rowsPerTask: Long, allocator: BufferAllocator)(row: (VectorSchemaRoot, Int) => T): Seq[(Long, T)] =
    apply(table, scan.withMetadataColumns(Seq(MetadataColumn.RowAddress)).planTasks(rowsPerTask), allocator)(row)

  /** The same, for tasks planned by the caller from a scan that reads `_rowaddr`. */
  def apply[T](table: Table, tasks: Seq[ScanTask], allocator: BufferAllocator)(row: (VectorSchemaRoot, Int) => T): Seq[(Long, T)] =
    tasks.flatMap { task =>
      val reader = table.read(task, allocator)
      try Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.flatMap { root =>
        try {
          val address = root.getVector("_rowaddr").asInstanceOf[BigIntVector]
          (0 until root.getRowCount).map(i => address.get(i) -> row(root, i))
        } finally root.close()
      }.toList
      finally reader.close()
    }
}
