package io.sparklance.core.table

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{FieldVector, Float4Vector, Float8Vector, ValueVector}
import org.apache.arrow.vector.types.pojo.ArrowType
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CorruptFileException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.{DeletionVector, Fragment}
import io.sparklance.core.index.{BTreeEntries, IndexKind, IndexMetadata}
import io.sparklance.core.schema.LanceField

/**
 * The first rows of a top-N, and a column's MIN, MAX and non-null count, from a B-tree index on the column
 * ([[BTreeEntries]]): its entries are the column's values sorted, each with its row address, so the first rows
 * in an order are its first or last entries. Each segment of the index (an index and its delta segments share a
 * name and cover disjoint fragments) is walked alone, over the entries of the fragments the scan reads that it
 * covers; entries of other fragments (filtered out, or gone since) are skipped, and rows deleted since the index
 * was built are skipped by the fragments' deletion vectors.
 *
 * SQL's order (Spark's) differs from the index's only for floats: every NaN is one value above all others, where
 * the index puts NaNs with the sign bit before `-inf`; and `-0.0` equals `0.0`, which the index keeps adjacent. So
 * walks treat those NaNs at the index's start as the largest values. Only on tables without stable row ids (B-trees
 * hold row addresses; matching them to stable ids is not done here).
 */
private[table] object BTreeOrder {

  /** The B-tree segments on `field`: those of one index name (the first one), or none. */
  def segments(snapshot: Snapshot, field: LanceField): Seq[IndexMetadata] = {
    val onField = snapshot.indexes.filter(i => i.kind == IndexKind.BTree && i.fieldIds == Seq(field.id))
    onField.headOption.map(h => onField.filter(_.name == h.name)).getOrElse(Nil)
  }

  /**
   * The rows a top-N can take from the fragments a B-tree on its first key covers: per such fragment, the physical
   * offsets of live rows holding a value (or null) that sorts at or before the `k`-th live value of those fragments
   * on the first key, ties included (so later keys can order them), and NaNs that cannot be placed cheaply (those
   * with the sign bit, ascending): more rows than the first `k` at times, never fewer. Other fragments are absent (read whole). None when no
   * B-tree on the first key covers a fragment read, or one cannot be walked (logged; the scan then reads as without it).
   */
  def topN(snapshot: Snapshot, fragments: Seq[Fragment], topN: TopN): Option[TopNBTree] = {
    val key = topN.keys.head
    val found = for {
      field <- snapshot.schema.field(key.column) if topN.k > 0 && !snapshot.hasStableRowIds
      order <- ValueOrder.of(LanceFileReader.readField(field).getType)
      group = segments(snapshot, field)
      if fragments.exists(f => group.exists(_.covers(f.id)))
    } yield (field, order, group)
    found.flatMap { case (field, order, group) =>
      val allocator = new RootAllocator()
      try {
        val rows = mutable.Map.empty[Long, RoaringBitmap]
        var entries = 0L
        group.foreach { index =>
          val mine = fragments.filter(f => index.covers(f.id))
          if (mine.nonEmpty) {
            mine.foreach(f => rows(f.id) = new RoaringBitmap())
            val e = BTreeEntries.open(snapshot.storage, snapshot.indexDir(index), allocator)
            try {
              val walk = new Walk(e, new Rows(snapshot, mine, e), order, key.descending, isFloat(field), allocator, rows)
              walk.topN(key.nullsFirst, topN.k, ties = topN.keys.size > 1)
              entries += walk.read
            } finally e.close()
          }
        }
        Some(TopNBTree(group.head, rows.toMap, entries))
      } catch {
        case NonFatal(e) =>
          log.warn(s"Not using B-tree '${group.head.name}' of ${snapshot.root}@${snapshot.version} for $topN: ${e.getMessage}")
          None
      } finally allocator.close()
    }
  }

  /**
   * A column's live non-null rows and its smallest and largest values in SQL's order (one-row vectors of the
   * column's type, null when it has no value) over `fragments`, from a B-tree on it, or None when the B-tree does
   * not cover every one of them or cannot be walked. The smallest of `-0.0` and `0.0` is `-0.0` (SQL holds them equal).
   */
  def columnStats(snapshot: Snapshot, fragments: Seq[Fragment], field: LanceField, order: ValueOrder,
      allocator: BufferAllocator): Option[(Long, FieldVector, FieldVector, IndexMetadata)] = {
    val group = segments(snapshot, field)
    if (snapshot.hasStableRowIds || group.isEmpty || !fragments.forall(f => group.exists(_.covers(f.id)))) None
    else {
      val arrow = LanceFileReader.readField(field)
      val min = arrow.createVector(allocator)
      val max = arrow.createVector(allocator)
      try {
        Seq(min, max).foreach { v => v.allocateNew(); v.setValueCount(1) }
        var nulls = 0L
        val remaining = mutable.Set(fragments.map(_.id): _*)
        group.foreach { index =>
          val mine = fragments.filter(f => remaining.contains(f.id) && index.covers(f.id))
          remaining --= mine.map(_.id)
          if (mine.nonEmpty) {
            val e = BTreeEntries.open(snapshot.storage, snapshot.indexDir(index), allocator)
            try {
              val walk = new Walk(e, new Rows(snapshot, mine, e), order, descending = false, isFloat(field), allocator, mutable.Map.empty)
              nulls += walk.liveNulls()
              walk.smallest().foreach { case (v, i) =>
                if (min.isNull(0) || order.compare(v, i, min, 0) < 0) min.copyFromSafe(i, 0, v)
              }
              walk.largest().foreach { case (v, i) =>
                if (max.isNull(0) || order.compare(v, i, max, 0) > 0) max.copyFromSafe(i, 0, v)
              }
            } finally e.close()
          }
        }
        Some((fragments.map(_.numRows).sum - nulls, min, max, group.head))
      } catch {
        case NonFatal(e) =>
          min.close(); max.close()
          log.warn(s"Not answering aggregates of ${field.name} in ${snapshot.root}@${snapshot.version} from B-tree " +
            s"'${group.head.name}': ${e.getMessage}")
          None
      }
    }
  }

  private def isFloat(field: LanceField): Boolean =
    LanceFileReader.readField(field).getType.isInstanceOf[ArrowType.FloatingPoint]

  private def isNaN(v: ValueVector, i: Int): Boolean = v match {
    case x: Float8Vector => java.lang.Double.isNaN(x.get(i))
    case x: Float4Vector => java.lang.Float.isNaN(x.get(i))
    case _ => false
  }

  /** The fragments a walk takes rows of, with their deleted rows; entries of others are skipped. */
  private final class Rows(snapshot: Snapshot, fragments: Seq[Fragment], e: BTreeEntries) {
    private val byId: Map[Long, (Fragment, DeletionVector)] =
      fragments.map(f => (f.id, (f, snapshot.deletionVector(f)))).toMap

    /** Whether the row at `address` is in one of the fragments. */
    def taken(address: Long): Boolean = byId.get(address >>> 32).exists { case (f, _) =>
      if ((address & 0xFFFFFFFFL) >= f.physicalRows) {
        throw new CorruptFileException(e.path, s"an entry's row address $address is past the ${f.physicalRows} rows of fragment ${f.id}")
      }
      true
    }

    /** Whether the row at `address` of one of the fragments is live (not deleted). */
    def live(address: Long): Boolean = !byId(address >>> 32)._2.contains((address & 0xFFFFFFFFL).toInt)
  }

  /**
   * Walks of one segment's entries, in SQL's order of the key ascending or descending; the rows of the fragments
   * taken that a top-N walk passes are added to `out` (fragment id to offsets). `read` counts the entries visited.
   */
  private final class Walk(e: BTreeEntries, rows: Rows, order: ValueOrder, descending: Boolean, floats: Boolean,
      allocator: BufferAllocator, out: mutable.Map[Long, RoaringBitmap]) {
    var read = 0L

    private def compare(a: ValueVector, i: Int, b: ValueVector, j: Int): Int = {
      val c = order.compare(a, i, b, j)
      if (descending) -c else c
    }

    /** Adds entry `r`'s row to `out` if it is a live row of a fragment taken; whether it is. */
    private def add(r: Long): Boolean = {
      read += 1
      val a = e.address(r)
      rows.taken(a) && rows.live(a) && { out(a >>> 32).add(a & 0xFFFFFFFFL, (a & 0xFFFFFFFFL) + 1); true }
    }

    private def nanAt(r: Long): Boolean = floats && isNaN(e.values(r), e.row(r))

    /** The end of the NaNs with the sign bit, which sort after the nulls in the index: the first entry past them. */
    private def signedNaNsEnd: Long = {
      var r = e.nullRows
      while (r < e.numRows && !e.isNull(r) && nanAt(r)) r += 1
      r
    }

    /**
     * Adds the rows of the top `k` live rows, nulls first or last, and with `ties` every row tied with the `k`-th
     * (which later sort keys order; with one key, any of the tied rows will do).
     */
    def topN(nullsFirst: Boolean, k: Int, ties: Boolean): Unit = {
      var need = k.toLong
      def nulls(): Unit = {
        var r = 0L
        while (r < e.nullRows && (ties || need > 0)) { e.isNull(r); if (add(r)) need -= 1; r += 1 }
      }
      if (nullsFirst) nulls()
      if (need > 0 && !values(need, ties) && !nullsFirst) nulls()
    }

    /**
     * Adds the rows of the first `need` live values in the walk's order and, with `ties`, every value tied with the
     * last of them; false (every value's row added) when there are fewer.
     */
    private def values(need: Long, ties: Boolean): Boolean = {
      var counted = 0L
      var bound: FieldVector = null // the need-th live value, once found
      def keep(v: ValueVector, i: Int): Unit = {
        bound = v.getField.createVector(allocator)
        bound.allocateNew()
        bound.copyFromSafe(i, 0, v)
        bound.setValueCount(1)
      }
      try {
        var lo = e.nullRows
        if (descending && floats) {
          // NaNs with the sign bit come first descending (as every NaN), though they sort first in the index.
          val end = signedNaNsEnd
          while (lo < end) { if (add(lo)) counted += 1; lo += 1 }
          if (counted >= need) keep(e.values(lo - 1), e.row(lo - 1))
        }
        val step = if (descending) -1L else 1L
        var r = if (descending) e.numRows - 1 else lo
        var going = true
        while (going && r >= lo && r < e.numRows && (ties || bound == null)) {
          e.isNull(r)
          val v = e.values(r)
          val i = e.row(r)
          if (bound != null && compare(v, i, bound, 0) != 0) going = false
          else {
            val live = add(r)
            // Ascending, NaNs with the sign bit (at the start) are not among the first values: added, not counted.
            if (bound == null && live && (descending || !isNaN(v, i))) {
              counted += 1
              if (counted >= need) keep(v, i)
            }
            r += step
          }
        }
        bound != null
      } finally if (bound != null) bound.close()
    }

    /** The live null rows of the fragments taken. */
    def liveNulls(): Long = {
      var n = 0L
      var r = 0L
      while (r < e.nullRows) {
        e.isNull(r)
        val a = e.address(r)
        if (rows.taken(a) && rows.live(a)) n += 1
        r += 1
      }
      n
    }

    private def liveAt(r: Long): Boolean = { val a = e.address(r); rows.taken(a) && rows.live(a) }

    /** The smallest live value in SQL's order (the vector and row holding it, valid until the next read), if any. */
    def smallest(): Option[(FieldVector, Int)] = {
      var r = e.nullRows
      var nan = -1L
      var found = -1L
      while (found < 0 && r < e.numRows) {
        e.isNull(r)
        if (liveAt(r)) { if (nanAt(r)) { if (nan < 0) nan = r } else found = r }
        r += 1
      }
      val at = if (found >= 0) found else nan
      if (at < 0) None else Some((e.values(at), e.row(at)))
    }

    /** The largest live value in SQL's order (NaN if there is a live NaN), if any. */
    def largest(): Option[(FieldVector, Int)] = {
      var r = e.numRows - 1
      var found = -1L
      while (found < 0 && r >= e.nullRows) { e.isNull(r); if (liveAt(r)) found = r; r -= 1 }
      val nan = if (found < 0 || nanAt(found) || !floats) -1L else {
        val end = signedNaNsEnd
        var s = e.nullRows
        var n = -1L
        while (n < 0 && s < end) { if (liveAt(s)) n = s; s += 1 }
        n
      }
      val at = if (nan >= 0) nan else found
      if (at < 0) None else Some((e.values(at), e.row(at)))
    }
  }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
}

/**
 * The rows a top-N reads of the fragments a B-tree segment of `index`'s name covers ([[BTreeOrder.topN]]):
 * per such fragment, the physical offsets to read; `entries` is how many index entries were visited.
 */
private[table] final case class TopNBTree(index: IndexMetadata, rows: Map[Long, RoaringBitmap], entries: Long) {
  override def toString: String =
    s"b-tree '${index.name}' selects ${rows.values.map(_.getLongCardinality).sum} rows of ${rows.values.count(!_.isEmpty)} fragments"
}
