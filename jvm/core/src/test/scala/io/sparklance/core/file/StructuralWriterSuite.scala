package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.core.encoding.Decoders21
import io.sparklance.core.schema.LanceSchema
import io.sparklance.proto.Encodings21Protos

/**
 * Round trips through the 2.1/2.2 writer and reader: every type the writer supports, nulls and struct nulls, lists
 * with nulls and empties, many pages, zero rows; and which page layouts it picks. (tests/test_file_writer_interop.py
 * proves the same files against pylance.)
 */
class StructuralWriterSuite extends AnyFunSuite with BeforeAndAfterAll {
  import FileWriterTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val versions = Seq(FileVersion.V2_1, FileVersion.V2_2)

  private def roundTrip(version: FileVersion, s: LanceSchema, rows: Seq[Int], nullRate: Double = 0.2,
      maxPageBytes: Long = 8L << 20, distinct: Int = 0): LanceFileReader =
    FileWriterTesting.roundTrip(allocator, version, s, rows, nullRate, maxPageBytes, structNulls = true, distinct = distinct)

  private val leaves = Seq("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "halffloat", "float", "double", "decimal:128:10:2", "decimal:256:40:3", "date32:day", "date64:ms", "time32:s",
    "time32:ms", "time64:us", "time64:ns", "timestamp:us:UTC", "timestamp:ns:-", "duration:ms",
    "fixed_size_binary:16", "fixed_size_binary:3", "null", "string", "large_string", "binary", "large_binary",
    "fixed_size_list:float:4", "fixed_size_list:int16:3", "fixed_size_list:fixed_size_list:int16:2:3",
    "fixed_size_list:lance.bfloat16:8", "dict:string:int16:false", "dict:string:int8:false", "dict:int64:int32:false",
    "dict:large_binary:uint8:false")

  for (v <- versions; t <- leaves) {
    test(s"$v $t round trips with nulls, without nulls, all null, across batches and pages") {
      roundTrip(v, schema(leaf("c", t)), Seq(1000, 1, 333))
      roundTrip(v, schema(leaf("c", t)), Seq(500), nullRate = 0)
      roundTrip(v, schema(leaf("c", t)), Seq(100), nullRate = 1)
      val reader = roundTrip(v, schema(leaf("c", t)), Seq(3000, 2000), maxPageBytes = 512)
      if (t != "null") assert(reader.metadata.columns.head.getPagesCount > 2, t)
    }
  }

  for (v <- versions) {
    test(s"$v nested: structs with nulls, lists with nulls and empties, lists of lists, lists of structs, maps") {
      Seq(
        struct("s", leaf("x", "int32"), leaf("y", "string"), struct("z", leaf("q", "double"))),
        list("l", leaf("item", "int32")),
        large(list("l", leaf("item", "string"))),
        list("l", list("item", leaf("item", "int64"))),
        listOf("l", struct("item", leaf("x", "int32"), leaf("y", "string"))),
        struct("s", list("l", leaf("item", "int32")), leaf("i", "int32")),
        list("l", leaf("item", "fixed_size_list:float:2"))
      ).foreach { f =>
        roundTrip(v, schema(f), Seq(700, 3, 200))
        roundTrip(v, schema(f), Seq(2000), maxPageBytes = 256)
        roundTrip(v, schema(f), Seq(50), nullRate = 1)
        roundTrip(v, schema(f), Seq(50), nullRate = 0)
      }
    }

    test(s"$v a file of zero rows has columns with no pages") {
      val reader = roundTrip(v, schema(leaf("a", "int32"), struct("s", leaf("x", "string")), list("l", leaf("item", "int64"))), Seq(0))
      assert(reader.numRows == 0 && reader.metadata.columns.size == 3)
      assert(reader.metadata.columns.forall(_.getPagesCount == 0))
    }
  }

  private def layouts(reader: LanceFileReader): Seq[Encodings21Protos.PageLayout] =
    reader.metadata.columns.head.getPagesList.asScala.toSeq.map { p =>
      Encodings21Protos.PageLayout.parseFrom(com.google.protobuf.Any.parseFrom(p.getEncoding.getDirect.getEncoding).getValue)
    }

