package io.sparklance.core.encoding

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.Encodings21Protos.PageLayout

/**
 * Mini-block, full-zip and constant pages (2.1 and 2.2) through the writer's page encoder and the reader's page
 * decoders: nested columns with nulls at every layer and empty lists, row counts around chunk and block
 * boundaries, batches sliced out of pages and spanning two pages, dictionaries, and damaged page buffers.
 */
class PagesSuite extends AnyFunSuite with BeforeAndAfterAll {
  import EncodingTesting._
  import PageTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val S = LeafShredder.STRUCT
  private val L = LeafShredder.LIST

  private val columns = Seq(
    Column(Nil, Int32), Column(Nil, Int64), Column(Nil, Bool), Column(Nil, Str), Column(Nil, LongStr),
    Column(Seq(S), Int32), Column(Seq(S, S), Str), Column(Seq(L), Int32), Column(Seq(L), Str), Column(Seq(L), Bool),
    Column(Seq(S, L), Int64), Column(Seq(L, S), Str), Column(Seq(L, L), Int32), Column(Seq(L, S, L), Int32),
    Column(Seq(L), LongStr), Column(Seq(S), LongStr))

  /** Encodes rows [from, to) as one page; returns it with its decoded form. */
  private def page(c: Column, rows: Seq[V], v22: Boolean, dictionaryKeyBits: Int = 0)
      : (StructuralPageEncoder.Page, MiniBlockPage.Decoded) = {
    val vec = vector(c, allocator, rows)
    try {
      val s = shredder(c)
      s.dictionaryKeyBits = dictionaryKeyBits
      s.shred(vec, 0, rows.size)
      val p = StructuralPageEncoder.encode(s, v22, c.leaf.bitpackable)
      (p, decode(p.layout, slices(p), rows.size.toLong, c.leaf.shape))
    } finally vec.close()
  }

  private def roundTrip(c: Column, rows: Seq[V], v22: Boolean, dictionaryKeyBits: Int = 0): PageLayout = {
    val (p, d) = page(c, rows, v22, dictionaryKeyBits)
    val what = s"$c, ${rows.size} rows, ${if (v22) "2.2" else "2.1"}, ${p.layout.getLayoutCase}"
    assert(d.levels.numRows() == rows.size, what)
    val got = rebuild(c, new RepDef.Composite(List(d.levels.copy()).asJava), d.values)
    if (got != rows) {
      val i = rows.indices.find(i => got.lift(i) != Some(rows(i)))
      fail(s"$what: ${got.size} rows, first difference at row $i: ${i.map(got.lift)} != ${i.map(rows)}")
    }
    p.layout
  }

  for (v22 <- Seq(false, true); c <- columns) {
    val version = if (v22) "2.2" else "2.1"
    test(s"$version $c pages round trip at chunk boundaries, with nulls, without, and all null") {
      // A writer never writes a page of no rows (a file of none has no pages).
      for (seed <- Seeds.take(2); n <- Seq(1, 2, 1023, 1024, 1025, 4097); nullRate <- Seq(0.0, 0.2, 1.0)) {
        val r = new Random(seed * 1000 + n)
        val layout = roundTrip(c, rows(c, r, n, nullRate), v22)
        if (nullRate == 1.0) assert(layout.hasConstantLayout, s"$c $n rows all null")
        else if (c.leaf == LongStr && n > 100) assert(layout.hasFullZipLayout, s"$c long strings")
        else if (c.leaf != LongStr) assert(layout.hasMiniBlockLayout, s"$c $n rows")
      }
    }
  }

  test("a list longer than a chunk (one row's levels span chunks) round trips") {
    for (v22 <- Seq(false, true); c <- Seq(Column(Seq(L), Int32), Column(Seq(L), Str), Column(Seq(L, L), Int64)); seed <- Seeds.take(2)) {
      val r = new Random(seed)
      val layout = roundTrip(c, rows(c, r, 7, 0.1, maxLen = 3000), v22)
      assert(layout.hasMiniBlockLayout && layout.getMiniBlockLayout.getRepetitionIndexDepth == 1)
    }
  }

  test("batches sliced out of one page, and batches spanning two pages, rebuild the same rows") {
    for (v22 <- Seq(false, true); c <- columns; seed <- Seeds.take(2)) {
      val r = new Random(seed)
      val n = 1 + r.nextInt(1500)
      val all = rows(c, r, n, 0.25)
      val cut = r.nextInt(n + 1)
      val pages = Seq((0, cut), (cut, n)).filter { case (a, b) => b > a }.map { case (a, b) => (a, b, page(c, all.slice(a, b), v22)._2) }
      for (_ <- 0 until 6) {
        val from = r.nextInt(n + 1)
        val to = from + r.nextInt(n - from + 1)
        val parts = pages.filter { case (a, b, _) => b > from && a < to }.map { case (a, b, d) =>
          sliced(d, math.max(from, a) - a, math.min(to, b) - a)
        }
        val values = if (parts.isEmpty) c.leaf.shape.zeros(0) else Blocks.concat(parts.map(_._2).asJava)
        val got = rebuild(c, new RepDef.Composite(parts.map(_._1).asJava), values)
        assert(got == all.slice(from, to), s"$c rows [$from, $to) of $n, pages cut at $cut")
      }
    }
  }

