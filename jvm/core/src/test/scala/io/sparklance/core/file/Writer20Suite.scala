package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.complex.ListVector
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage

/** Round trips through the 2.0 writer and the 2.0 reader: every type, nulls, empties, many pages, zero rows. */
class Writer20Suite extends AnyFunSuite with BeforeAndAfterAll {
  import FileWriterTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private def roundTrip(schema: LanceSchema, rows: Seq[Int], nullRate: Double = 0.2, maxPageBytes: Long = 8L << 20,
      seed: Int = 1, structNulls: Boolean = false): LanceFileReader =
    FileWriterTesting.roundTrip(allocator, FileVersion.V2_0, schema, rows, nullRate, maxPageBytes, seed, structNulls)

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