  test("small values go to mini-block pages, vectors to full-zip, pages without a valid value to the all-null slot") {
    val v = FileVersion.V2_2
    assert(layouts(roundTrip(v, schema(leaf("c", "int64")), Seq(2000))).forall(_.hasMiniBlockLayout))
    assert(layouts(roundTrip(v, schema(leaf("c", "fixed_size_list:float:8")), Seq(500))).forall(_.hasFullZipLayout))
    assert(layouts(roundTrip(v, schema(leaf("c", "int64")), Seq(300), nullRate = 1)).forall(_.hasConstantLayout))
    val mb = layouts(roundTrip(v, schema(leaf("c", "int64")), Seq(2000), nullRate = 0)).head.getMiniBlockLayout
    assert(mb.getHasLargeChunk && !mb.hasDefCompression && mb.getNumItems == 2000)
    val v21 = layouts(roundTrip(FileVersion.V2_1, schema(list("l", leaf("item", "int32"))), Seq(2000))).head.getMiniBlockLayout
    assert(!v21.getHasLargeChunk && v21.getRepetitionIndexDepth == 1 && v21.hasRepCompression && v21.hasDefCompression)
  }

  test("integer chunks are bitpacked when they need fewer bits") {
    val reader = roundTrip(FileVersion.V2_1, schema(leaf("c", "uint8")), Seq(3000), nullRate = 0)
    assert(layouts(reader).head.getMiniBlockLayout.getValueCompression.hasFlat) // random bytes need all 8 bits
  }

  test("dictionary-typed columns get a dictionary per page (LZ4 in 2.2) and indices of the key's width") {
    val reader = roundTrip(FileVersion.V2_1, schema(leaf("c", "dict:string:int16:false")), Seq(3000))
    val mb = layouts(reader).head.getMiniBlockLayout
    assert(mb.hasDictionary && mb.getNumDictionaryItems > 0)
    assert(mb.getValueCompression.hasInlineBitpacking && mb.getValueCompression.getInlineBitpacking.getUncompressedBitsPerValue == 16)
    assert(mb.getDictionary.hasVariable)
    val v22 = layouts(roundTrip(FileVersion.V2_2, schema(leaf("c", "dict:string:int16:false")), Seq(3000))).head.getMiniBlockLayout
    assert(v22.getDictionary.getGeneral.getCompression.getScheme == Encodings21Protos.CompressionScheme.COMPRESSION_ALGORITHM_LZ4)
    assert(v22.getDictionary.getGeneral.getValues.hasVariable)
  }

  private def dictionaryLayouts(reader: LanceFileReader): Seq[Encodings21Protos.MiniBlockLayout] =
    layouts(reader).filter(l => l.hasMiniBlockLayout && l.getMiniBlockLayout.hasDictionary).map(_.getMiniBlockLayout)

  private val dictionaryLeaves = Seq("decimal:128:15:2", "fixed_size_binary:16", "int64", "double", "timestamp:us:UTC",
    "string", "large_string", "binary", "large_binary")

