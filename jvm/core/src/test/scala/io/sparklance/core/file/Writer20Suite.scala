package io.sparklance.core.file

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.compare.VectorEqualsVisitor
import org.apache.arrow.vector.complex.{FixedSizeListVector, LargeListVector, ListVector, StructVector}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.proto.{Encodings20Protos, FileProtos}

/** Round trips through the 2.0 writer and the 2.0 reader: every type, nulls, empties, many pages, zero rows. */
class Writer20Suite extends AnyFunSuite with BeforeAndAfterAll {
  import Writer20Suite._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  /** Writes `batches` batches of random rows for the schema, reads the file back and compares every batch. */
  private def roundTrip(schema: LanceSchema, rows: Seq[Int], nullRate: Double = 0.2, maxPageBytes: Long = 8L << 20,
      seed: Int = 1, structNulls: Boolean = false): LanceFileReader = {
    val storage = new InMemoryStorage
    val arrow = new org.apache.arrow.vector.types.pojo.Schema(schema.fields.map(LanceFileReader.readField).asJava)
    val r = new Random(seed)
    val batches = rows.map { n =>
      val root = VectorSchemaRoot.create(arrow, allocator)
      root.getFieldVectors.asScala.foreach(v => fill(v, n, r, nullRate, structNulls))
      root.setRowCount(n)
      root
    }
    try {
      val w = LanceFileWriter.create(storage, "f.lance", schema, FileVersion.V2_0, LanceFileWriter.Options(maxPageBytes))
      batches.foreach(w.write)
      w.finish()
      val reader = LanceFileReader.open(storage, "f.lance")
      assert(reader.version == FileVersion.V2_0)
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
              fail(s"${want.getField.getName}: first difference at row ${i.map(j => s"$j: ${want.getObject(j)} != ${have.getObject(j)}")}")
            }
          }
        } finally got.close()
        from += b.getRowCount
      }
      reader
    } finally batches.foreach(_.close())
  }

  private val primitives = Seq("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "halffloat", "float", "double", "decimal:128:10:2", "decimal:256:40:3", "date32:day", "date64:ms", "time32:s",
    "time32:ms", "time64:us", "time64:ns", "timestamp:us:UTC", "timestamp:ns:-", "duration:ms",
    "fixed_size_binary:16", "fixed_size_binary:3", "null", "string", "large_string", "binary", "large_binary",
    "fixed_size_list:float:4", "fixed_size_list:int16:3", "fixed_size_list:bool:5",
    "fixed_size_list:fixed_size_list:int16:2:3", "fixed_size_list:lance.bfloat16:8", "dict:string:int16:false",
    "dict:string:int8:false", "dict:int64:int32:false", "dict:large_binary:uint8:false")

  primitives.foreach { t =>
    test(s"$t round trips with nulls, without nulls, all null, across batches and pages") {
      roundTrip(schema(leaf("c", t)), Seq(1000, 1, 333))
      roundTrip(schema(leaf("c", t)), Seq(500), nullRate = 0)
      roundTrip(schema(leaf("c", t)), Seq(100), nullRate = 1)
      val reader = roundTrip(schema(leaf("c", t)), Seq(3000, 2000), maxPageBytes = 512)
      if (t != "null") assert(reader.metadata.columns.head.getPagesCount > 2, t)
    }
  }

  test("a page of 100+ plain strings with fewer than 100 distinct values is a dictionary page, as pylance writes") {
    def encodings(rows: Int, nullRate: Double, t: String = "string") =
      roundTrip(schema(leaf("c", t)), Seq(rows), nullRate = nullRate).metadata.columns.head.getPagesList.asScala
        .map(p => pageEncoding(p).getArrayEncodingCase.toString).toSeq
    assert(encodings(300, 0.2) == Seq("DICTIONARY"))
    assert(encodings(300, 1.0) == Seq("DICTIONARY"))
    assert(encodings(99, 0.2) == Seq("BINARY"))
    assert(encodings(300, 0.2, "binary") == Seq("BINARY"))
    assert(encodings(300, 0.2, "large_string") == Seq("BINARY"))
  }

  test("a file of zero rows has columns with no pages") {
    val s = schema(leaf("a", "int32"), struct("s", leaf("x", "string")), list("l", leaf("item", "int64")))
    val reader = roundTrip(s, Seq(0))
    assert(reader.numRows == 0)
    assert(reader.metadata.columns.size == 5)
    assert(reader.metadata.columns.forall(_.getPagesCount == 0))
    roundTrip(s, Seq.empty)
  }

  test("structs: a header column, then the children's columns, in pre-order") {
    val s = schema(struct("s", leaf("x", "int32"), leaf("y", "string"), struct("z", leaf("q", "double"))))
    val reader = roundTrip(s, Seq(1000, 7), maxPageBytes = 1024)
    assert(reader.fieldColumns == Seq(0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3, 4 -> 4))
    val header = reader.metadata.columns.head
    assert(header.getPagesCount == 1 && header.getPages(0).getLength == 1007 && header.getPages(0).getBufferOffsetsCount == 0)
    assert(pageEncoding(header.getPages(0)).hasStruct)
  }

  test("lists: offsets pages and item pages, with nulls and empties, nested lists, lists of structs") {
    Seq(
      list("l", leaf("item", "int32")),
      large(list("l", leaf("item", "string"))),
      list("l", list("item", leaf("item", "int64"))),
      listOf("l", struct("item", leaf("x", "int32"), leaf("y", "string"))),
      struct("s", list("l", leaf("item", "int32")), leaf("i", "int32")),
      list("l", leaf("item", "fixed_size_list:float:2")),
      list("l", leaf("item", "dict:string:int8:false"))
    ).foreach { f =>
      roundTrip(schema(f), Seq(700, 3, 200))
      roundTrip(schema(f), Seq(2000), maxPageBytes = 256)
      roundTrip(schema(f), Seq(50), nullRate = 1)
      roundTrip(schema(f), Seq(50), nullRate = 0)
    }
  }

  test("list pages hold page-relative ends, the null adjustment and the item count") {
    val s = schema(list("l", leaf("item", "int32")))
    val storage = new InMemoryStorage
    val root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(s.fields.map(LanceFileReader.readField).asJava), allocator)
    try {
      val l = root.getVector(0).asInstanceOf[ListVector]
      val items = l.getDataVector.asInstanceOf[IntVector]
      Seq(1, 2, 3, 4, 5, 6).zipWithIndex.foreach { case (v, i) => items.setSafe(i, v) }
      items.setNull(3)
      // [[1,2], null, [], [3,null,5], [6]]
      def put(i: Int, len: Int): Unit = { l.startNewValue(i); l.endValue(i, len) }
      put(0, 2); l.setNull(1); put(2, 0); put(3, 3); put(4, 1)
      l.setValueCount(5); root.setRowCount(5)
      val w = LanceFileWriter.create(storage, "f.lance", s, FileVersion.V2_0)
      w.write(root)
      w.finish()
      val reader = LanceFileReader.open(storage, "f.lance")
      val page = reader.metadata.columns.head.getPages(0)
      val enc = pageEncoding(page).getList
      assert(page.getLength == 5 && enc.getNullOffsetAdjustment == 7 && enc.getNumItems == 6)
      val buf = storage.open("f.lance").read(page.getBufferOffsets(0), 40).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      val ends = (0 until 5).map(i => buf.getLong(buf.position() + 8 * i))
      assert(ends == Seq(2, 9, 2, 5, 6))
      assert(reader.metadata.columns(1).getPages(0).getLength == 6)
    } finally root.close()
  }

  test("packed structs and blobs are one column each") {
    val packed = struct("p", leaf("a", "int32"), leaf("b", "fixed_size_list:float:2"), leaf("c", "decimal:128:10:2"))
      .copy(metadata = Map("lance-encoding:packed" -> "true"))
    val r1 = roundTrip(schema(packed), Seq(300, 5), nullRate = 0, maxPageBytes = 512)
    assert(r1.fieldColumns == Seq(0 -> 0))
    assert(pageEncoding(r1.metadata.columns.head.getPages(0)).hasPackedStruct)
    val blob = leaf("b", "large_binary").copy(metadata = Map("lance-encoding:blob" -> "true"))
    val r2 = roundTrip(schema(blob), Seq(100, 30))
    assert(r2.metadata.columns.head.getEncoding.getDirect.getEncoding.toByteArray.toSeq.takeRight(6) ==
      Seq[Byte](0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x00))
  }

  test("struct nulls are refused, naming the field and what to do") {
    Seq(struct("s", leaf("x", "int32")), listOf("l", struct("item", leaf("x", "int32")))).foreach { f =>
      val e = intercept[UnsupportedFeatureException](roundTrip(schema(f), Seq(100), nullRate = 0.3, structNulls = true))
      assert(e.getMessage.contains("struct field '" + (if (f.name == "s") "s" else "l.item") + "'"), e.getMessage)
      assert(e.getMessage.contains("file version 2.0 does not store struct validity. Write file version 2.1 or later"))
    }
    val packed = struct("p", leaf("a", "int32")).copy(metadata = Map("lance-encoding:packed" -> "true"))
    val e = intercept[UnsupportedFeatureException](roundTrip(schema(packed), Seq(100), nullRate = 0.3, structNulls = true))
    assert(e.getMessage.contains("Cannot write struct field 'p' to a Lance file of version 2.0"), e.getMessage)
    val e2 = intercept[UnsupportedFeatureException](roundTrip(schema(packed), Seq(100), nullRate = 0.3))
    assert(e2.getMessage.contains("packed struct field 'p' to a Lance file of version 2.0: its child 'a' contains nulls"), e2.getMessage)
  }

  test("maps, json and packed structs of variable-width children are refused when the file is created") {
    val map = F("m", "map", Seq(F("entries", "struct", Seq(F("key", "string", nullable = false), F("value", "int32")),
      nullable = false)))
    val cases = Seq(
      map -> "field 'm' to a Lance file of version 2.0: it is a map, and file version 2.0 has no encoding for maps. Write file version 2.1 or later.",
      leaf("j", "json") -> "field 'j' to a Lance file of version 2.0: writing the json type is not supported yet",
      struct("p", leaf("s", "string")).copy(metadata = Map("lance-encoding:packed" -> "true")) ->
        "its child 's' has type string, and 2.0 packs only fixed-width children")
    cases.foreach { case (f, message) =>
      val e = intercept[UnsupportedFeatureException](
        LanceFileWriter.create(new InMemoryStorage, "f.lance", schema(f), FileVersion.V2_0))
      assert(e.getMessage.contains(message), e.getMessage)
    }
  }

  test("a vector of the wrong type is an error naming the field") {
    val s = schema(leaf("a", "int32"))
    val root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
      java.util.List.of(org.apache.arrow.vector.types.pojo.Field.nullable("a", org.apache.arrow.vector.types.Types.MinorType.VARCHAR.getType))), allocator)
    try {
      root.setRowCount(0)
      val w = LanceFileWriter.create(new InMemoryStorage, "f.lance", s, FileVersion.V2_0)
      root.getVector(0).asInstanceOf[VarCharVector].setSafe(0, "x".getBytes); root.setRowCount(1)
      val e = intercept[io.sparklance.core.InvalidArgumentException](w.write(root))
      assert(e.getMessage.contains("Cannot write field 'a' (int32): got an Arrow vector of type Utf8, expected Int(32, true)"), e.getMessage)
    } finally root.close()
  }
}

