package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The decoded-value plumbing: Bits, LittleEndian, Slice, DataBlock, and Blocks (concat, slice, materialize). */
class BlocksSuite extends AnyFunSuite {
  import EncodingTesting._

  test("Bits copies at any bit alignment, sets and counts") {
    for (seed <- Seeds) {
      val r = new Random(seed)
      val src = bytes(r, 40)
      for (_ <- 0 until 50) {
        val from = r.nextInt(100)
        val to = r.nextInt(100)
        val n = r.nextInt(200)
        val dst = new Array[Byte](40)
        Bits.copy(src, from.toLong, dst, to.toLong, n.toLong)
        for (i <- 0 until n) assert(Bits.get(dst, (to + i).toLong) == Bits.get(src, (from + i).toLong), s"bit $i of $from->$to")
        for (i <- 0 until to) assert(!Bits.get(dst, i.toLong))
        assert(Bits.countSet(dst, 320) == (0 until n).count(i => Bits.get(src, (from + i).toLong)))
      }
    }
    val b = new Array[Byte](3)
    Bits.set(b, 5L, 11L)
    assert(b.toSeq == Seq[Byte](0xE0.toByte, 0xFF.toByte, 0x00))
    assert(Bits.countSet(b, 24) == 11)
  }

  test("LittleEndian reads and writes every width, unsigned where asked") {
    val b = new Array[Byte](16)
    LittleEndian.putLong(b, 0, 0x8877665544332211L)
    assert(LittleEndian.getUnsigned(b, 0, 1) == 0x11)
    assert(LittleEndian.getUnsigned(b, 0, 2) == 0x2211)
    assert(LittleEndian.getUnsigned(b, 0, 4) == 0x44332211L)
    assert(LittleEndian.getUnsigned(b, 0, 8) == 0x8877665544332211L)
    assert(LittleEndian.getUnsigned(b, 7, 1) == 0x88)
    LittleEndian.putInt(b, 8, -1)
    assert(LittleEndian.getUnsignedInt(b, 8) == 0xFFFFFFFFL && LittleEndian.getInt(b, 8) == -1)
    LittleEndian.putShort(b, 12, (-2).toShort)
    assert(LittleEndian.getUnsignedShort(b, 12) == 0xFFFE && LittleEndian.getShort(b, 12) == -2)
    assert(intercept[IllegalArgumentException](LittleEndian.getUnsigned(b, 0, 3)).getMessage == "integer width 3")
  }

  test("Slice checks every range against its buffer") {
    val a = Array.tabulate[Byte](10)(_.toByte)
    val s = new Slice(a, 2, 6)
    assert(s.copy().toSeq == Seq[Byte](2, 3, 4, 5, 6, 7))
    assert(s.slice(1, 2).copy().toSeq == Seq[Byte](3, 4))
    assert(s.slice(6, 0).length == 0)
    assert(s.u8(0) == 2 && s.u16(0) == 0x0302 && s.u32(0) == 0x05040302L)
    assert(damaged("outside")(new Slice(a, 5, 6)).getMessage == "a buffer range [5, 11) lies outside the 10 bytes available")
    damaged("negative offset")(new Slice(a, -1, 2))
    damaged("negative length")(new Slice(a, 0, -1))
    assert(damaged("overflow")(new Slice(a, 1, Int.MaxValue)).getMessage.contains("lies outside the 10 bytes"))
    assert(damaged("sub-slice")(s.slice(5, 2)).getMessage == "a range [5, 7) lies outside a buffer of 6 bytes")
    damaged("sub-slice overflow")(s.slice(1, Int.MaxValue))
    damaged("sub-slice negative")(s.slice(-1, 1))
    s.require(0, 6, "all")
    assert(damaged("require")(s.require(4, 3, "a header")).getMessage == "a header needs 3 bytes at offset 4, but the buffer has 6")
    damaged("require huge")(s.require(1, Long.MaxValue, "x"))
    damaged("require negative")(s.require(-1, 1, "x"))
  }

