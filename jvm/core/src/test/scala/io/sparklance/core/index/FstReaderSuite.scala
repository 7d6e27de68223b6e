package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException

/**
 * Damaged token dictionaries and posting lists fail with [[CorruptFileException]] naming the file, never with an
 * index error or a hang (pylance's files are read back in tests/test_full_text_search.py).
 */
class FstReaderSuite extends AnyFunSuite {
  private def header(version: Long, size: Int): Array[Byte] = {
    val b = java.nio.ByteBuffer.allocate(size).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    b.putLong(version)
    b.array()
  }

  test("a dictionary too short, or of an unknown version, is refused by name") {
    val short = intercept[CorruptFileException](new FstReader(new Array[Byte](10), "part_0_tokens.lance"))
    assert(short.getMessage.contains("part_0_tokens.lance") && short.getMessage.contains("has 10 bytes"))
    val version = intercept[CorruptFileException](new FstReader(header(9, 40), "p"))
    assert(version.getMessage.contains("FST of version 9"))
  }

  test("seeded random bytes after a valid header: every lookup and walk answers or fails as corrupt") {
    val r = new Random(20261126)
    (0 until 2000).foreach { _ =>
      val bytes = header(3, 48 + r.nextInt(64))
      (8 until bytes.length).foreach(i => bytes(i) = r.nextInt(256).toByte)
      // A root address inside the nodes, most of the time.
      val end = bytes.length - 4
      java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(end - 8, (16 + r.nextInt(end - 32)).toLong)
      try {
        val fst = new FstReader(bytes, "p")
        fst.get(Array.fill(r.nextInt(4))(r.nextInt(256).toByte))
        var visited = 0
        fst.forEach((_: Array[Byte], _: Int, _: Long) => visited += 1)
      } catch {
        case e: CorruptFileException => assert(e.getMessage.contains("Cannot read p"))
      }
    }
  }

  test("a posting list whose blocks disagree with its length, or end early, is refused") {
    val tail = Array[Byte](0, 0, 0, 0, 0, 1, 3, 1, 1, 2)
    val ok = PostingList.decode(Array(tail), 3, "inv")
    assert(ok.docs.toSeq == Seq(0, 1, 4) && ok.frequencies.toSeq == Seq(1, 1, 2))
    assert(intercept[CorruptFileException](PostingList.decode(Array(tail), 200, "inv")).getMessage
      .contains("200 documents has 1 blocks, not 2"))
    assert(intercept[CorruptFileException](PostingList.decode(Array(tail.take(7)), 3, "inv")).getMessage
      .contains("ends inside a varint"))
    val decreasing = Array[Byte](0, 0, 0, 0, 5, 0, 1, 1)
    assert(intercept[CorruptFileException](PostingList.decode(Array(decreasing), 2, "inv")).getMessage
      .contains("do not increase"))
    val full = new Array[Byte](4 + 4 + 1 + 16)
    full(8) = 33.toByte
    assert(intercept[CorruptFileException](PostingList.decode(Array(full), 128, "inv")).getMessage.contains("33 bits"))
  }
}
