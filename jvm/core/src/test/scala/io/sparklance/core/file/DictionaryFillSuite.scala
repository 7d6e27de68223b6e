package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.encoding.{Blocks, DataBlock, EncodingException, RepDef}

/**
 * A dictionary-encoded leaf of fixed-width items is written straight into its vector ([[ArrowAssembler.fill]]), and
 * one of strings or binary values in bulk ([[DictionaryStrings]]): the vector must be the one the general path makes
 * from the expanded values ([[Blocks.materialize]], then `fillLeafValues`), at every index width and item width,
 * with nulls from the levels and from the null slot.
 */
class DictionaryFillSuite extends AnyFunSuite {
  private val allocator = new RootAllocator(Long.MaxValue)

  private def arrowType(bytes: Int): ArrowType = bytes match {
    case 1 => new ArrowType.Int(8, true)
    case 2 => new ArrowType.Int(16, true)
    case 4 => new ArrowType.Int(32, true)
    case 8 => new ArrowType.Int(64, true)
    case 16 => new ArrowType.Decimal(15, 2, 128)
  }

  private def leaf(def_ : Array[Short], values: DataBlock, from: Int, to: Int): ArrowAssembler.Leaf = {
    val levels = new RepDef.Unraveler(null, def_, to - from, Array(RepDef.NULLABLE_ITEM), to - from)
    new ArrowAssembler.Leaf(new RepDef.Composite(java.util.List.of(levels)), values, from, to)
  }

  private def dictionary(r: Random, indexBits: Int, itemBytes: Int, size: Int, n: Int, bad: Boolean): DataBlock.Dictionary = {
    val items = new DataBlock.FixedWidth(8 * itemBytes, Array.fill(size * itemBytes)(r.nextInt(256).toByte), size)
    val keys = Array.fill(n)(if (r.nextInt(10) == 0) size else r.nextInt(size)) // `size`: the null slot
    if (bad && n > 0) keys(r.nextInt(n)) = size + 1 + r.nextInt(3)
    val ib = indexBits / 8
    val idx = new Array[Byte](n * ib)
    keys.zipWithIndex.foreach { case (k, i) => for (b <- 0 until ib) idx(i * ib + b) = (k.toLong >>> (8 * b)).toByte }
    new DataBlock.Dictionary(new DataBlock.FixedWidth(indexBits, idx, n), items)
  }

  test("a dictionary leaf of fixed-width items fills the vector the expanded values fill (seeded)") {
    val r = new Random(20261126)
    for (indexBits <- Seq(8, 16, 32, 64); itemBytes <- Seq(1, 2, 4, 8, 16); round <- 0 until 8) {
      val size = 1 + r.nextInt(if (indexBits == 8) 254 else 400)
      val n = r.nextInt(5000)
      val d = dictionary(r, indexBits, itemBytes, size, n, bad = false)
      val from = if (n == 0) 0 else r.nextInt(n + 1)
      val to = from + r.nextInt(n - from + 1)
      val nullEvery = Seq(0, 2, 7)(r.nextInt(3))
      val defs = Array.fill[Short](to - from)(if (nullEvery > 0 && r.nextInt(nullEvery) == 0) 1 else 0)
      val field = new Field("x", FieldType.nullable(arrowType(itemBytes)), null)
      val direct = field.createVector(allocator)
      val general = field.createVector(allocator)
      try {
        ArrowAssembler.fill(direct, Iterator(leaf(defs, d, from, to)).asJava, _ => false)
        val validity = leaf(defs, d, from, to).levels.unravelValidity(to - from)
        ArrowAssembler.fillLeafValues(general, Blocks.materialize(d, from, to), validity)
        val where = s"index bits $indexBits, item bytes $itemBytes, [$from, $to) of $n"
        assert(direct.getValueCount == to - from, where)
        assert(direct.getNullCount == general.getNullCount, where)
        assert(direct.getNullCount == defs.count(_ != 0), where)
        (0 until to - from).foreach { i =>
          assert(direct.isNull(i) == general.isNull(i), s"$where, row $i")
          if (!direct.isNull(i)) assert(direct.getObject(i) == general.getObject(i), s"$where, row $i")
        }
      } finally { direct.close(); general.close() }
    }
  }

