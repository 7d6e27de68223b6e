package io.sparklance.core.encoding

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The small compressive encodings of 2.1/2.2 one buffer at a time: flat values, variable-width values (mini-block
 * and block forms), run-length encoding (mini-block and block forms), byte stream split and constants.
 */
class KernelsSuite extends AnyFunSuite {
  import EncodingTesting._

  private val maxBytes = 64L << 20

  test("flat values of every width round trip, booleans included, and a short buffer is refused") {
    for (seed <- Seeds; bits <- Seq(1, 8, 16, 32, 64, 128, 256); n <- Seq(0, 1, 7, 8, 9, 1025)) {
      val r = new Random(seed + n)
      val need = if (bits == 1) (n + 7) / 8 else n * bits / 8
      val data = bytes(r, need) ++ bytes(r, 3)
      for (d <- Seq(Decoders21.block(flat(bits), maxBytes).decode(slice(data), n),
                    Decoders21.miniBlock(flat(bits), maxBytes).decode(Array(slice(data)), n))) {
        assert(fixed(d).bitsPerValue == bits && fixedBytes(d) == data.take(need).toSeq, s"$bits bits, $n values")
      }
      if (need > 0) {
        assert(damaged("short")(Decoders21.block(flat(bits), maxBytes).decode(slice(data.take(need - 1)), n)).getMessage ==
          s"flat values ($n x $bits bits) needs $need bytes at offset 0, but the buffer has ${need - 1}")
      }
    }
    for (bad <- Seq(-8L, 3L, 12L, 1L << 21)) {
      assert(damaged(s"width $bad")(Decoders21.block(flat(bad), maxBytes)).getMessage == s"a width of $bad bits")
    }
  }

  /** A mini-block variable-width buffer: n + 1 offsets relative to the buffer start, then the bytes. */
  private def inlineOffsets(ob: Int, vals: Seq[Array[Byte]]): Array[Byte] = {
    val n = vals.size
    val head = (n + 1) * ob / 8
    val out = new Array[Byte](head + vals.map(_.length).sum)
    var at = head
    for (i <- 0 to n) {
      if (ob == 64) LittleEndian.putLong(out, 8 * i, at.toLong) else LittleEndian.putInt(out, 4 * i, at)
      if (i < n) { System.arraycopy(vals(i), 0, out, at, vals(i).length); at += vals(i).length }
    }
    out
  }

  private def randomValues(r: Random, n: Int): Seq[Array[Byte]] = Seq.fill(n)(bytes(r, if (r.nextInt(5) == 0) 0 else r.nextInt(40)))

  test("variable-width mini-block values with 32- and 64-bit offsets round trip") {
    for (seed <- Seeds; ob <- Seq(32, 64); n <- Seq(0, 1, 2, 100, 1025)) {
      val vals = randomValues(new Random(seed * 7 + n), n)
      val got = Decoders21.miniBlock(variable(ob), maxBytes).decode(Array(slice(inlineOffsets(ob, vals))), n)
      assert(strings(got) == vals.map(_.toSeq), s"$ob-bit offsets, $n values")
    }
  }

  test("variable-width mini-block values with damaged offsets are EncodingExceptions") {
    val vals = randomValues(new Random(3), 50)
    val buf = inlineOffsets(32, vals)
    val d = Decoders21.miniBlock(variable(32), maxBytes)
    assert(damaged("too many values")(d.decode(Array(slice(buf.take(40))), 50)).getMessage ==
      "50 variable-width offsets needs 204 bytes at offset 0, but the buffer has 40")
    val past = buf.clone(); LittleEndian.putInt(past, 200, buf.length + 1)
    assert(damaged("last offset past the end")(d.decode(Array(slice(past)), 50)).getMessage ==
      s"variable-width offsets run from 204 to ${buf.length + 1} in a buffer of ${buf.length} bytes")
    val back = buf.clone(); LittleEndian.putInt(back, 40, LittleEndian.getInt(buf, 36) - 1)
    assert(damaged("an offset going back")(d.decode(Array(slice(back)), 50)).getMessage.contains("is out of order"))
    val neg = inlineOffsets(64, vals); LittleEndian.putLong(neg, 0, -1L)
    damaged("a negative 64-bit offset")(Decoders21.miniBlock(variable(64), maxBytes).decode(Array(slice(neg)), 50))
    damaged("16-bit offsets")(Decoders21.miniBlock(variable(16), maxBytes))
    for (seed <- Seeds; m <- mutants(buf, new Random(seed))) survives("mutant")(d.decode(Array(slice(m)), 50))
  }

