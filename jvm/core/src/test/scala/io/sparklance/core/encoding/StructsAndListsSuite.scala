package io.sparklance.core.encoding

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, IntVector, TinyIntVector, VarCharVector}
import org.apache.arrow.vector.complex.{FixedSizeListVector, StructVector}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.Encodings21Protos.{CompressiveEncoding, FullZipLayout, RepDefLayer}

/**
 * Fixed-size lists, packed structs and variable packed structs: through the writer's page encoder and the reader's
 * page decoders, and (for the mini-block fixed-size lists pylance writes) from buffers laid out here.
 */
class StructsAndListsSuite extends AnyFunSuite with BeforeAndAfterAll {
  import EncodingTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val maxBytes = 64L << 20
  private val rowCounts = Seq(1, 2, 1023, 1024, 1025, 3000)

  private def field(name: String, t: ArrowType, children: Field*): Field =
    new Field(name, FieldType.nullable(t), if (children.isEmpty) null else children.asJava)

  private def decodePage(p: StructuralPageEncoder.Page, rows: Int, shape: LeafShape): MiniBlockPage.Decoded =
    PageTesting.decode(p.layout, PageTesting.slices(p), rows.toLong, shape)

  private def validity(d: MiniBlockPage.Decoded, n: Int): RepDef.Validity =
    new RepDef.Composite(List(d.levels.copy()).asJava).unravelValidity(n)

  // ---- packed structs ----

  /** Rows of struct<a: int32, b: int8, c: int64>, the struct null about `nullRate` of the time. */
  private def packedRows(r: Random, n: Int, nullRate: Double): IndexedSeq[Option[(Int, Byte, Long)]] =
    IndexedSeq.fill(n)(if (r.nextDouble() < nullRate) None else Some((r.nextInt(), r.nextInt().toByte, r.nextLong())))

  private def packedPage(rows: IndexedSeq[Option[(Int, Byte, Long)]], v22: Boolean): StructuralPageEncoder.Page = {
    val f = field("s", ArrowType.Struct.INSTANCE, field("a", new ArrowType.Int(32, true)), field("b", new ArrowType.Int(8, true)),
      field("c", new ArrowType.Int(64, true)))
    val s = f.createVector(allocator).asInstanceOf[StructVector]
    try {
      s.allocateNew()
      val (a, b, c) = (s.getChild("a", classOf[IntVector]), s.getChild("b", classOf[TinyIntVector]), s.getChild("c", classOf[BigIntVector]))
      rows.zipWithIndex.foreach {
        case (None, i) => s.setNull(i); a.setSafe(i, 0); b.setSafe(i, 0); c.setSafe(i, 0L)
        case (Some((x, y, z)), i) => s.setIndexDefined(i); a.setSafe(i, x); b.setSafe(i, y); c.setSafe(i, z)
      }
      s.setValueCount(rows.size)
      val shredder = new LeafShredder(Array(LeafShredder.LEAF), Array("s"), LeafShredder.PACKED_STRUCT, 13, null)
      shredder.packedWidths = Array(4, 1, 8)
      shredder.shred(s, 0, rows.size)
      StructuralPageEncoder.encode(shredder, v22, false)
    } finally s.close()
  }

  test("packed structs of fixed-width fields round trip through mini-block pages, with null structs") {
    for (v22 <- Seq(false, true); seed <- Seeds.take(3); n <- rowCounts; nullRate <- Seq(0.0, 0.3)) {
      val rows = packedRows(new Random(seed + n), n, nullRate)
      val p = packedPage(rows, v22)
      if (rows.exists(_.isDefined)) assert(p.layout.hasMiniBlockLayout)
      else assert(p.layout.hasConstantLayout)
      val d = decodePage(p, n, LeafShape.struct(Array(LeafShape.fixed(32), LeafShape.fixed(8), LeafShape.fixed(64))))
      val st = d.values.asInstanceOf[DataBlock.Struct]
      assert(st.numValues == n && st.children.map(c => fixed(c).bitsPerValue).toSeq == Seq(32, 8, 64))
      val v = validity(d, n)
      for (i <- 0 until n) {
        val got = if (!v.isValid(i)) None else Some((LittleEndian.getInt(fixed(st.children(0)).data, 4 * i),
          fixed(st.children(1)).data(i), LittleEndian.getLong(fixed(st.children(2)).data, 8 * i)))
        assert(got == rows(i), s"row $i of $n")
      }
    }
  }

