package io.sparklance.core.file

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.compare.VectorEqualsVisitor
import org.apache.arrow.vector.complex.{FixedSizeListVector, LargeListVector, ListVector, StructVector}

import io.sparklance.core.FileVersion
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.proto.{Encodings20Protos, FileProtos}

/** Random Arrow data, schemas from logical type strings, and a write-then-read round trip, for the writer suites. */
object FileWriterTesting extends org.scalatest.Assertions {
  /**
   * Writes `batches` batches of random rows for the schema, reads the file back and compares every batch. With
   * `distinct` > 0, fixed-width values are drawn from that many random values.
   */
  def roundTrip(allocator: BufferAllocator, version: FileVersion, schema: LanceSchema, rows: Seq[Int], nullRate: Double = 0.2,
      maxPageBytes: Long = 8L << 20, seed: Int = 1, structNulls: Boolean = false, distinct: Int = 0): LanceFileReader = {
    val storage = new InMemoryStorage
    val arrow = new org.apache.arrow.vector.types.pojo.Schema(schema.fields.map(LanceFileReader.readField).asJava)
    val r = new Random(seed)
    val batches = rows.map { n =>
      val root = VectorSchemaRoot.create(arrow, allocator)
      root.getFieldVectors.asScala.foreach(v => fill(v, n, r, nullRate, structNulls, distinct))
      root.setRowCount(n)
      root
    }
    try {
      val w = LanceFileWriter.create(storage, "f.lance", schema, version, LanceFileWriter.Options(maxPageBytes))
      batches.foreach(w.write)
      w.finish()
      val reader = LanceFileReader.open(storage, "f.lance")
      assert(reader.version == version)
      assert(reader.numRows == rows.sum)
      assert(reader.fieldColumns.map(_._1) == w.fieldColumns.map(_._1))
      var from = 0L
      batches.foreach { b =>
        val got = reader.read(schema.fields, from, from + b.getRowCount, allocator)
        try {
          b.getFieldVectors.asScala.zip(got.getFieldVectors.asScala).foreach { case (want, have) =>
            assert(have.getValueCount == want.getValueCount)
            if (!VectorEqualsVisitor.vectorEquals(want, have)) {
              val i = (0 until want.getValueCount).find(i => String.valueOf(want.getObject(i)) != String.valueOf(have.getObject(i)))
              fail(s"$version ${want.getField.getName}: first difference at row ${i.map(j => s"$j: ${want.getObject(j)} != ${have.getObject(j)}")}")
            }
          }
        } finally got.close()
        from += b.getRowCount
      }
      reader
    } finally batches.foreach(_.close())
  }



  /** A schema field before ids are assigned: name, logical type, children, metadata. */
  final case class F(name: String, logicalType: String, children: Seq[F] = Nil, nullable: Boolean = true,
      metadata: Map[String, String] = Map.empty)

  def leaf(name: String, t: String): F = F(name, t)
  def struct(name: String, children: F*): F = F(name, "struct", children)
  def list(name: String, item: F): F = F(name, "list", Seq(item))
  def listOf(name: String, item: F): F = F(name, "list.struct", Seq(item))
  def large(f: F): F = f.copy(logicalType = "large_" + f.logicalType)

  /** The Lance schema of the fields, with ids assigned depth first as pylance does. */
  def schema(fields: F*): LanceSchema = {
    val protos = Seq.newBuilder[FileProtos.Field]
    var next = 0
    def add(f: F, parent: Int): Unit = {
      val id = next
      next += 1
      val b = FileProtos.Field.newBuilder().setId(id).setParentId(parent).setName(f.name).setLogicalType(f.logicalType)
        .setNullable(f.nullable)
      f.metadata.foreach { case (k, v) => b.putMetadata(k, com.google.protobuf.ByteString.copyFromUtf8(v)) }
      protos += b.build()
      f.children.foreach(add(_, id))
    }
    fields.foreach(add(_, -1))
    LanceSchema.fromProtos("test", protos.result(), Map.empty)
  }

