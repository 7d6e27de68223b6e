package io.sparklance.core.index

import scala.collection.mutable

import org.roaringbitmap.RoaringBitmap

/**
 * Rows an index search found, by fragment: physical row offsets within each fragment. A fragment not in the map
 * has no matching row. `exact` tells whether every row matches (a B-tree or bitmap) or only that no other row
 * can (a zone map or bloom filter: the rows must still be filtered).
 */
final class RowSelection private (val byFragment: Map[Long, RoaringBitmap], val exact: Boolean) {

  def rows(fragmentId: Long): RoaringBitmap = byFragment.getOrElse(fragmentId, RowSelection.Empty)

  def count: Long = byFragment.values.map(_.getLongCardinality).sum

  /** Rows in both selections; exact only if both are. */
  def intersect(other: RowSelection): RowSelection = new RowSelection(
    byFragment.flatMap { case (id, rows) =>
      other.byFragment.get(id).map(o => id -> RoaringBitmap.and(rows, o)).filter(!_._2.isEmpty)
    }, exact && other.exact)

  /** Rows in either selection (e.g. two delta indexes of one name, which cover different fragments). */
  def union(other: RowSelection): RowSelection = new RowSelection(
    (byFragment.keySet ++ other.byFragment.keySet).map { id =>
      id -> RoaringBitmap.or(rows(id), other.rows(id))
    }.toMap, exact && other.exact)
}

object RowSelection {
  private val Empty = new RoaringBitmap()

  /** A selection of row addresses (fragment id in the upper 32 bits, offset in the lower). */
  final class Builder(exact: Boolean) {
    private val byFragment = mutable.HashMap.empty[Long, RoaringBitmap]
    def addAddress(address: Long): Unit =
      byFragment.getOrElseUpdate(address >>> 32, new RoaringBitmap()).add((address & 0xFFFFFFFFL).toInt)
    def addRange(fragmentId: Long, from: Long, to: Long): Unit =
      byFragment.getOrElseUpdate(fragmentId, new RoaringBitmap()).add(from, to)
    def addAll(fragmentId: Long, offsets: RoaringBitmap): Unit =
      byFragment.getOrElseUpdate(fragmentId, new RoaringBitmap()).or(offsets)
    def result(): RowSelection = new RowSelection(byFragment.toMap.filter(!_._2.isEmpty), exact)
  }

  def empty(exact: Boolean): RowSelection = new RowSelection(Map.empty, exact)
}
