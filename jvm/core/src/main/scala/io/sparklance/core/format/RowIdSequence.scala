package io.sparklance.core.format

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import com.google.protobuf.{ByteString, InvalidProtocolBufferException}

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.RowIdProtos

/**
 * The stable row ids of a fragment's rows, in row order (rowids.proto `RowIdSequence`; shared/spec/table-format.md,
 * "Row ID Sequences"). Decoded eagerly into a plain array: a fragment's sequence is at most its row count.
 */
final class RowIdSequence private (private val ids: Array[Long]) {

  def length: Int = ids.length

  /** The row id of the row at `offset` in the fragment. */
  def apply(offset: Int): Long = ids(offset)

  def toArray: Array[Long] = ids.clone()

  override def toString: String = s"RowIdSequence(${ids.length} ids)"
}

object RowIdSequence {

  /**
   * Decodes a serialized `RowIdSequence`. `expectedLength` is the fragment's physical row count; a sequence of any
   * other length is corrupt (it would attach ids to the wrong rows). `source` names the manifest or file in errors.
   */
  def decode(source: String, bytes: ByteString, expectedLength: Long): RowIdSequence = {
    val proto = parse(source, RowIdProtos.RowIdSequence.parser().parseFrom(bytes), "row id sequence")
    val out = new LongSink(source, expectedLength, "row id sequence")
    proto.getSegmentsList.asScala.foreach(s => U64Segments.expand(source, s, out))
    new RowIdSequence(out.result(expectedLength))
  }

  /**
   * Encodes row ids as `U64Segment`s: ascending runs of four or more consecutive ids as ranges, the ids between
   * them as plain arrays.
   */
  def encode(ids: Array[Long]): RowIdProtos.RowIdSequence = {
    val b = RowIdProtos.RowIdSequence.newBuilder()
    var looseFrom = 0
    def flushLoose(until: Int): Unit = if (until > looseFrom) {
      val bytes = ByteBuffer.allocate(8 * (until - looseFrom)).order(ByteOrder.LITTLE_ENDIAN)
      var k = looseFrom
      while (k < until) { bytes.putLong(ids(k)); k += 1 }
      b.addSegments(RowIdProtos.U64Segment.newBuilder().setArray(RowIdProtos.EncodedU64Array.newBuilder()
        .setU64Array(RowIdProtos.EncodedU64Array.U64Array.newBuilder().setValues(ByteString.copyFrom(bytes.array())))))
    }
    var i = 0
    while (i < ids.length) {
      var j = i + 1
      while (j < ids.length && ids(j) == ids(j - 1) + 1) j += 1
      if (j - i >= 4) {
        flushLoose(i)
        b.addSegments(RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder()
          .setStart(ids(i)).setEnd(ids(j - 1) + 1)))
        looseFrom = j
      }
      i = j
    }
    flushLoose(ids.length)
    b.build()
  }

  private[format] def parse[T](source: String, body: => T, what: String): T =
    try body
    catch {
      case e: InvalidProtocolBufferException => throw new CorruptFileException(source, s"its $what is invalid (${e.getMessage})", e)
    }
}

/**
 * The dataset version of each row of a fragment (rowids.proto `RowDatasetVersionSequence`): when each row was
 * created, or last updated. Runs of consecutive rows share a version; a run's length is the length of its span.
 */
final class RowVersionSequence private (private val versions: Array[Long]) {

  def length: Int = versions.length

  def apply(offset: Int): Long = versions(offset)

  def toArray: Array[Long] = versions.clone()
}

object RowVersionSequence {

  def decode(source: String, bytes: ByteString, expectedLength: Long): RowVersionSequence = {
    val proto = RowIdSequence.parse(source, RowIdProtos.RowDatasetVersionSequence.parser().parseFrom(bytes),
      "row version sequence")
    val out = new LongSink(source, expectedLength, "row version sequence")
    proto.getRunsList.asScala.foreach { run =>
      val n = U64Segments.length(source, run.getSpan)
      out.fill(run.getVersion, n)
    }
    new RowVersionSequence(out.result(expectedLength))
  }

  /** Encodes row versions as runs of equal versions over row offsets. */
  def encode(versions: Array[Long]): RowIdProtos.RowDatasetVersionSequence = {
    val b = RowIdProtos.RowDatasetVersionSequence.newBuilder()
    var i = 0
    while (i < versions.length) {
      var j = i + 1
      while (j < versions.length && versions(j) == versions(i)) j += 1
      b.addRuns(RowIdProtos.RowDatasetVersionRun.newBuilder().setVersion(versions(i)).setSpan(
        RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder().setStart(i).setEnd(j))))
      i = j
    }
    b.build()
  }

  /** Every row at one version (what a fragment without a sequence implies). */
  def constant(version: Long, length: Int): RowVersionSequence = new RowVersionSequence(Array.fill(length)(version))
}

/** An append-only long array that refuses to grow past the fragment's row count. */
private final class LongSink(source: String, limit: Long, what: String) {
  private val capacity: Int = {
    if (limit < 0 || limit > Int.MaxValue - 8) throw new CorruptFileException(source, s"a fragment of $limit rows")
    limit.toInt
  }
  private val values = new Array[Long](capacity)
  private var size = 0

  private def ensure(n: Long): Unit =
    if (n < 0 || size + n > capacity) {
      throw new CorruptFileException(source, s"its $what holds more than the fragment's $limit rows")
    }

  def add(v: Long): Unit = { ensure(1); values(size) = v; size += 1 }

  def fill(v: Long, n: Long): Unit = {
    ensure(n)
    java.util.Arrays.fill(values, size, size + n.toInt, v)
    size += n.toInt
  }

