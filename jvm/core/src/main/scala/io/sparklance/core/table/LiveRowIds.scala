package io.sparklance.core.table

import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.format.Fragment

/**
 * The row ids (`_rowid`: stable row ids on tables that have them, else row addresses) of the live rows of some of a
 * version's fragments: what an index may return of the fragments it covers.
 */
private[table] object LiveRowIds {
  def of(snapshot: Snapshot, include: Fragment => Boolean): Roaring64NavigableMap = {
    val live = new Roaring64NavigableMap()
    snapshot.fragments.filter(include).foreach { f =>
      val deleted = snapshot.deletionVector(f)
      snapshot.rowIds(f) match {
        case Some(ids) =>
          var i = 0
          while (i < ids.length) { if (!deleted.contains(i)) live.addLong(ids(i)); i += 1 }
        case None =>
          val base = f.id << 32
          live.addRange(base, base + f.physicalRows)
          deleted.toSortedArray.foreach(o => live.removeLong(base + (o & 0xFFFFFFFFL)))
      }
    }
    live
  }
}
