package io.sparklance.cli

import java.io.FileOutputStream
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.util.control.NonFatal

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{FieldVector, LargeVarBinaryVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.StructVector
import org.apache.arrow.vector.ipc.ArrowFileWriter

import io.sparklance.core.LanceException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.HadoopStorage

/**
 * `ReadFiles [--batch-rows N] [--columns a,s.x] [--take 1,5,9] [--blob-bytes COLUMN] IN OUT [IN OUT ...]`: reads
 * each Lance data file IN with the JVM reader and writes it to OUT as an Arrow IPC file; a failure is written to
 * OUT.err as `ERROR_CLASS: message`. One JVM for many files: the conformance tests compare OUT with what pylance
 * reads. `--blob-bytes` writes the bytes of a blob v2 column instead of its descriptors.
 */
object ReadFiles {

  final case class Options(batchRows: Int = 65536, columns: Option[Seq[String]] = None,
      take: Option[Array[Long]] = None, blobColumn: Option[String] = None)

  def main(argv: Array[String]): Unit = {
    var options = Options()
    var rest = argv.toList
    var parsing = true
    while (parsing) rest match {
      case "--batch-rows" :: n :: tail => options = options.copy(batchRows = n.toInt); rest = tail
      case "--columns" :: c :: tail => options = options.copy(columns = Some(c.split(",").toSeq)); rest = tail
      case "--take" :: t :: tail => options = options.copy(take = Some(t.split(",").map(_.toLong))); rest = tail
      case "--blob-bytes" :: c :: tail => options = options.copy(blobColumn = Some(c)); rest = tail
      case _ => parsing = false
    }
    require(rest.size % 2 == 0, "usage: ReadFiles [options] IN OUT [IN OUT ...]")
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    rest.grouped(2).foreach { pair =>
      val (in, out) = (pair(0), pair(1))
      Files.deleteIfExists(Paths.get(out + ".err"))
      try {
        val reader = LanceFileReader.open(storage, in)
        try options.blobColumn match {
          case Some(column) => writeBlobBytes(reader, column, out, allocator)
          case None => writeRows(reader, options, out, allocator)
        } finally reader.close()
      } catch {
        case e: LanceException => fail(out, s"${e.errorClass}: ${e.getMessage}")
        case NonFatal(e) => fail(out, s"LANCE_INTERNAL_ERROR: ${e.getClass.getName}: ${e.getMessage}")
      }
    }
    allocator.close()
  }

  private def writeRows(reader: LanceFileReader, options: Options, out: String, allocator: BufferAllocator): Unit = {
    val fields = options.columns.map(reader.metadata.schema.project).getOrElse(reader.metadata.schema.fields)
    val first = options.take match {
      case Some(rows) => reader.take(fields, rows, allocator)
      case None => reader.read(fields, 0, math.min(options.batchRows.toLong, reader.numRows), allocator)
    }
    val os = new FileOutputStream(out)
    try {
      val writer = new ArrowFileWriter(first, null, os.getChannel)
      writer.start()
      writer.writeBatch()
      var start = if (options.take.isDefined) reader.numRows else first.getRowCount.toLong
      while (start < reader.numRows) {
        val end = math.min(start + options.batchRows, reader.numRows)
        val next = reader.read(fields, start, end, allocator)
        try {
          // Move the next batch's buffers into the writer's root.
          first.clear()
          (0 until next.getFieldVectors.size).foreach(i => next.getVector(i).makeTransferPair(first.getVector(i)).transfer())
          first.setRowCount(next.getRowCount)
          writer.writeBatch()
        } finally next.close()
        start = end
      }
      writer.end()
      writer.close()
    } finally { os.close(); first.close() }
  }

  private def writeBlobBytes(reader: LanceFileReader, column: String, out: String, allocator: BufferAllocator): Unit = {
    val root = reader.read(reader.metadata.schema.project(Seq(column)), 0, reader.numRows, allocator)
    try {
      val d = root.getVector(0).asInstanceOf[StructVector]
      val bytes = new LargeVarBinaryVector(column, allocator)
      try {
        bytes.allocateNew()
        (0 until root.getRowCount).foreach { i =>
          if (d.isNull(i)) bytes.setNull(i)
          else {
            def num(name: String) = d.getChild(name).getObject(i).toString.toLong
            val uri = Option(d.getChild("blob_uri").getObject(i)).map(_.toString).getOrElse("")
            bytes.setSafe(i, reader.blobBytes(num("kind").toInt, num("position"), num("size"), num("blob_id"), uri))
          }
        }
        bytes.setValueCount(root.getRowCount)
        val result = new VectorSchemaRoot(java.util.Collections.singletonList(bytes.getField), java.util.Collections.singletonList[FieldVector](bytes), root.getRowCount)
        val os = new FileOutputStream(out)
        try {
          val writer = new ArrowFileWriter(result, null, os.getChannel)
          writer.start(); writer.writeBatch(); writer.end(); writer.close()
        } finally os.close()
      } finally bytes.close()
    } finally root.close()
  }

  private def fail(out: String, message: String): Unit = {
    Files.deleteIfExists(Paths.get(out))
    Files.write(Paths.get(out + ".err"), message.getBytes(StandardCharsets.UTF_8))
  }

}