  /** A block variable-width buffer: u32 offset bits, data start, n + 1 offsets (relative to the data start), data. */
  private def variableBlock(ob: Int, vals: Seq[Array[Byte]], base: Long = 0): Array[Byte] = {
    val n = vals.size
    val header = if (ob == 32) 8 else 16
    val start = header + (n + 1) * ob / 8
    val out = new Array[Byte](start + vals.map(_.length).sum + base.toInt)
    LittleEndian.putInt(out, 0, ob)
    if (ob == 32) LittleEndian.putInt(out, 4, start) else LittleEndian.putLong(out, 8, start.toLong)
    var at = base
    for (i <- 0 to n) {
      if (ob == 64) LittleEndian.putLong(out, header + 8 * i, at) else LittleEndian.putInt(out, header + 4 * i, at.toInt)
      if (i < n) { System.arraycopy(vals(i), 0, out, (start + at).toInt, vals(i).length); at += vals(i).length }
    }
    out
  }

  test("variable-width blocks (dictionaries) round trip, also with offsets that do not start at zero") {
    for (seed <- Seeds; ob <- Seq(32, 64); n <- Seq(0, 1, 300); base <- Seq(0L, 5L)) {
      val vals = randomValues(new Random(seed + n), n)
      val got = Decoders21.block(variable(ob), maxBytes).decode(slice(variableBlock(ob, vals, base)), n)
      assert(strings(got) == vals.map(_.toSeq), s"$ob-bit offsets, $n values, base $base")
    }
  }

  test("damaged variable-width blocks are EncodingExceptions") {
    val vals = randomValues(new Random(4), 30)
    val buf = variableBlock(32, vals)
    val d = Decoders21.block(variable(32), maxBytes)
    assert(damaged("header")(d.decode(slice(buf.take(7)), 30)).getMessage.startsWith("a variable-width block header needs 8 bytes"))
    val bits = buf.clone(); LittleEndian.putInt(bits, 0, 16)
    assert(damaged("offset width")(d.decode(slice(bits), 30)).getMessage == "a variable-width block with 16-bit offsets")
    val start = buf.clone(); LittleEndian.putInt(start, 4, buf.length + 1)
    damaged("data start past the end")(d.decode(slice(start), 30))
    damaged("too many values for the offsets")(d.decode(slice(buf), 31))
    val end = buf.clone(); LittleEndian.putInt(end, 8 + 4 * 30, 1 << 20)
    assert(damaged("last offset past the data")(d.decode(slice(end), 30)).getMessage == "variable-width offset 30 is out of range")
    val wide = variableBlock(64, vals); LittleEndian.putLong(wide, 16, -8L)
    damaged("a negative first 64-bit offset")(Decoders21.block(variable(64), maxBytes).decode(slice(wide), 30))
    for (seed <- Seeds; m <- mutants(buf, new Random(seed))) survives("mutant")(d.decode(slice(m), 30))
  }

