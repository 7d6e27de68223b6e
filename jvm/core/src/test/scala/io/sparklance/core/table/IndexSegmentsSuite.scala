package io.sparklance.core.table

import java.util.UUID

import com.google.protobuf.ByteString
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.index.{IndexKind, IndexMetadata}

/** Which segments `num_indices_to_merge` merges ([[IndexSegments.pick]]): the newest n, as pylance 14 picks them. */
class IndexSegmentsSuite extends AnyFunSuite {

  private def segment(fragments: Int*): IndexMetadata = new IndexMetadata(IndexMetadata.create(UUID.randomUUID(), "i",
    Seq(0), 1, RoaringBitmap.bitmapOf(fragments: _*), IndexKind.BTree, ByteString.EMPTY, 0, Nil), "_versions/1.manifest")

  private val segments = Seq(segment(0, 1), segment(2), segment(3))

  private def names(s: Seq[IndexMetadata]) = s.map(i => segments.indexWhere(_.uuid == i.uuid))

  test("without n every segment is merged; n merges the newest n, and more than there are merges all") {
    val cases = Seq(None -> (Seq(0, 1, 2), Nil), Some(0) -> (Nil, Seq(0, 1, 2)), Some(1) -> (Seq(2), Seq(0, 1)),
      Some(2) -> (Seq(1, 2), Seq(0)), Some(3) -> (Seq(0, 1, 2), Nil), Some(9) -> (Seq(0, 1, 2), Nil))
    cases.foreach { case (n, (merged, kept)) =>
      val (m, k) = IndexSegments.pick(segments, n)
      assert((names(m), names(k)) == ((merged, kept)), n)
    }
    assert(IndexSegments.coverage(segments.take(2)).toArray.toSeq == Seq(0, 1, 2))
    assert(IndexSegments.contains(segments, segments(1)) && !IndexSegments.contains(segments.take(1), segments(1)))
    val e = intercept[InvalidArgumentException](IndexSegments.pick(segments, Some(-1)))
    assert(e.getMessage.contains("num_indices_to_merge must be at least 0, not -1"))
  }
}