  test("packed struct chunks of the wrong size are EncodingExceptions") {
    val packed = packedStruct(Seq(32, 8, 64))
    val d = Decoders21.miniBlock(packed, maxBytes)
    val rows = bytes(new Random(1), 13 * 10)
    val st = d.decode(Array(slice(rows)), 10).asInstanceOf[DataBlock.Struct]
    assert(fixedBytes(st.children(1)) == (0 until 10).map(i => rows(13 * i + 4)))
    damaged("short")(d.decode(Array(slice(rows.take(13 * 10 - 1))), 10))
    damaged("rows of another width")(Decoders21.miniBlock(CompressiveEncoding.newBuilder().setPackedStruct(
      packed.getPackedStruct.toBuilder.setValues(flat(96))).build(), maxBytes).decode(Array(slice(rows)), 10))
    damaged("a 12-bit field")(Decoders21.miniBlock(packedStruct(Seq(12, 4)), maxBytes))
  }

  // ---- variable packed structs (2.2, full-zip) ----

  private def variablePackedPage(rows: IndexedSeq[Option[(Int, String)]]): StructuralPageEncoder.Page = {
    val f = field("s", ArrowType.Struct.INSTANCE, field("a", new ArrowType.Int(32, true)), field("b", ArrowType.Utf8.INSTANCE))
    val s = f.createVector(allocator).asInstanceOf[StructVector]
    try {
      s.allocateNew()
      val (a, b) = (s.getChild("a", classOf[IntVector]), s.getChild("b", classOf[VarCharVector]))
      rows.zipWithIndex.foreach {
        case (None, i) => s.setNull(i); a.setSafe(i, 0); b.setSafe(i, Array.emptyByteArray)
        case (Some((x, y)), i) => s.setIndexDefined(i); a.setSafe(i, x); b.setSafe(i, y.getBytes(UTF_8))
      }
      s.setValueCount(rows.size)
      val shredder = new LeafShredder(Array(LeafShredder.LEAF), Array("s"), LeafShredder.VARIABLE_PACKED_STRUCT, 32, null)
      shredder.packedWidths = Array(4, -32)
      shredder.shred(s, 0, rows.size)
      StructuralPageEncoder.encode(shredder, true, false)
    } finally s.close()
  }

  private def variableRows(r: Random, n: Int, nullRate: Double): IndexedSeq[Option[(Int, String)]] =
    IndexedSeq.fill(n)(if (r.nextDouble() < nullRate) None else Some((r.nextInt(), "é" * r.nextInt(200))))

  private val variableShape = LeafShape.struct(Array(LeafShape.fixed(32), LeafShape.variable(32)))

  test("variable packed structs round trip through full-zip pages, with null structs") {
    for (seed <- Seeds.take(2); n <- rowCounts; nullRate <- Seq(0.0, 0.3)) {
      val rows = variableRows(new Random(seed * 3 + n), n, nullRate)
      val p = variablePackedPage(rows)
      if (rows.exists(_.isDefined)) assert(p.layout.hasFullZipLayout && p.layout.getFullZipLayout.getValueCompression.hasVariablePackedStruct)
      else assert(p.layout.hasConstantLayout)
      val d = decodePage(p, n, variableShape)
      val st = d.values.asInstanceOf[DataBlock.Struct]
      val strs = strings(st.children(1))
      val v = validity(d, n)
      for (i <- 0 until n) {
        val got = if (!v.isValid(i)) None else Some((LittleEndian.getInt(fixed(st.children(0)).data, 4 * i), new String(strs(i).toArray, UTF_8)))
        assert(got == rows(i), s"row $i of $n")
      }
    }
  }