  test("dictionary pages of strings and integers round trip, nulls and a single distinct value included") {
    // Keys of 8 bits hold at most 128 distinct values: only the strings (six distinct) take them.
    for (v22 <- Seq(false, true); c <- Seq(Column(Nil, Str), Column(Nil, Int32), Column(Seq(L), Str)); keyBits <- Seq(8, 16, 32);
         n <- Seq(1, 1025, 3000); nullRate <- Seq(0.0, 0.3); if keyBits > 8 || c.leaf == Str) {
      val layout = roundTrip(c, rows(c, new Random(n + keyBits), n, nullRate), v22, keyBits)
      assert(layout.getMiniBlockLayout.hasDictionary, s"$c $n")
    }
    val one = Seq.fill(100)(Leaf("same"))
    assert(roundTrip(Column(Nil, Str), one, v22 = true, 8).getMiniBlockLayout.getNumDictionaryItems == 1)
  }

  test("a run of mini-block chunks decodes to the values of its chunks decoded one by one") {
    // Runs of several chunks of fixed-width values (bitpacked, flat, dictionary indices) are decoded into one array;
    // a single chunk, and other values, go through the decoder's own blocks.
    def bytes(b: DataBlock): (Seq[Byte], Seq[Byte]) = Blocks.materialize(b) match {
      case f: DataBlock.FixedWidth =>
        (f.data.take(if (f.bitsPerValue == 1) (f.numValues + 7) / 8 else f.numValues * f.bytesPerValue).toSeq, Nil)
      case v: DataBlock.VariableWidth => ((0 to v.numValues).flatMap(i => BigInt(v.offset(i)).toByteArray), v.data.take(v.offset(v.numValues).toInt).toSeq)
      case other => fail(s"unexpected block ${other.getClass.getSimpleName}")
    }
    var runs = 0
    for (v22 <- Seq(false, true); c <- Seq(Column(Nil, Int32), Column(Nil, Int64), Column(Nil, Str), Column(Seq(S), Int32), Column(Seq(L), Int64));
         keyBits <- Seq(0, 16); seed <- Seeds) {
      val r = new Random(seed * 31 + keyBits)
      val n = 1 + r.nextInt(9000)
      val (p, _) = page(c, rows(c, r, n, Seq(0.0, 0.2)(r.nextInt(2))), v22, keyBits)
      if (p.layout.hasMiniBlockLayout) {
        val layout = p.layout.getMiniBlockLayout
        val buffers = slices(p)
        val reader = new MiniBlockPage.Reader(layout, buffers, 64L << 20)
        val chunks = reader.chunks
        def run(a: Int, b: Int) = reader.decode(buffers(1).slice(chunks.start(a).toInt, (chunks.start(b) - chunks.start(a)).toInt), a, b)
        for (_ <- 0 until 4) {
          val a = r.nextInt(chunks.count)
          val b = a + 1 + r.nextInt(chunks.count - a)
          val whole = run(a, b)
          val one = (a until b).map(k => Blocks.materialize(run(k, k + 1).values))
          val what = s"$c, $n rows, ${if (v22) "2.2" else "2.1"}, key bits $keyBits, chunks [$a, $b) of ${chunks.count}"
          assert(whole.values.numValues == chunks.firstItem(b) - chunks.firstItem(a), what)
          assert(bytes(whole.values) == bytes(Blocks.concat(one.asJava)), what)
          if (b - a > 1) runs += 1
        }
      }
    }
    assert(runs > 20, "too few runs of several chunks")
  }

  test("the levels of nested lists with nulls at every layer and empty lists unravel to the rows written") {
    val c = Column(Seq(L, S, L), Int32)
    val rows = Seq[V](Nul, Lst(Nil), Lst(Seq(Nul)), Lst(Seq(Struct(Nul))), Lst(Seq(Struct(Lst(Nil)))),
      Lst(Seq(Struct(Lst(Seq(Nul, Leaf(1), Nul))), Nul, Struct(Lst(Nil)), Struct(Nul))), Lst(Seq(Struct(Lst(Seq(Leaf(2)))))))
    for (v22 <- Seq(false, true); rep <- Seq(1, 3, 700)) {
      val all = Seq.fill(rep)(rows).flatten
      roundTrip(c, all, v22)
      roundTrip(c, all.reverse, v22)
    }
  }

