package io.sparklance.core.encoding

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * FastLanes blocks at every type and bit width, and the bitpacked encodings built on them: inline bitpacking (a
 * mini-block chunk, and whole buffers of chunks) and out-of-line bitpacking, at lengths around the 1024-value block.
 */
class BitpackingSuite extends AnyFunSuite {
  import EncodingTesting._

  private val types = Seq(8, 16, 32, 64)
  private val maxBytes = 64L << 20

  private def pack(typeBits: Int, width: Int, in: Array[Byte]): Array[Byte] = {
    val out = new Array[Byte](FastLanes.packedBytes(width))
    FastLanes.pack(typeBits, width, in, 0, out, 0)
    out
  }

  private def unpack(typeBits: Int, width: Int, in: Array[Byte]): Array[Byte] = {
    val out = new Array[Byte](FastLanes.BLOCK * typeBits / 8)
    FastLanes.unpack(typeBits, width, in, 0, out, 0)
    out
  }

  for (t <- types) {
    test(s"FastLanes $t-bit blocks round trip at every width 0..$t") {
      for (seed <- Seeds; w <- 0 to t) {
        val r = new Random(seed * 1000 + w)
        val in = values(r, FastLanes.BLOCK, t / 8, w)
        val packed = pack(t, w, in)
        assert(packed.length == w * 128)
        assert(unpack(t, w, packed).sameElements(in), s"type $t width $w seed $seed")
      }
    }
  }

  test("FastLanes keeps only the low bits of wider values, and the extremes of each width survive") {
    for (t <- types; w <- 0 to t) {
      val r = new Random(t * 100 + w)
      val wide = values(r, FastLanes.BLOCK, t / 8, t)
      val low = longs(wide, FastLanes.BLOCK, t / 8).map(v => if (w == 64) v else v & ((1L << w) - 1))
      assert(longs(unpack(t, w, pack(t, w, wide)), FastLanes.BLOCK, t / 8) == low, s"type $t width $w")
      val max = if (w == 64) -1L else (1L << w) - 1
      val ones = new Array[Byte](FastLanes.BLOCK * t / 8)
      for (i <- 0 until FastLanes.BLOCK; b <- 0 until t / 8) ones(i * t / 8 + b) = (max >>> (8 * b)).toByte
      assert(unpack(t, w, pack(t, w, ones)).sameElements(ones), s"all ones, type $t width $w")
    }
  }

  /**
   * A block packed bit by bit as the layout reads (FastLanes' doc): the value at (row, lane), element
   * `order(row / 8) * 16 + (row % 8) * 128 + lane`, fills bits [row * w, row * w + w) of lane `lane`'s sequence of
   * T-bit little-endian words, word k of the lane being word `k * lanes + lane` of the block.
   */
  private def packBitByBit(t: Int, w: Int, in: Array[Byte]): Array[Byte] = {
    val order = Array(0, 4, 2, 6, 1, 5, 3, 7)
    val lanes = FastLanes.BLOCK / t
    val out = new Array[Byte](FastLanes.packedBytes(w))
    val vals = longs(in, FastLanes.BLOCK, t / 8)
    for (lane <- 0 until lanes; row <- 0 until t; b <- 0 until w) {
      val v = vals(order(row / 8) * 16 + (row % 8) * 128 + lane)
      if (((v >>> b) & 1L) != 0) {
        val p = row * w + b
        val word = (p / t) * lanes + lane
        val bit = word * t + p % t
        out(bit / 8) = (out(bit / 8) | (1 << (bit % 8))).toByte
      }
    }
    out
  }

