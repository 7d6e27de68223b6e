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

  private def ints(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  test("well-formed UTF-8 of every length is accepted, in and after ASCII runs") {
    val text = "plain ascii, then é ß € 𝄞 and more ascii to cross an eight-byte word".getBytes(UTF_8)
    assert(Utf8.invalidAt(text, 0, text.length) == -1)
    assert(Utf8.invalidAt(Array.emptyByteArray, 0, 0) == -1)
  }

  test("the first byte of a malformed sequence is reported") {
    assert(Utf8.invalidAt(ints('a', 0xFF), 0, 2) == 1)                  // never valid
    assert(Utf8.invalidAt(ints(0xC0, 0x80), 0, 2) == 0)                 // overlong NUL
    assert(Utf8.invalidAt(ints(0xE0, 0x80, 0x80), 0, 3) == 0)           // overlong
    assert(Utf8.invalidAt(ints(0xED, 0xA0, 0x80), 0, 3) == 0)           // a surrogate
    assert(Utf8.invalidAt(ints(0xF4, 0x90, 0x80, 0x80), 0, 4) == 0)     // past U+10FFFF
    assert(Utf8.invalidAt(ints('a', 'b', 0xE2, 0x82), 0, 4) == 2)       // truncated at the end
    assert(Utf8.invalidAt(ints(0xC3, 'a'), 0, 2) == 0)                  // a missing continuation
    val longAscii = ("x" * 16).getBytes(UTF_8) ++ ints(0x80)
    assert(Utf8.invalidAt(longAscii, 0, longAscii.length) == 16)         // a stray continuation after words
  }

  test("a value must start on a character") {
    val b = "aé".getBytes(UTF_8)
    assert(Utf8.startsCharacter(b, 1) && !Utf8.startsCharacter(b, 2) && Utf8.startsCharacter(b, 3))
  }
}
