package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

/** DictionaryBuilder (the writer's page dictionary) with the reader's dictionary decoding (Blocks.materialize). */
class DictionarySuite extends AnyFunSuite {
  import EncodingTesting._

  /** The builder's items as a block, and its row indices with nulls pointing past the items. */
  private def dictionary(b: DictionaryBuilder): DataBlock.Dictionary = {
    val items = (0 until b.items()).map { k =>
      val start = if (k == 0) 0 else b.itemEnds().data(k - 1).toInt
      java.util.Arrays.copyOfRange(b.itemBytes().data, start, b.itemEnds().data(k).toInt)
    }
    val idx = new Array[Byte](4 * b.rows())
    for (i <- 0 until b.rows()) LittleEndian.putInt(idx, 4 * i, if (b.rowItems()(i) < 0) b.items() else b.rowItems()(i))
    new DataBlock.Dictionary(new DataBlock.FixedWidth(32, idx, b.rows()), Blocks.ofValues(items.asJava, 32))
  }

  private def randomRows(r: Random, n: Int, distinct: Int): IndexedSeq[Option[Array[Byte]]] =
    IndexedSeq.fill(n)(if (r.nextInt(8) == 0) None else Some(s"v${r.nextInt(distinct)}".getBytes.take(1 + r.nextInt(4))))

  test("rows added round trip through the dictionary, items in order of first appearance, across rehashes") {
    for (seed <- Seeds; n <- Seq(0, 1, 255, 256, 257, 5000); distinct <- Seq(1, 10, 100000)) {
      val r = new Random(seed * 31 + n)
      val rows = randomRows(r, n, distinct)
      val b = new DictionaryBuilder
      rows.foreach {
        case None => b.addNull()
        case Some(v) => b.add(v, 0, v.length)
      }
      assert(b.rows() == n && b.anyNull() == rows.contains(None))
      val firstSeen = rows.flatten.map(_.toSeq).distinct
      assert(b.items() == firstSeen.size)
      val d = dictionary(b)
      assert(strings(d.items) == firstSeen)
      val got = strings(Blocks.materialize(d))
      for (i <- 0 until n) assert(got(i) == rows(i).map(_.toSeq).getOrElse(Nil), s"row $i")
    }
  }

  test("values from Arrow buffers and offsets into larger arrays are the same values; clear starts afresh") {
    val allocator = new RootAllocator()
    try {
      val buf = allocator.buffer(64)
      try {
        val bytes = "xxabcabcab".getBytes
        buf.setBytes(0, bytes)
        val b = new DictionaryBuilder
        b.add(buf, 2L, 3)          // abc
        b.add(bytes, 5, 3)         // abc
        b.add(buf, 3L, 2)          // bc
        b.add(bytes, 0, 0)         // empty
        b.add(buf, 9L, 0)          // empty
        assert(b.items() == 3 && b.rowItems().take(5).toSeq == Seq(0, 0, 1, 2, 2))
        b.clear()
        assert(b.items() == 0 && b.rows() == 0 && !b.anyNull())
        for (i <- 0 until 3000) b.add(s"k$i".getBytes, 0, s"k$i".length)
        b.clear()
        b.add(bytes, 2, 3)
        assert(b.items() == 1 && b.rowItems()(0) == 0)
      } finally buf.close()
    } finally allocator.close()
  }

  test("a dictionary index past the items is an EncodingException; the slot just past them is a null") {
    val items = Blocks.ofValues(Seq("a".getBytes, "b".getBytes).asJava, 32)
    val idx = new DataBlock.FixedWidth(8, Array[Byte](1, 2, 0), 3)
    assert(strings(Blocks.materialize(new DataBlock.Dictionary(idx, items))).map(s => new String(s.toArray)) == Seq("b", "", "a"))
    val bad = new DataBlock.FixedWidth(8, Array[Byte](1, 3), 2)
    assert(damaged("index 3")(Blocks.materialize(new DataBlock.Dictionary(bad, items))).getMessage ==
      "dictionary index 3 of a dictionary of 2 items")
    val huge = new DataBlock.FixedWidth(64, Array.fill[Byte](8)(-1), 1)
    damaged("index 2^64 - 1")(Blocks.materialize(new DataBlock.Dictionary(huge, items)))
  }
}
