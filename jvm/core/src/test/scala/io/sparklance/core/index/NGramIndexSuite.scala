package io.sparklance.core.index

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.{ByteBuffer, ByteOrder}

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException

class NGramIndexSuite extends AnyFunSuite {

  private def token(s: String): Int = NGramIndex.needleTokens(s).head

  test("a trigram's token is its letters' and digits' positions in base 37, as pylance 14 stores them") {
    // Tokens observed in an index pylance 14 built over "abc abc", "ABCD", "Hello World" (docs/dev/scalar-indexes.md).
    assert(token("abc") == 15516)
    assert(token("bcd") == 16923)
    assert(token("ABC") == 15516)
    assert(token("000") == 1 * 37 * 37 + 1 * 37 + 1)
    assert(token("zz9") == 36 * 37 * 37 + 36 * 37 + 10)
  }

  test("a needle gives the trigrams of its runs of ASCII letters and digits only") {
    assert(NGramIndex.needleTokens("hello world").toSeq ==
      Seq("hel", "ell", "llo", "wor", "orl", "rld").map(token).sorted)
    assert(NGramIndex.needleTokens("abab").toSeq == Seq("aba", "bab").map(token).sorted)
    // Characters pylance folds or drops end a run: a trigram across them might not be in the index.
    assert(NGramIndex.needleTokens("abéc").isEmpty)
    assert(NGramIndex.needleTokens("x-yz_w!").isEmpty)
    assert(NGramIndex.needleTokens("ßabcß").toSeq == Seq(token("abc")))
    assert(NGramIndex.needleTokens("").isEmpty && NGramIndex.needleTokens("ab").isEmpty)
    assert(NGramIndex.needleTokens("日本語").isEmpty)
  }

  /** A Roaring treemap as upstream serializes it: u64 count, then per upper half a u32 key and a bitmap. */
  private def treemap(rows: Map[Long, Seq[Int]]): ByteBuffer = {
    val out = new ByteArrayOutputStream()
    val header = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(rows.size.toLong)
    out.write(header.array())
    rows.toSeq.sortBy(_._1).foreach { case (f, offsets) =>
      out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(f.toInt).array())
      val b = RoaringBitmap.bitmapOf(offsets: _*)
      b.runOptimize()
      b.serialize(new DataOutputStream(out))
    }
    ByteBuffer.wrap(out.toByteArray)
  }

  test("posting lists decode by fragment; damaged ones are refused with the file named") {
    val rows = Map(0L -> Seq(0, 1, 5), 3L -> (0 until 5000).toSeq, 4294967295L -> Seq(7))
    val decoded = NGramIndex.decodeTreemap("p", treemap(rows))
    assert(decoded.map { case (f, b) => f -> b.toArray.toSeq } == rows)
    val bytes = treemap(rows).array()
    val cut = ByteBuffer.wrap(java.util.Arrays.copyOf(bytes, bytes.length - 3))
    assert(intercept[CorruptFileException](NGramIndex.decodeTreemap("dir/ngram_postings.lance", cut)).getMessage
      .contains("dir/ngram_postings.lance"))
    val huge = ByteBuffer.wrap(java.util.Arrays.copyOf(bytes, 12))
    huge.order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1L << 40)
    assert(intercept[CorruptFileException](NGramIndex.decodeTreemap("p", huge)).getMessage.contains("claims"))
  }

  private def indexed(text: String): Seq[Int] = {
    val out = Seq.newBuilder[Int]
    NGramIndex.trigrams(text, out += _)
    out.result()
  }

  test("a text's trigrams are those of its lower-cased, ASCII-folded whole, as pylance 14 indexes them") {
    // Tokens of an index pylance 14 built over each of these texts (probed 2026-11-26).
    assert(indexed("Hello World") == Seq("hel", "ell", "llo", "wor", "orl", "rld").map(token))
    assert(indexed("héllo wörld") == indexed("Hello World"))
    assert(indexed("Straße") == Seq("str", "tra", "ras", "ass", "sse").map(token))
    assert(indexed("½x12") == Seq("12x", "2x1", "x12").map(token))
    assert(indexed("ﬁle") == Seq("fil", "ile").map(token))
    // İ lower-cases to i and a combining dot, which no fold removes; Σ and CJK fold to nothing ASCII.
    assert(indexed("İst").isEmpty)
    assert(indexed("ΣΑΣ abc") == Seq(token("abc")) && indexed("日本abc") == Seq(token("abc")))
    assert(indexed("ab😀cd").isEmpty && indexed("ab").isEmpty && indexed("").isEmpty && indexed("x-y_z!").isEmpty)
    // ᴬ folds to upper-case A, whose position upstream computes in wrapping 8-bit arithmetic: 235.
    assert(indexed("ᴬbc") == Seq(322172))
    assert(indexed("abab") == Seq("aba", "bab").map(token))
  }

  test("posting lists are written as upstream serializes a Roaring treemap, and read back") {
    val rows = Map(0L -> Seq(0, 1, 5), 3L -> (0 until 5000).toSeq, 4294967295L -> Seq(7))
    val bytes = NGramWriter.encodeTreemap(rows.toSeq.sortBy(_._1).map { case (f, o) => f -> RoaringBitmap.bitmapOf(o: _*) })
    assert(NGramIndex.decodeTreemap("p", ByteBuffer.wrap(bytes)).map { case (f, b) => f -> b.toArray.toSeq } == rows)
    // One bitmap {0}: count 1, key 0, then the portable format without run containers (cookie 12346).
    assert(NGramWriter.encodeTreemap(Seq(0L -> RoaringBitmap.bitmapOf(0))).map("%02x".format(_)).mkString ==
      "0100000000000000" + "00000000" + "3a300000" + "01000000" + "00000000" + "10000000" + "0000")
  }
}
