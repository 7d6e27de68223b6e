package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.Encodings21Protos.{PageLayout, RepDefLayer}

/**
 * The writer's page encoder over random nested columns (up to four struct and list layers, nulls at every layer,
 * empty lists, all-null pages), a column cut into several pages by one shredder cleared between pages, as the
 * writer does: each page decodes, with the reader's decoders, to its rows; its layout is the one the encoder's doc
 * promises (constant when no value is valid, full-zip for values of 256 bytes or more, mini-block otherwise); its
 * layers say which null and empty codes occur; and pages of many values split into several chunks.
 */
class StructuralPageEncoderSuite extends AnyFunSuite with BeforeAndAfterAll {
  import EncodingTesting._
  import PageTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val S = LeafShredder.STRUCT
  private val L = LeafShredder.LIST

  private val listLayers = Set(RepDefLayer.REPDEF_ALL_VALID_LIST, RepDefLayer.REPDEF_NULLABLE_LIST,
    RepDefLayer.REPDEF_EMPTYABLE_LIST, RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST)

  private def layers(layout: PageLayout): Seq[RepDefLayer] = layout.getLayoutCase match {
    case PageLayout.LayoutCase.MINI_BLOCK_LAYOUT => layout.getMiniBlockLayout.getLayersList.asScala.toSeq
    case PageLayout.LayoutCase.FULL_ZIP_LAYOUT => layout.getFullZipLayout.getLayersList.asScala.toSeq
    case _ => layout.getConstantLayout.getLayersList.asScala.toSeq
  }

  /** Checks one encoded page of `rows` against what the shredder held. */
  private def checkPage(c: Column, s: LeafShredder, p: StructuralPageEncoder.Page, rows: Seq[V], what: String): Unit = {
    val layout = p.layout
    if (s.numValid == 0) assert(layout.hasConstantLayout, s"$what: no valid value, ${layout.getLayoutCase}")
    else if (s.maxValueBytes >= 256) assert(layout.hasFullZipLayout, s"$what: wide values, ${layout.getLayoutCase}")
    else assert(layout.hasMiniBlockLayout, s"$what: narrow values, ${layout.getLayoutCase}")
    if (layout.hasMiniBlockLayout) assert(layout.getMiniBlockLayout.getNumItems == s.numVisible, what)
    if (layout.hasFullZipLayout) {
      val f = layout.getFullZipLayout
      assert(f.getNumItems == s.numLevels && f.getNumVisibleItems == s.numVisible, what)
    }

    // One layer per path node, innermost first; a null (empty) code that occurs makes its layer nullable (emptyable).
    val ls = layers(layout)
    assert(ls.size == c.kinds.length, s"$what: layers $ls")
    for (k <- c.kinds.indices) {
      val l = ls(c.kinds.length - 1 - k)
      val nullable = Set(RepDefLayer.REPDEF_NULLABLE_ITEM, RepDefLayer.REPDEF_NULLABLE_LIST, RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST)
      assert(listLayers(l) == (c.kinds(k) == L), s"$what: layer $k is $l")
      if (s.seen(s.nullCode(k))) assert(nullable(l), s"$what: layer $k has nulls but is $l")
      if (c.kinds(k) == L && s.seen(s.emptyCode(k))) {
        assert(l == RepDefLayer.REPDEF_EMPTYABLE_LIST || l == RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST, s"$what: layer $k has empties but is $l")
      }
    }

    val d = decode(layout, slices(p), rows.size.toLong, c.leaf.shape)
    assert(d.levels.numRows() == rows.size, s"$what: rows")
    val got = rebuild(c, new RepDef.Composite(List(d.levels.copy()).asJava), d.values)
    if (got != rows) {
      val i = rows.indices.find(i => got.lift(i) != Some(rows(i)))
      fail(s"$what: ${got.size} rows, first difference at row $i: ${i.map(got.lift)} != ${i.map(rows)}")
    }
  }

  private def randomColumn(r: Random): Column = {
    val leaf = Seq(Int32, Int64, Bool, Str, LongStr)(r.nextInt(5))
    Column(Seq.fill(r.nextInt(5))(if (r.nextBoolean()) S else L), leaf)
  }