  def pageEncoding(p: io.sparklance.proto.File2Protos.ColumnMetadata.Page): Encodings20Protos.ArrayEncoding =
    Encodings20Protos.ArrayEncoding.parseFrom(com.google.protobuf.Any.parseFrom(p.getEncoding.getDirect.getEncoding).getValue)

  /** Fills a vector with n random values, about `nullRate` of them null (structs are never null). */
  /** Random lengths (0-4, or null) for `n` lists, their items filled into `items`. */
  private def fillLists(n: Int, r: Random, nullRate: Double, structNulls: Boolean, distinct: Int, items: FieldVector,
      setNull: Int => Unit, setLength: (Int, Int) => Unit): Unit = {
    val lens = Array.fill(n)(if (r.nextDouble() < nullRate) -1 else r.nextInt(5))
    fill(items, lens.filter(_ > 0).sum, r, nullRate, structNulls, distinct)
    lens.indices.foreach(i => if (lens(i) < 0) setNull(i) else setLength(i, lens(i)))
  }

  def fill(v: FieldVector, n: Int, r: Random, nullRate: Double, structNulls: Boolean = false, distinct: Int = 0): Unit = {
    def isNull = r.nextDouble() < nullRate
    v match {
      case s: StructVector =>
        s.allocateNew()
        s.getChildrenFromFields.asScala.foreach(c => fill(c, n, r, nullRate, structNulls, distinct))
        (0 until n).foreach(i => if (structNulls && isNull) s.setNull(i) else s.setIndexDefined(i))
        s.setValueCount(n)
      case l: ListVector =>
        l.allocateNew()
        fillLists(n, r, nullRate, structNulls, distinct, l.getDataVector, l.setNull, (i, len) => { l.startNewValue(i); l.endValue(i, len) })
        l.setValueCount(n)
      case l: LargeListVector =>
        l.allocateNew()
        fillLists(n, r, nullRate, structNulls, distinct, l.getDataVector, l.setNull, (i, len) => { l.startNewValue(i.toLong); l.endValue(i, len) })
        l.setValueCount(n)
      case l: FixedSizeListVector =>
        l.allocateNew()
        fill(l.getDataVector, n * l.getListSize, r, nullRate, structNulls, distinct)
        (0 until n).foreach(i => if (isNull) l.setNull(i) else l.setNotNull(i))
        l.setValueCount(n)
      case b: BitVector =>
        b.allocateNew(n)
        (0 until n).foreach(i => if (isNull) b.setNull(i) else b.set(i, r.nextInt(2)))
        b.setValueCount(n)
      case nv: NullVector => nv.setValueCount(n)
      case f: BaseFixedWidthVector =>
        f.allocateNew(n)
        val w = f.getTypeWidth
        val bytes = new Array[Byte](w)
        val pool = Array.fill(distinct) { val b = new Array[Byte](w); r.nextBytes(b); b }
        (0 until n).foreach { i =>
          if (isNull) f.setNull(i)
          else {
            val value = if (distinct > 0) pool(r.nextInt(distinct)) else { r.nextBytes(bytes); bytes }
            f.getDataBuffer.setBytes(i.toLong * w, value)
            f.setIndexDefined(i)
          }
        }
        f.setValueCount(n)
      case vw: BaseVariableWidthVector =>
        vw.allocateNew()
        val words = Array("", "a", "bb", "lance", "ünïcode", "x" * 40)
        (0 until n).foreach(i => if (isNull) vw.setNull(i) else vw.setSafe(i, words(r.nextInt(words.length)).getBytes(StandardCharsets.UTF_8)))
        vw.setValueCount(n)
      case vw: BaseLargeVariableWidthVector =>
        vw.allocateNew()
        (0 until n).foreach(i => if (isNull) vw.setNull(i) else vw.setSafe(i, ("v" + r.nextInt(50)).getBytes(StandardCharsets.UTF_8)))
        vw.setValueCount(n)
      case other => throw new IllegalArgumentException(s"no filler for ${other.getClass.getSimpleName}")
    }
  }
}