  for (v <- versions; t <- dictionaryLeaves) {
    // 64-bit values get a dictionary in 2.2 only, as pylance 14 writes them.
    val expected = v == FileVersion.V2_2 || !Set("int64", "double", "timestamp:us:UTC").contains(t)
    test(s"$v low-cardinality $t pages are ${if (expected) "" else "not "}dictionary pages, and read back") {
      def check(reader: LanceFileReader, items: Int => Boolean): Unit = {
        val all = layouts(reader).filter(_.hasMiniBlockLayout)
        val dict = dictionaryLayouts(reader)
        if (!expected) assert(dict.isEmpty) else {
          assert(dict.nonEmpty && dict.size == all.size)
          dict.foreach { mb =>
            assert(items(mb.getNumDictionaryItems.toInt), mb.getNumDictionaryItems)
            // 32-bit indices, bitpacked or (the smaller, as pylance chooses) runs: a page of one value is one run.
            val indices = Decoders21.describe(mb.getValueCompression)
            assert(indices == "inline_bitpacking32" || indices == "rle(flat32, flat8)", indices)
            val d = mb.getDictionary
            if (v == FileVersion.V2_2) {
              // LZ4, or 64-bit values bitpacked where that is smaller.
              assert(d.getGeneral.getCompression.getScheme == Encodings21Protos.CompressionScheme.COMPRESSION_ALGORITHM_LZ4
                || (d.hasInlineBitpacking || d.hasOutOfLineBitpacking) && Set("int64", "double", "timestamp:us:UTC")(t), d)
            } else assert(d.hasFlat || d.hasVariable)
          }
        }
      }
      // Up to 50 values and, when the page has null slots, their placeholder (an empty value or zeros), as pylance.
      check(roundTrip(v, schema(leaf("c", t)), Seq(3000, 1, 999), distinct = 7), n => n >= 1 && n <= 51)
      check(roundTrip(v, schema(leaf("c", t)), Seq(600), nullRate = 0, distinct = 1), n => n <= 50)
      check(roundTrip(v, schema(leaf("c", t)), Seq(500, 700), nullRate = 0.9, distinct = 3), n => n >= 1 && n <= 51)
      val paged = roundTrip(v, schema(leaf("c", t)), Seq(6000), maxPageBytes = 2048, distinct = 5)
      assert(layouts(paged).size > 2)
      check(paged, n => n >= 1 && n <= 51)
      // In a struct with nulls, and under lists with nulls and empties.
      roundTrip(v, schema(struct("s", leaf("c", t), leaf("i", "int32"))), Seq(2000, 300), distinct = 4)
      roundTrip(v, schema(list("l", leaf("item", t))), Seq(2000, 300), distinct = 4)
      roundTrip(v, schema(list("l", list("item", leaf("item", t)))), Seq(1500), distinct = 2, maxPageBytes = 4096)
    }
  }

  test("pages of distinct values, or of fewer than 100 values, are not dictionary pages") {
    for (v <- versions; t <- Seq("decimal:128:15:2", "int64", "double")) {
      assert(dictionaryLayouts(roundTrip(v, schema(leaf("c", t)), Seq(3000))).isEmpty, s"$v $t")
      assert(dictionaryLayouts(roundTrip(v, schema(leaf("c", t)), Seq(99), distinct = 2)).isEmpty, s"$v $t")
    }
    // 32-bit values are left to bitpacking, as pylance does.
    assert(dictionaryLayouts(roundTrip(FileVersion.V2_2, schema(leaf("c", "int32")), Seq(3000), distinct = 3)).isEmpty)
    assert(dictionaryLayouts(roundTrip(FileVersion.V2_2, schema(leaf("c", "string")), Seq(99))).isEmpty)
  }

  private val packedWithString = LanceSchema.fromProtos("t", Seq(
    io.sparklance.proto.FileProtos.Field.newBuilder().setName("p").setId(0).setParentId(-1).setLogicalType("struct")
      .setNullable(true).putMetadata("lance-encoding:packed", com.google.protobuf.ByteString.copyFromUtf8("true")).build(),
    io.sparklance.proto.FileProtos.Field.newBuilder().setName("i").setId(1).setParentId(0).setLogicalType("int32").build(),
    io.sparklance.proto.FileProtos.Field.newBuilder().setName("s").setId(2).setParentId(0).setLogicalType("string").build()),
    Map.empty)

  test("packed structs with variable-width children: a variable packed struct in 2.2, refused in 2.1") {
    val reader = FileWriterTesting.roundTrip(allocator, FileVersion.V2_2, packedWithString, Seq(700, 300), nullRate = 0)
    assert(layouts(reader).head.getFullZipLayout.getValueCompression.hasVariablePackedStruct)
    val e = intercept[UnsupportedFeatureException] {
      FileWriterTesting.roundTrip(allocator, FileVersion.V2_1, packedWithString, Seq(10), nullRate = 0)
    }
    assert(e.getMessage.contains("Cannot write field 'p': a packed struct with variable-width, boolean or nested " +
      "children in file version 2.1"))
  }
}
