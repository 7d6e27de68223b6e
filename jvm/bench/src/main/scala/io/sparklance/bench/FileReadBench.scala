package io.sparklance.bench

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.HadoopStorage

/**
 * Single-threaded decode throughput of the JVM file reader: for each file, reads every row of every column
 * `rounds` times after a warm-up and prints `name<TAB>rows<TAB>arrow bytes<TAB>best seconds` per file.
 */
object FileReadBench {
  def main(args: Array[String]): Unit = {
    val rounds = sys.props.getOrElse("rounds", "5").toInt
    val batchRows = sys.props.getOrElse("batch.rows", "65536").toLong
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    args.foreach { path =>
      def once(): (Long, Long) = {
        val reader = LanceFileReader.open(storage, path)
        try {
          var bytes = 0L
          var start = 0L
          while (start < reader.numRows) {
            val end = math.min(reader.numRows, start + batchRows)
            val root = reader.read(reader.metadata.schema.fields, start, end, allocator)
            try bytes += root.getFieldVectors.asScala.map(_.getBufferSize.toLong).sum
            finally root.close()
            start = end
          }
          (reader.numRows, bytes)
        } finally reader.close()
      }
      once(); once()
      var best = Double.MaxValue
      var result = (0L, 0L)
      (1 to rounds).foreach { _ =>
        val t0 = System.nanoTime()
        result = once()
        best = math.min(best, (System.nanoTime() - t0) / 1e9)
      }
      println(s"$path\t${result._1}\t${result._2}\t$best")
    }
    allocator.close()
  }
}
