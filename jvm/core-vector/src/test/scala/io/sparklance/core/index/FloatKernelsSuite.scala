package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The Vector API kernels against the plain loops, and [[CentroidTable]] against a search of every centroid, on seeded
 * random vectors of odd and even lengths at offsets. The core's tests run with `--add-modules jdk.incubator.vector`
 * (build.sbt), so both implementations are here.
 */
class FloatKernelsSuite extends AnyFunSuite {
  private val plain = FloatKernels.plain()

  private def vectorApi: FloatKernels = Option(FloatKernels.vectorApi()).getOrElse(
    fail("this JVM has jdk.incubator.vector (build.sbt), yet the Vector API kernels did not load"))

  private def close(a: Float, b: Float, scale: Double): Boolean =
    (a.isNaN && b.isNaN) || math.abs(a.toDouble - b) <= 1e-5 * scale + 1e-6

  test("the JVM runs the Vector API kernels when its module is present, else the plain loops") {
    assert(FloatKernels.best() eq vectorApi)
    assert(vectorApi.describe().startsWith("vector-api"))
    assert(plain.describe() == "plain")
  }

  test("dot, squared L2 and cosine agree between the Vector API and the plain loops to float32 rounding") {
    val r = new Random(20261126)
    for (_ <- 0 until 2000) {
      val dim = 1 + r.nextInt(r.nextInt(3) match { case 0 => 9 case 1 => 40 case _ => 300 })
      val from = r.nextInt(7)
      val at = r.nextInt(7)
      val a = Array.fill(from + dim + r.nextInt(3))(r.nextGaussian().toFloat * 3)
      val b = Array.fill(at + dim + r.nextInt(3))(r.nextGaussian().toFloat * 3)
      // The sums' magnitude: what float32 rounding is relative to.
      val scale = (0 until dim).map(d => math.abs(a(from + d).toDouble) * 3 + math.abs(b(at + d).toDouble) * 3).sum + 1
      val exactDot = (0 until dim).map(d => a(from + d).toDouble * b(at + d)).sum
      for (k <- Seq(plain, vectorApi)) {
        assert(close(k.dot(a, from, b, at, dim), exactDot.toFloat, scale * 3), s"${k.describe()} dot, dim $dim")
        val exactL2 = (0 until dim).map { d => val x = a(from + d).toDouble - b(at + d); x * x }.sum
        assert(close(k.squaredL2(a, from, b, at, dim), exactL2.toFloat, scale * 3), s"${k.describe()} l2, dim $dim")
      }
      assert(close(plain.cosineDistance(a, from, b, at, dim), vectorApi.cosineDistance(a, from, b, at, dim), 10),
        s"cosine, dim $dim")
      val out = Array.fill(at + dim + 2)(r.nextGaussian().toFloat)
      val x = r.nextGaussian().toFloat
      val byPlain = out.clone()
      plain.addScaled(byPlain, at, x, a, from, dim)
      vectorApi.addScaled(out, at, x, a, from, dim)
      out.indices.foreach(i => assert(close(out(i), byPlain(i), 10), s"addScaled at $i, dim $dim"))
    }
  }

  test("NaN and zero vectors: NaN distances on both paths, and cosine of a zero vector is NaN") {
    val r = new Random(7)
    for (dim <- Seq(1, 7, 16, 17, 33, 128, 131); k <- Seq(plain, vectorApi)) {
      val a = Array.fill(dim)(r.nextGaussian().toFloat)
      val b = Array.fill(dim)(r.nextGaussian().toFloat)
      val withNaN = a.clone()
      withNaN(r.nextInt(dim)) = Float.NaN
      assert(k.dot(withNaN, 0, b, 0, dim).isNaN, s"${k.describe()} dot, dim $dim")
      assert(k.squaredL2(withNaN, 0, b, 0, dim).isNaN, s"${k.describe()} l2, dim $dim")
      assert(k.cosineDistance(withNaN, 0, b, 0, dim).isNaN, s"${k.describe()} cosine, dim $dim")
      assert(k.cosineDistance(new Array[Float](dim), 0, b, 0, dim).isNaN, s"${k.describe()} cosine of zero, dim $dim")
      assert(math.abs(k.cosineDistance(a, 0, a, 0, dim)) < 1e-5, s"${k.describe()} cosine to itself, dim $dim")
    }
  }

  test("a centroid table finds the nearest centroid by squared L2 and by dot, as a search of every centroid does") {
    val r = new Random(20261127)
    for (trial <- 0 until 200) {
      val dim = 1 + r.nextInt(40)
      val k = 1 + r.nextInt(300)
      val base = r.nextInt(5) * dim
      val centroids = Array.fill(base + k * dim)(r.nextGaussian().toFloat * 2)
      val table = CentroidTable.of(centroids, base, k, dim)
      assert(table.size == k)
      val scratch = new Array[Float](3 + k)
      for (_ <- 0 until 20) {
        val v = Array.fill(dim + 1)(r.nextGaussian().toFloat * 2)
        val l2 = (0 until k).map(c => KMeans.squaredL2(v, 1, centroids, base + c * dim, dim).toDouble)
        val got = table.nearestL2(v, 1, scratch, 3)
        // The same centroid, or one as near to float32 rounding (|c|² − 2 v·c sums differently).
        assert(l2(got) <= l2.min + 1e-4 * (1 + l2.min) * dim, s"trial $trial: l2 chose $got")
        val dots = (0 until k).map(c => FloatKernels.plain().dot(v, 1, centroids, base + c * dim, dim).toDouble)
        val byDot = table.nearestDot(v, 1, scratch, 3)
        assert(dots(byDot) >= dots.max - 1e-4 * dim * 4, s"trial $trial: dot chose $byDot")
      }
    }
  }
}