object Writer20Suite {

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
  def fill(v: FieldVector, n: Int, r: Random, nullRate: Double, structNulls: Boolean = false): Unit = {
    def isNull = r.nextDouble() < nullRate
    v match {
      case s: StructVector =>
        s.allocateNew()
        s.getChildrenFromFields.asScala.foreach(c => fill(c, n, r, nullRate, structNulls))
        (0 until n).foreach(i => if (structNulls && isNull) s.setNull(i) else s.setIndexDefined(i))
        s.setValueCount(n)
      case l: ListVector =>
        l.allocateNew()
        val lens = Array.fill(n)(if (isNull) -1 else r.nextInt(5))
        fill(l.getDataVector, lens.filter(_ > 0).sum, r, nullRate, structNulls)
        lens.indices.foreach { i => if (lens(i) < 0) l.setNull(i) else { l.startNewValue(i); l.endValue(i, lens(i)) } }
        l.setValueCount(n)
      case l: LargeListVector =>
        l.allocateNew()
        val lens = Array.fill(n)(if (isNull) -1 else r.nextInt(5))
        fill(l.getDataVector, lens.filter(_ > 0).sum, r, nullRate, structNulls)
        lens.indices.foreach { i => if (lens(i) < 0) l.setNull(i) else { l.startNewValue(i); l.endValue(i, lens(i)) } }
        l.setValueCount(n)
      case l: FixedSizeListVector =>
        l.allocateNew()
        fill(l.getDataVector, n * l.getListSize, r, nullRate, structNulls)
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
        (0 until n).foreach { i =>
          if (isNull) f.setNull(i)
          else { r.nextBytes(bytes); f.getDataBuffer.setBytes(i.toLong * w, bytes); f.setIndexDefined(i) }
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
