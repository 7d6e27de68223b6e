package io.sparklance.cli

import java.io.FileOutputStream
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.ipc.ArrowFileWriter
import org.apache.arrow.vector.types.pojo.Schema

import io.sparklance.core.LanceException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.table.{Dataset, LiveRows}

/**
 * `ReadTable [--batch-rows N] TABLE OUT [TABLE OUT ...]`: reads every live row of each table's latest version with
 * the JVM core (every fragment, deletion files applied, fragment order) and writes them to OUT as one Arrow IPC
 * file; a failure is written to OUT.err as `ERROR_CLASS: message`, and the next table is read. One JVM for many
 * tables: the interoperability and damage tests compare OUT with what pylance reads.
 *
 * Before each table it prints `READ TABLE` on stdout, so that a caller that stops a run which hangs knows which
 * table hung. Errors that are not sparklance errors are written as `LANCE_INTERNAL_ERROR` (a bug) and running out
 * of memory as `JVM_OUT_OF_MEMORY`; both name the Java class.
 */
object ReadTable {

  def main(argv: Array[String]): Unit = {
    val (batchRows, rest) = argv.toList match {
      case "--batch-rows" :: n :: tail => (n.toLong, tail)
      case other => (8192L, other)
    }
    require(rest.nonEmpty && rest.size % 2 == 0, "usage: ReadTable [--batch-rows N] TABLE OUT [TABLE OUT ...]")
    val storage = new HadoopStorage()
    rest.grouped(2).foreach { pair =>
      val (table, out) = (pair(0), pair(1))
      Files.deleteIfExists(Paths.get(out + ".err"))
      println(s"READ $table")
      Console.out.flush()
      val allocator = new RootAllocator()
      try write(storage, table, out, batchRows, allocator)
      catch {
        case e: LanceException => fail(out, s"${e.errorClass}: ${e.getMessage}")
        case e: OutOfMemoryError => fail(out, s"JVM_OUT_OF_MEMORY: ${e.getClass.getName}: ${e.getMessage}")
        case NonFatal(e) => fail(out, s"LANCE_INTERNAL_ERROR: ${e.getClass.getName}: ${e.getMessage}\n" +
          e.getStackTrace.take(8).mkString("\n"))
      } finally {
        try allocator.close() catch { case NonFatal(_) => () }
      }
    }
  }

  private def write(storage: Storage, table: String, out: String, batchRows: Long, allocator: BufferAllocator): Unit = {
    val snapshot = Dataset.open(storage, table).checkoutLatest()
    val fields = snapshot.schema.fields
    val schema = new Schema(fields.map(LanceFileReader.readField).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    val os = new FileOutputStream(out)
    try {
      val writer = new ArrowFileWriter(root, null, os.getChannel)
      writer.start()
      LiveRows.foreach(snapshot, batchRows, allocator) { batch =>
        root.clear()
        var i = 0
        while (i < batch.getFieldVectors.size) {
          batch.getVector(i).makeTransferPair(root.getVector(i)).transfer()
          i += 1
        }
        root.setRowCount(batch.getRowCount)
        if (root.getRowCount > 0) writer.writeBatch()
      }
      writer.end()
      writer.close()
    } finally { os.close(); root.close() }
  }

  private def fail(out: String, message: String): Unit = {
    Files.deleteIfExists(Paths.get(out))
    Files.write(Paths.get(out + ".err"), message.getBytes(StandardCharsets.UTF_8))
  }
}