  test("constant pages (2.2) repeat their inline or buffered value on valid items; other items are null") {
    import io.sparklance.proto.Encodings21Protos.{ConstantLayout, RepDefLayer}
    val value = Array[Byte](7, 0, 0, 0)
    val defs = Seq(0, 1, 0, 0, 1)
    val raw = new Array[Byte](2 * defs.size)
    defs.indices.foreach(i => LittleEndian.putShort(raw, 2 * i, defs(i).toShort))
    val layout = ConstantLayout.newBuilder().addLayers(RepDefLayer.REPDEF_NULLABLE_ITEM)
      .setInlineValue(com.google.protobuf.ByteString.copyFrom(value)).build()
    val empty = Slice.of(Array.emptyByteArray)
    val d = ConstantPage.decode(layout, Array(empty, Slice.of(raw)), defs.size.toLong, LeafShape.fixed(32), 1 << 20)
    val c = Column(Nil, Int32)
    assert(rebuild(c, new RepDef.Composite(List(d.levels).asJava), d.values) == defs.map(x => if (x == 0) Leaf(7) else Nul))
    val noLevels = ConstantPage.decode(layout, Array.empty, 3, LeafShape.fixed(32), 1 << 20)
    assert(rebuild(c, new RepDef.Composite(List(noLevels.levels).asJava), noLevels.values) == Seq.fill(3)(Leaf(7)))
    // A variable-width value in buffer 0: u32 2 | u32 offsets bytes | u32 data bytes | offsets | data.
    val text = "lance".getBytes("UTF-8")
    val buf = new Array[Byte](12 + 8 + text.length)
    LittleEndian.putInt(buf, 0, 2); LittleEndian.putInt(buf, 4, 8); LittleEndian.putInt(buf, 8, text.length)
    LittleEndian.putInt(buf, 16, text.length)
    System.arraycopy(text, 0, buf, 20, text.length)
    val strLayout = ConstantLayout.newBuilder().addLayers(RepDefLayer.REPDEF_NULLABLE_ITEM).build()
    val sd = ConstantPage.decode(strLayout, Array(Slice.of(buf), empty, Slice.of(raw)), defs.size.toLong, Str.shape, 1 << 20)
    assert(rebuild(Column(Nil, Str), new RepDef.Composite(List(sd.levels).asJava), sd.values) ==
      defs.map(x => if (x == 0) Leaf("lance") else Nul))
    for (bad <- Seq((0, 3), (4, 12), (8, 1000))) {
      val b = buf.clone(); LittleEndian.putInt(b, bad._1, bad._2)
      assert(damaged(s"header $bad")(ConstantPage.decode(strLayout, Array(Slice.of(b)), 5, Str.shape, 1 << 20)).getMessage
        .startsWith("a constant value header"))
    }
    damaged("a short header")(ConstantPage.decode(strLayout, Array(Slice.of(buf.take(11))), 5, Str.shape, 1 << 20))
    damaged("an inline value of the wrong width")(ConstantPage.decode(layout.toBuilder
      .setInlineValue(com.google.protobuf.ByteString.copyFrom(Array[Byte](1, 2))).build(), Array.empty, 3, LeafShape.fixed(32), 1 << 20))
    damaged("levels that disagree")(ConstantPage.decode(layout, Array(Slice.of(raw.take(4)), Slice.of(raw)), 5, LeafShape.fixed(32), 1 << 20))
    damaged("too large")(ConstantPage.decode(layout, Array.empty, 1000, LeafShape.fixed(32), 100))
  }

  // ---- damage ----

  private def mutateBuffers(p: StructuralPageEncoder.Page, r: Random): Seq[Array[Slice]] = {
    val bufs = slices(p)
    bufs.indices.flatMap(b => mutants(bufs(b).copy(), r, flips = 6).map(m => bufs.updated(b, Slice.of(m))))
  }

  test("damaged page buffers give EncodingExceptions, never another exception") {
    for (v22 <- Seq(false, true); c <- columns; seed <- Seeds.take(2); nullRate <- Seq(0.0, 0.3, 1.0)) {
      val r = new Random(seed)
      val n = 1 + r.nextInt(1200)
      val (p, _) = page(c, rows(c, r, n, nullRate), v22)
      for (bufs <- mutateBuffers(p, r)) survives(s"$c $n rows, ${p.layout.getLayoutCase}") {
        val d = decode(p.layout, bufs, n.toLong, c.leaf.shape)
        rebuild(c, new RepDef.Composite(List(d.levels).asJava), d.values)
      }
      for (bufs <- Seq(p.buffers.indices.map(i => slices(p).patch(i, Nil, 1)).map(_.toArray): _*)) survives(s"$c a buffer missing") {
        val d = decode(p.layout, bufs, n.toLong, c.leaf.shape)
        rebuild(c, new RepDef.Composite(List(d.levels).asJava), d.values)
      }
    }
  }