  test("damaged variable packed struct pages are EncodingExceptions") {
    val n = 40
    val p = variablePackedPage(variableRows(new Random(5), n, 0.2))
    val f = p.layout.getFullZipLayout
    val data = PageTesting.slices(p)(0).copy()
    for (seed <- Seeds; m <- mutants(data, new Random(seed), flips = 20)) survives("mutant") {
      FullZipPage.decode(f, Array(Slice.of(m)), variableShape, maxBytes)
    }
    val one = FullZipLayout.newBuilder().setBitsPerOffset(32).setNumItems(1).setValueCompression(f.getValueCompression)
      .addLayers(RepDefLayer.REPDEF_ALL_VALID_ITEM).build()
    // One row: a u32 row length of 12, then the int field (4 bytes), then a field length that runs past the row.
    val row = new Array[Byte](16)
    LittleEndian.putInt(row, 0, 12)
    LittleEndian.putInt(row, 8, 100)
    damaged("a field past its row")(FullZipPage.decode(one, Array(Slice.of(row)), variableShape, maxBytes))
    LittleEndian.putInt(row, 8, -1)
    damaged("a 4 GiB field")(FullZipPage.decode(one, Array(Slice.of(row)), variableShape, maxBytes))
    LittleEndian.putInt(row, 8, 2)
    assert(damaged("fields shorter than the row")(FullZipPage.decode(one, Array(Slice.of(row)), variableShape, maxBytes))
      .getMessage == "a packed struct row of 12 bytes has 10 bytes of fields")
  }

  // ---- fixed-size lists ----

  /** Rows of fixed_size_list<int32, dim>: a null list, or items each possibly null. */
  private def fslRows(r: Random, n: Int, dim: Int, nullRate: Double): IndexedSeq[Option[Seq[Option[Int]]]] =
    IndexedSeq.fill(n)(if (r.nextDouble() < nullRate) None else Some(Seq.fill(dim)(if (r.nextDouble() < nullRate) None else Some(r.nextInt()))))

  private def fslPage(rows: IndexedSeq[Option[Seq[Option[Int]]]], dim: Int, v22: Boolean): StructuralPageEncoder.Page = {
    val f = field("l", new ArrowType.FixedSizeList(dim), field("item", new ArrowType.Int(32, true)))
    val l = f.createVector(allocator).asInstanceOf[FixedSizeListVector]
    try {
      l.allocateNew()
      val items = l.getDataVector.asInstanceOf[IntVector]
      rows.zipWithIndex.foreach { case (row, i) =>
        row match {
          case None => l.setNull(i); (0 until dim).foreach(j => items.setNull(i * dim + j))
          case Some(xs) => l.setNotNull(i); xs.zipWithIndex.foreach {
            case (Some(x), j) => items.setSafe(i * dim + j, x)
            case (None, j) => items.setNull(i * dim + j)
          }
        }
      }
      l.setValueCount(rows.size)
      val shredder = new LeafShredder(Array(LeafShredder.LEAF), Array("l"), LeafShredder.FIXED_SIZE_LIST, 4, Array(dim))
      shredder.shred(l, 0, rows.size)
      StructuralPageEncoder.encode(shredder, v22, false)
    } finally l.close()
  }

  test("fixed-size lists with null lists and null items round trip through full-zip pages") {
    for (v22 <- Seq(false, true); seed <- Seeds.take(2); n <- rowCounts; dim <- Seq(1, 3, 9); nullRate <- Seq(0.0, 0.3)) {
      val rows = fslRows(new Random(seed + n * dim), n, dim, nullRate)
      val p = fslPage(rows, dim, v22)
      if (rows.exists(_.isDefined)) assert(p.layout.hasFullZipLayout)
      else assert(p.layout.hasConstantLayout)
      val d = decodePage(p, n, LeafShape.fixedSizeList(dim, LeafShape.fixed(32)))
      val fsl = d.values.asInstanceOf[DataBlock.FixedSizeList]
      assert(fsl.dimension == dim && fsl.numValues == n)
      val v = validity(d, n)
      val items = fixed(fsl.child).data
      for (i <- 0 until n) {
        val got = if (!v.isValid(i)) None else Some((0 until dim).map { j =>
          val k = i * dim + j
          if (fsl.itemValidity != null && !Bits.get(fsl.itemValidity, k.toLong)) None else Some(LittleEndian.getInt(items, 4 * k))
        })
        assert(got == rows(i), s"row $i of $n, dimension $dim")
      }
    }
  }

