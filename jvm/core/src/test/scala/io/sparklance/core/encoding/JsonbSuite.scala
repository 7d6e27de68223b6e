package io.sparklance.core.encoding

import org.scalatest.funsuite.AnyFunSuite

/**
 * JSONB bytes written by pylance 14.0.2 (`pa.json_()` columns, read back raw from the data file) and the text pylance
 * returns for them.
 */
class JsonbSuite extends AnyFunSuite {

  private def hex(s: String): Array[Byte] = s.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  private val PylanceValues: Seq[(String, String)] = Seq(
    "400000011000000120000002615001" -> "{\"a\":1}",
    "4000000410000001100000011000000110000001100000015000002e30000000400000006162797a78400000011000000150000021638000000320000002200000025000000d5001500240000001100000010000000064" -> "{\"a\":\"x\",\"b\":{\"c\":[1,2,{\"d\":null}]},\"y\":false,\"z\":true}",
    "40000006100000001000000110000001100000021000000310000002200000022000000220000002200000022000000220000002426161616b31306b32500550045003500650015002" -> "{\"\":5,\"B\":4,\"a\":3,\"aa\":6,\"k10\":1,\"k2\":2}",
    "80000000" -> "[]",
    "40000000" -> "{}",
    "80000003500000045000000c500000048000000080000001500000048000000040000000" -> "[[],[[]],{}]",
    "200000001000000178" -> "\"x\"",
    "20000000200000025003" -> "3",
    "2000000000000000" -> "null",
    "2000000040000000" -> "true",
    "2000000030000000" -> "false",
    "20000000100000266573632022205c202f20080c0a0d092001201f207f20c3a920e4b8ad20f09f988020f09f9880" -> "\"esc \\\" \\\\ / \\b\\f\\n\\r\\t \\u0001 \\u001f \u007f \u00e9 \u4e2d \ud83d\ude00 \ud83d\ude00\"",
    "200000002000000240ff" -> "-1",
    "20000000200000024080" -> "-128",
    "200000002000000340ff7f" -> "-129",
    "2000000020000002507f" -> "127",
    "20000000200000025080" -> "128",
    "200000002000000250ff" -> "255",
    "2000000020000003500100" -> "256",
    "2000000020000003507fff" -> "32767",
    "2000000020000003508000" -> "32768",
    "200000002000000350ffff" -> "65535",
    "20000000200000055000010000" -> "65536",
    "20000000200000054080000000" -> "-2147483648",
    "20000000200000055080000000" -> "2147483648",
    "200000002000000550ffffffff" -> "4294967295",
    "2000000020000009500000000100000000" -> "4294967296",
    "2000000020000009408000000000000000" -> "-9223372036854775808",
    "2000000020000009507fffffffffffffff" -> "9223372036854775807",
    "2000000020000009508000000000000000" -> "9223372036854775808",
    "200000002000000950ffffffffffffffff" -> "18446744073709551615",
    "20000000200000096043f0000000000000" -> "1.8446744073709552e+19",
    "200000002000000960c3e0000000000000" -> "-9.223372036854776e+18",
    "200000002000000100" -> "0",
    "200000002000000100" -> "0",
    "2000000020000009600000000000000000" -> "0.0",
    "2000000020000009608000000000000000" -> "-0.0",
    "2000000020000009603fb999999999999a" -> "0.1",
    "2000000020000009607e37e43c8800759c" -> "1e+300",
    "2000000020000009603e7ad7f29abcaf48" -> "1e-7",
    "2000000020000009603ff8000000000000" -> "1.5",
    "200000002000000960419d6f3454800000" -> "123456789.125",
    "200000002000000960444b1ae4d6e2ef50" -> "1e+21",
    "2000000020000009604415af1d78b58c40" -> "1e+20",
    "2000000020000009604341c37937e08000" -> "1e+16",
    "200000002000000960430c6bf526340000" -> "1000000000000000.0",
    "2000000020000009604484ea15b273b38a" -> "1.2345678901234568e+22",
    "20000000200000096048725dfa371a19e7" -> "1e+41",
    "2000000020000009603fd3333333333334" -> "0.30000000000000004",
    "2000000020000009600000000000000001" -> "5e-324",
    "2000000020000009607fefffffffffffff" -> "1.7976931348623157e+308",
    "2000000020000009604008000000000000" -> "3.0",
    "2000000020000009603efa36e2eb1c432d" -> "0.000025",
    "2000000020000009603ee4f8b588e368f1" -> "0.00001",
    "2000000020000009603f1a36e2eb1c432d" -> "0.0001",
    "2000000020000009603f50624dd2f1a9fc" -> "0.001",
    "2000000020000009604132c4b000000000" -> "1230000.0",
    "2000000020000009603ff0000000000000" -> "1.0",
    "800000082000000220000002200000091000000100000000400000003000000050000011500140ff603ff8000000000000734000000110000001500000047880000000" -> "[1,-1,1.5,\"s\",null,true,false,{\"x\":[]}]",
    "4000000110000006500000566e6573746564400000011000000450000046646565704000000110000006500000346465657065728000000220000002500000265001800000022000000250000018500280000002200000025000000a500380000001200000025004" -> "{\"nested\":{\"deep\":{\"deeper\":[1,[2,[3,[4]]]]}}}",
    "40000002100000011000000120000002500000106162500180000002200000022000000250015002" -> "{\"a\":1,\"b\":[1,2]}",
    "200000001000000100" -> "\"\\u0000\"",
    "2000000010000006e280a8e280a9" -> "\"\u2028\u2029\"",
    "2000000020000009604415af1d78b58c40" -> "1e+20",
    "2000000020000009603ff3c0ca428c59fb" -> "1.2345678901234567",
    "200000002000000960beb0c6f7a0b5ed8d" -> "-1e-6"
  )

