package io.sparklance.core.encoding

import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

class GrowableSuite extends AnyFunSuite {

  test("Bytes appends a range of an Arrow buffer, and an empty one") {
    val allocator = new RootAllocator()
    try {
      val buf = allocator.buffer(8)
      try {
        (0 until 8).foreach(i => buf.setByte(i.toLong, 10 + i))
        val b = new Growable.Bytes(4)
        b.add(buf, 2L, 5)
        b.add(buf, 8L, 0)
        assert(b.toArray.toSeq == Seq[Byte](12, 13, 14, 15, 16))
        assert(b.view().remaining == 5)
      } finally buf.close()
    } finally allocator.close()
  }

  test("Bytes refuses to grow past MAX_LENGTH, naming the length asked for") {
    val b = new Growable.Bytes(16)
    b.u64(1L)
    val e = intercept[IllegalStateException](b.ensure(Int.MaxValue))
    assert(e.getMessage == s"Cannot grow a buffer to ${8L + Int.MaxValue} bytes: a Java array holds at most " +
      s"${Growable.MAX_LENGTH}. Write smaller pages or smaller values.")
    assert(b.size == 8)
  }

  test("clearAndShrink gives back an array past 1 MiB; clear keeps it") {
    val b = new Growable.Bytes(256)
    b.zeros((1 << 20) + 1)
    val grown = b.data
    b.clear()
    assert(b.size == 0 && (b.data eq grown))
    b.zeros((1 << 20) + 1)
    b.clearAndShrink()
    assert(b.size == 0 && b.data.length == 256)
    b.zeros(1000)
    val small = b.data
    b.clearAndShrink()
    assert(b.data eq small)

    val l = new Growable.Longs(64)
    (0 until (1 << 17) + 1).foreach(i => l.add(i.toLong))
    l.clearAndShrink()
    assert(l.size == 0 && l.data.length == 64)
  }

  test("Longs.last is the last value, or 0 when empty") {
    val l = new Growable.Longs(2)
    assert(l.last() == 0L)
    (1 to 40).foreach(i => l.add(i * 3L))
    assert(l.last() == 120L && l.size == 40 && l.data(39) == 120L)
  }

  test("Bits counts its set bits across aligned and unaligned appends") {
    val allocator = new RootAllocator()
    try {
      val buf = allocator.buffer(4)
      try {
        buf.setInt(0L, 0x0000F0F5)
        val bits = new Growable.Bits(8)
        bits.append(buf, 0L, 12)
        bits.appendBit(true)
        bits.append(buf, 4L, 8)
        bits.appendConstant(false, 20)
        assert(bits.size == 41 && bits.bytes == 6)
        assert(bits.ones == Integer.bitCount(0x0F5) + 1 + Integer.bitCount((0xF0F5 >>> 4) & 0xFF))
        assert((0 until 12).forall(i => bits.get(i) == (((0xF0F5 >>> i) & 1) == 1)))
        bits.clearAndShrink()
        assert(bits.size == 0 && bits.ones == 0)
      } finally buf.close()
    } finally allocator.close()
  }
}
