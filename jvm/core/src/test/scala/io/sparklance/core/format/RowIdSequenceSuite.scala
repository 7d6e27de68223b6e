package io.sparklance.core.format

import java.nio.{ByteBuffer, ByteOrder}

import com.google.protobuf.ByteString
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.RowIdProtos.{EncodedU64Array, RowDatasetVersionRun, RowDatasetVersionSequence, U64Segment, RowIdSequence => RowIdSequenceProto}

class RowIdSequenceSuite extends AnyFunSuite {

  private def range(s: Long, e: Long) = U64Segment.newBuilder().setRange(U64Segment.Range.newBuilder().setStart(s).setEnd(e)).build()

  private def u16(base: Long, offsets: Int*) = {
    val b = ByteBuffer.allocate(offsets.size * 2).order(ByteOrder.LITTLE_ENDIAN)
    offsets.foreach(o => b.putShort(o.toShort))
    EncodedU64Array.newBuilder().setU16Array(EncodedU64Array.U16Array.newBuilder().setBase(base)
      .setOffsets(ByteString.copyFrom(b.array()))).build()
  }

  private def u64(values: Long*) = {
    val b = ByteBuffer.allocate(values.size * 8).order(ByteOrder.LITTLE_ENDIAN)
    values.foreach(b.putLong)
    EncodedU64Array.newBuilder().setU64Array(EncodedU64Array.U64Array.newBuilder().setValues(ByteString.copyFrom(b.array()))).build()
  }

  private def seq(segments: U64Segment*) = RowIdSequenceProto.newBuilder().addAllSegments(java.util.List.of(segments: _*)).build().toByteString

  test("every segment kind expands to its ids, in order") {
    val holes = U64Segment.newBuilder().setRangeWithHoles(U64Segment.RangeWithHoles.newBuilder().setStart(100).setEnd(106)
      .setHoles(u16(100, 1, 4))).build()
    val bitmap = U64Segment.newBuilder().setRangeWithBitmap(U64Segment.RangeWithBitmap.newBuilder().setStart(200).setEnd(210)
      .setBitmap(ByteString.copyFrom(Array[Byte](0x05, 0x02)))).build()
    val sorted = U64Segment.newBuilder().setSortedArray(u16(1000, 0, 5, 9)).build()
    val arr = U64Segment.newBuilder().setArray(u64(77, 3, Long.MaxValue)).build()
    val ids = RowIdSequence.decode("m", seq(range(0, 3), holes, bitmap, sorted, arr), 16)
    assert(ids.toArray.toSeq == Seq(0L, 1, 2, 100, 102, 103, 105, 200, 202, 209, 1000, 1005, 1009, 77, 3, Long.MaxValue))
  }

  test("a sequence must have exactly one id per row of the fragment") {
    val ok = RowIdSequence.decode("m", seq(range(1500, 1510)), 10)
    assert(ok.toArray.toSeq == (1500L until 1510L))
    val short = intercept[CorruptFileException](RowIdSequence.decode("m", seq(range(0, 5)), 10))
    assert(short.getMessage.contains("5 entries for a fragment of 10 rows"))
  }

  test("a huge range in a damaged sequence fails before allocating") {
    val e = intercept[CorruptFileException](RowIdSequence.decode("m", seq(range(0, Long.MaxValue)), 10))
    assert(e.getMessage.contains("more than the fragment's 10 rows"))
    val backwards = intercept[CorruptFileException](RowIdSequence.decode("m", seq(range(10, 5)), 10))
    assert(backwards.getMessage.contains("ends (5) before it starts (10)"))
  }

  test("version sequences expand runs over their span lengths") {
    val runs = RowDatasetVersionSequence.newBuilder()
      .addRuns(RowDatasetVersionRun.newBuilder().setSpan(range(0, 3)).setVersion(2))
      .addRuns(RowDatasetVersionRun.newBuilder().setSpan(range(3, 5)).setVersion(4)).build()
    val v = RowVersionSequence.decode("m", runs.toByteString, 5)
    assert(v.toArray.toSeq == Seq(2L, 2, 2, 4, 4))
    intercept[CorruptFileException](RowVersionSequence.decode("m", runs.toByteString, 6))
  }

  test("bytes that are not a sequence are corruption") {
    val e = intercept[CorruptFileException](RowIdSequence.decode("m", ByteString.copyFrom(Array[Byte](0x0a, 0x7f, 1)), 1))
    assert(e.getMessage.contains("row id sequence is invalid"))
  }
}
