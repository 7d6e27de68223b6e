package io.sparklance.core.table

import org.apache.arrow.memory.RootAllocator
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.index.{Distance, IndexCache, IndexKind, IndexMetadata, IvfIndex}

/**
 * The vector index a nearest-neighbour search of one column uses, as pylance chooses it: the table's vector index on
 * that column, if it was built for the distance asked (pylance searches exactly otherwise) and of a type sparklance
 * searches (IVF_FLAT, IVF_PQ with 8- or 4-bit codes, IVF_SQ with l2, and their IVF_HNSW_* forms), with all its segments
 * (the delta segments pylance's `optimize_indices(num_indices_to_merge=0)` adds, each over the fragments appended
 * since the one before). [[search]] runs the index search of docs/dev/vector-index-format.md §4 steps 1–4 in each
 * segment over the rows of the fragments it covers, and keeps the nearest of all, as Lance unions its segments'
 * results; rows of the other fragments ([[unindexedFragments]]) are for the caller to search exactly, and the
 * results to combine as §4 steps 5–6 say.
 *
 * The index's row ids are the table's `_rowid` values: row addresses, or stable row ids when the table has them.
 * Deleted rows, and rows of fragments compacted away since the index was built, are never found.
 */
final class VectorIndexUse private (snapshot: Snapshot, segments: Seq[(IndexMetadata, IvfIndex)], val column: String) {

  /** The index's first segment, as the manifest lists its segments. */
  val index: IndexMetadata = segments.head._1

  private val ivf: IvfIndex = segments.head._2

  /** The fragments of the version no segment of the index covers (appended after it was built), by id. */
  val unindexedFragments: Seq[Long] = snapshot.fragments.filterNot(f => segments.exists(_._1.covers(f.id))).map(_.id)

  /**
   * The row ids of the live rows of the fragments `segment` covers: those it may return. Kept in [[IndexCache]] for
   * the table's location, version and the segment's uuid, which together name what they are computed from.
   */
  private def liveRowIds(segment: IndexMetadata): Roaring64NavigableMap =
    IndexCache.getOrLoad[Roaring64NavigableMap](VectorIndexUse.LiveRowsKey(snapshot.root, snapshot.version, segment.uuid),
      _.serializedSizeInBytes() + 64)(VectorIndexUse.liveRowIds(snapshot, segment))

  def numPartitions: Int = ivf.numPartitions

  /** Whether the index searches each partition through an HNSW graph, so that `ef` has an effect. */
  def isHnsw: Boolean = ivf.isHnsw

  /** Whether the index's row ids are stable row ids (else row addresses, whose high half is the fragment id). */
  def hasStableRowIds: Boolean = snapshot.hasStableRowIds

  /**
   * For each query, the `k` rows of the covered fragments nearest to it by the index: row ids and the index's
   * distances, nearest first, ties by row id. `allowed`, when given, holds the only row ids that may be returned (a
   * filter applied before the search); deleted rows are never returned. `nprobes` is capped at the number of
   * partitions. `ef` is the beam width of an HNSW index's graph search (Lance's default when absent). Each segment
   * finds its own `k` nearest, and the `k` nearest of them all are kept (a row two segments hold, once).
   */
  def search(queries: Seq[Array[Double]], k: Int, nprobes: Int, allowed: Option[Roaring64NavigableMap],
      ef: Option[Int] = None): Seq[IvfIndex.Found] = {
    val allocator = new RootAllocator()
    try {
      val bySegment = segments.map { case (meta, segment) =>
        val live = liveRowIds(meta)
        val keep = allowed.fold(live) { a =>
          val both = new Roaring64NavigableMap()
          both.or(live)
          both.and(a)
          both
        }
        segment.search(queries, math.min(nprobes, segment.numPartitions), k, ef, id => keep.contains(id), allocator)
      }
      if (bySegment.size == 1) bySegment.head else queries.indices.map(q => VectorIndexUse.nearest(bySegment.map(_(q)), k))
    } finally allocator.close()
  }

  override def toString: String = s"${ivf.indexType} index '${index.name}' on $column (${ivf.distance.lanceName()}, " +
    s"${ivf.numPartitions} partitions${if (segments.size > 1) s", ${segments.size} segments" else ""}" +
    s"${if (unindexedFragments.isEmpty) "" else s", ${unindexedFragments.size} fragments unindexed"})"
}

object VectorIndexUse {
  private final case class LiveRowsKey(root: String, version: Long, index: String)

  /** The row ids of the live rows of `snapshot`'s fragments that `segment` covers. */
  private[table] def liveRowIds(snapshot: Snapshot, segment: IndexMetadata): Roaring64NavigableMap =
    LiveRowIds.of(snapshot, f => segment.covers(f.id))

  /** The `k` nearest of several segments' rows, nearest first, ties by row id, each row id once. */
  private def nearest(found: Seq[IvfIndex.Found], k: Int): IvfIndex.Found = {
    val all = found.flatMap(f => f.rowIds.indices.map(i => (f.distances(i), f.rowIds(i))))
      .sortWith { case ((da, ia), (db, ib)) =>
        val c = java.lang.Float.compare(da, db)
        c < 0 || (c == 0 && java.lang.Long.compareUnsigned(ia, ib) < 0)
      }
    val seen = new java.util.HashSet[java.lang.Long]()
    val kept = all.filter { case (_, id) => seen.add(id) }.take(k)
    IvfIndex.Found(kept.map(_._2).toArray, kept.map(_._1).toArray)
  }

  /**
   * The vector index a search of `column` by `distance` uses in `snapshot`, if any, with all its segments. An index
   * of another distance is not used (as in pylance, which then searches exactly), nor one of a type sparklance does
   * not search (RQ, SQ with cosine or dot), nor one whose segments differ in type, distance or dimension:
   * the search is then exact, and the reason is returned for the plan to show.
   */
  def plan(snapshot: Snapshot, column: String, distance: Distance): Either[String, VectorIndexUse] = {
    val onColumn = snapshot.schema.field(column).toSeq.flatMap { field =>
      snapshot.indexes.filter(i => i.kind == IndexKind.Vector && i.fieldIds == Seq(field.id))
    }
    val described = onColumn.map(i => (i, IvfIndex.describe(snapshot.storage, snapshot.indexDir(i))))
    val matching = described.filter(_._2._2 == distance)
    lazy val name = matching.head._1.name
    lazy val segments = matching.filter(_._1.name == name)
    if (onColumn.isEmpty) Left("no vector index")
    else if (matching.isEmpty) Left(s"the vector index '${onColumn.head.name}' is for ${described.head._2._2.lanceName()}, not ${distance.lanceName()}")
    else if (segments.map(_._2).distinct.size > 1) {
      Left(s"the segments of vector index '$name' are of different types (${segments.map(_._2._1).distinct.mkString(", ")})")
    } else {
      // Opening refuses the types and quantizers sparklance does not search.
      try {
        val opened = segments.map { case (meta, _) => (meta, IvfIndex.open(snapshot.storage, snapshot.indexDir(meta))) }
        if (opened.map(_._2.dim).distinct.size > 1) Left(s"the segments of vector index '$name' hold vectors of different dimensions")
        else Right(new VectorIndexUse(snapshot, opened, column))
      } catch { case e: UnsupportedFeatureException => Left(e.getMessage) }
    }
  }
}
