package io.sparklance.core.table

import org.apache.arrow.memory.RootAllocator
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.index.{Distance, IndexCache, IndexKind, IndexMetadata, IvfIndex}

/**
 * The vector index a nearest-neighbour search of one column uses, as pylance chooses it: the table's vector index on
 * that column, if it was built for the distance asked (pylance searches exactly otherwise) and is one segment of a
 * type sparklance searches (IVF_FLAT, IVF_PQ with 8-bit codes, IVF_SQ with l2, and their IVF_HNSW_* forms). [[search]] runs the index search of
 * docs/dev/vector-index-format.md §4 steps 1–4 over the rows of the fragments the index covers; rows of the other
 * fragments ([[unindexedFragments]]) are for the caller to search exactly, and the results to combine as §4 steps
 * 5–6 say.
 *
 * The index's row ids are the table's `_rowid` values: row addresses, or stable row ids when the table has them.
 * Deleted rows, and rows of fragments compacted away since the index was built, are never found.
 */
final class VectorIndexUse private (snapshot: Snapshot, val index: IndexMetadata, ivf: IvfIndex, val column: String) {

  /** The fragments of the version the index does not cover (appended after it was built), by id. */
  val unindexedFragments: Seq[Long] = snapshot.fragments.filterNot(f => index.covers(f.id)).map(_.id)

  /**
   * The row ids of the covered fragments' live rows: those the index may return. Kept in [[IndexCache]] for the table's
   * location, version and the index's uuid, which together name what they are computed from.
   */
  private lazy val liveRowIds: Roaring64NavigableMap =
    IndexCache.getOrLoad[Roaring64NavigableMap](VectorIndexUse.LiveRowsKey(snapshot.root, snapshot.version, index.uuid.toString),
      _.serializedSizeInBytes() + 64)(computeLiveRowIds())

  private def computeLiveRowIds(): Roaring64NavigableMap = LiveRowIds.of(snapshot, f => index.covers(f.id))

  def numPartitions: Int = ivf.numPartitions

  /** Whether the index searches each partition through an HNSW graph, so that `ef` has an effect. */
  def isHnsw: Boolean = ivf.isHnsw

  /** Whether the index's row ids are stable row ids (else row addresses, whose high half is the fragment id). */
  def hasStableRowIds: Boolean = snapshot.hasStableRowIds

  /**
   * For each query, the `k` rows of the covered fragments nearest to it by the index: row ids and the index's
   * distances, nearest first, ties by row id. `allowed`, when given, holds the only row ids that may be returned (a
   * filter applied before the search); deleted rows are never returned. `nprobes` is capped at the number of
   * partitions. `ef` is the beam width of an HNSW index's graph search (Lance's default when absent).
   */
  def search(queries: Seq[Array[Double]], k: Int, nprobes: Int, allowed: Option[Roaring64NavigableMap],
      ef: Option[Int] = None): Seq[IvfIndex.Found] = {
    val keep = allowed.fold(liveRowIds) { a =>
      val both = new Roaring64NavigableMap()
      both.or(liveRowIds)
      both.and(a)
      both
    }
    val allocator = new RootAllocator()
    try ivf.search(queries, math.min(nprobes, ivf.numPartitions), k, ef, id => keep.contains(id), allocator)
    finally allocator.close()
  }

  override def toString: String = s"${ivf.indexType} index '${index.name}' on $column (${ivf.distance.lanceName()}, " +
    s"${ivf.numPartitions} partitions${if (unindexedFragments.isEmpty) "" else s", ${unindexedFragments.size} fragments unindexed"})"
}

object VectorIndexUse {
  private final case class LiveRowsKey(root: String, version: Long, index: String)

  /**
   * The vector index a search of `column` by `distance` uses in `snapshot`, if any. An index of another distance is
   * not used (as in pylance, which then searches exactly). An index split in several segments (delta indexes after
   * an index optimization) or of a type sparklance does not search (RQ, 4-bit PQ, SQ with cosine or dot) is not
   * used either: the search is then exact, and the reason is returned for the plan to show.
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
    else if (segments.size > 1) Left(s"the vector index '$name' has ${segments.size} segments, which sparklance does not search yet")
    else {
      val index = segments.head._1
      // Opening refuses the types and quantizers sparklance does not search.
      try Right(new VectorIndexUse(snapshot, index, IvfIndex.open(snapshot.storage, snapshot.indexDir(index)), column))
      catch { case e: UnsupportedFeatureException => Left(e.getMessage) }
    }
  }
}
