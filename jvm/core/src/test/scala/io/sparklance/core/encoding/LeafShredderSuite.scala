package io.sparklance.core.encoding

import java.nio.charset.StandardCharsets.UTF_8

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.IntVector
import org.apache.arrow.vector.complex.{FixedSizeListVector, MapVector, StructVector}
import org.apache.arrow.vector.complex.impl.UnionMapWriter
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * The writer's shredder against a reference computed here from the model rows (docs/dev/file-format-2.1.md §7):
 * repetition levels (the row's maximum at a new row, `maxRep - depth` at a new item of the list at `depth`),
 * definition levels in the full numbering (0 valid; from the leaf up, a null code per layer and an empty code per
 * list), and one value slot per level that lies below the innermost list, a zero placeholder for null ones.
 */
class LeafShredderSuite extends AnyFunSuite with BeforeAndAfterAll {
  import EncodingTesting._
  import LeafShredderSuite._
  import PageTesting._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val S = LeafShredder.STRUCT
  private val L = LeafShredder.LIST

  /** Full definition codes of each layer, numbered from the leaf up: (null code, empty code or 0). */
  private def codes(c: Column): IndexedSeq[(Int, Int)] = {
    var code = 0
    c.kinds.indices.reverse.map { k =>
      if (c.kinds(k) == L) { code += 2; k -> (code - 1, code) } else { code += 1; k -> (code, 0) }
    }.sortBy(_._1).map(_._2).toIndexedSeq
  }

  private def reference(c: Column, rows: Seq[V]): Expected = {
    val code = codes(c)
    val maxRep = c.kinds.count(_ == L)
    // A level at layer k has a value slot when no list lies at or below k.
    def visible(k: Int): Boolean = !c.kinds.drop(k).contains(L)
    val rep = ArrayBuffer[Int](); val defs = ArrayBuffer[Int](); val slots = ArrayBuffer[Option[Any]]()
    def emit(r: Int, d: Int): Unit = { rep += r; defs += d }
    def walk(k: Int, v: V, r: Int): Unit = v match {
      case Nul => emit(r, code(k)._1); if (visible(k)) slots += None
      case Struct(child) => walk(k + 1, child, r)
      case Lst(items) if items.isEmpty => emit(r, code(k)._2)
      case Lst(items) =>
        val depth = c.kinds.take(k + 1).count(_ == L)
        items.zipWithIndex.foreach { case (item, j) => walk(k + 1, item, if (j == 0) r else maxRep - depth) }
      case Leaf(x) => emit(r, 0); slots += Some(x)
    }
    rows.foreach(walk(0, _, maxRep))
    Expected(if (maxRep == 0) Nil else rep.toSeq, defs.toSeq, slots.toSeq)
  }

  /** The visible values the shredder holds, None for a placeholder (told apart from a value by the levels). */
  private def slotsOf(c: Column, s: LeafShredder, valid: Seq[Boolean]): Seq[Option[Any]] = {
    val bytes = s.values.data.take(s.values.size)
    valid.zipWithIndex.map { case (ok, i) =>
      val x: Any = c.leaf.kind match {
        case LeafShredder.BOOL => bytes(i) != 0
        case LeafShredder.VARIABLE =>
          val start = if (i == 0) 0 else s.ends.data(i - 1).toInt
          new String(bytes, start, s.ends.data(i).toInt - start, UTF_8)
        case _ if c.leaf.width == 4 => LittleEndian.getInt(bytes, 4 * i)
        case _ => LittleEndian.getLong(bytes, 8 * i)
      }
      if (ok) Some(x) else {
        val zero = c.leaf.kind match {
          case LeafShredder.BOOL => false
          case LeafShredder.VARIABLE => ""
          case _ if c.leaf.width == 4 => 0
          case _ => 0L
        }
        assert(x == zero, s"$c: placeholder $i holds $x")
        None
      }
    }
  }

  private def check(c: Column, s: LeafShredder, rows: Seq[V], what: String): Unit = {
    val e = reference(c, rows)
    val rep = s.rep.data.take(s.rep.size).map(_.toInt).toSeq
    val defs = s.`def`.data.take(s.`def`.size).map(_.toInt).toSeq
    assert(rep == e.rep, s"$what: repetition levels")
    assert(defs == e.defs, s"$what: definition levels")
    assert(s.numLevels == e.defs.size, what)
    assert(s.numVisible == e.slots.size, s"$what: visible values")
    assert(s.numValid == e.slots.count(_.isDefined), s"$what: valid values")
    val expectedBytes = c.leaf.kind match {
      case LeafShredder.BOOL => e.slots.size
      case LeafShredder.VARIABLE => e.slots.map { case Some(x: String) => x.getBytes(UTF_8).length; case _ => 0 }.sum
      case _ => e.slots.size * c.leaf.width
    }
    assert(s.values.size == expectedBytes, s"$what: value bytes")
    if (c.leaf.kind == LeafShredder.VARIABLE) {
      assert(s.ends.size == e.slots.size, s"$what: value ends")
      val longest = e.slots.map { case Some(x: String) => x.getBytes(UTF_8).length.toLong; case _ => 0L }.maxOption.getOrElse(0L)
      assert(s.maxValueBytes == longest, s"$what: longest value")
    }
    assert(slotsOf(c, s, e.slots.map(_.isDefined)) == e.slots, s"$what: values")
    assert(s.seen.indices.filter(s.seen(_)).toSet == e.defs.toSet, s"$what: definition codes seen")
    assert(s.rows == rows.size, what)
  }

  private def randomColumn(r: Random): Column = {
    val leaf = Seq(Int32, Int64, Bool, Str)(r.nextInt(4))
    Column(Seq.fill(r.nextInt(5))(if (r.nextBoolean()) S else L), leaf)
  }

  test("the nulls of a slice are counted from the validity bits, as isNull counts them, at any alignment") {
    for (seed <- Seeds) {
      val r = new Random(seed)
      val n = 1 + r.nextInt(700)
      val longs = new org.apache.arrow.vector.BigIntVector("l", allocator)
      val strings = new org.apache.arrow.vector.VarCharVector("s", allocator)
      val large = new org.apache.arrow.vector.LargeVarBinaryVector("b", allocator)
      val bits = new org.apache.arrow.vector.BitVector("t", allocator)
      val vectors = Seq[org.apache.arrow.vector.FieldVector](longs, strings, large, bits)
      try {
        vectors.foreach(_.setInitialCapacity(n))
        vectors.foreach(_.allocateNew())
        // Mostly valid, mostly null, or mixed, so that whole bytes and words of either kind occur.
        val pNull = Seq(0.0, 0.02, 0.5, 0.98, 1.0)(r.nextInt(5))
        for (i <- 0 until n if r.nextDouble() >= pNull) {
          longs.setSafe(i, r.nextLong()); strings.setSafe(i, s"v$i".getBytes(UTF_8))
          large.setSafe(i, Array[Byte](i.toByte)); bits.setSafe(i, i & 1)
        }
        vectors.foreach(_.setValueCount(n))
        for (_ <- 0 until 50; v <- vectors) {
          val from = r.nextInt(n + 1)
          val to = from + r.nextInt(n - from + 1)
          assert(LeafShredder.nullsIn(v, from, to) == (from until to).count(v.isNull),
            s"seed $seed, ${v.getField.getName} [$from, $to) of $n")
        }
      } finally vectors.foreach(_.close())
    }
  }

  test("the full numbering of definition codes, the deepest repetition level and the visible codes") {
    val cases = Seq(
      Column(Nil, Int32) -> (0, 1, 1), Column(Seq(S), Int32) -> (0, 2, 2), Column(Seq(L), Int32) -> (1, 3, 1),
      Column(Seq(L, S), Int32) -> (1, 4, 2), Column(Seq(S, L), Int32) -> (1, 4, 1),
      Column(Seq(L, S, L, S), Str) -> (2, 7, 2))
    for ((c, (maxRep, maxDef, maxVisible)) <- cases) {
      val s = shredder(c)
      assert((s.maxRep, s.maxFullDef, s.maxVisibleDef) == ((maxRep, maxDef, maxVisible)), c.toString)
      val code = codes(c)
      for (k <- c.kinds.indices) {
        assert(s.nullCode(k) == code(k)._1, s"$c null code of layer $k")
        assert(s.emptyCode(k) == code(k)._2, s"$c empty code of layer $k")
      }
    }
  }

  test("a path that does not end at a leaf is refused") {
    val e = intercept[IllegalArgumentException](new LeafShredder(Array(S, L), Array("a", "b"), LeafShredder.FIXED, 4, null))
    assert(e.getMessage == "a leaf path must end at a leaf")
  }

  test("random nested columns: levels and values match the reference, with nulls at every layer and empty lists") {
    for (seed <- Seeds; round <- 0 until 30) {
      val r = new Random(seed * 100 + round)
      val c = randomColumn(r)
      val n = Seq(0, 1, r.nextInt(300))(r.nextInt(3))
      val nullRate = Seq(0.0, 0.25, 1.0)(r.nextInt(3))
      val rows = PageTesting.rows(c, r, n, nullRate)
      val vec = vector(c, allocator, rows)
      try {
        val what = s"seed $seed round $round: $c, $n rows, null rate $nullRate"
        val whole = shredder(c)
        whole.shred(vec, 0, n)
        check(c, whole, rows, what)

        // Shredding in two calls appends; after clear() the shredder holds only what follows.
        val cut = if (n == 0) 0 else r.nextInt(n + 1)
        val parts = shredder(c)
        parts.shred(vec, 0, cut)
        parts.shred(vec, cut, n)
        check(c, parts, rows, s"$what, shredded in two at $cut")
        parts.clear()
        assert(parts.numLevels == 0 && parts.bufferedBytes == 0 && parts.rows == 0 && !parts.seen.contains(true), what)
        parts.shred(vec, cut, n)
        check(c, parts, rows.drop(cut), s"$what, rows from $cut after clear")
      } finally vec.close()
    }
  }

  test("bufferedBytes counts values, levels and ends") {
    val c = Column(Seq(L), Str)
    val rows = Seq(Lst(Seq(Leaf("ab"), Nul, Leaf("cde"))), Nul, Lst(Nil))
    val vec = vector(c, allocator, rows)
    try {
      val s = shredder(c)
      s.shred(vec, 0, rows.size)
      check(c, s, rows, "list<string>")
      assert(s.rep.data.take(5).toSeq == Seq(1, 0, 0, 1, 1))
      assert(s.`def`.data.take(5).toSeq == Seq(0, 1, 0, 2, 3))
      // 5 bytes of values, 5 levels of each kind (2 bytes each), 3 ends of 8 bytes.
      assert(s.bufferedBytes == 5 + 10 + 10 + 24)
    } finally vec.close()
  }

  test("fixed-size lists shred one level per row, the items' values and their validity; a null list is all placeholder") {
    for (seed <- Seeds; dim <- Seq(1, 3, 8)) {
      val r = new Random(seed + dim)
      val n = r.nextInt(100)
      val rows = IndexedSeq.fill(n)(if (r.nextInt(4) == 0) None else Some(Seq.fill(dim)(if (r.nextInt(3) == 0) None else Some(r.nextInt()))))
      val f = new Field("l", FieldType.nullable(new ArrowType.FixedSizeList(dim)),
        java.util.List.of(new Field("item", FieldType.nullable(new ArrowType.Int(32, true)), null)))
      val vec = f.createVector(allocator).asInstanceOf[FixedSizeListVector]
      try {
        vec.allocateNew()
        val items = vec.getDataVector.asInstanceOf[IntVector]
        rows.zipWithIndex.foreach { case (row, i) =>
          row match {
            case None => vec.setNull(i); (0 until dim).foreach(j => items.setNull(i * dim + j))
            case Some(xs) => vec.setNotNull(i); xs.zipWithIndex.foreach {
              case (Some(x), j) => items.setSafe(i * dim + j, x)
              case (None, j) => items.setNull(i * dim + j)
            }
          }
        }
        vec.setValueCount(n)
        val s = new LeafShredder(Array(LeafShredder.LEAF), Array("l"), LeafShredder.FIXED_SIZE_LIST, 4, Array(dim))
        s.shred(vec, 0, n)
        val what = s"seed $seed, fixed_size_list<int32, $dim>, $n rows"
        assert(s.`def`.data.take(s.`def`.size).toSeq == rows.map(x => if (x.isEmpty) 1 else 0), what)
        assert(s.rep.size == 0 && s.numVisible == n && s.numValid == rows.count(_.isDefined), what)
        val values = s.values.data.take(s.values.size)
        assert(values.length == 4 * dim * n, what)
        val expectedValues = rows.flatMap(_.fold(Seq.fill(dim)(0))(_.map(_.getOrElse(0))))
        val gotValues = (0 until dim * n).map(i => LittleEndian.getInt(values, 4 * i))
        // A null item's value is whatever Arrow holds under it: compare the valid ones.
        val validity = rows.flatMap(_.fold(Seq.fill(dim)(true))(_.map(_.isDefined)))
        assert(s.itemValidity(0).data.take(s.itemValidity(0).size).toSeq == validity.map(v => if (v) 1.toByte else 0.toByte), what)
        assert(gotValues.indices.filter(validity).map(gotValues) == expectedValues.indices.filter(validity).map(expectedValues), what)
      } finally vec.close()
    }
  }

  test("a map's values shred as a list of entries structs") {
    val vec = MapVector.empty("m", allocator, false)
    try {
      val w: UnionMapWriter = vec.getWriter
      val rows = Seq(Some(Seq(1 -> Some(10), 2 -> None)), None, Some(Nil), Some(Seq(3 -> Some(30))))
      rows.zipWithIndex.foreach { case (row, i) =>
        w.setPosition(i)
        row.foreach { entries =>
          w.startMap()
          entries.foreach { case (k, v) =>
            w.startEntry()
            w.key().integer().writeInt(k)
            v.foreach(x => w.value().integer().writeInt(x))
            w.endEntry()
          }
          w.endMap()
        }
      }
      vec.setValueCount(rows.size)
      rows.zipWithIndex.foreach { case (row, i) => if (row.isEmpty) vec.setNull(i) }
      val entries = vec.getDataVector.asInstanceOf[StructVector]
      val names = Array("m", entries.getName, MapVector.VALUE_NAME)
      val s = new LeafShredder(Array(L, S, LeafShredder.LEAF), names, LeafShredder.FIXED, 4, null)
      s.shred(vec, 0, rows.size)
      // Codes: value null 1, entry null 2, map null 3, map empty 4.
      assert(s.rep.data.take(s.rep.size).toSeq == Seq(1, 0, 1, 1, 1))
      assert(s.`def`.data.take(s.`def`.size).toSeq == Seq(0, 1, 3, 4, 0))
      assert(s.numVisible == 3 && s.numValid == 2)
      val values = s.values.data.take(s.values.size)
      assert((0 until 3).map(i => LittleEndian.getInt(values, 4 * i)) == Seq(10, 0, 30))
    } finally vec.close()
  }
}

object LeafShredderSuite {
  /** What the shredder should hold after shredding some rows. */
  final case class Expected(rep: Seq[Int], defs: Seq[Int], slots: Seq[Option[Any]])
}