  test("an index past the null slot in the rows read is refused, at every index width; outside them it does not matter") {
    val r = new Random(7)
    for (indexBits <- Seq(8, 16, 32, 64)) {
      val d = dictionary(r, indexBits, 8, 5, 200, bad = true)
      val keyOf = (i: Int) => { val ib = indexBits / 8; (0 until ib).map(b => (d.indices.data(i * ib + b) & 0xFFL) << (8 * b)).sum }
      val badRow = (0 until 200).find(i => keyOf(i) > 5).get
      val v = new BigIntVector("x", allocator)
      try {
        val e = intercept[EncodingException](ArrowAssembler.fill(v, Iterator(leaf(new Array[Short](200), d, 0, 200)).asJava, _ => false))
        assert(e.getMessage == s"dictionary index ${keyOf(badRow)} of a dictionary of 5 items")
        val (from, to) = if (badRow > 0) (0, badRow) else (1, 200)
        ArrowAssembler.fill(v, Iterator(leaf(new Array[Short](to - from), d, from, to)).asJava, _ => false)
        assert(v.getValueCount == to - from)
      } finally v.close()
    }
  }

  test("a vector narrower than the dictionary items is refused with both widths named") {
    val r = new Random(3)
    val d = dictionary(r, 8, 8, 4, 10, bad = false)
    val v = new IntVector("x", allocator)
    try {
      val e = intercept[EncodingException](ArrowAssembler.fill(v, Iterator(leaf(new Array[Short](10), d, 0, 10)).asJava, _ => false))
      assert(e.getMessage == "field 'x' holds 32-bit values, the page 64-bit dictionary items")
    } finally v.close()
  }

  /** Items of `lengths` bytes: ASCII, with a two-byte and a three-byte character where there is room. */
  private def strings(r: Random, lengths: Seq[Int], offsetBits: Int): DataBlock.VariableWidth = {
    val values = lengths.map { len =>
      val b = new java.io.ByteArrayOutputStream()
      while (b.size < len) {
        val room = len - b.size
        r.nextInt(4) match {
          case 0 if room >= 2 => b.write("\u00e9".getBytes("UTF-8"))
          case 1 if room >= 3 => b.write("\u20ac".getBytes("UTF-8"))
          case _ => b.write('a' + r.nextInt(26))
        }
      }
      b.toByteArray
    }
    Blocks.ofValues(values.asJava, offsetBits)
  }

  private def indices(r: Random, indexBits: Int, size: Int, n: Int, nullSlot: Boolean): DataBlock.FixedWidth = {
    val ib = indexBits / 8
    val idx = new Array[Byte](n * ib)
    (0 until n).foreach { i =>
      val k = if (nullSlot && r.nextInt(10) == 0) size else r.nextInt(size) // `size`: the null slot
      for (b <- 0 until ib) idx(i * ib + b) = (k.toLong >>> (8 * b)).toByte
    }
    new DataBlock.FixedWidth(indexBits, idx, n)
  }