  test("DataBlock.FixedWidth checks its data covers its values") {
    new DataBlock.FixedWidth(1, new Array[Byte](2), 16)
    new DataBlock.FixedWidth(32, new Array[Byte](8), 2)
    assert(intercept[IllegalArgumentException](new DataBlock.FixedWidth(1, new Array[Byte](2), 17)).getMessage ==
      "17 values of 1 bits need 3 bytes, got 2")
    assert(intercept[IllegalArgumentException](new DataBlock.FixedWidth(12, new Array[Byte](8), 2)).getMessage == "bits per value 12")
    assert(intercept[IllegalArgumentException](new DataBlock.FixedWidth(8, new Array[Byte](8), -1)).getMessage == "negative value count -1")
  }

  private def ints(seq: Seq[Int]): DataBlock.FixedWidth = {
    val vals = seq.toIndexedSeq
    val b = new Array[Byte](4 * vals.size)
    vals.indices.foreach(i => LittleEndian.putInt(b, 4 * i, vals(i)))
    new DataBlock.FixedWidth(32, b, vals.size)
  }

  private def intsOf(b: DataBlock): Seq[Int] = {
    val f = fixed(b)
    (0 until f.numValues).map(i => LittleEndian.getInt(f.data, 4 * i))
  }

  private def bools(seq: Seq[Boolean]): DataBlock.FixedWidth = {
    val vals = seq.toIndexedSeq
    val b = new Array[Byte]((vals.size + 7) / 8)
    vals.indices.foreach(i => if (vals(i)) Bits.set(b, i.toLong, 1L))
    new DataBlock.FixedWidth(1, b, vals.size)
  }

  private def strs(vals: Seq[String], offsetBits: Int = 32): DataBlock.VariableWidth =
    Blocks.ofValues(vals.map(_.getBytes("UTF-8")).asJava, offsetBits)

  private def strsOf(b: DataBlock): Seq[String] = strings(b).map(s => new String(s.toArray, "UTF-8"))

  test("concat and slice agree with the values they hold, for every block kind, at random cut points") {
    for (seed <- Seeds) {
      val r = new Random(seed)
      val n = 1 + r.nextInt(3000)
      val is = IndexedSeq.fill(n)(r.nextInt())
      val bs = IndexedSeq.fill(n)(r.nextBoolean())
      val ss = IndexedSeq.fill(n)(r.nextString(r.nextInt(5)))
      val cuts = (0 +: Seq.fill(4)(r.nextInt(n + 1)) :+ n).sorted
      val ranges = cuts.zip(cuts.tail)
      for (ob <- Seq(32, 64)) {
        val sb = strs(ss, ob)
        val parts = ranges.map { case (a, b) => Blocks.slice(sb, a, b) }
        assert(strsOf(Blocks.concat(parts.asJava)) == ss)
        ranges.foreach { case (a, b) => assert(strsOf(Blocks.slice(sb, a, b)) == ss.slice(a, b)) }
      }
      val ib = ints(is)
      assert(intsOf(Blocks.concat(ranges.map { case (a, b) => Blocks.slice(ib, a, b): DataBlock }.asJava)) == is)
      val bb = bools(bs)
      assert(bits(Blocks.concat(ranges.map { case (a, b) => Blocks.slice(bb, a, b): DataBlock }.asJava)) == bs)
      // Fixed-size lists of 3 ints, with item validity in some parts only.
      val fsl = new DataBlock.FixedSizeList(3, ints(is ++ is ++ is), bools(Seq.tabulate(3 * n)(_ % 4 != 0)).data, n)
      val noValidity = new DataBlock.FixedSizeList(3, ints(is ++ is ++ is), null, n)
      val joined = Blocks.concat(Seq[DataBlock](Blocks.slice(fsl, 0, n / 2), Blocks.slice(noValidity, n / 2, n)).asJava)
        .asInstanceOf[DataBlock.FixedSizeList]
      assert(intsOf(joined.child) == is ++ is ++ is)
      for (i <- 0 until 3 * n) assert(Bits.get(joined.itemValidity, i.toLong) == (i >= 3 * (n / 2) || i % 4 != 0), s"item $i")
      val struct = new DataBlock.Struct(Array[DataBlock](ib, sb(ss)), n)
      val sj = Blocks.concat(ranges.map { case (a, b) => Blocks.slice(struct, a, b) }.asJava).asInstanceOf[DataBlock.Struct]
      assert(intsOf(sj.children(0)) == is && strsOf(sj.children(1)) == ss)
    }
  }

