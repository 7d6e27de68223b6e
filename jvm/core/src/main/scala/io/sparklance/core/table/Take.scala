package io.sparklance.core.table

import org.roaringbitmap.RoaringBitmap
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.MetadataColumn
import io.sparklance.core.format.Fragment

/**
 * The rows a scan's predicates on `_rowid` and `_rowaddr` select, read by offset as Lance's take reads them: a
 * predicate `_rowid IN (...)`, `_rowid = v` (likewise `_rowaddr`), or an `AND`/`OR` of those with predicates on
 * `_fragid` (which select whole fragments) and with each other. Every fragment's selected physical offsets are
 * computed once, on the driver.
 *
 * A row address is its fragment id in the high 32 bits and its offset in the low 32; a `_rowid` is the address too,
 * unless the table has stable row ids, whose fragments' row id sequences are then read to find the ids' offsets.
 * Offsets past a fragment's physical rows select nothing; deleted rows are dropped by the reader. The predicates
 * stay the caller's to evaluate on the rows read: the selection only narrows what is read.
 */
private[table] final class Take private (snapshot: Snapshot, predicates: Seq[Predicate]) {
  import Take._

  /** Each row id named, as the address of its row (ids of no live fragment's row left out). */
  private lazy val addressOf: Map[Long, Long] = {
    val ids = predicates.flatMap(values(_, MetadataColumn.RowId.name)).distinct
    if (!snapshot.hasStableRowIds || ids.isEmpty) Map.empty
    else {
      val wanted = Roaring64NavigableMap.bitmapOf(ids: _*)
      val found = Map.newBuilder[Long, Long]
      snapshot.fragments.foreach { f =>
        snapshot.rowIds(f).foreach { seq =>
          var i = 0
          while (i < seq.length) {
            if (wanted.contains(seq(i))) found += seq(i) -> ((f.id << 32) | i)
            i += 1
          }
        }
      }
      found.result()
    }
  }

  /** The offsets of `fragment` the predicates select, all its rows being None. */
  def rows(fragment: Fragment): Option[RoaringBitmap] = predicates.map(select(_, fragment)).reduceOption(intersect).flatten

  private def intersect(a: Option[RoaringBitmap], b: Option[RoaringBitmap]): Option[RoaringBitmap] = (a, b) match {
    case (Some(x), Some(y)) => Some(RoaringBitmap.and(x, y))
    case (Some(_), None) => a
    case _ => b
  }

  private def select(p: Predicate, f: Fragment): Option[RoaringBitmap] = p match {
    case Predicate.And(l, r) => intersect(select(l, f), select(r, f))
    case Predicate.Or(l, r) => (select(l, f), select(r, f)) match {
      case (Some(x), Some(y)) => Some(RoaringBitmap.or(x, y))
      case _ => None
    }
    case _ => p.columns.head match {
      case FragmentColumn => if (Scan.keepsFragment(p, f.id)) None else Some(new RoaringBitmap())
      case column =>
        val addresses = values(p, column).flatMap { v =>
          if (column == MetadataColumn.RowId.name && snapshot.hasStableRowIds) addressOf.get(v) else Some(v)
        }
        val offsets = new RoaringBitmap()
        addresses.foreach { a =>
          if ((a >>> 32) == f.id && (a & 0xFFFFFFFFL) < f.physicalRows) offsets.add((a & 0xFFFFFFFFL).toInt)
        }
        Some(offsets)
    }
  }
}

private[table] object Take {
  private val FragmentColumn = MetadataColumn.FragmentId.name
  private val Columns = Set(MetadataColumn.RowId.name, MetadataColumn.RowAddress.name)

  def apply(snapshot: Snapshot, predicates: Seq[Predicate]): Take = new Take(snapshot, predicates)

  /** Whether `p` selects rows by `_rowid` or `_rowaddr` ([[Take]]), possibly together with whole fragments. */
  def selectsRows(p: Predicate): Boolean = namesRows(p) && selects(p)

  private def namesRows(p: Predicate): Boolean = p match {
    case Predicate.And(l, r) => namesRows(l) || namesRows(r)
    case Predicate.Or(l, r) => namesRows(l) || namesRows(r)
    case other => other.columns.subsetOf(Columns)
  }

  private def selects(p: Predicate): Boolean = p match {
    case Predicate.And(l, r) => selects(l) && selects(r)
    case Predicate.Or(l, r) => selects(l) && selects(r)
    case Predicate.Compare(c, Predicate.Op.Eq, v) => (Columns(c) || c == FragmentColumn) && Predicate.fragmentId(v).isDefined
    case Predicate.In(c, vs) => (Columns(c) || c == FragmentColumn) && vs.forall(Predicate.fragmentId(_).isDefined)
    case Predicate.Compare(FragmentColumn, _, v) => Predicate.fragmentId(v).isDefined
    case _ => false
  }

  /** The 64-bit values a leaf on `column` names. */
  private def values(p: Predicate, column: String): Seq[Long] = p match {
    case Predicate.And(l, r) => values(l, column) ++ values(r, column)
    case Predicate.Or(l, r) => values(l, column) ++ values(r, column)
    case Predicate.Compare(`column`, Predicate.Op.Eq, v) => Predicate.fragmentId(v).toSeq
    case Predicate.In(`column`, vs) => vs.flatMap(Predicate.fragmentId)
    case _ => Nil
  }
}
