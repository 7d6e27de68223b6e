package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}

import org.scalatest.funsuite.AnyFunSuite

class RTreeWriterSuite extends AnyFunSuite {

  private def wkb(kind: Int, coords: Double*): Array[Byte] = {
    val b = ByteBuffer.allocate(9 + 8 * coords.size).order(ByteOrder.LITTLE_ENDIAN)
    b.put(1.toByte).putInt(kind)
    if (kind != 1) b.putInt(coords.size / 2)
    coords.foreach(b.putDouble)
    java.util.Arrays.copyOf(b.array(), b.position())
  }

  private def bounds(bytes: Array[Byte]): (Seq[Double], Int) = {
    val box = Array(Double.PositiveInfinity, Double.PositiveInfinity, Double.NegativeInfinity, Double.NegativeInfinity)
    val end = Wkb.bounds(bytes, 0, box)
    (box.toSeq, end)
  }

  test("the bounds of WKB points, lines and collections, in either byte order, with Z and M ignored") {
    assert(bounds(wkb(1, 1.5, -2.0)) == (Seq(1.5, -2.0, 1.5, -2.0), 21))
    assert(bounds(wkb(2, 0, 0, 3, -1, 2, 5))._1 == Seq(0.0, -1.0, 3.0, 5.0))
    val big = ByteBuffer.allocate(21).order(ByteOrder.BIG_ENDIAN).put(0.toByte).putInt(1).putDouble(7).putDouble(8).array()
    assert(bounds(big) == (Seq(7.0, 8.0, 7.0, 8.0), 21))
    // ISO POINT Z (1001) inside a GEOMETRYCOLLECTION with a plain point.
    val z = ByteBuffer.allocate(29).order(ByteOrder.LITTLE_ENDIAN).put(1.toByte).putInt(1001).putDouble(-4).putDouble(9)
      .putDouble(100).array()
    val head = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).put(1.toByte).putInt(7).putInt(2).array()
    val collection = head ++ z ++ wkb(1, 2, 3)
    assert(bounds(collection) == (Seq(-4.0, 3.0, 2.0, 9.0), collection.length))
    // POINT EMPTY (NaN NaN) and an empty line widen nothing.
    assert(bounds(wkb(1, Double.NaN, Double.NaN))._1 == Seq(Double.PositiveInfinity, Double.PositiveInfinity,
      Double.NegativeInfinity, Double.NegativeInfinity))
    assert(bounds(wkb(2))._1.head == Double.PositiveInfinity)
  }

  test("malformed WKB is refused with where it breaks, never read past its end") {
    def error(bytes: Array[Byte]): String = intercept[Wkb.Malformed](bounds(bytes)).getMessage
    assert(error(Array[Byte](1, 1, 0)) == "it ends at byte 3, before the 5 bytes at byte 0")
    assert(error(Array[Byte](2, 1, 0, 0, 0)) == "byte order 2 at byte 0 is neither 0 nor 1")
    assert(error(wkb(1, 1, 2).take(15)) == "it ends at byte 15, before the 16 bytes at byte 5")
    val line = wkb(2, 0, 0, 1, 1)
    ByteBuffer.wrap(line).order(ByteOrder.LITTLE_ENDIAN).putInt(5, Int.MaxValue)
    assert(error(line) == "2147483647 points at byte 5 run past the value's 41 bytes")
    assert(error(wkb(17, 1, 2)).startsWith("geometry type 17 at byte 0 is not"))
  }

  test("Hilbert indexes walk the grid cell by cell: the first 4096 fill the 64 x 64 corner, each next to the last") {
    val at = new Array[Int](4096)
    java.util.Arrays.fill(at, -1)
    for (x <- 0 until 64; y <- 0 until 64) {
      val h = Hilbert.index(x, y)
      assert(h >= 0 && h < 4096 && at(h) == -1, s"($x, $y) -> $h")
      at(h) = x * 64 + y
    }
    for (h <- 1 until 4096) {
      val (a, b) = (at(h - 1), at(h))
      assert(math.abs(a / 64 - b / 64) + math.abs(a % 64 - b % 64) == 1, s"index $h")
    }
    assert(Hilbert.index(0, 0) == 0)
    // The whole grid: 2^32 values, the corner opposite the start is in the last quarter.
    assert((Hilbert.index(65535, 0).toLong & 0xFFFFFFFFL) == 0xFFFFFFFFL)
  }

  test("bbox numbers are written as serde_json writes them (pylance 14's index metadata)") {
    val n = RTreeWriter.JsonNumber
    // Observed in pylance 14's page_data.lance metadata.
    assert(Seq(1.0, 2.0, 12345678.9, -1e-7, 1e20, 0.0001, 0.205684306461984, 99.91993182784583).map(n(_)) ==
      Seq("1.0", "2.0", "12345678.9", "-1e-7", "1e+20", "0.0001", "0.205684306461984", "99.91993182784583"))
    assert(Seq(0.0, -0.0, 1.5e300, 1e15, 1e16, 123.0, 1e-5, 1.25e-5).map(n(_)) ==
      Seq("0.0", "-0.0", "1.5e+300", "1000000000000000.0", "1e+16", "123.0", "0.00001", "0.0000125"))
  }
}
