package io.sparklance.cli

import java.io.FileOutputStream
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.ipc.ArrowFileWriter

import io.sparklance.core.LanceException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.HadoopStorage

/**
 * `ReadFiles [--batch-rows N] IN OUT [IN OUT ...]`: reads each Lance data file IN whole, in batches, with the JVM
 * reader and writes it to OUT as an Arrow IPC file; a failure is written to OUT.err as `ERROR_CLASS: message`.
 * One JVM for many files: the conformance tests compare OUT with what pylance reads.
 */
object ReadFiles {

  def main(argv: Array[String]): Unit = {
    val (batchRows, pairs) = argv.toList match {
      case "--batch-rows" :: n :: rest => (n.toInt, rest)
      case rest => (65536, rest)
    }
    require(pairs.size % 2 == 0, "usage: ReadFiles [--batch-rows N] IN OUT [IN OUT ...]")
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    pairs.grouped(2).foreach { case Seq(in, out) =>
      Files.deleteIfExists(Paths.get(out + ".err"))
      try {
        val reader = LanceFileReader.open(storage, in)
        try {
          val fields = reader.metadata.schema.fields
          var start = 0L
          var first = reader.read(fields, 0, math.min(batchRows.toLong, reader.numRows), allocator)
          val os = new FileOutputStream(out)
          try {
            val writer = new ArrowFileWriter(first, null, os.getChannel)
            writer.start()
            writer.writeBatch()
            start = first.getRowCount.toLong
            while (start < reader.numRows) {
              val end = math.min(start + batchRows, reader.numRows)
              val next = reader.read(fields, start, end, allocator)
              try {
                // Move the next batch's buffers into the writer's root.
                first.clear()
                (0 until next.getFieldVectors.size).foreach { i =>
                  next.getVector(i).makeTransferPair(first.getVector(i)).transfer()
                }
                first.setRowCount(next.getRowCount)
                writer.writeBatch()
              } finally next.close()
              start = end
            }
            writer.end()
            writer.close()
          } finally { os.close(); first.close() }
        } finally reader.close()
      } catch {
        case e: LanceException => fail(out, s"${e.errorClass}: ${e.getMessage}")
        case NonFatal(e) => fail(out, s"LANCE_INTERNAL_ERROR: ${e.getClass.getName}: ${e.getMessage}")
      }
    }
    allocator.close()
  }

  private def fail(out: String, message: String): Unit = {
    Files.deleteIfExists(Paths.get(out))
    Files.write(Paths.get(out + ".err"), message.getBytes(StandardCharsets.UTF_8))
  }
}
