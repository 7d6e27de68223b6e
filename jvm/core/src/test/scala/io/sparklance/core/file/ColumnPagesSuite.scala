package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CorruptFileException, FileVersion}
import io.sparklance.core.storage.InMemoryStorage

class ColumnPagesSuite extends AnyFunSuite {
  import FileWriterTesting._

  test("coalesce groups ranges within the gap and the size bound, and keeps the ranges each read serves") {
    val ranges = Seq((100L, 200L), (0L, 50L), (61L, 90L), (5000L, 5100L), (5100L, 9000L))
    assert(ColumnPages.coalesce(ranges, gap = 10, maxBytes = 1L << 20) == Seq(
      (0L, 50L, Seq((0L, 50L))), (61L, 200L, Seq((61L, 90L), (100L, 200L))), (5000L, 9000L, Seq((5000L, 5100L), (5100L, 9000L)))))
    assert(ColumnPages.coalesce(ranges, gap = 10000, maxBytes = 4000).map(r => (r._1, r._2)) ==
      Seq((0L, 200L), (5000L, 9000L)))
    assert(ColumnPages.coalesce(Nil, 10, 10).isEmpty)
  }

  test("pages fetched ahead are read once, in one request, and served from memory once") {
    withPages(gap = 1L << 20) { (pages, storage) =>
      val all = (0 until pages.size).flatMap(c => pages(c).getPagesList.asScala)
      assert(all.size > 4)
      val before = storage.reads.get()
      pages.fetchAhead(all.flatMap(ColumnPages.bufferSpan))
      assert(storage.reads.get() - before == 1)
      assert(pages.hasFetched)
      val fetched = all.map(p => pages.buffers(p).map(s => java.util.Arrays.copyOfRange(s.array, s.offset, s.offset + s.length)))
      assert(storage.reads.get() - before == 1)
      assert(!pages.hasFetched)
      val again = all.map(p => pages.buffers(p).map(s => java.util.Arrays.copyOfRange(s.array, s.offset, s.offset + s.length)))
      assert(storage.reads.get() - before == 1 + all.size)
      fetched.zip(again).foreach { case (a, b) => assert(a.map(_.toSeq).toSeq == b.map(_.toSeq).toSeq) }
    }
  }

  test("bytes outside the file are corruption, named with the range and the file's size") {
    withPages(gap = -1) { (pages, _) =>
      val e = intercept[CorruptFileException](pages.bytes(pages.fileSize - 4, 8))
      assert(e.getMessage.contains(s"a blob at ${pages.fileSize - 4} (+8 bytes) lies outside the file of ${pages.fileSize} bytes"))
      assert(intercept[CorruptFileException](pages.bytes(-1, 1)).getMessage.contains("a blob at -1 (+1 bytes)"))
      assert(pages.bytes(0, 4).toSeq == pages.read(0, 4).toSeq)
    }
  }

  test("the last decoded page of a column is kept, one per column") {
    withPages(gap = -1) { (pages, _) =>
      var decodes = 0
      def decode(column: Int, page: Int): String = pages.decoded(column, page) { decodes += 1; s"$column/$page" }
      assert(decode(0, 0) == "0/0" && decode(0, 0) == "0/0" && decode(1, 0) == "1/0" && decodes == 2)
      assert(pages.isDecoded(0, 0) && !pages.isDecoded(0, 1))
      assert(decode(0, 1) == "0/1" && decode(0, 0) == "0/0" && decodes == 4)
    }
  }

  private def withPages(gap: Long)(body: (ColumnPages, InMemoryStorage) => Unit): Unit = {
    val allocator = new RootAllocator()
    val storage = new InMemoryStorage
    val schema = FileWriterTesting.schema(leaf("a", "int64"), leaf("b", "string"))
    val arrow = new org.apache.arrow.vector.types.pojo.Schema(schema.fields.map(LanceFileReader.readField).asJava)
    val root = VectorSchemaRoot.create(arrow, allocator)
    try {
      root.getFieldVectors.asScala.foreach(v => fill(v, 5000, new Random(3), 0.1))
      root.setRowCount(5000)
      val w = LanceFileWriter.create(storage, "f.lance", schema, FileVersion.V2_1, LanceFileWriter.Options(16L << 10))
      w.write(root)
      w.finish()
    } finally {
      root.close()
      allocator.close()
    }
    storage.coalesceGap = gap
    val in = storage.open("f.lance")
    val pages = new ColumnPages(in, FileMetadata.read(in))
    try body(pages, storage) finally pages.close()
  }
}
