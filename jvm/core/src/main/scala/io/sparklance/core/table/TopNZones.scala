package io.sparklance.core.table

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.ValueVector
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.format.Fragment
import io.sparklance.core.index.{IndexKind, IndexMetadata, ZoneMapIndex}

/**
 * The rows of a scan that can be among its top-N rows, from a zone map index on the top-N's first key: zones whose
 * best value comes after a bound that at least `k` rows are known to reach are not read.
 *
 * The bound: zones counted only where their rows are known exactly (the fragment has no deletion file, the zone no
 * NaN, so its bounds are SQL's), each as two parts, its values (which sort at or before its worst value: its
 * largest ascending, its smallest descending) and its nulls, the parts sorted by that worst key; the worst key of
 * the part that brings the count of rows to `k` is the bound `T`. At least `k` rows sort at or before `T`, so a row after `T` is not
 * in the top `k`; a zone whose best key (null when it has nulls and nulls sort first, else its smallest value
 * ascending) comes after `T` holds only such rows. Every other zone, and rows no zone spans, are read. Only for
 * scans without data filters: filtered rows would not count.
 *
 * @param pruned the zones left unread, and all zones of the fragments the index covers
 * @param rows   per fragment covered: the physical offsets to read (a fragment absent is read whole)
 */
private[table] final case class TopNZones(index: Option[IndexMetadata], pruned: Int, zones: Int, rows: Map[Long, RoaringBitmap]) {
  override def toString: String = index.fold("")(i => s"zone map '${i.name}' skips $pruned of $zones zones")
}

private[table] object TopNZones {
  val None: TopNZones = TopNZones(scala.None, 0, 0, Map.empty)

  /** Zone `index` (of the zone map's rows) of a fragment, its bounds exact or not, and whether its rows count. */
  private final case class Zone(index: Int, fragment: Long, start: Long, length: Long, nulls: Long, exact: Boolean,
      counted: Boolean, bestNull: Boolean)

  /** Rows of a counted zone that sort at or before its `index`'s worst value (or null): its values, or its nulls. */
  private final case class Part(index: Int, rows: Long, isNull: Boolean)

  def plan(snapshot: Snapshot, fragments: Seq[Fragment], topN: TopN): TopNZones = {
    val key = topN.keys.head
    val found = for {
      field <- snapshot.schema.field(key.column)
      index <- snapshot.indexes.find(i => i.kind == IndexKind.ZoneMap && i.fieldIds == Seq(field.id))
      covered = fragments.filter(f => index.covers(f.id))
      if covered.nonEmpty && topN.k > 0
    } yield (index, covered)
    found.fold(None) { case (index, covered) =>
      val allocator = new RootAllocator()
      try ZoneMapIndex.withZones(snapshot.storage, snapshot.indexDir(index), allocator)(prune(index, covered, topN, key, _))
      catch {
        case NonFatal(e) =>
          log.warn(s"Not using zone map '${index.name}' of ${snapshot.root}@${snapshot.version} for $topN: ${e.getMessage}")
          None
      } finally allocator.close()
    }
  }

  private def prune(index: IndexMetadata, covered: Seq[Fragment], topN: TopN, key: SortKey, z: ZoneMapIndex.Zones): TopNZones = {
    val byId = covered.map(f => f.id -> f).toMap
    val order = ValueOrder.of(z.min.getField.getType)
    if (order.isEmpty) return None
    val zones = mutable.ArrayBuffer.empty[Zone]
    var i = 0
    while (i < z.count) {
      byId.get(z.fragmentId(i)).foreach { f =>
        if (z.zoneStart(i) < 0 || z.zoneLength(i) < 0 || z.zoneStart(i) + z.zoneLength(i) > f.physicalRows) {
          throw new IllegalStateException(s"zone $i spans rows past fragment ${f.id}'s ${f.physicalRows}")
        }
        val nulls = z.nullCount(i)
        val values = z.zoneLength(i) - nulls
        // Bounds with NaNs are not SQL's order (upstream's max is NaN, its min skips them).
        val exact = z.nanCount(i) == 0 && (values <= 0 || (!z.min.isNull(i) && !z.max.isNull(i)))
        zones += Zone(i, f.id, z.zoneStart(i), z.zoneLength(i), nulls, exact, exact && f.deletionFile.isEmpty,
          bestNull = (nulls > 0 && key.nullsFirst) || values <= 0)
      }
      i += 1
    }
    // Ascending, a zone's best value is its min and its worst its max; descending the other way round.
    val (best, worst) = if (key.descending) (z.max, z.min) else (z.min, z.max)
    // Compares a zone's key (null, or row ai of bound vector a) with another's, in the first key's order.
    def compare(aNull: Boolean, a: ValueVector, ai: Int, bNull: Boolean, b: ValueVector, bi: Int): Int =
      if (aNull && bNull) 0
      else if (aNull) (if (key.nullsFirst) -1 else 1)
      else if (bNull) (if (key.nullsFirst) 1 else -1)
      else { val c = Integer.signum(order.get.compare(a, ai, b, bi)); if (key.descending) -c else c }
    // A counted zone's values reach at most its worst value, its nulls null: counted apart, a zone's nulls do not
    // hide its values when nulls sort last, nor its values its nulls when they sort first.
    val parts = zones.filter(_.counted).flatMap { zone =>
      Seq(Part(zone.index, zone.length - zone.nulls, isNull = false), Part(zone.index, zone.nulls, isNull = true)).filter(_.rows > 0)
    }.sortWith((a, b) => compare(a.isNull, worst, a.index, b.isNull, worst, b.index) < 0)
    var total = 0L
    val bound = parts.find { part => total += part.rows; total >= topN.k }
    bound.fold(None) { t =>
      val dropped = zones.filter(zone => zone.exact && compare(zone.bestNull, best, zone.index, t.isNull, worst, t.index) > 0)
      if (dropped.isEmpty) None
      else {
        val rows = covered.map { f =>
          val read = new RoaringBitmap()
          read.add(0L, f.physicalRows)
          dropped.filter(_.fragment == f.id).foreach(zone => read.remove(zone.start, zone.start + zone.length))
          f.id -> read
        }.toMap
        TopNZones(Some(index), dropped.size, zones.size, rows)
      }
    }
  }

  private val log = org.slf4j.LoggerFactory.getLogger(classOf[TopNZones])
}