  def result(expected: Long): Array[Long] = {
    if (size != expected) {
      throw new CorruptFileException(source, s"its $what has $size entries for a fragment of $expected rows")
    }
    values
  }
}

/** Expansion of `U64Segment`s, with every length checked before anything is allocated. */
private object U64Segments {
  import RowIdProtos.{EncodedU64Array, U64Segment}

  def length(source: String, s: U64Segment): Long = s.getSegmentCase match {
    case U64Segment.SegmentCase.RANGE => rangeLength(source, s.getRange.getStart, s.getRange.getEnd)
    case U64Segment.SegmentCase.RANGE_WITH_HOLES =>
      val r = s.getRangeWithHoles
      rangeLength(source, r.getStart, r.getEnd) - arrayLength(source, r.getHoles)
    case U64Segment.SegmentCase.RANGE_WITH_BITMAP =>
      val r = s.getRangeWithBitmap
      val bits = bitmapBits(source, r.getStart, r.getEnd, r.getBitmap)
      var n = 0L; var i = 0L
      while (i < bits) { if (bit(r.getBitmap, i)) n += 1; i += 1 }
      n
    case U64Segment.SegmentCase.SORTED_ARRAY => arrayLength(source, s.getSortedArray)
    case U64Segment.SegmentCase.ARRAY => arrayLength(source, s.getArray)
    case _ => throw new CorruptFileException(source, "a row id segment has no known kind")
  }

  def expand(source: String, s: U64Segment, out: LongSink): Unit = s.getSegmentCase match {
    case U64Segment.SegmentCase.RANGE =>
      val r = s.getRange
      val n = rangeLength(source, r.getStart, r.getEnd)
      var i = 0L
      while (i < n) { out.add(r.getStart + i); i += 1 }
    case U64Segment.SegmentCase.RANGE_WITH_HOLES =>
      val r = s.getRangeWithHoles
      val holes = new LongSink(source, rangeLength(source, r.getStart, r.getEnd) min (Int.MaxValue - 16), "holes")
      expandArray(source, r.getHoles, holes)
      val hs = holes.result(arrayLength(source, r.getHoles))
      var h = 0
      var v = r.getStart
      while (v != r.getEnd) {
        if (h < hs.length && hs(h) == v) h += 1 else out.add(v)
        v += 1
      }
    case U64Segment.SegmentCase.RANGE_WITH_BITMAP =>
      val r = s.getRangeWithBitmap
      val bits = bitmapBits(source, r.getStart, r.getEnd, r.getBitmap)
      var i = 0L
      while (i < bits) { if (bit(r.getBitmap, i)) out.add(r.getStart + i); i += 1 }
    case U64Segment.SegmentCase.SORTED_ARRAY => expandArray(source, s.getSortedArray, out)
    case U64Segment.SegmentCase.ARRAY => expandArray(source, s.getArray, out)
    case _ => throw new CorruptFileException(source, "a row id segment has no known kind")
  }

  private def rangeLength(source: String, start: Long, end: Long): Long = {
    if (java.lang.Long.compareUnsigned(end, start) < 0) {
      throw new CorruptFileException(source, s"a row id range ends (${java.lang.Long.toUnsignedString(end)}) before it " +
        s"starts (${java.lang.Long.toUnsignedString(start)})")
    }
    end - start
  }

  private def bitmapBits(source: String, start: Long, end: Long, bitmap: ByteString): Long = {
    val n = rangeLength(source, start, end)
    if (n > bitmap.size.toLong * 8) {
      throw new CorruptFileException(source, s"a row id bitmap of ${bitmap.size} bytes cannot cover a range of $n ids")
    }
    n
  }

  private def bit(bitmap: ByteString, i: Long): Boolean = (bitmap.byteAt((i >>> 3).toInt) & (1 << (i & 7).toInt)) != 0

  private def arrayLength(source: String, a: EncodedU64Array): Long = {
    def exact(bytes: ByteString, width: Int): Long = {
      if (bytes.size % width != 0) {
        throw new CorruptFileException(source, s"an encoded u64 array of ${bytes.size} bytes is not a multiple of $width")
      }
      bytes.size / width
    }
    a.getArrayCase match {
      case EncodedU64Array.ArrayCase.U16_ARRAY => exact(a.getU16Array.getOffsets, 2)
      case EncodedU64Array.ArrayCase.U32_ARRAY => exact(a.getU32Array.getOffsets, 4)
      case EncodedU64Array.ArrayCase.U64_ARRAY => exact(a.getU64Array.getValues, 8)
      case _ => 0L
    }
  }

  private def expandArray(source: String, a: EncodedU64Array, out: LongSink): Unit = {
    val n = arrayLength(source, a)
    a.getArrayCase match {
      case EncodedU64Array.ArrayCase.U16_ARRAY =>
        val b = a.getU16Array.getOffsets.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN)
        val base = a.getU16Array.getBase
        var i = 0; while (i < n) { out.add(base + (b.getShort(2 * i) & 0xFFFFL)); i += 1 }
      case EncodedU64Array.ArrayCase.U32_ARRAY =>
        val b = a.getU32Array.getOffsets.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN)
        val base = a.getU32Array.getBase
        var i = 0; while (i < n) { out.add(base + (b.getInt(4 * i) & 0xFFFFFFFFL)); i += 1 }
      case EncodedU64Array.ArrayCase.U64_ARRAY =>
        val b: ByteBuffer = a.getU64Array.getValues.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN)
        var i = 0; while (i < n) { out.add(b.getLong(8 * i)); i += 1 }
      case _ =>
    }
  }
}