  test("random nested columns cut into pages by one shredder round trip page by page, in 2.1 and 2.2") {
    for (seed <- Seeds; round <- 0 until 16) {
      val r = new Random(seed * 1000 + round)
      val c = randomColumn(r)
      val n = 1 + r.nextInt(if (c.leaf == LongStr) 200 else 3000)
      val nullRate = Seq(0.0, 0.2, 0.6, 1.0)(r.nextInt(4))
      val all = rows(c, r, n, nullRate, maxLen = Seq(1, 4, 40)(r.nextInt(3)))
      val cuts = (0 +: Seq.fill(r.nextInt(4))(r.nextInt(n)).sorted :+ n).distinct
      val v22 = r.nextBoolean()
      val vec = vector(c, allocator, all)
      try {
        val s = shredder(c)
        for (Seq(from, to) <- cuts.sliding(2)) {
          s.clear()
          s.shred(vec, from, to)
          val p = StructuralPageEncoder.encode(s, v22, c.leaf.bitpackable)
          checkPage(c, s, p, all.slice(from, to),
            s"seed $seed round $round: $c, ${if (v22) "2.2" else "2.1"}, null rate $nullRate, page [$from, $to) of $n")
        }
      } finally vec.close()
    }
  }

  test("an all-null page of a nested column is a constant page of levels only, whatever its nulls' layers") {
    val c = Column(Seq(L, S, L, S), Int32)
    val rows = Seq[V](Nul, Lst(Nil), Lst(Seq(Nul)), Lst(Seq(Struct(Nul), Struct(Lst(Nil)), Struct(Lst(Seq(Nul, Struct(Nul)))))))
    for (v22 <- Seq(false, true); times <- Seq(1, 500)) {
      val all = Seq.fill(times)(rows).flatten
      val vec = vector(c, allocator, all)
      try {
        val s = shredder(c)
        s.shred(vec, 0, all.size)
        val p = StructuralPageEncoder.encode(s, v22, true)
        assert(p.layout.hasConstantLayout)
        checkPage(c, s, p, all, s"${if (v22) "2.2" else "2.1"} x$times")
      } finally vec.close()
    }
  }

  test("encodeWithoutPageDictionary leaves values plain where encode makes a dictionary page; both read back") {
    val r = new Random(5)
    for (v22 <- Seq(false, true); c <- Seq(Column(Nil, Str), Column(Nil, Int64))) {
      val all = Seq.fill(3000)(if (r.nextInt(10) == 0) Nul else Leaf(if (c.leaf == Str) s"v-${r.nextInt(6)}" else r.nextInt(6).toLong * 1000003L))
      val vec = vector(c, allocator, all)
      try {
        for (dictionary <- Seq(true, false)) {
          val s = shredder(c)
          s.shred(vec, 0, all.size)
          val p = if (dictionary) StructuralPageEncoder.encode(s, v22, c.leaf.bitpackable)
            else StructuralPageEncoder.encodeWithoutPageDictionary(s, v22, c.leaf.bitpackable)
          val label = s"$c ${if (v22) "2.2" else "2.1"} dictionary $dictionary"
          // 2.1 dictionary-encodes strings only; 2.2 64-bit integers too.
          val expected = dictionary && (c.leaf == Str || v22)
          assert(p.layout.getMiniBlockLayout.hasDictionary == expected, label)
          checkPage(c, s, p, all, label)
        }
      } finally vec.close()
    }
  }

