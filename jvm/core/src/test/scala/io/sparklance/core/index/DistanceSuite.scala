package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.InvalidArgumentException

/** Lance's distances against their definitions, on seeded random vectors of every length up to 40. */
class DistanceSuite extends AnyFunSuite {

  private def definition(d: Distance, q: Array[Double], v: Array[Double]): Double = d match {
    case Distance.L2 => q.zip(v).map { case (a, b) => (a - b) * (a - b) }.sum
    case Distance.COSINE =>
      1 - q.zip(v).map { case (a, b) => a * b }.sum / (math.sqrt(q.map(x => x * x).sum) * math.sqrt(v.map(x => x * x).sum))
    case Distance.DOT => 1 - q.zip(v).map { case (a, b) => a * b }.sum
    case Distance.HAMMING => q.zip(v).map { case (a, b) => Integer.bitCount((a.toInt ^ b.toInt) & 0xFF) }.sum.toDouble
  }

  test("float and double vectors, at an offset in a larger array, give the definition's distance") {
    val rnd = new Random(20261125)
    for (_ <- 0 until 500; d <- Distance.values()) {
      val n = 1 + rnd.nextInt(40)
      val from = rnd.nextInt(5)
      val q = Array.fill(n)(rnd.nextGaussian() * 3)
      val v = Array.fill(n + from + rnd.nextInt(3))(rnd.nextGaussian().toFloat * 3)
      val vd = v.slice(from, from + n).map(_.toDouble)
      val want = definition(d, q, vd)
      assert(math.abs(d.between(q, v, from) - want) <= 1e-9 * math.max(1, math.abs(want)), s"$d n=$n")
      assert(math.abs(d.between(q, vd) - want) <= 1e-9 * math.max(1, math.abs(want)), s"$d n=$n (double)")
    }
  }

  test("a zero vector has no cosine; NaN values give NaN") {
    assert(Distance.COSINE.between(Array(1.0, 2.0), Array(0f, 0f), 0).isNaN)
    assert(Distance.L2.between(Array(1.0, 2.0), Array(Float.NaN, 0f), 0).isNaN)
    assert(Distance.DOT.between(Array(1.0, 2.0), Array(1.0, Double.NaN)).isNaN)
  }

  test("names: Lance's, case-insensitive; others refused with the option named") {
    assert(Distance.named("L2", "d") == Distance.L2 && Distance.named("euclidean", "d") == Distance.L2)
    assert(Distance.named(" Cosine ", "d") == Distance.COSINE && Distance.named("dot", "d") == Distance.DOT)
    assert(intercept[InvalidArgumentException](Distance.named("manhattan", "distance_type")).getMessage
      .contains("distance_type = 'manhattan'"))
    assert(Distance.named("Hamming", "d") == Distance.HAMMING && Distance.HAMMING.lanceName() == "hamming")
  }

  test("hamming counts the bits that differ, byte by byte, both ways of holding a vector") {
    val rng = new scala.util.Random(17)
    (1 to 200).foreach { _ =>
      val n = 1 + rng.nextInt(40)
      val a = Array.fill(n)(rng.nextInt(256))
      val b = Array.fill(n)(rng.nextInt(256))
      val bits = a.indices.map { i =>
        (0 until 8).count(bit => ((a(i) >> bit) & 1) != ((b(i) >> bit) & 1))
      }.sum
      assert(Distance.HAMMING.between(a.map(_.toDouble), b.map(_.toFloat), 0) == bits)
      assert(Distance.HAMMING.between(a.map(_.toDouble), b.map(_.toDouble)) == bits)
    }
  }
}
