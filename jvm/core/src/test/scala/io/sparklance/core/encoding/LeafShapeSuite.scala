package io.sparklance.core.encoding

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

/**
 * Leaf shapes: the placeholder blocks of pages without values of their own (all null, constant), and the constant
 * values repeated over a page, for fixed-width, boolean, variable-width, fixed-size list and struct leaves.
 */
class LeafShapeSuite extends AnyFunSuite {
  import EncodingTesting._

  private def message(body: => Any): String = intercept[EncodingException](body).getMessage

  test("zeros are blocks of n placeholder values of the leaf's layout") {
    for (n <- Seq(0, 1, 9, 1000)) {
      val ints = fixed(LeafShape.fixed(32).zeros(n))
      assert(ints.bitsPerValue == 32 && ints.numValues == n && ints.data.toSeq == Seq.fill(4 * n)(0.toByte))
      val bools = fixed(LeafShape.fixed(1).zeros(n))
      assert(bools.bitsPerValue == 1 && bools.numValues == n && bools.data.length == (n + 7) / 8 && bools.data.forall(_ == 0))
      for (ob <- Seq(32, 64)) {
        val strings = LeafShape.variable(ob).zeros(n).asInstanceOf[DataBlock.VariableWidth]
        assert(strings.numValues == n && strings.offsetBits == ob && strings.data.isEmpty)
        assert(strings.offsets.length == (n + 1) * ob / 8 && (0 to n).forall(i => strings.offset(i) == 0))
      }
      val fsl = LeafShape.fixedSizeList(3, LeafShape.fixed(16)).zeros(n).asInstanceOf[DataBlock.FixedSizeList]
      assert(fsl.numValues == n && fsl.dimension == 3 && fsl.itemValidity == null)
      assert(fixed(fsl.child).numValues == 3 * n && fixed(fsl.child).data.length == 6 * n)
      val struct = LeafShape.struct(Array(LeafShape.fixed(8), LeafShape.variable(32))).zeros(n).asInstanceOf[DataBlock.Struct]
      assert(struct.numValues == n && struct.children.map(_.numValues).toSeq == Seq(n, n))
    }
  }

  test("repeat gives n copies of a constant: fixed-width bytes, boolean bits, variable-width values") {
    val seven = Array[Byte](7, 0, 0, 0)
    val ints = fixed(LeafShape.fixed(32).repeat(seven, 3, 1 << 20))
    assert(ints.numValues == 3 && (0 until 3).map(i => LittleEndian.getInt(ints.data, 4 * i)) == Seq(7, 7, 7))
    for (n <- Seq(1, 8, 13); bit <- Seq(0, 1)) {
      assert(bits(LeafShape.fixed(1).repeat(Array(bit.toByte), n, 1 << 20)) == Seq.fill(n)(bit == 1), s"$n x $bit")
    }
    for (ob <- Seq(32, 64)) {
      val s = LeafShape.variable(ob).repeat("ab".getBytes(UTF_8), 3, 1 << 20).asInstanceOf[DataBlock.VariableWidth]
      assert(s.numValues == 3 && (0 to 3).map(s.offset) == Seq(0L, 2L, 4L, 6L) && new String(s.data, UTF_8) == "ababab")
    }
    assert(LeafShape.variable(32).repeat(Array.emptyByteArray, 4, 0).asInstanceOf[DataBlock.VariableWidth].data.isEmpty)
  }

  test("constants that do not fit the shape or the size limit are refused, with what was wrong") {
    assert(message(LeafShape.fixed(32).repeat(Array[Byte](1, 2), 3, 1 << 20)) == "a constant of 2 bytes for 32-bit values")
    assert(message(LeafShape.fixed(1).repeat(Array.emptyByteArray, 3, 1 << 20)) == "an empty boolean constant")
    assert(message(LeafShape.fixed(64).repeat(new Array[Byte](8), 1000, 100)) == "a constant of 1000 values is too large")
    assert(message(LeafShape.variable(32).repeat("abc".getBytes(UTF_8), 10, 29)) == "a constant of 10 x 3 bytes")
    assert(message(LeafShape.fixedSizeList(2, LeafShape.fixed(32)).repeat(new Array[Byte](8), 1, 100)) == "a constant fixed-size list")
    assert(message(LeafShape.struct(Array(LeafShape.fixed(8))).repeat(Array[Byte](1), 1, 100)) == "a constant struct")
  }

  test("only a fixed-size list has an item shape") {
    val item = LeafShape.fixed(32)
    assert(LeafShape.fixedSizeList(4, item).item() eq item)
    for (s <- Seq(LeafShape.fixed(32), LeafShape.variable(32), LeafShape.struct(Array(item)))) {
      assert(message(s.item()) == "a fixed-size list encoding over a column that is not a fixed-size list")
    }
  }
}