  test("damaged mini-block pages name what is wrong") {
    val c = Column(Seq(L), Int32)
    val (p, _) = page(c, rows(c, new Random(1), 3000, 0.2), v22 = false)
    val m = p.layout.getMiniBlockLayout
    val bufs = slices(p)
    assert(damaged("odd metadata")(MiniBlockPage.decode(m, bufs.updated(0, bufs(0).slice(0, bufs(0).length - 1)), 1 << 20))
      .getMessage == s"chunk metadata of ${bufs(0).length - 1} bytes")
    assert(damaged("buffers missing")(MiniBlockPage.decode(m, bufs.take(2), 1 << 20)).getMessage ==
      "a mini-block page needs 3 buffers, it has 2")
    def readAll(layout: io.sparklance.proto.Encodings21Protos.MiniBlockLayout): Seq[V] = {
      val d = MiniBlockPage.decode(layout, bufs, 1 << 20)
      rebuild(c, new RepDef.Composite(List(d.levels).asJava), d.values)
    }
    damaged("an item too many")(readAll(m.toBuilder.setNumItems(m.getNumItems + 1).build()))
    assert(damaged("fewer items than the chunks hold")(readAll(m.toBuilder.setNumItems(1).build())).getMessage ==
      "chunks hold more than the page's 1 items")
    damaged("a huge item count")(readAll(m.toBuilder.setNumItems(Int.MaxValue - 20).build()))
    assert(damaged("buffer count")(MiniBlockPage.decode(m.toBuilder.setNumBuffers(2).build(), bufs, 1 << 20)).getMessage
      .startsWith("the layout lists 2 value buffers per chunk"))
    damaged("chunks cut")(MiniBlockPage.decode(m, bufs.updated(1, bufs(1).slice(0, bufs(1).length / 2)), 1 << 20))
    damaged("unknown layer")(RepDef.layers(List(io.sparklance.proto.Encodings21Protos.RepDefLayer.REPDEF_UNSPECIFIED).asJava))
  }

  test("damaged full-zip and constant pages name what is wrong") {
    val c = Column(Nil, LongStr)
    val (p, _) = page(c, rows(c, new Random(2), 50, 0.2), v22 = true)
    val f = p.layout.getFullZipLayout
    val bufs = slices(p)
    assert(damaged("trailing bytes")(FullZipPage.decode(f, Array(Slice.of(bufs(0).copy() ++ Array[Byte](1))), c.leaf.shape, 1 << 24))
      .getMessage == s"full-zip items end at ${bufs(0).length} of ${bufs(0).length + 1} bytes")
    assert(damaged("more items than bytes")(FullZipPage.decode(f.toBuilder.setNumItems(Int.MaxValue - 100).build(), bufs, c.leaf.shape, 1 << 24))
      .getMessage == s"a full-zip page of ${Int.MaxValue - 100} items in ${bufs(0).length} bytes")
    damaged("no buffers")(FullZipPage.decode(f, Array.empty, c.leaf.shape, 1 << 24))
    damaged("wide control words")(FullZipPage.decode(f.toBuilder.setBitsRep(17).build(), bufs, c.leaf.shape, 1 << 24))
    damaged("12-bit lengths")(FullZipPage.decode(f.toBuilder.setBitsPerOffset(12).build(), bufs, c.leaf.shape, 1 << 24))

    val lc = Column(Seq(L), Int32)
    val (cp, _) = page(lc, rows(lc, new Random(3), 100, 1.0), v22 = true)
    val k = cp.layout.getConstantLayout
    assert(damaged("five buffers")(ConstantPage.decode(k, Array.fill(5)(Slice.of(Array.emptyByteArray)), 100, lc.leaf.shape, 1 << 20))
      .getMessage == "a constant page with 5 buffers")
    damaged("a huge level count")(ConstantPage.decode(k.toBuilder.setNumDefValues(Int.MaxValue - 100).build(), slices(cp), 100,
      lc.leaf.shape, 1 << 20))
    assert(damaged("odd raw levels")(ConstantPage.decode(k.toBuilder.clearRepCompression().clearDefCompression().build(),
      Array(Slice.of(Array.emptyByteArray), Slice.of(Array[Byte](1, 0, 2))), 100, lc.leaf.shape, 1 << 20)).getMessage ==
      "raw levels of 3 bytes")
  }
}