  /** Runs of random values (half of them 1-9 long, as sorted keys' runs are, the others up to 255; some of length 0) covering exactly `n` values. */
  private def runs(r: Random, n: Int, vb: Int): (Array[Byte], Array[Byte], Array[Byte]) = {
    val runValues = new java.io.ByteArrayOutputStream()
    val lengths = new java.io.ByteArrayOutputStream()
    val expanded = new java.io.ByteArrayOutputStream()
    var left = n
    while (left > 0) {
      val len = math.min(left, if (r.nextInt(10) == 0) 0 else if (r.nextBoolean()) 1 + r.nextInt(9) else 1 + r.nextInt(255))
      val v = bytes(r, vb)
      runValues.write(v)
      lengths.write(len)
      for (_ <- 0 until len) expanded.write(v)
      left -= len
    }
    (runValues.toByteArray, lengths.toByteArray, expanded.toByteArray)
  }

  test("run-length encoded values round trip, as mini-block buffers and as a block") {
    for (seed <- Seeds; bits <- Seq(8, 16, 24, 32, 64, 128); n <- Seq(0, 1, 255, 256, 1024, 5000)) {
      val (vals, lens, want) = runs(new Random(seed * 13 + n), n, bits / 8)
      val mb = Decoders21.miniBlock(rle(bits), maxBytes).decode(Array(slice(vals), slice(lens)), n)
      assert(fixedBytes(mb) == want.toSeq, s"mini-block rle of $bits bits, $n values")
      // Run values inside a larger buffer, as a chunk's buffers are.
      val pad = 1 + seed % 7
      val inside = new Slice(Array.fill[Byte](pad)(-1) ++ vals ++ Array.fill[Byte](pad)(-1), pad, vals.length)
      val mbInside = Decoders21.miniBlock(rle(bits), maxBytes).decode(Array(inside, slice(lens)), n)
      assert(fixedBytes(mbInside) == want.toSeq, s"mini-block rle of $bits bits, $n values at offset $pad")
      val block = new Array[Byte](8) ++ vals ++ lens
      LittleEndian.putLong(block, 0, vals.length.toLong)
      assert(fixedBytes(Decoders21.block(rle(bits), maxBytes).decode(slice(block), n)) == want.toSeq, s"block rle of $bits, $n")
      assert(Rle.inferCount(rle(bits), slice(block)) == n)
    }
  }

  test("run-length encoded mini-block values decode into a run of chunks' array at any offset") {
    for (seed <- Seeds; bits <- Seq(8, 16, 24, 32, 64, 128); n <- Seq(0, 1, 7, 256, 5000)) {
      val vb = bits / 8
      val (vals, lens, want) = runs(new Random(seed * 31 + n), n, vb)
      val d = Decoders21.miniBlock(rle(bits), maxBytes)
      assert(d.directBits == bits)
      val at = vb * (seed % 5)
      val out = Array.fill[Byte](at + want.length + 3)(-7)
      d.decodeInto(Array(slice(vals), slice(lens)), n, out, at)
      assert(out.slice(at, at + want.length).toSeq == want.toSeq, s"rle of $bits bits, $n values into byte $at")
      assert(out.take(at).forall(_ == -7) && out.drop(at + want.length).forall(_ == -7), "bytes outside the values kept")
      if (n > 0) {
        assert(damaged("past the end")(d.decodeInto(Array(slice(vals), slice(lens)), n, new Array[Byte](want.length - 1), 0))
          .getMessage == s"rle runs of $n $bits-bit values at byte 0 of ${want.length - 1}")
      }
    }
  }