  private def sb(ss: Seq[String]): DataBlock = strs(ss)

  test("concat refuses mixed kinds and widths; slice refuses ranges outside the block") {
    assert(damaged("mixed kinds")(Blocks.concat(Seq[DataBlock](ints(Seq(1)), strs(Seq("a"))).asJava)).getMessage ==
      "a page mixes FixedWidth and VariableWidth values")
    assert(damaged("mixed widths")(Blocks.concat(Seq[DataBlock](ints(Seq(1)), new DataBlock.FixedWidth(16, new Array[Byte](2), 1)).asJava))
      .getMessage == "a page mixes 32- and 16-bit values")
    damaged("mixed dims")(Blocks.concat(Seq[DataBlock](new DataBlock.FixedSizeList(2, ints(Seq(1, 2)), null, 1),
      new DataBlock.FixedSizeList(3, ints(Seq(1, 2, 3)), null, 1)).asJava))
    assert(intercept[IllegalArgumentException](Blocks.concat(java.util.Collections.emptyList())).getMessage == "nothing to concatenate")
    assert(damaged("slice past end")(Blocks.slice(ints(Seq(1, 2)), 1, 3)).getMessage == "a slice [1, 3) of 2 values")
    damaged("slice backwards")(Blocks.slice(ints(Seq(1, 2)), 2, 1))
    damaged("slice negative")(Blocks.slice(ints(Seq(1, 2)), -1, 1))
    assert(Blocks.slice(ints(Seq(1, 2, 3)), 3, 3).numValues == 0)
  }

  test("materialize gathers dictionary items, with the slot past the items as null, and refuses other indices") {
    val items = strs(Seq("zero", "one", "two"))
    val idx = new DataBlock.FixedWidth(8, Array[Byte](2, 0, 3, 1, 2), 5)
    val m = Blocks.materialize(new DataBlock.Dictionary(idx, items))
    assert(strsOf(m) == Seq("two", "zero", "", "one", "two"))
    val sliced = Blocks.materialize(Blocks.slice(new DataBlock.Dictionary(idx, items), 1, 3))
    assert(strsOf(sliced) == Seq("zero", ""))
    val fixedItems = ints(Seq(10, 20))
    val wide = new DataBlock.FixedWidth(16, Array[Byte](1, 0, 0, 0, 1, 0), 3)
    assert(intsOf(Blocks.materialize(new DataBlock.Dictionary(wide, fixedItems))) == Seq(20, 10, 20))
    val bad = new DataBlock.FixedWidth(8, Array[Byte](0, 4), 2)
    assert(damaged("index past the items")(Blocks.materialize(new DataBlock.Dictionary(bad, items))).getMessage ==
      "dictionary index 4 of a dictionary of 3 items")
    damaged("boolean items")(Blocks.materialize(new DataBlock.Dictionary(new DataBlock.FixedWidth(8, Array[Byte](0), 1), bools(Seq(true)))))
    assert(Blocks.materialize(items) eq items)
  }

