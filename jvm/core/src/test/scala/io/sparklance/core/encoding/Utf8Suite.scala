package io.sparklance.core.encoding

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

class Utf8Suite extends AnyFunSuite {

  private def bytes(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  test("well-formed UTF-8 of every length is accepted, in and after ASCII runs") {
    val text = "plain ascii, then é ß € 𝄞 and more ascii to cross an eight-byte word".getBytes(UTF_8)
    assert(Utf8.firstInvalid(text, 0, text.length) == -1)
    assert(Utf8.firstInvalid(Array.emptyByteArray, 0, 0) == -1)
  }

  test("the first byte of a malformed sequence is reported") {
    assert(Utf8.firstInvalid(bytes('a', 0xFF), 0, 2) == 1)                  // never valid
    assert(Utf8.firstInvalid(bytes(0xC0, 0x80), 0, 2) == 0)                 // overlong NUL
    assert(Utf8.firstInvalid(bytes(0xE0, 0x80, 0x80), 0, 3) == 0)           // overlong
    assert(Utf8.firstInvalid(bytes(0xED, 0xA0, 0x80), 0, 3) == 0)           // a surrogate
    assert(Utf8.firstInvalid(bytes(0xF4, 0x90, 0x80, 0x80), 0, 4) == 0)     // past U+10FFFF
    assert(Utf8.firstInvalid(bytes('a', 'b', 0xE2, 0x82), 0, 4) == 2)       // truncated at the end
    assert(Utf8.firstInvalid(bytes(0xC3, 'a'), 0, 2) == 0)                  // a missing continuation
    val longAscii = ("x" * 16).getBytes(UTF_8) ++ bytes(0x80)
    assert(Utf8.firstInvalid(longAscii, 0, longAscii.length) == 16)         // a stray continuation after words
  }

  test("a value must start on a character") {
    val b = "aé".getBytes(UTF_8)
    assert(Utf8.startsCharacter(b, 1) && !Utf8.startsCharacter(b, 2) && Utf8.startsCharacter(b, 3))
  }
}
