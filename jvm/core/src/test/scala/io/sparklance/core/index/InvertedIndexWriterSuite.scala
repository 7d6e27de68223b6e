package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The writers of INVERTED index parts read back by the readers: token dictionaries ([[FstWriter]] by
 * [[FstReader]]) and posting lists ([[PostingWriter]] by [[PostingList]]), on seeded random input. That pylance
 * reads what they write, with its own values, is proved in tests/test_fts_index_build.py.
 */
class InvertedIndexWriterSuite extends AnyFunSuite {

  private def roundTrip(keys: Seq[Array[Byte]]): Unit = {
    val sorted = keys.map(_.toSeq).distinct.map(_.toArray).sortWith((a, b) => java.util.Arrays.compareUnsigned(a, b) < 0)
    val w = new FstWriter()
    sorted.zipWithIndex.foreach { case (k, i) => w.add(k, (i * 7919L) % 1000003L) }
    val fst = new FstReader(w.finish(), "t")
    assert(fst.size == sorted.size)
    sorted.zipWithIndex.foreach { case (k, i) => assert(fst.get(k) == (i * 7919L) % 1000003L) }
    val listed = scala.collection.mutable.ArrayBuffer.empty[Seq[Byte]]
    fst.forEach((key: Array[Byte], length: Int, _: Long) => listed += key.take(length).toSeq)
    assert(listed == sorted.map(_.toSeq))
    assert(fst.get("not-a-key-at-all".getBytes(StandardCharsets.UTF_8)) == -1)
  }

  test("seeded random dictionaries, with nodes of one to 256 transitions, read back key by key and in order") {
    val r = new Random(20261126)
    (0 until 60).foreach { round =>
      val alphabet = if (round % 3 == 0) 256 else 3 + r.nextInt(40)
      val keys = Seq.fill(1 + r.nextInt(400))(Array.fill(r.nextInt(12))((r.nextInt(alphabet) + (if (alphabet == 256) 0 else 97)).toByte))
      roundTrip(keys.filter(_.nonEmpty))
    }
    roundTrip(Seq("".getBytes, "a".getBytes, "ab".getBytes))
    roundTrip((0 until 256).map(b => Array(b.toByte)))
  }

  test("keys out of order are refused") {
    val w = new FstWriter()
    w.add("b".getBytes, 0)
    intercept[IllegalArgumentException](w.add("a".getBytes, 1))
  }

  test("seeded random posting lists read back: documents and frequencies, blocks of 128 and a tail") {
    val r = new Random(7)
    (0 until 50).foreach { _ =>
      val numDocs = 1 + r.nextInt(5000)
      val lengths = Array.fill(numDocs)(1 + r.nextInt(300))
      val docs = (0 until numDocs).filter(_ => r.nextInt(3) == 0).toArray match {
        case a if a.isEmpty => Array(0)
        case a => a
      }
      val freqs = Array.fill(docs.length)(1 + (if (r.nextInt(10) == 0) r.nextInt(100000) else r.nextInt(3)))
      val w = PostingWriter.encode(docs, freqs, docs.length, null, lengths, numDocs, lengths.sum.toFloat / numDocs)
      val list = PostingList.decode(w.blocks, docs.length, "t")
      assert(list.docs.toSeq == docs.toSeq)
      assert(list.frequencies.toSeq == freqs.toSeq)
      assert(w.impacts.length == w.blocks.length + (w.blocks.length + 31) / 32)
    }
  }

  test("document lengths quantize as pylance's impact entries record them") {
    assert((0 to 7).map(PostingWriter.quantizeLength) == (0 to 7))
    assert(PostingWriter.quantizeLength(9) == 9 && PostingWriter.quantizeLength(24) == 20)
    assert(PostingWriter.quantizeLength(34) == 24 && PostingWriter.quantizeLength(40) == 26)
  }
}