  test("a dictionary leaf of strings or binary values fills the vector the expanded values fill (seeded)") {
    val r = new Random(20261127)
    val kinds = Seq[ArrowType](ArrowType.Utf8.INSTANCE, ArrowType.LargeUtf8.INSTANCE, ArrowType.Binary.INSTANCE,
      ArrowType.LargeBinary.INSTANCE)
    // Item lengths: one byte (flags), up to 16 (two longs a value), longer, and mixed with empty ones.
    val profiles = Seq[Random => Int](_ => 1, q => 1 + q.nextInt(16), q => 17 + q.nextInt(40), q => q.nextInt(3) * q.nextInt(30))
    for (indexBits <- Seq(8, 16, 32, 64); kind <- kinds; (profile, p) <- profiles.zipWithIndex; round <- 0 until 3) {
      val size = 1 + r.nextInt(if (indexBits == 8) 254 else 300)
      val n = r.nextInt(5000)
      val items = strings(r, Seq.fill(size)(profile(r)), if (r.nextBoolean()) 32 else 64)
      val d = new DataBlock.Dictionary(indices(r, indexBits, size, n, nullSlot = r.nextBoolean()), items)
      val from = if (n == 0) 0 else r.nextInt(n + 1)
      val to = from + r.nextInt(n - from + 1)
      val nullEvery = Seq(0, 2, 7)(r.nextInt(3))
      val defs = Array.fill[Short](to - from)(if (nullEvery > 0 && r.nextInt(nullEvery) == 0) 1 else 0)
      val field = new Field("s", FieldType.nullable(kind), null)
      val direct = field.createVector(allocator)
      val general = field.createVector(allocator)
      try {
        ArrowAssembler.fill(direct, Iterator(leaf(defs, d, from, to)).asJava, _ => false)
        val validity = leaf(defs, d, from, to).levels.unravelValidity(to - from)
        ArrowAssembler.fillLeafValues(general, Blocks.materialize(d, from, to), validity)
        val where = s"index bits $indexBits, $kind, profile $p, $size items, [$from, $to) of $n"
        assert(direct.getValueCount == to - from, where)
        assert(direct.getNullCount == defs.count(_ != 0), where)
        (0 until to - from).foreach { i =>
          assert(direct.isNull(i) == general.isNull(i), s"$where, row $i")
          if (!direct.isNull(i)) assert(value(direct, i) == value(general, i), s"$where, row $i")
        }
      } finally { direct.close(); general.close() }
    }
  }

  private def value(v: FieldVector, i: Int): Any = v.getObject(i) match {
    case b: Array[Byte] => b.toSeq
    case o => o
  }

  test("a dictionary of strings is refused for an index past the null slot, an item outside its bytes, or an item read that is not UTF-8") {
    val r = new Random(11)
    val items = strings(r, Seq(1, 3, 2), 32)
    def fill(v: FieldVector, d: DataBlock.Dictionary, n: Int): Unit =
      ArrowAssembler.fill(v, Iterator(leaf(new Array[Short](n), d, 0, n)).asJava, _ => false)
    val v = new VarCharVector("s", allocator)
    try {
      val past = new DataBlock.FixedWidth(8, Array[Byte](0, 1, 4, 2), 4)
      val e = intercept[EncodingException](fill(v, new DataBlock.Dictionary(past, items), 4))
      assert(e.getMessage == "dictionary index 4 of a dictionary of 3 items")
      val offsets = items.offsets.clone()
      io.sparklance.core.encoding.LittleEndian.putInt(offsets, 8, 99)
      val outside = new DataBlock.VariableWidth(32, offsets, items.data, 3)
      val e2 = intercept[EncodingException](fill(v, new DataBlock.Dictionary(new DataBlock.FixedWidth(8, Array[Byte](0, 0), 2), outside), 2))
      assert(e2.getMessage == s"dictionary item 1 of field 's' spans bytes [1, 99) of ${items.data.length}")
      // Item 1 (3 bytes) made invalid UTF-8: refused where it is read, not where only the others are.
      val data = items.data.clone()
      data(1) = 0xC3.toByte; data(2) = 'x'.toByte
      val broken = new DataBlock.VariableWidth(32, items.offsets, data, 3)
      val e3 = intercept[EncodingException](fill(v, new DataBlock.Dictionary(new DataBlock.FixedWidth(8, Array[Byte](0, 1), 2), broken), 2))
      assert(e3.getMessage == "dictionary item 1 of field 's' is not valid UTF-8")
      fill(v, new DataBlock.Dictionary(new DataBlock.FixedWidth(8, Array[Byte](0, 2, 0), 3), broken), 3)
      assert(v.getValueCount == 3 && v.getObject(1).toString == new String(data, 4, 2, "UTF-8"))
      val b = new VarBinaryVector("b", allocator)
      try {
        fill(b, new DataBlock.Dictionary(new DataBlock.FixedWidth(8, Array[Byte](1, 1), 2), broken), 2)
        assert(b.getObject(0).toSeq == data.slice(1, 4).toSeq)
      } finally b.close()
    } finally v.close()
  }
}