  test("values written by pylance decode to the text pylance returns") {
    PylanceValues.foreach { case (bytes, text) =>
      assert(Jsonb.toJson(hex(bytes)) == text, s"bytes $bytes")
    }
  }

  test("a value inside a larger buffer") {
    val value = hex("400000011000000120000002615001")
    val buf = Array[Byte](9, 9, 9) ++ value ++ Array[Byte](7, 7)
    assert(Jsonb.toJson(buf, 3, value.length) == "{\"a\":1}")
  }

  test("blocks map each value, keeping empty (null) slots empty") {
    val a = hex("400000011000000120000002615001")
    val b = hex("2000000040000000")
    val data = a ++ b
    val offsets = new Array[Byte](8 * 4)
    LittleEndian.putLong(offsets, 8, a.length.toLong)
    LittleEndian.putLong(offsets, 16, a.length.toLong)
    LittleEndian.putLong(offsets, 24, data.length.toLong)
    val out = Jsonb.toJsonBlock(new DataBlock.VariableWidth(64, offsets, data, 3))
    val texts = (0 until 3).map(i => new String(out.data, out.offset(i).toInt, (out.offset(i + 1) - out.offset(i)).toInt, "UTF-8"))
    assert(texts == Seq("{\"a\":1}", "", "true"))
  }

  test("floats use the shortest round-trip digits, laid out as serde_json does") {
    def f(d: Double): String = {
      val bits = java.lang.Long.toHexString(java.lang.Double.doubleToRawLongBits(d))
      Jsonb.toJson(hex("200000002000000960" + ("0" * (16 - bits.length)) + bits))
    }
    assert(f(0.1) == "0.1")
    assert(f(-0.0) == "-0.0")
    assert(f(1e15) == "1000000000000000.0")
    assert(f(1e16) == "1e+16")
    assert(f(1e-5) == "0.00001")
    assert(f(1e-6) == "1e-6")
    assert(f(123.456) == "123.456")
    assert(f(java.lang.Double.MIN_VALUE) == "5e-324")
    assert(f(java.lang.Double.MAX_VALUE) == "1.7976931348623157e+308")
    assert(f(2.0e-3) == "0.002")
    assert(f(Math.pow(2, -1074 + 52)) == "2.2250738585072014e-308")
    assert(f(Double.NaN) == "null")
  }

  test("decimals print exactly") {
    // Decimal64: value -12345, scale 2.
    assert(Jsonb.toJson(hex("20000000" + "2000000a" + "70" + "ffffffffffffcfc7" + "02")) == "-123.45")
    // Decimal128: value 5, scale 3.
    assert(Jsonb.toJson(hex("20000000" + "20000012" + "70" + "00000000000000000000000000000005" + "03")) == "0.005")
  }

  private def malformed(bytes: String): String =
    intercept[EncodingException](Jsonb.toJson(hex(bytes))).getMessage

  test("malformed values fail with EncodingException") {
    assert(malformed("").contains("truncated"))
    assert(malformed("400000")  .contains("truncated"))
    assert(malformed("00000000").contains("invalid header"))
    assert(malformed("20000000").contains("truncated"))
    assert(malformed("2000000010000005616263").contains("overruns")) // string of 5, 3 bytes present
    assert(malformed("40000001100000011000000161").contains("overruns")) // value payload missing
    assert(malformed("40000001100000012000000261").contains("overruns")) // number payload missing
    assert(malformed("4000000120000001200000015050").contains("object key"))
    assert(malformed("800000015000000480000001").contains("needs 8 bytes")) // nested array's entries cut short
    assert(malformed("80000001500000040000000000").contains("invalid header"))
    assert(malformed("1fffffff").contains("invalid header"))
    assert(malformed("9fffffff00000000").contains("array of 536870911"))
    assert(malformed("20000000200000024a00").contains("invalid number type"))
    assert(malformed("200000002000000340ff").contains("overruns"))
    assert(malformed("2000000020000004407f7f7f").contains("signed integer of 3 bytes"))
    assert(malformed("200000002000000360ffff").contains("float of 2 bytes"))
    assert(malformed("2000000070000000").contains("invalid entry type"))
    assert(malformed("2000000050000000").contains("container"))
    intercept[EncodingException](Jsonb.toJson(hex("80000000"), 2, 4))
  }

  test("deep nesting does not overflow the stack") {
    val depth = 100000
    // [[[...]]]: each level is an array of one container entry whose payload is the next level.
    val sizes = new Array[Int](depth + 1)
    sizes(depth) = 4
    for (i <- depth - 1 to 0 by -1) sizes(i) = 8 + sizes(i + 1)
    val buf = java.nio.ByteBuffer.allocate(sizes(0))
    for (i <- 0 until depth) { buf.putInt(0x80000001); buf.putInt(0x50000000 | sizes(i + 1)) }
    buf.putInt(0x80000000)
    val text = Jsonb.toJson(buf.array())
    assert(text.length == 2 * (depth + 1) && text.startsWith("[[[") && text.endsWith("]]]"))
  }
}
