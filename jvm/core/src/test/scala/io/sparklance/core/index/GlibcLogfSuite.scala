package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * [[GlibcLogf]] against values of glibc 2.36's `logf` (recorded on x86-64 through ctypes): arguments of the BM25 idf
 * where glibc's float is one ulp off the correctly rounded one, and random arguments where it is within an ulp.
 */
class GlibcLogfSuite extends AnyFunSuite {
  private def f(bits: Int): Float = java.lang.Float.intBitsToFloat(bits)

  test("the idf arguments where glibc rounds away from the nearest float give glibc's float") {
    // (argument, glibc's logf, the correctly rounded logarithm), as float bits.
    val cases = Seq(
      (0x3f83a83b, 0x3ce6c6ba, 0x3ce6c6bb), (0x403b13b1, 0x3f894c29, 0x3f894c2a),
      (0x3f8253c8, 0x3c939b83, 0x3c939b82), (0x3f823ee1, 0x3c8e793d, 0x3c8e793c),
      (0x3f82192e, 0x3c8534bf, 0x3c8534be), (0x3f81f820, 0x3c7a24aa, 0x3c7a24a9),
      (0x3f81cd85, 0x3c65265a, 0x3c652659), (0x3f9a69a7, 0x3e4019dd, 0x3e4019dc),
      (0x3f8178a5, 0x3c3b3f89, 0x3c3b3f88))
    for ((x, glibc, nearest) <- cases) {
      assert((Math.log(f(x).toDouble).toFloat) == f(nearest), f"0x$x%08x: the case is one where rounding differs")
      assert(GlibcLogf.log(f(x)) == f(glibc), f"0x$x%08x")
    }
  }

  test("other arguments are within an ulp of the exact logarithm; 1, 0, subnormals, infinity and NaN are logf's") {
    val rnd = new Random(20261127)
    for (_ <- 0 until 20000) {
      val x = java.lang.Float.intBitsToFloat(rnd.nextInt(0x7f000000) + 0x00800000)
      val got = GlibcLogf.log(x)
      assert(math.abs(got - math.log(x.toDouble)) <= math.ulp(got), s"$x")
    }
    assert(GlibcLogf.log(1f) == 0f)
    assert(GlibcLogf.log(0f) == Float.NegativeInfinity)
    assert(GlibcLogf.log(Float.PositiveInfinity) == Float.PositiveInfinity)
    assert(GlibcLogf.log(-1f).isNaN && GlibcLogf.log(Float.NaN).isNaN)
    val tiny = java.lang.Float.MIN_VALUE * 3
    assert(math.abs(GlibcLogf.log(tiny) - math.log(tiny.toDouble)) <= math.ulp(GlibcLogf.log(tiny)))
  }
}