  test("damaged fixed-size list pages are EncodingExceptions") {
    for (seed <- Seeds.take(3); nullRate <- Seq(0.0, 0.3)) {
      val n = 300
      val p = fslPage(fslRows(new Random(seed), n, 5, nullRate), 5, v22 = true)
      val shape = LeafShape.fixedSizeList(5, LeafShape.fixed(32))
      val data = PageTesting.slices(p)(0).copy()
      for (m <- mutants(data, new Random(seed), flips = 20)) survives("mutant") {
        FullZipPage.decode(p.layout.getFullZipLayout, Array(Slice.of(m)), shape, maxBytes)
      }
    }
  }

  /** A mini-block chunk of fixed-size lists as pylance lays it out: validity bitmaps (outermost first), then items. */
  test("fixed-size lists in mini-block chunks, nested and with validity per layer, decode from pylance's layout") {
    for (seed <- Seeds; n <- Seq(0, 1, 7, 100)) {
      val r = new Random(seed + n)
      val enc = fixedSizeList(2, validity = true, fixedSizeList(3, validity = true, flat(16)))
      val outer = bytes(r, (n * 2 + 7) / 8)
      val inner = bytes(r, (n * 6 + 7) / 8)
      val items = bytes(r, n * 6 * 2)
      val d = Decoders21.miniBlock(enc, maxBytes)
      assert(d.numBuffers() == 3)
      val got = d.decode(Array(slice(outer), slice(inner), slice(items)), n).asInstanceOf[DataBlock.FixedSizeList]
      assert(got.dimension == 2 && got.numValues == n)
      (0 until 2 * n).foreach(k => assert(Bits.get(got.itemValidity, k.toLong) == Bits.get(outer, k.toLong)))
      val in = got.child.asInstanceOf[DataBlock.FixedSizeList]
      assert(in.dimension == 3 && in.numValues == 2 * n)
      (0 until 6 * n).foreach(k => assert(Bits.get(in.itemValidity, k.toLong) == Bits.get(inner, k.toLong)))
      assert(fixedBytes(in.child) == items.toSeq)
      if (n > 0) {
        damaged("items short")(d.decode(Array(slice(outer), slice(inner), slice(items.dropRight(1))), n))
        damaged("validity short")(d.decode(Array(slice(outer), slice(inner.take(((n * 6 + 7) / 8) - 1)), slice(items)), n))
      }
    }
    val plain = Decoders21.miniBlock(fixedSizeList(4, validity = false, flat(32)), maxBytes)
    assert(plain.numBuffers() == 1)
    assert(fixed(plain.decode(Array(slice(new Array[Byte](4 * 4 * 3))), 3).asInstanceOf[DataBlock.FixedSizeList].child).numValues == 12)
  }

  test("fixed-size list encodings with impossible dimensions are EncodingExceptions") {
    assert(damaged("dimension 0")(Decoders21.miniBlock(fixedSizeList(0, validity = false, flat(32)), maxBytes)).getMessage ==
      "a fixed-size list of dimension 0")
    damaged("dimension 2^21")(Decoders21.miniBlock(fixedSizeList(1L << 21, validity = false, flat(32)), maxBytes))
    val deep = fixedSizeList(1L << 20, validity = false, fixedSizeList(1L << 20, validity = false,
      fixedSizeList(1L << 20, validity = false, fixedSizeList(1L << 4, validity = false, flat(8)))))
    damaged("2^64 items per value")(Decoders21.miniBlock(deep, maxBytes).decode(Array(slice(new Array[Byte](8))), 1))
    damaged("boolean items in a full-zip page")(FullZipPage.perValue(fixedSizeList(4, validity = false, flat(1)), true, maxBytes))
    damaged("non-flat items")(Decoders21.miniBlock(fixedSizeList(4, validity = false, rle(8)), maxBytes))
    damaged("too many items for the bytes allowed")(Decoders21.miniBlock(fixedSizeList(1L << 20, validity = false, flat(8)), 1000)
      .decode(Array(slice(new Array[Byte](8))), 1))
  }
}