  test("damaged run-length encoded values are EncodingExceptions") {
    val (vals, lens, _) = runs(new Random(9), 1000, 4)
    val d = Decoders21.miniBlock(rle(32), maxBytes)
    assert(damaged("runs too short")(d.decode(Array(slice(vals), slice(lens)), 1001)).getMessage == "rle runs cover 1000 values, 1001 expected")
    damaged("values missing")(d.decode(Array(slice(vals.take(vals.length - 1)), slice(lens)), 1000))
    assert(damaged("a huge count")(d.decode(Array(slice(vals), slice(lens)), Int.MaxValue - 16)).getMessage ==
      s"${lens.length} rle runs cannot cover ${Int.MaxValue - 16} values")
    // Runs that cover 2^30 16-bit values: more than one array holds, refused before anything that size is allocated.
    val many = (1 << 30) / 255 + 1
    assert(damaged("2^30 values")(Decoders21.miniBlock(rle(16), maxBytes)
      .decode(Array(slice(new Array[Byte](2 * many)), slice(Array.fill[Byte](many)(-1))), 1 << 30)).getMessage ==
      s"rle runs of ${1 << 30} 16-bit values")
    val block = new Array[Byte](8) ++ vals ++ lens
    LittleEndian.putLong(block, 0, vals.length.toLong)
    val b = Decoders21.block(rle(32), maxBytes)
    for (bad <- Seq(-4L, 3L, block.length.toLong, Long.MaxValue, Long.MaxValue - 3)) {
      val c = block.clone(); LittleEndian.putLong(c, 0, bad)
      assert(damaged(s"values bytes $bad")(b.decode(slice(c), 1000)).getMessage.startsWith(s"an rle block claims $bad bytes"))
      assert(Rle.inferCount(rle(32), slice(c)) == -1)
    }
    assert(damaged("lengths cut")(b.decode(slice(block.take(block.length - lens.length / 2)), 1000)).getMessage.contains("lengths"))
    damaged("header")(b.decode(slice(block.take(5)), 1000))
    damaged("1-bit rle")(Decoders21.block(rle(1), maxBytes))
    for (seed <- Seeds; m <- mutants(block, new Random(seed))) survives("mutant")(b.decode(slice(m), 1000))
  }

  test("byte stream split values round trip and a short buffer is refused") {
    for (seed <- Seeds; bits <- Seq(16, 32, 64); n <- Seq(0, 1, 1000)) {
      val r = new Random(seed + n)
      val vb = bits / 8
      val want = bytes(r, n * vb)
      val split = new Array[Byte](n * vb)
      for (i <- 0 until n; j <- 0 until vb) split(j * n + i) = want(i * vb + j)
      val got = Decoders21.miniBlock(byteStreamSplit(bits), maxBytes).decode(Array(slice(split)), n)
      assert(fixedBytes(got) == want.toSeq, s"$bits bits, $n values")
      if (n > 0) damaged("short")(Decoders21.miniBlock(byteStreamSplit(bits), maxBytes).decode(Array(slice(split.drop(1))), n))
    }
  }

  test("constants repeat their value and are bounded by the allowed bytes") {
    for (n <- Seq(0, 1, 1000)) {
      val got = Decoders21.block(constant(Array[Byte](1, 2, 3, 4)), maxBytes).decode(slice(Array.emptyByteArray), n)
      assert(fixedBytes(got) == Seq.fill(n)(Seq[Byte](1, 2, 3, 4)).flatten)
    }
    assert(damaged("too large")(Decoders21.block(constant(Array[Byte](1, 2, 3, 4)), 100).decode(slice(Array.emptyByteArray), 26))
      .getMessage == "a constant of 26 values is too large")
  }

  test("encodings this reader does not implement are UnsupportedEncodingExceptions naming them") {
    val e = intercept[UnsupportedEncodingException](Decoders21.miniBlock(constant(Array[Byte](1)), maxBytes))
    assert(e.encoding == "constant" && e.getMessage == "encoding `constant` in a mini-block page")
    assert(Decoders21.describe(general(io.sparklance.proto.Encodings21Protos.CompressionScheme.COMPRESSION_ALGORITHM_ZSTD,
      fixedSizeList(4, validity = false, flat(32)))) == "general(zstd, fixed_size_list4(flat32))")
    damaged("byte stream split over non-flat")(Decoders21.miniBlock(io.sparklance.proto.Encodings21Protos.CompressiveEncoding.newBuilder()
      .setByteStreamSplit(io.sparklance.proto.Encodings21Protos.ByteStreamSplit.newBuilder().setValues(rle(8))).build(), maxBytes))
  }
}