  test("pages get a dictionary at the edges where pylance 14's files have one, and not past them") {
    // Each case is a page pylance 14 (2.2) was seen to write with or without a dictionary (docs/file-writer.md).
    def dictionary(c: Column, values: Seq[Any]): Boolean = {
      val all = values.map(v => if (v == null) Nul else Leaf(v))
      val vec = vector(c, allocator, all)
      try {
        val s = shredder(c)
        s.shred(vec, 0, all.size)
        val p = StructuralPageEncoder.encode(s, true, c.leaf.bitpackable)
        checkPage(c, s, p, all, s"$c ${values.size}")
        p.layout.hasMiniBlockLayout && p.layout.getMiniBlockLayout.hasDictionary
      } finally vec.close()
    }
    val i64 = Column(Nil, Int64)
    // 64-bit values: the distinct values at 8 bytes plus an index at 4 bytes within 0.8 of 8 bytes a value.
    assert(dictionary(i64, Seq.tabulate(1000)(i => (i % 300) * 7L)))
    assert(!dictionary(i64, Seq.tabulate(1000)(i => (i % 301) * 7L)))
    // At most half the page's values as items, whatever they save.
    val str = Column(Nil, Str)
    assert(dictionary(str, Seq.tabulate(1000)(i => "x" * 30 + (i % 500))))
    assert(!dictionary(str, Seq.tabulate(1000)(i => "x" * 30 + (i % 501))))
    // One-byte strings never pay by pylance's estimate (a 4-byte index against the value and its offset), but this
    // writer gives them a dictionary when that is smaller than plain (see the tests of one-byte values below).
    assert(dictionary(str, Seq.tabulate(3000)(i => "ABC" (i % 3).toString)))
    // The sample (the leading 128 values of 32 blocks of 10,000) decides before the dictionary: 5,000 values each
    // twice in a row hold 65 distinct values in some blocks (projected past 5,000 items), the same values repeating
    // every 5,000 rows no more than 64 in any block.
    def v(i: Int) = f"v$i%018d"
    assert(!dictionary(str, Seq.tabulate(10000)(i => v(i / 2))))
    assert(dictionary(str, Seq.tabulate(10000)(i => v(i % 5000))))
    // Null slots count as empty values: 500 rows (no sample), a tenth null, 101 distinct 3-byte strings price
    // 2,715 bytes against 2,683, over the budget (without the null slots they would be within it); 81 are within.
    assert(!dictionary(str, Seq.tabulate(500)(i => if (i % 10 == 9) null else f"${i % 101}%03d")))
    assert(dictionary(str, Seq.tabulate(500)(i => if (i % 10 == 9) null else f"${i % 90}%03d")))
  }

  private def encodeOne(c: Column, all: Seq[V], v22: Boolean, dictionary: Boolean = true): (StructuralPageEncoder.Page, Long) = {
    val vec = vector(c, allocator, all)
    try {
      val s = shredder(c)
      s.shred(vec, 0, all.size)
      val p = if (dictionary) StructuralPageEncoder.encode(s, v22, c.leaf.bitpackable)
        else StructuralPageEncoder.encodeWithoutPageDictionary(s, v22, c.leaf.bitpackable)
      checkPage(c, s, p, all, s"$c ${if (v22) "2.2" else "2.1"} ${all.size} rows")
      (p, p.buffers.map(_.remaining.toLong).sum)
    } finally vec.close()
  }

  private def valueEncoding(p: StructuralPageEncoder.Page): String =
    Decoders21.describe(p.layout.getMiniBlockLayout.getValueCompression)

  private def dictionaryEncoding(p: StructuralPageEncoder.Page): String =
    if (p.layout.getMiniBlockLayout.hasDictionary) Decoders21.describe(p.layout.getMiniBlockLayout.getDictionary) else "none"

  test("dictionary indices are runs where runs take fewer bytes than bitpacking, as in pylance 14's files") {
    val i64 = Column(Nil, Int64)
    val str = Column(Nil, Str)
    for (v22 <- Seq(false, true)) {
      // Sorted strings (pylance 14: rle indices in 2.1 and 2.2), strings at random (bitpacked).
      val sorted = Seq.tabulate(20000)(i => Leaf(s"mode-${i * 7 / 20000}"))
      val (p1, _) = encodeOne(str, sorted, v22)
      assert(valueEncoding(p1) == "rle(flat32, flat8)" && p1.layout.getMiniBlockLayout.getNumBuffers == 2)
      val r = new Random(3)
      val (p2, _) = encodeOne(str, Seq.fill(20000)(Leaf(s"mode-${r.nextInt(7)}")), v22)
      assert(valueEncoding(p2) == "inline_bitpacking32" && p2.layout.getMiniBlockLayout.getNumBuffers == 1)
    }
    // TPC-H's ps_partkey: each key 4 times in a row. pylance 14 (2.2): rle indices, 20,000 items bitpacked to 15 bits.
    val keys = Seq.tabulate(80000)(i => Leaf((i / 4 + 1).toLong))
    val (p, bytes) = encodeOne(i64, keys, v22 = true)
    assert(valueEncoding(p) == "rle(flat32, flat8)")
    assert(dictionaryEncoding(p).startsWith("out_of_line_bitpacking64"), dictionaryEncoding(p))
    assert(bytes <= 138800, s"$bytes bytes, pylance 14's page: 138,800")
    // Runs over nulls and lists, with rle chunks of 4096 values: random pages read back whichever encoding is taken.
    val r = new Random(11)
    for (round <- 0 until 24) {
      val c = Column(Seq.fill(r.nextInt(3))(if (r.nextBoolean()) S else L), if (r.nextBoolean()) Str else Int64)
      val n = 200 + r.nextInt(12000)
      val run = 1 + r.nextInt(300)
      val nullRate = Seq(0.0, 0.05, 0.5)(r.nextInt(3))
      val all = rows(c, r, n, nullRate).zipWithIndex.map {
        case (v, i) => replaceLeaves(v, if (c.leaf == Str) s"k${i / run % 50}" else (i / run % 50).toLong * 1000003L)
      }
      encodeOne(c, all, r.nextBoolean())
    }
  }

