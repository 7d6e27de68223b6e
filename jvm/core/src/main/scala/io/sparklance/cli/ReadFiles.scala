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
    var batchRows = 65536
    var columns: Option[Seq[String]] = None
    var take: Option[Array[Long]] = None
    var rest = argv.toList
    var parsing = true
    while (parsing) rest match {
      case "--batch-rows" :: n :: tail => batchRows = n.toInt; rest = tail
      case "--columns" :: c :: tail => columns = Some(c.split(",").toSeq); rest = tail
      case "--take" :: t :: tail => take = Some(t.split(",").map(_.toLong)); rest = tail
      case _ => parsing = false
    }
    val pairs = rest
    require(pairs.size % 2 == 0, "usage: ReadFiles [--batch-rows N] IN OUT [IN OUT ...]")
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    pairs.grouped(2).foreach { case Seq(in, out) =>
      Files.deleteIfExists(Paths.get(out + ".err"))
      try {
        val reader = LanceFileReader.open(storage, in)
        try {
          val fields = columns.map(reader.metadata.schema.project).getOrElse(reader.metadata.schema.fields)
          var start = 0L
          val first = take match {
            case Some(rows) => reader.take(fields, rows, allocator)
            case None => reader.read(fields, 0, math.min(batchRows.toLong, reader.numRows), allocator)
          }
          val os = new FileOutputStream(out)
          try {
            val writer = new ArrowFileWriter(first, null, os.getChannel)
            writer.start()
            writer.writeBatch()
            start = if (take.isDefined) reader.numRows else first.getRowCount.toLong
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
