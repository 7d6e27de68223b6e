package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

class VectorElementSuite extends AnyFunSuite {

  test("floatToHalf inverts halfToFloat on every half float, and rounds other floats to the nearest, ties to even") {
    var h = 0
    while (h < 0x10000) {
      val f = VectorElement.halfToFloat(h.toShort)
      if (!f.isNaN) assert((VectorElement.floatToHalf(f) & 0xFFFF) == h, f"0x$h%04x ($f)")
      else assert(VectorElement.halfToFloat(VectorElement.floatToHalf(f)).isNaN)
      h += 1
    }
    val r = new Random(11)
    (0 until 100000).foreach { _ =>
      val x = (r.nextGaussian() * math.pow(10, r.nextInt(12) - 7)).toFloat
      val rounded = VectorElement.FLOAT16.round(x)
      // No half float lies nearer to x than the one chosen: its neighbours on either side are as far or farther.
      val bits = VectorElement.floatToHalf(x)
      val below = VectorElement.halfToFloat((bits - 1).toShort)
      val above = VectorElement.halfToFloat((bits + 1).toShort)
      val d = math.abs(x.toDouble - rounded)
      if (math.abs(x) < 65504) {
        // (Past zero the bits' neighbour is a NaN: the other side of zero is not a neighbour then.)
        assert((below.isNaN || d <= math.abs(x.toDouble - below)) && (above.isNaN || d <= math.abs(x.toDouble - above)),
          s"$x -> $rounded ($below, $above)")
      }
    }
    // Exactly between 1 and the next half float (1 + 2^-10): to even, which is 1.
    assert(VectorElement.FLOAT16.round(1.0f + math.pow(2, -11).toFloat) == 1.0f)
    assert(VectorElement.FLOAT16.round(1.0f + 3 * math.pow(2, -11).toFloat) == 1.0f + 2 * math.pow(2, -10).toFloat)
    assert(VectorElement.FLOAT16.round(70000f).isPosInfinity)
    assert(VectorElement.FLOAT16.round(1e-9f) == 0f)
  }

  test("values written in each element type read back as written") {
    val r = new Random(5)
    for (e <- VectorElement.values()) {
      val values = Array.fill(50)(if (e == VectorElement.UINT8) r.nextInt(256).toFloat else e.round(r.nextGaussian().toFloat))
      val bytes = new Array[Byte](values.length * e.bytes)
      values.indices.foreach(i => e.put(values(i), bytes, i * e.bytes))
      assert(values.indices.map(e.get(bytes, _)) == values.toSeq, e)
    }
  }

  test("plain k-modes (balance 0) ends at a fixed point: every vector nearest its centroid by hamming, each centroid bit its vectors' majority") {
    val r = new Random(8)
    val (n, dim, k) = (600, 6, 5)
    val modes = Array.fill(k, dim)(r.nextInt(256))
    val data = new Array[Float](n * dim)
    (0 until n).foreach { i =>
      val m = modes(r.nextInt(k))
      (0 until dim).foreach(d => data(i * dim + d) = (m(d) ^ (if (r.nextInt(4) == 0) 1 << r.nextInt(8) else 0)).toFloat)
    }
    val model = KModes.train(data, n, dim, k, 100, 0f, 3)
    val c = model.centroids
    def bits(i: Int, p: Int) = (0 until dim).map(d => Integer.bitCount((data(i * dim + d).toInt ^ c(p * dim + d).toInt) & 0xFF)).sum
    val assigned = (0 until n).map(i => IvfModel.nearestHamming(data, i * dim, c, k, dim))
    (0 until n).foreach(i => assert(bits(i, assigned(i)) == (0 until k).map(bits(i, _)).min))
    assert(model.loss == (0 until n).map(i => bits(i, assigned(i))).sum.toDouble)
    (0 until k).foreach { p =>
      val members = (0 until n).filter(assigned(_) == p)
      if (members.nonEmpty) (0 until dim).foreach { d =>
        (0 until 8).foreach { b =>
          val ones = members.count(i => ((data(i * dim + d).toInt >> b) & 1) == 1)
          assert((((c(p * dim + d).toInt >> b) & 1) == 1) == (ones * 2 > members.size), s"centroid $p byte $d bit $b")
        }
      }
    }
  }

  test("k-modes' biased assignment: hamming distance plus balance × the centroid's size, the first of equally near ones") {
    // Vector 0 is 1 bit from centroid 0 and 3 from centroid 1; vector 1 is 1 bit from both.
    val data = Array[Byte](0x01, 0x02)
    val centroids = Array[Byte](0x00, 0x06)
    val out = new Array[Int](2)
    val biased = new Array[Float](2)
    KModes.assign(data, 2, 1, centroids, 2, 0f, Array(9, 1), out, biased)
    assert(out.toSeq == Seq(0, 0) && biased.toSeq == Seq(1f, 1f))
    // 1 + 4.5 against 3 + 0.5, and 1 + 4.5 against 1 + 0.5: the smaller cluster takes both.
    KModes.assign(data, 2, 1, centroids, 2, 0.5f, Array(9, 1), out, biased)
    assert(out.toSeq == Seq(1, 1) && biased.toSeq == Seq(3.5f, 1.5f))
    KModes.assign(data, 2, 1, centroids, 2, 0.5f, Array(3, 3), out, biased)
    assert(out.toSeq == Seq(0, 0) && biased.toSeq == Seq(2.5f, 2.5f))
  }

  test("balanced k-modes (Lance's IVF training) spreads vectors that tie between centroids more evenly than plain k-modes") {
    // Random single bytes: distances of 0 to 8 bits, many rows equally near several centroids.
    def largest(balance: Float, seed: Long): Int = {
      val r = new Random(seed)
      val (n, k) = (2000, 8)
      val data = Array.fill(n)(r.nextInt(256).toFloat)
      val c = KModes.train(data, n, 1, k, 50, balance, seed).centroids
      (0 until n).groupBy(i => IvfModel.nearestHamming(data, i, c, k, 1)).values.map(_.size).max
    }
    val seeds = 1L to 6L
    val plain = seeds.map(largest(0f, _)).sum
    val balanced = seeds.map(largest(KModes.IVF_BALANCE, _)).sum
    assert(balanced < plain, s"largest partitions: balanced $balanced, plain $plain")
  }
}