  /** `v` with every leaf value replaced by `x`. */
  private def replaceLeaves(v: V, x: Any): V = v match {
    case Leaf(_) => Leaf(x)
    case Struct(child) => Struct(replaceLeaves(child, x))
    case Lst(items) => Lst(items.map(replaceLeaves(_, x)))
    case Nul => Nul
  }

  test("a 64-bit dictionary is bitpacked where that is smaller than LZ4: inline up to 1024 items, out of line past") {
    val i64 = Column(Nil, Int64)
    // Each item 4 times, cycling: the encoding of the dictionary and its bytes.
    def page(items: Int, item: Int => Long): (String, Int) = {
      val (p, _) = encodeOne(i64, Seq.tabulate(4 * items)(i => Leaf(item(i % items))), v22 = true)
      (dictionaryEncoding(p), p.buffers(2).remaining)
    }
    assert(page(1000, _ + 1L) == ("inline_bitpacking64", 8 + 1280))
    // 1,500 items at 11 bits: the last 476 packed as a block (their padding, 548 x 11 bits, costs less than packing
    // saves, 476 x 53); 1,100 items: the last 76 raw (948 x 11 against 76 x 53).
    assert(page(1500, _ + 1L) == ("out_of_line_bitpacking64(flat11)", 2 * 1408))
    assert(page(1100, _ + 1L) == ("out_of_line_bitpacking64(flat11)", 1408 + 76 * 8))
    // Values of all 64 bits (negative) and doubles stay LZ4-compressed, as pylance 14 writes them.
    assert(page(500, i => -1L - i)._1.startsWith("general(lz4"))
    assert(page(500, i => java.lang.Double.doubleToLongBits(i * 0.25))._1.startsWith("general(lz4"))
    // 2.1 keeps its dictionaries plain.
    val (p, _) = encodeOne(Column(Nil, Str), Seq.tabulate(3000)(i => Leaf(s"v${i % 40}")), v22 = false)
    assert(dictionaryEncoding(p).startsWith("variable"), dictionaryEncoding(p))
  }

  private val Flag = Str.copy(name = "one-byte string", random = r => Seq("A", "N", "R", "")(r.nextInt(4)))