  test("FastLanes packs every type and width exactly as the layout places each bit, whatever the higher bits") {
    for (seed <- Seeds; t <- types; w <- 0 to t) {
      val r = new Random(seed * 7919 + t * 101 + w)
      // Values of the full type width: the bits above `w` must be dropped.
      val in = values(r, FastLanes.BLOCK, t / 8, if (r.nextBoolean()) t else w)
      val out = new Array[Byte](FastLanes.packedBytes(w) + 16)
      java.util.Arrays.fill(out, 0x5A.toByte)
      FastLanes.pack(t, w, in, 0, out, 8)
      assert(out.slice(8, 8 + FastLanes.packedBytes(w)).sameElements(packBitByBit(t, w, in)), s"type $t width $w seed $seed")
      assert(out.take(8).forall(_ == 0x5A) && out.takeRight(8).forall(_ == 0x5A), s"bytes outside the block, type $t width $w")
    }
  }

  test("FastLanes refuses widths beyond the type and unknown types") {
    val in = new Array[Byte](8 * FastLanes.BLOCK)
    val out = new Array[Byte](8 * FastLanes.BLOCK)
    assert(intercept[IllegalArgumentException](FastLanes.unpack(8, 9, in, 0, out, 0)).getMessage == "bit width 9 for a 8-bit type")
    assert(intercept[IllegalArgumentException](FastLanes.pack(16, -1, in, 0, out, 0)).getMessage == "bit width -1 for a 16-bit type")
    assert(intercept[IllegalArgumentException](FastLanes.unpack(24, 3, in, 0, out, 0)).getMessage == "FastLanes type width 24")
  }

  // ---- inline bitpacking: one chunk = a width word and one block ----

  private def inlineChunk(t: Int, w: Int, vals: Array[Byte]): Array[Byte] = {
    val block = java.util.Arrays.copyOf(vals, FastLanes.BLOCK * t / 8)
    val word = new Array[Byte](t / 8)
    word(0) = w.toByte
    word ++ pack(t, w, block)
  }

  test("inline-bitpacked chunks of 0, 1, 1023 and 1024 values round trip at every type and width") {
    for (t <- types; w <- 0 to t; n <- Seq(0, 1, 1023, 1024)) {
      val r = new Random(t * 7919 + w * 31 + n)
      val vals = values(r, n, t / 8, w)
      val decoder = Decoders21.miniBlock(inlineBitpacking(t), maxBytes)
      val got = decoder.decode(Array(slice(inlineChunk(t, w, vals))), n)
      assert(fixed(got).bitsPerValue == t)
      assert(fixedBytes(got) == vals.toSeq, s"type $t width $w n $n")
    }
  }

  test("a damaged inline-bitpacked chunk is an EncodingException") {
    val chunk = inlineChunk(32, 5, values(new Random(1), 1024, 4, 5))
    val d = Decoders21.miniBlock(inlineBitpacking(32), maxBytes)
    assert(damaged("1025 values")(d.decode(Array(slice(chunk)), 1025)).getMessage ==
      "1025 values in one inline-bitpacked chunk (at most 1024)")
    assert(damaged("truncated")(d.decode(Array(slice(chunk.take(chunk.length - 1))), 1024)).getMessage ==
      "an inline-bitpacked chunk of width 5 needs 640 bytes at offset 4, but the buffer has 643")
    assert(damaged("no width")(d.decode(Array(slice(chunk.take(3))), 10)).getMessage.startsWith("the bit width"))
    val wide = chunk.clone(); wide(0) = 33
    assert(damaged("width 33")(d.decode(Array(slice(wide)), 1024)).getMessage ==
      "an inline-bitpacked chunk of 32-bit values claims width 33")
    assert(damaged("24-bit type")(Decoders21.miniBlock(inlineBitpacking(24), maxBytes)).isInstanceOf[UnsupportedEncodingException])
    for (seed <- Seeds; m <- mutants(chunk, new Random(seed))) survives("mutant")(d.decode(Array(slice(m)), 1024))
  }

