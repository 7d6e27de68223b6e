package io.sparklance.core.index

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{Float4Vector, UInt1Vector}
import org.apache.arrow.vector.complex.FixedSizeListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, FieldType}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException

/**
 * The partition decoders and distances of IVF indexes (docs/dev/vector-index-format.md §2.3, §2.4, §4) against their
 * definitions, on seeded random codebooks, codes and queries: PQ codes transposed per partition or not, 8- and
 * 4-bit, residual (l2) and raw (dot); SQ codes; flat vectors; and the top-k heap against a sort.
 */
class IvfStorageSuite extends AnyFunSuite {
  private val allocator = new RootAllocator()

  /** A fixed-size list column of `width` uint8 values per row holding `bytes`. */
  private def uint8Lists(bytes: Array[Int], width: Int): FixedSizeListVector = {
    val list = FixedSizeListVector.empty("codes", width, allocator)
    list.addOrGetVector[UInt1Vector](FieldType.notNullable(new ArrowType.Int(8, false)))
    val child = list.getDataVector.asInstanceOf[UInt1Vector]
    child.allocateNew(bytes.length)
    bytes.indices.foreach(i => child.set(i, bytes(i)))
    child.setValueCount(bytes.length)
    list.setValueCount(bytes.length / width)
    (0 until bytes.length / width).foreach(list.setNotNull)
    list
  }

  test("PQ codes decode from transposed and row-major bytes, 8 and 4 bits, and measure as their definition") {
    val rnd = new Random(20261126)
    for (trial <- 0 until 60) {
      val m = Seq(2, 4, 8)(rnd.nextInt(3))
      val dim = m * (1 + rnd.nextInt(4))
      val nbits = if (trial % 3 == 0) 4 else 8
      val k = 1 << nbits
      val rows = 1 + rnd.nextInt(50)
      val transposed = rnd.nextBoolean()
      val distance = if (rnd.nextBoolean()) Distance.L2 else Distance.DOT
      val codebook = Array.fill(m * k * (dim / m))(rnd.nextGaussian().toFloat)
      val codes = Array.fill(rows, m)(rnd.nextInt(k))
      val perRow = m * nbits / 8
      val rowBytes = codes.map { c =>
        if (nbits == 8) c else (0 until perRow).map(b => c(2 * b) | (c(2 * b + 1) << 4)).toArray
      }
      val bytes = if (transposed) (0 until perRow).flatMap(b => rowBytes.map(_(b))).toArray else rowBytes.flatten
      val storage = IvfStorage.Pq(dim, m, nbits, codebook, transposed, distance)
      val column = uint8Lists(bytes, perRow)
      try {
        val payload = storage.decode("p", column, rows).asInstanceOf[Array[Byte]]
        assert(payload.map(_ & 0xFF).toSeq == codes.transpose.flatten.toSeq, s"trial $trial")
        val q = Array.fill(dim)(rnd.nextGaussian().toFloat)
        val centroid = Array.fill(dim)(rnd.nextGaussian().toFloat)
        val got = storage.distances(q, centroid, payload, rows)
        val sd = dim / m
        (0 until rows).foreach { r =>
          // The vector the codes stand for: its codewords (plus the centroid for the residual l2 codes).
          val v = (0 until dim).map { i =>
            val j = i / sd
            codebook((j * k + codes(r)(j)) * sd + i % sd).toDouble + (if (distance == Distance.L2) centroid(i) else 0.0)
          }
          val want = distance.between(q.map(_.toDouble), v.toArray)
          assert(math.abs(got(r) - want) <= 1e-4 * math.max(1, math.abs(want)), s"trial $trial row $r: ${got(r)} vs $want")
          assert(storage.nodeDistance(q, centroid, payload, rows)(r) == got(r), s"trial $trial row $r")
          if (nbits == 4) {
            // pylance 14's float32 sum for 4-bit codes: byte by byte, each byte's two table entries added first; for
            // dot entries 1 - q·c, the sum less m - 1.
            def entry(j: Int): Float = {
              var s = 0.0f
              (0 until sd).foreach { d =>
                val x = q(j * sd + d)
                val c = codebook((j * k + codes(r)(j)) * sd + d)
                s += (if (distance == Distance.DOT) x * c else { val e = (x - centroid(j * sd + d)) - c; e * e })
              }
              if (distance == Distance.DOT) 1.0f - s else s
            }
            var sum = 0.0f
            (0 until m by 2).foreach(j => sum += entry(j) + entry(j + 1))
            assert(got(r) == (if (distance == Distance.DOT) sum - (m - 1) else sum), s"trial $trial row $r")
          }
        }
      } finally column.close()
    }
  }

