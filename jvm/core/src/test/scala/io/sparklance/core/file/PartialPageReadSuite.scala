package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{ValueVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.{FixedSizeListVector, StructVector}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.storage.InMemoryStorage

/**
 * Pages read in parts (mini-block chunks, rows of fixed-stride full-zip pages): a file with one large page per
 * column, read a few rows at a time, must return the rows written while reading only the parts that hold them.
 */
class PartialPageReadSuite extends AnyFunSuite with BeforeAndAfterAll {
  import FileWriterTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val rows = 30000
  private val s = schema(leaf("i", "int64"), leaf("s", "string"), leaf("d", "double"), leaf("b", "bool"),
    leaf("v", "fixed_size_list:float:8"), leaf("w", "fixed_size_list:int32:3"), leaf("k", "dict:string:int16:false"),
    struct("st", leaf("x", "int32")))

  /** A value as text, nested values recursively (Arrow's own getObject of lists needs Jackson modules). */
  private def render(v: ValueVector, i: Int): String =
    if (v.isNull(i)) "null"
    else v match {
      case l: FixedSizeListVector => (i * l.getListSize until (i + 1) * l.getListSize).map(render(l.getDataVector, _)).mkString("[", ",", "]")
      case st: StructVector => st.getChildrenFromFields.asScala.map(c => render(c, i)).mkString("{", ",", "}")
      case other => String.valueOf(other.getObject(i))
    }

  private def text(root: VectorSchemaRoot): IndexedSeq[String] =
    (0 until root.getRowCount).map(i => root.getFieldVectors.asScala.map(render(_, i)).mkString("|"))

  for (version <- Seq(FileVersion.V2_1, FileVersion.V2_2)) {
    test(s"$version reads of a few rows of one-page columns read a few chunks and return the rows written") {
      val storage = new InMemoryStorage
      val arrow = new org.apache.arrow.vector.types.pojo.Schema(s.fields.map(LanceFileReader.readField).asJava)
      val written = VectorSchemaRoot.create(arrow, allocator)
      try {
        val r = new Random(3)
        written.getFieldVectors.asScala.foreach(v => fill(v, rows, r, 0.1))
        written.setRowCount(rows)
        val w = LanceFileWriter.create(storage, "f.lance", s, version, LanceFileWriter.Options(64L << 20))
        w.write(written)
        w.finish()
        val want = text(written)
        val reader = LanceFileReader.open(storage, "f.lance")
        try {
          assert(reader.metadata.columns.forall(_.getPagesCount == 1), "the test needs one page per column")
          val fileBytes = storage.open("f.lance").length
          val before = storage.bytesRead.get()
          val few = reader.read(s.fields, 17001, 17004, allocator)
          try assert(text(few) == want.slice(17001, 17004)) finally few.close()
          val picked = Array(5L, 29999L, 12000L, 12001L, 4096L, 5L)
          val taken = reader.take(s.fields, picked, allocator)
          try assert(text(taken) == picked.map(i => want(i.toInt)).toSeq) finally taken.close()
          val read = storage.bytesRead.get() - before
          assert(read < fileBytes / 4, s"a read of 9 rows read $read bytes of a file of $fileBytes")
          // Ranges not aligned to chunks, in order: every row once, from chunks decoded once or twice.
          val batches = (0 until rows by 777).map(from => reader.read(s.fields, from, math.min(rows, from + 777), allocator))
          try assert(batches.flatMap(text) == want) finally batches.foreach(_.close())
        } finally reader.close()
      } finally written.close()
    }
  }
}