  /** A buffer of inline-bitpacked chunks holding `vals`, each chunk at the width its values need. */
  private def inlineBlocks(t: Int, vals: Array[Byte], n: Int): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    for (from <- 0 until n by FastLanes.BLOCK) {
      val to = math.min(n, from + FastLanes.BLOCK)
      val part = vals.slice(from * t / 8, to * t / 8)
      val or = longs(part, to - from, t / 8).foldLeft(0L)(_ | _)
      out.write(inlineChunk(t, 64 - java.lang.Long.numberOfLeadingZeros(or), part))
    }
    out.toByteArray
  }

  test("inline-bitpacked block buffers round trip at block boundaries") {
    for (seed <- Seeds; t <- types; n <- Boundaries) {
      val r = new Random(seed + n)
      val vals = values(r, n, t / 8, r.nextInt(t + 1))
      val got = Decoders21.block(inlineBitpacking(t), maxBytes).decode(slice(inlineBlocks(t, vals, n)), n)
      assert(fixedBytes(got) == vals.toSeq, s"type $t n $n")
    }
  }

  test("a damaged inline-bitpacked block buffer is an EncodingException") {
    val n = 2049
    val buf = inlineBlocks(16, values(new Random(3), n, 2, 11), n)
    val d = Decoders21.block(inlineBitpacking(16), maxBytes)
    damaged("last chunk cut")(d.decode(slice(buf.take(buf.length - 1)), n))
    damaged("a chunk too many")(d.decode(slice(buf), n + 1024))
    assert(damaged("24-bit type")(Decoders21.block(inlineBitpacking(24), maxBytes)).getMessage.contains("24-bit values"))
    damaged("a count past the allowed bytes")(Decoders21.block(inlineBitpacking(64), 1000).decode(slice(buf), 1 << 30))
    for (seed <- Seeds; m <- mutants(buf, new Random(seed))) survives("mutant")(d.decode(slice(m), n))
  }

  // ---- out-of-line bitpacking: whole blocks back to back, a tail packed or raw ----

  private def outOfLine(t: Int, w: Int, vals: Array[Byte], n: Int, packTail: Boolean): Array[Byte] = {
    val vb = t / 8
    val out = new java.io.ByteArrayOutputStream()
    for (from <- 0 until n by FastLanes.BLOCK) {
      val to = math.min(n, from + FastLanes.BLOCK)
      val part = vals.slice(from * vb, to * vb)
      if (to - from == FastLanes.BLOCK || packTail) out.write(pack(t, w, java.util.Arrays.copyOf(part, FastLanes.BLOCK * vb)))
      else out.write(part)
    }
    out.toByteArray
  }

  test("out-of-line bitpacking round trips with raw and packed tails at block boundaries") {
    for (seed <- Seeds.take(3); t <- types; n <- Boundaries; packTail <- Seq(false, true)) {
      val r = new Random(seed * 31 + n)
      val w = r.nextInt(t + 1)
      val vals = values(r, n, t / 8, w)
      val got = Decoders21.block(outOfLineBitpacking(t, w), maxBytes).decode(slice(outOfLine(t, w, vals, n, packTail)), n)
      assert(fixedBytes(got) == vals.toSeq, s"type $t width $w n $n packed tail $packTail")
    }
  }

  test("out-of-line bitpacking refuses payloads of the wrong length and impossible widths") {
    val vals = values(new Random(5), 1500, 2, 3)
    val buf = outOfLine(16, 3, vals, 1500, packTail = false)
    val d = Decoders21.block(outOfLineBitpacking(16, 3), maxBytes)
    assert(damaged("short")(d.decode(slice(buf.take(buf.length - 2)), 1500)).getMessage ==
      "out-of-line bitpacked payload of 1334 bytes for 1500 3-bit values")
    damaged("count too large")(d.decode(slice(buf), 1501))
    damaged("count too large by a block")(d.decode(slice(buf), 1500 + 1024))
    damaged("width above the type")(Decoders21.block(outOfLineBitpacking(8, 9), maxBytes))
    damaged("unknown type")(Decoders21.block(outOfLineBitpacking(24, 3), maxBytes))
    damaged("1-bit type")(Decoders21.block(outOfLineBitpacking(1, 1), maxBytes))
    for (seed <- Seeds; m <- mutants(buf, new Random(seed))) survives("mutant")(d.decode(slice(m), 1500))
  }
}