  test("materialize of a range equals the items its indices point to, at every index and item width (seeded)") {
    val r = new Random(19)
    for (indexBits <- Seq(8, 16, 32, 64); itemBytes <- Seq(1, 2, 3, 4, 8, 16, -1); round <- 0 until 5) {
      val size = 1 + r.nextInt(if (indexBits == 8) 254 else 300)
      val n = r.nextInt(3000)
      val itemValues = Seq.fill(size)(Array.fill(if (itemBytes < 0) r.nextInt(6) else itemBytes)(r.nextInt(256).toByte))
      val items: DataBlock =
        if (itemBytes < 0) Blocks.ofValues(itemValues.asJava, if (r.nextBoolean()) 32 else 64)
        else new DataBlock.FixedWidth(8 * itemBytes, itemValues.flatten.toArray, size)
      val keys = Seq.fill(n)(if (r.nextInt(10) == 0) size else r.nextInt(size)) // `size`: the null slot
      val ib = indexBits / 8
      val idx = new Array[Byte](n * ib)
      keys.zipWithIndex.foreach { case (k, i) => for (b <- 0 until ib) idx(i * ib + b) = (k.toLong >>> (8 * b)).toByte }
      val dict = new DataBlock.Dictionary(new DataBlock.FixedWidth(indexBits, idx, n), items)
      val from = if (n == 0) 0 else r.nextInt(n + 1)
      val to = from + r.nextInt(n - from + 1)
      val expected = keys.slice(from, to).map(k =>
        if (k == size) Seq.fill(math.max(itemBytes, 0))(0.toByte) else itemValues(k).toSeq)
      val got = Blocks.materialize(dict, from, to)
      val values = got match {
        case v: DataBlock.VariableWidth => strings(v)
        case f: DataBlock.FixedWidth => f.data.toSeq.grouped(itemBytes).toSeq.take(f.numValues)
        case other => fail(s"a ${other.getClass.getSimpleName} block")
      }
      assert(got.numValues == to - from)
      assert(values == expected, s"index bits $indexBits, item bytes $itemBytes, [$from, $to) of $n")
    }
  }

  test("materialize refuses an index past the null slot at every index width, the widest ones included") {
    val items = ints(Seq(10, 20))
    def dict(bits: Int, bytes: Array[Byte]) = new DataBlock.Dictionary(new DataBlock.FixedWidth(bits, bytes, bytes.length / (bits / 8)), items)
    assert(damaged("8-bit")(Blocks.materialize(dict(8, Array[Byte](0, 3)), 0, 2)).getMessage ==
      "dictionary index 3 of a dictionary of 2 items")
    assert(damaged("16-bit")(Blocks.materialize(dict(16, Array[Byte](0, 1, 0, 0)), 0, 2)).getMessage ==
      "dictionary index 256 of a dictionary of 2 items")
    assert(damaged("32-bit, 2^32 - 1")(Blocks.materialize(dict(32, Array.fill[Byte](4)(-1)), 0, 1)).getMessage ==
      "dictionary index 4294967295 of a dictionary of 2 items")
    assert(damaged("64-bit, 2^64 - 1")(Blocks.materialize(dict(64, Array.fill[Byte](8)(-1)), 0, 1)).getMessage ==
      "dictionary index 18446744073709551615 of a dictionary of 2 items")
    assert(damaged("range outside")(Blocks.materialize(dict(8, Array[Byte](0, 1)), 1, 3)).getMessage ==
      "a slice [1, 3) of 2 values")
    // Only the range is read: a bad index outside it does not matter.
    assert(intsOf(Blocks.materialize(dict(8, Array[Byte](1, 9)), 0, 1)) == Seq(20))
  }

  test("ofValues builds 32- and 64-bit offsets, empty values included") {
    for (ob <- Seq(32, 64)) {
      val b = strs(Seq("", "ab", "", "cde"), ob)
      assert(b.offsetBits == ob && (0 to 4).map(b.offset) == Seq(0L, 0L, 2L, 2L, 5L))
      assert(strs(Nil, ob).numValues == 0)
    }
  }
}
