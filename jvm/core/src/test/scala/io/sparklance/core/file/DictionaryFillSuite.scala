package io.sparklance.core.file

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.encoding.{Blocks, DataBlock, EncodingException, RepDef}

/**
 * A dictionary-encoded leaf of fixed-width items is written straight into its vector ([[ArrowAssembler.fill]]):
 * the vector must be the one the general path makes from the expanded values ([[Blocks.materialize]], then
 * `fillLeafValues`), at every index width and item width, with nulls from the levels and from the null slot.
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
}
