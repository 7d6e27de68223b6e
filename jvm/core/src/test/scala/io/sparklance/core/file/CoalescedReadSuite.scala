package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.apache.arrow.vector.compare.VectorEqualsVisitor
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.storage.InMemoryStorage

class CoalescedReadSuite extends AnyFunSuite {
  import FileWriterTesting._

  test("a read of many pages of several columns costs a few requests where the file coalesces, with the same values") {
    readTwice(FileVersion.V2_1) { (pages, plainReads, coalescedReads) =>
      assert(plainReads >= pages, s"without coalescing every page is a request ($plainReads reads, $pages pages)")
      assert(coalescedReads <= 8, s"with coalescing a batch's pages are one request: $coalescedReads reads for 8 batches")
    }
  }

  test("a file of version 2.0 is read page by page, also where the storage coalesces") {
    readTwice(FileVersion.V2_0) { (pages, plainReads, coalescedReads) =>
      assert(plainReads >= pages, s"every page is a request ($plainReads reads, $pages pages)")
      assert(coalescedReads == plainReads)
    }
  }

  /**
   * Writes 8 batches of 5000 rows in small pages, reads them back batch by batch without and with coalescing,
   * checks the values and hands (pages, requests without, requests with coalescing) to `check`.
   */
  private def readTwice(version: FileVersion)(check: (Int, Int, Int) => Unit): Unit = {
    val allocator = new RootAllocator()
    val storage = new InMemoryStorage
    val schema = FileWriterTesting.schema(leaf("a", "int64"), leaf("b", "string"), leaf("c", "double"),
      list("d", leaf("item", "int32")))
    val arrow = new org.apache.arrow.vector.types.pojo.Schema(schema.fields.map(LanceFileReader.readField).asJava)
    val r = new Random(7)
    val batches = (0 until 8).map { _ =>
      val root = VectorSchemaRoot.create(arrow, allocator)
      root.getFieldVectors.asScala.foreach(v => fill(v, 5000, r, 0.1))
      root.setRowCount(5000)
      root
    }
    try {
      // Small pages: each column has many.
      val w = LanceFileWriter.create(storage, "f.lance", schema, version, LanceFileWriter.Options(16L << 10))
      batches.foreach(w.write)
      w.finish()

      def readAll(gap: Long): (Int, Seq[VectorSchemaRoot]) = {
        storage.coalesceGap = gap
        val reader = LanceFileReader.open(storage, "f.lance")
        assert(reader.coalesces == (gap >= 0 && version != FileVersion.V2_0))
        val before = storage.reads.get()
        val roots = (0 until 8).map(i => reader.read(schema.fields, i * 5000L, (i + 1) * 5000L, allocator))
        reader.close()
        (storage.reads.get() - before, roots)
      }
      val (plainReads, plain) = readAll(-1)
      val (coalescedReads, coalesced) = readAll(1L << 20)
      try {
        val reader = LanceFileReader.open(storage, "f.lance")
        val pages = try reader.metadata.columns.map(_.getPagesCount).sum finally reader.close()
        check(pages, plainReads, coalescedReads)
        (plain ++ coalesced).grouped(8).foreach(_.zip(batches).foreach { case (got, want) =>
          want.getFieldVectors.asScala.zip(got.getFieldVectors.asScala).foreach { case (w, g) => assert(VectorEqualsVisitor.vectorEquals(w, g)) }
        })
      } finally (plain ++ coalesced).foreach(_.close())
    } finally {
      batches.foreach(_.close())
      allocator.close()
    }
  }
}