  test("a PQ column of the wrong width is a corrupt file naming the column") {
    val column = uint8Lists(Array.fill(12)(0), 3)
    try {
      val e = intercept[CorruptFileException](IvfStorage.Pq(8, 4, 8, new Array[Float](4 * 256 * 2), transposed = true,
        Distance.L2).decode("aux.idx", column, 4))
      assert(e.getMessage.contains("aux.idx") && e.getMessage.contains("lists of 3 values, not 4"), e.getMessage)
    } finally column.close()
  }

  test("SQ codes measure as the scaled squared difference of codes, the query quantized with the same bounds") {
    val rnd = new Random(7)
    for (trial <- 0 until 30) {
      val dim = 1 + rnd.nextInt(20)
      val (start, end) = (-3 - rnd.nextDouble(), 3 + rnd.nextDouble())
      val rows = 1 + rnd.nextInt(30)
      val codes = Array.fill(rows * dim)(rnd.nextInt(256))
      val storage = IvfStorage.Sq(dim, start, end, Distance.L2)
      val column = uint8Lists(codes, dim)
      try {
        val payload = storage.decode("s", column, rows)
        val q = Array.fill(dim)((rnd.nextGaussian() * 3).toFloat)
        val qc = q.map(x => math.min(255, math.max(0, math.floor((x - start) * 255 / (end - start)).toInt)))
        assert(storage.quantize(q).toSeq == qc.toSeq)
        val got = storage.distances(q, null, payload, rows)
        (0 until rows).foreach { r =>
          val want = (0 until dim).map(d => math.pow(codes(r * dim + d) - qc(d), 2)).sum * math.pow(end - start, 2) / (255.0 * 255.0)
          assert(math.abs(got(r) - want) <= 1e-5 * math.max(1, want), s"trial $trial row $r")
        }
      } finally column.close()
    }
  }

  test("flat vectors measure as the distance's definition") {
    val rnd = new Random(11)
    val dim = 6
    val rows = 9
    val list = FixedSizeListVector.empty("flat", dim, allocator)
    list.addOrGetVector[Float4Vector](FieldType.notNullable(new ArrowType.FloatingPoint(
      org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE)))
    val child = list.getDataVector.asInstanceOf[Float4Vector]
    val values = Array.fill(rows * dim)(rnd.nextGaussian().toFloat)
    child.allocateNew(values.length)
    values.indices.foreach(i => child.set(i, values(i)))
    child.setValueCount(values.length)
    list.setValueCount(rows)
    try {
      for (d <- Distance.values()) {
        val storage = IvfStorage.Flat(dim, d)
        val q = Array.fill(dim)(rnd.nextGaussian().toFloat)
        val got = storage.distances(q, null, storage.decode("f", list, rows), rows)
        (0 until rows).foreach { r =>
          val want = d.between(q.map(_.toDouble), values.slice(r * dim, r * dim + dim).map(_.toDouble))
          assert(math.abs(got(r) - want) <= 1e-5 * math.max(1, math.abs(want)), s"$d row $r")
        }
      }
    } finally list.close()
  }

  test("TopRows keeps the k nearest, ties by row id, as a full sort does") {
    val rnd = new Random(3)
    for (_ <- 0 until 200) {
      val n = rnd.nextInt(60)
      val k = 1 + rnd.nextInt(20)
      // Few distinct distances, so that ties are common.
      val pairs = Array.fill(n)((rnd.nextInt(8).toFloat, rnd.nextInt(1000).toLong)).distinct
      val top = new TopRows(k)
      pairs.foreach { case (d, id) => top.offer(d, id) }
      top.offer(Float.NaN, 5)
      val want = pairs.sortBy(p => (p._1, p._2)).take(k)
      val got = top.result()
      assert(got.distances.toSeq.zip(got.rowIds.toSeq) == want.toSeq)
    }
  }

  test("half floats convert by their bits: normal, subnormal, zero, infinite and NaN") {
    val cases = Seq(0x3C00 -> 1.0f, 0xC000 -> -2.0f, 0x7BFF -> 65504.0f, 0x3555 -> 0.333251953125f, 0x0001 -> 5.9604645e-8f,
      0x8000 -> -0.0f, 0x0000 -> 0.0f, 0x7C00 -> Float.PositiveInfinity, 0xFC00 -> Float.NegativeInfinity)
    cases.foreach { case (bits, want) =>
      val got = IvfStorage.halfToFloat(bits.toShort)
      assert(java.lang.Float.floatToIntBits(got) == java.lang.Float.floatToIntBits(want), f"0x$bits%04x: $got, not $want")
    }
    assert(IvfStorage.halfToFloat(0x7E00.toShort).isNaN)
  }

  test("a cosine query is normalized in float32") {
    val q = IvfIndex.preprocess(Array(3.0, 4.0), Distance.COSINE)
    assert(q.toSeq == Seq(0.6f, 0.8f))
    assert(IvfIndex.preprocess(Array(3.0, 4.0), Distance.L2).toSeq == Seq(3.0f, 4.0f))
  }
}
