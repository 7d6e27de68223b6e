package io.sparklance.spark

import java.io.ByteArrayOutputStream
import java.nio.channels.Channels

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.ipc.ArrowStreamWriter
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.StructType

/**
 * A search's rows as Arrow IPC stream bytes (one record batch), for Python's `LanceTable.to_table(nearest=...)`,
 * which reads them with `pyarrow.ipc.open_stream`. Each column is written as a new table of the same schema would
 * store it ([[SparkSchemas.toLance]], [[ArrowRowWriter]]): a table column keeps its Lance type (a vector stays a
 * fixed-size list), `_distance` is float32, `_rowid` int64 and `query_index` int32.
 */
private[spark] object SearchArrow {
  def bytes(schema: StructType, rows: Seq[InternalRow]): Array[Byte] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val writer = new ArrowRowWriter(SparkSchemas.toLance(schema).fields, schema, allocator)
      try {
        rows.foreach(writer.write)
        val root = writer.finishBatch()
        val out = new ByteArrayOutputStream()
        val stream = new ArrowStreamWriter(root, null, Channels.newChannel(out))
        try {
          stream.start()
          stream.writeBatch()
          stream.end()
        } finally stream.close()
        out.toByteArray
      } finally writer.close()
    } finally allocator.close()
  }
}
