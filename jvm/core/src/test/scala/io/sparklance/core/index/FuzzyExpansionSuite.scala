package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The bounded edit distance of [[FuzzyExpansion]] against the full Levenshtein table, on seeded random strings of
 * code points from a small alphabet (with letters outside the BMP); the expansion itself is checked against pylance's
 * indexes in tests/test_full_text_search.py.
 */
class FuzzyExpansionSuite extends AnyFunSuite {
  private def levenshtein(a: Array[Int], b: Array[Int]): Int = {
    val d = Array.tabulate(a.length + 1, b.length + 1)((i, j) => if (i == 0) j else if (j == 0) i else 0)
    for (i <- 1 to a.length; j <- 1 to b.length) {
      d(i)(j) = Seq(d(i - 1)(j) + 1, d(i)(j - 1) + 1, d(i - 1)(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1)).min
    }
    d(a.length)(b.length)
  }

  test("within(a, b, max) is levenshtein(a, b) <= max, for seeded random strings") {
    val r = new Random(20261126)
    val alphabet = Array('a'.toInt, 'b'.toInt, 'c'.toInt, 0xE9, 0x1F600)
    (0 until 20000).foreach { _ =>
      val a = Array.fill(r.nextInt(7))(alphabet(r.nextInt(alphabet.length)))
      val b = Array.fill(r.nextInt(7))(alphabet(r.nextInt(alphabet.length)))
      val max = r.nextInt(4)
      assert(FuzzyExpansion.within(a, b, max) == (levenshtein(a, b) <= max), (a.toSeq, b.toSeq, max))
    }
  }

  test("a transposition is two edits, as in Lance") {
    def cps(s: String) = s.codePoints().toArray
    assert(!FuzzyExpansion.within(cps("machine"), cps("amchine"), 1))
    assert(FuzzyExpansion.within(cps("machine"), cps("amchine"), 2))
    assert(FuzzyExpansion.within(cps("café"), cps("cafe"), 1))
  }
}
