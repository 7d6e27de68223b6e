package io.sparklance.core.encoding

import scala.util.Random
import scala.util.control.NonFatal

import org.scalatest.Assertions

import io.sparklance.proto.Encodings21Protos._

/** Seeds, encoding messages, byte helpers and the damage checks shared by the encoding suites. */
object EncodingTesting extends Assertions {
  /** The fixed seeds every randomized test runs with: small, so that the suites stay fast. */
  val Seeds: Seq[Int] = Seq(1, 2, 3, 7, 42)

  /** Value counts around FastLanes blocks and mini-block chunk sizes. */
  val Boundaries: Seq[Int] = Seq(0, 1, 2, 7, 8, 9, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097)

  /**
   * Runs `body` on damaged input and checks that it fails with one of the library's decoding errors carrying a
   * message: never an index, array size or memory error. Returns the error for further checks.
   */
  def damaged(what: String)(body: => Any): RuntimeException = {
    val e = try { body; null } catch {
      case e: EncodingException => e
      case e: UnsupportedEncodingException => e
      case NonFatal(other) => fail(s"$what: expected an EncodingException, got $other", other)
    }
    if (e == null) fail(s"$what: damaged input decoded without an error")
    assert(e.getMessage != null && e.getMessage.nonEmpty, what)
    e
  }

  /**
   * Runs `body` on randomly damaged input: it either succeeds (the damage was harmless or undetectable) or fails
   * with the library's decoding errors, never with another exception.
   */
  def survives(what: String)(body: => Any): Unit =
    try body
    catch {
      case e: EncodingException => assert(e.getMessage.nonEmpty, what)
      case e: UnsupportedEncodingException => assert(e.getMessage.nonEmpty, what)
      case NonFatal(other) => fail(s"$what: expected success or an EncodingException, got $other", other)
    }

  /** Random bytes of `n`. */
  def bytes(r: Random, n: Int): Array[Byte] = { val b = new Array[Byte](n); r.nextBytes(b); b }

  /** `n` little-endian values of `bytesPer` bytes each, random in their low `bits` bits. */
  def values(r: Random, n: Int, bytesPer: Int, bits: Int): Array[Byte] = {
    val out = new Array[Byte](n * bytesPer)
    val mask = if (bits >= 64) -1L else (1L << bits) - 1
    for (i <- 0 until n) {
      val v = r.nextLong() & mask
      for (b <- 0 until bytesPer) out(i * bytesPer + b) = (v >>> (8 * b)).toByte
    }
    out
  }

  /** Values of `bytesPer` bytes as unsigned longs (for readable failures). */
  def longs(data: Array[Byte], n: Int, bytesPer: Int): Seq[Long] =
    (0 until n).map(i => LittleEndian.getUnsigned(data, i * bytesPer, bytesPer))

  def slice(a: Array[Byte]): Slice = Slice.of(a)

  /** `a` with bytes [from, to) removed. */
  def cut(a: Array[Byte], from: Int, to: Int): Array[Byte] = a.take(from) ++ a.drop(to)

  /** Damaged copies of `a`: every shorter prefix at a few cut points, and a few single-byte corruptions. */
  def mutants(a: Array[Byte], r: Random, flips: Int = 8): Seq[Array[Byte]] = {
    val cuts = (Seq(0, 1, a.length / 2, a.length - 1) ++ Seq.fill(4)(if (a.isEmpty) 0 else r.nextInt(a.length)))
      .filter(n => n >= 0 && n < a.length).distinct.map(n => a.take(n))
    val flipped = if (a.isEmpty) Nil else Seq.fill(flips) {
      val c = a.clone()
      val i = r.nextInt(a.length)
      c(i) = (c(i) ^ (1 << r.nextInt(8)) ^ (if (r.nextBoolean()) 0xFF else 0)).toByte
      c
    }
    cuts ++ flipped
  }

  // ---- encoding messages ----

  def flat(bits: Long): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits)).build()

  def compressed(scheme: CompressionScheme): BufferCompression = BufferCompression.newBuilder().setScheme(scheme).build()

  def flatCompressed(bits: Long, scheme: CompressionScheme): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits).setData(compressed(scheme))).build()

  def variable(offsetBits: Long): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setVariable(Variable.newBuilder().setOffsets(flat(offsetBits))).build()

  def inlineBitpacking(bits: Long): CompressiveEncoding = CompressiveEncoding.newBuilder()
    .setInlineBitpacking(InlineBitpacking.newBuilder().setUncompressedBitsPerValue(bits)).build()

  def outOfLineBitpacking(bits: Long, width: Long): CompressiveEncoding = CompressiveEncoding.newBuilder()
    .setOutOfLineBitpacking(OutOfLineBitpacking.newBuilder().setUncompressedBitsPerValue(bits).setValues(flat(width))).build()

  def rle(bits: Long): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setRle(Rle.newBuilder().setValues(flat(bits)).setRunLengths(flat(8))).build()

  def byteStreamSplit(bits: Long): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setByteStreamSplit(ByteStreamSplit.newBuilder().setValues(flat(bits))).build()

  def general(scheme: CompressionScheme, inner: CompressiveEncoding): CompressiveEncoding = CompressiveEncoding.newBuilder()
    .setGeneral(General.newBuilder().setCompression(compressed(scheme)).setValues(inner)).build()

  def constant(value: Array[Byte]): CompressiveEncoding = CompressiveEncoding.newBuilder()
    .setConstant(Constant.newBuilder().setValue(com.google.protobuf.ByteString.copyFrom(value))).build()

  def fixedSizeList(dim: Long, validity: Boolean, items: CompressiveEncoding): CompressiveEncoding = CompressiveEncoding
    .newBuilder().setFixedSizeList(FixedSizeList.newBuilder().setItemsPerValue(dim).setHasValidity(validity).setValues(items))
    .build()

  def packedStruct(widths: Seq[Long]): CompressiveEncoding = {
    val p = PackedStruct.newBuilder()
    widths.foreach(w => p.addBitsPerValue(w))
    CompressiveEncoding.newBuilder().setPackedStruct(p.setValues(flat(widths.sum))).build()
  }

  def fsst(table: Array[Byte], inner: CompressiveEncoding): CompressiveEncoding = CompressiveEncoding.newBuilder()
    .setFsst(Fsst.newBuilder().setSymbolTable(com.google.protobuf.ByteString.copyFrom(table)).setValues(inner)).build()

  /** The values of a variable-width block, as byte sequences. */
  def strings(v: DataBlock): Seq[Seq[Byte]] = v match {
    case b: DataBlock.VariableWidth =>
      (0 until b.numValues).map(i => b.data.slice(b.offset(i).toInt, b.offset(i + 1).toInt).toSeq)
    case other => fail(s"expected variable-width values, got ${other.getClass.getSimpleName}")
  }

  def fixed(v: DataBlock): DataBlock.FixedWidth = v match {
    case f: DataBlock.FixedWidth => f
    case other => fail(s"expected fixed-width values, got ${other.getClass.getSimpleName}")
  }

  /** The first `n` values' bytes of a fixed-width block (a block may hold slack past its values). */
  def fixedBytes(v: DataBlock): Seq[Byte] = {
    val f = fixed(v)
    f.data.take(if (f.bitsPerValue == 1) (f.numValues + 7) / 8 else f.numValues * f.bytesPerValue).toSeq
  }

  /** The bits of a 1-bit block, as booleans. */
  def bits(v: DataBlock): Seq[Boolean] = {
    val f = fixed(v)
    (0 until f.numValues).map(i => Bits.get(f.data, i.toLong))
  }
}
