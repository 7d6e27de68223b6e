package io.sparklance.core.util

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

class Utf8Suite extends AnyFunSuite {
  private def bytes(hex: String): Array[Byte] = hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
  private def invalidAt(b: Array[Byte]) = Utf8.invalidAt(b, 0, b.length)

  test("valid text of every sequence length is valid, whatever the offset") {
    val text = "a\u0000é日本😀\uffff\ud7ff\ue000\udbff\udfff".getBytes(UTF_8)
    assert(invalidAt(text) == -1)
    assert(Utf8.invalidAt(text, 2, text.length) == -1)
    assert(invalidAt(Array.emptyByteArray) == -1)
  }

  test("each kind of invalid sequence is found at its first byte") {
    Seq("FF" -> 0, "61FF" -> 1, "C0AF" -> 0, "C1BF" -> 0, "E080AF" -> 0, "EDA080" -> 0, "F08080AF" -> 0,
      "F4908080" -> 0, "F5808080" -> 0, "6180" -> 1, "61E282" -> 1, "E2" -> 0, "F09F98" -> 0, "C3" -> 0)
      .foreach { case (hex, at) => assert(invalidAt(bytes(hex)) == at, hex) }
  }

  test("agrees with the JDK's strict decoder on random bytes") {
    val r = new scala.util.Random(13)
    (0 until 20000).foreach { _ =>
      val b = Array.fill(r.nextInt(6))((if (r.nextBoolean()) r.nextInt(256) else 0x80 + r.nextInt(64)).toByte)
      val strict = try { UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b)); true } catch { case _: java.nio.charset.CharacterCodingException => false }
      assert((invalidAt(b) == -1) == strict, b.map("%02X".format(_)).mkString)
    }
  }

  test("replacement puts one U+FFFD per maximal invalid subpart, as Rust's from_utf8_lossy and Python do") {
    def lossy(hex: String) = new String(Utf8.replaceInvalid(bytes(hex)), UTF_8)
    assert(lossy("61FF62") == "a\ufffdb")
    assert(lossy("EDA080") == "\ufffd\ufffd\ufffd")
    assert(lossy("E28261") == "\ufffda")
    assert(lossy("F09F98") == "\ufffd")
    assert(lossy("C0AF") == "\ufffd\ufffd")
    assert(lossy("F4908080") == "\ufffd\ufffd\ufffd\ufffd")
    assert(lossy("68C3A9") == "hé")
  }
}