  test("strings of at most one byte get a dictionary page where it is smaller than plain, and read back") {
    for (v22 <- Seq(false, true)) {
      // l_returnflag-like: three flags at random, a tenth of them null.
      val r = new Random(4)
      val flags = Seq.fill(30000)(if (r.nextInt(10) == 0) Nul else Leaf("ANR".charAt(r.nextInt(3)).toString))
      val (p, bytes) = encodeOne(Column(Nil, Str), flags, v22)
      val (_, plain) = encodeOne(Column(Nil, Str), flags, v22, dictionary = false)
      assert(p.layout.getMiniBlockLayout.hasDictionary && p.layout.getMiniBlockLayout.getNumDictionaryItems == 4)
      assert(bytes * 5 < plain, s"$bytes bytes with the dictionary, $plain plain")
      // Every byte value at random: indices of 8 or 9 bits gain nothing over zstd's plain page; the smaller is kept.
      val all = Seq.fill(30000)(Leaf(new String(Array((r.nextInt(94) + 33).toChar))))
      val (q, qBytes) = encodeOne(Column(Nil, Str), all, v22)
      val (_, qPlain) = encodeOne(Column(Nil, Str), all, v22, dictionary = false)
      assert(qBytes <= qPlain && (qBytes == qPlain) != q.layout.getMiniBlockLayout.hasDictionary, s"$qBytes, $qPlain")
    }
    // Random nested columns of one-byte strings, nulls and empty lists at every layer.
    for (seed <- Seeds; round <- 0 until 8) {
      val r = new Random(seed * 100 + round)
      val c = Column(Seq.fill(r.nextInt(4))(if (r.nextBoolean()) S else L), Flag)
      val all = rows(c, r, 100 + r.nextInt(6000), Seq(0.0, 0.2, 0.6)(r.nextInt(3)))
      encodeOne(c, all, r.nextBoolean())
    }
  }

  test("decimal128 chunks are LZ4-compressed where a sample chunk shrinks by a fifth, flat otherwise; both read back") {
    val dec = Column(Nil, Dec128)
    val uncompressed = Column(Nil, Dec128.copy(name = "incompressible decimal128",
      random = r => new java.math.BigDecimal(BigInt(126, r).bigInteger.negate(), 2)))
    for (v22 <- Seq(false, true)) {
      // DECIMAL(7,2) money, as TPC-DS stores it: 4 of 16 bytes used, some nulls.
      val r = new Random(5)
      val money = Seq.fill(20000)(if (r.nextInt(20) == 0) Nul else Leaf(new java.math.BigDecimal(BigInt(r.nextInt(2000000) - 1000000).bigInteger, 2)))
      val (p, bytes) = encodeOne(dec, money, v22)
      assert(valueEncoding(p) == "general(lz4, flat128)", valueEncoding(p))
      assert(bytes < 20000 * 7, s"$bytes bytes")
      // Values of all 126 bits: LZ4 gains nothing, the chunks stay flat.
      val wide = rows(uncompressed, r, 5000, 0.0)
      val (q, _) = encodeOne(uncompressed, wide, v22)
      assert(valueEncoding(q) == "flat128", valueEncoding(q))
    }
    // Random nested decimal columns (nulls and empty lists at every layer, mixed widths) read back.
    for (seed <- Seeds; round <- 0 until 8) {
      val r = new Random(seed * 100 + round)
      val c = Column(Seq.fill(r.nextInt(4))(if (r.nextBoolean()) S else L), Dec128)
      encodeOne(c, rows(c, r, 100 + r.nextInt(8000), Seq(0.0, 0.2, 0.6)(r.nextInt(3))), r.nextBoolean())
    }
  }

  test("pages of many values split into chunks of at most 4096 values, each a power of two but the last") {
    for (v22 <- Seq(false, true); c <- Seq(Column(Nil, Int64), Column(Seq(L), Int32), Column(Seq(S), Str))) {
      val r = new Random(7)
      val all = rows(c, r, 9000, 0.1)
      val vec = vector(c, allocator, all)
      try {
        val s = shredder(c)
        s.shred(vec, 0, all.size)
        val p = StructuralPageEncoder.encode(s, v22, false)
        checkPage(c, s, p, all, s"$c ${if (v22) "2.2" else "2.1"}")
        // The chunk words: 2 bytes each (2.1), 4 bytes (2.2); the low 4 bits give log2 of the values of all but the last.
        val words = p.buffers(0).duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN)
        val w = if (v22) 4 else 2
        val count = words.remaining / w
        assert(count >= 3, s"$c: $count chunks")
        val logs = (0 until count).map(i => (if (v22) words.getInt(w * i) else words.getShort(w * i)) & 0xF)
        assert(logs.init.forall(l => l > 0 && l <= 12) && logs.last == 0, s"$c: chunk value counts $logs")
        val sum = logs.init.map(1 << _).sum
        assert(sum < s.numVisible && s.numVisible - sum <= 4096, s"$c: ${logs.init} chunks before the last of ${s.numVisible}")
      } finally vec.close()
    }
  }
}
