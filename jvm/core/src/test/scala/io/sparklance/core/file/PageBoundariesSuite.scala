package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{ValueVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.{FixedSizeListVector, ListVector, StructVector}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, LanceException}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage

/**
 * The encodings through the public file API only (`LanceFileWriter.create`, `LanceFileReader.open`): small pages,
 * reads of row ranges that start and end anywhere (inside pages, on page boundaries, across many pages), for file
 * versions 2.0, 2.1 and 2.2; and page bytes damaged in the file, which must read as the library's errors.
 */
class PageBoundariesSuite extends AnyFunSuite with BeforeAndAfterAll {
  import FileWriterTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val versions = Seq(FileVersion.V2_0, FileVersion.V2_1, FileVersion.V2_2)
  private val seeds = Seq(1, 2)

  private val columns: Seq[F] = Seq(leaf("i", "int32"), leaf("b", "bool"), leaf("s", "string"), leaf("d", "double"),
    leaf("v", "fixed_size_list:float:3"), leaf("k", "dict:string:int16:false"), struct("st", leaf("x", "int64"), leaf("y", "string")),
    list("l", leaf("item", "int32")), list("ll", list("item", leaf("item", "string"))))

  /** Writes random batches of the schema with small pages; returns the storage and the written batches. */
  private def write(version: FileVersion, s: LanceSchema, batches: Seq[Int], r: Random, maxPageBytes: Long)
      : (InMemoryStorage, Seq[VectorSchemaRoot]) = {
    val storage = new InMemoryStorage
    val arrow = new org.apache.arrow.vector.types.pojo.Schema(s.fields.map(LanceFileReader.readField).asJava)
    val roots = batches.map { n =>
      val root = VectorSchemaRoot.create(arrow, allocator)
      root.getFieldVectors.asScala.foreach(v => fill(v, n, r, 0.2, structNulls = version != FileVersion.V2_0))
      root.setRowCount(n)
      root
    }
    val w = LanceFileWriter.create(storage, "f.lance", s, version, LanceFileWriter.Options(maxPageBytes))
    roots.foreach(w.write)
    w.finish()
    (storage, roots)
  }

  /** A value as text, nested values recursively (Arrow's own getObject of lists needs Jackson modules). */
  private def render(v: ValueVector, i: Int): String =
    if (v.isNull(i)) "null"
    else v match {
      case l: ListVector => (l.getElementStartIndex(i) until l.getElementEndIndex(i)).map(render(l.getDataVector, _)).mkString("[", ",", "]")
      case l: FixedSizeListVector => (i * l.getListSize until (i + 1) * l.getListSize).map(render(l.getDataVector, _)).mkString("[", ",", "]")
      case st: StructVector => st.getChildrenFromFields.asScala.map(c => render(c, i)).mkString("{", ",", "}")
      case other => String.valueOf(other.getObject(i))
    }

  private def rowText(roots: Seq[VectorSchemaRoot]): IndexedSeq[String] =
    roots.flatMap(root => (0 until root.getRowCount).map(i => root.getFieldVectors.asScala.map(render(_, i)).mkString("|")))
      .toIndexedSeq

  for (version <- versions) {
    test(s"$version reads of any row range across small pages return the rows written") {
      for (seed <- seeds) {
        val r = new Random(seed)
        val s = schema(columns: _*)
        val (storage, roots) = write(version, s, Seq(1, 1023, 1025, 700), r, maxPageBytes = 300 + r.nextInt(3000))
        try {
          val want = rowText(roots)
          val reader = LanceFileReader.open(storage, "f.lance")
          try {
            assert(reader.numRows == want.size)
            val ranges = Seq((0, want.size), (0, 1), (want.size - 1, want.size), (1023, 1025), (1024, 2049)) ++
              Seq.fill(5) { val a = r.nextInt(want.size); (a, a + r.nextInt(want.size - a + 1)) }
            for ((from, to) <- ranges) {
              val got = reader.read(s.fields, from.toLong, to.toLong, allocator)
              try assert(rowText(Seq(got)) == want.slice(from, to), s"$version seed $seed rows [$from, $to)")
              finally got.close()
            }
          } finally reader.close()
        } finally roots.foreach(_.close())
      }
    }

    test(s"$version damaged page bytes read as CorruptFileException (or another LanceException), never a crash") {
      val s = schema(columns: _*)
      val (storage, roots) = write(version, s, Seq(600), new Random(7), maxPageBytes = 1024)
      roots.foreach(_.close())
      val file = { val in = storage.open("f.lance"); val b = in.read(0, in.length.toInt); val a = new Array[Byte](b.remaining()); b.get(a); a }
      // Page buffers come first in a Lance file, the column metadata and footer last: damage the first 60%.
      val dataBytes = file.length * 6 / 10
      val r = new Random(11)
      var errors = 0
      for (_ <- 0 until 60) {
        val damaged = file.clone()
        for (_ <- 0 until 1 + r.nextInt(3)) {
          val i = r.nextInt(dataBytes)
          damaged(i) = (damaged(i) ^ (1 + r.nextInt(255))).toByte
        }
        storage.put("f.lance", damaged)
        try {
          val rd = LanceFileReader.open(storage, "f.lance")
          try rd.read(s.fields, 0L, rd.numRows, allocator).close()
          finally rd.close()
        } catch {
          case e: LanceException => errors += 1; assert(e.getMessage.contains("f.lance"), e.getMessage)
          case NonFatal(other) => fail(s"$version: damaged page bytes gave $other", other)
        }
      }
      info(s"$errors of 60 damaged files were refused; the others decoded (damage inside values)")
    }
  }
}
