package io.sparklance.core.table

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.index.IndexMetadata

/**
 * Which segments of an index an update (OPTIMIZE INDEX) merges, as pylance 14's
 * `optimize_indices(num_indices_to_merge = n)` picks them (probed for every kind sparklance builds, 2026-11-27):
 *  - `n = 0`: none. The fragments no segment covers are indexed into a new delta segment of the same name, covering
 *    those fragments only, with the read version as its `dataset_version`; nothing is committed without such
 *    fragments.
 *  - `n > 0`: the newest `n` segments (the last ones of the manifest; all of them when there are fewer), merged with
 *    the fragments no segment covers into one new segment, which replaces them and covers what they covered and
 *    those fragments; the older segments stay as they are. Nothing is committed when there are no such fragments and
 *    at most one segment would be merged.
 *  - without `n`, sparklance merges every segment (pylance's default merges the newest one for scalar and full-text
 *    indexes).
 */
private[table] object IndexSegments {

  /** `segments` (one index's, in the manifest's order) split into those merged and those kept as they are. */
  def pick(segments: Seq[IndexMetadata], merge: Option[Int]): (Seq[IndexMetadata], Seq[IndexMetadata]) = merge match {
    case None => (segments, Nil)
    case Some(n) if n < 0 => throw new InvalidArgumentException(s"num_indices_to_merge must be at least 0, not $n.")
    case Some(n) =>
      val keep = math.max(0, segments.size - n)
      (segments.drop(keep), segments.take(keep))
  }

  /** The fragments `segments` cover. */
  def coverage(segments: Seq[IndexMetadata]): RoaringBitmap =
    segments.foldLeft(new RoaringBitmap())((b, i) => RoaringBitmap.or(b, i.fragmentBitmap))

  /** The segments of index `name` among `indexes` that an update replaces: all of them but the `unmerged` ones. */
  def replaced(indexes: Seq[IndexMetadata], name: String, unmerged: Seq[IndexMetadata]): Seq[IndexMetadata] =
    indexes.filter(i => i.name == name && !contains(unmerged, i))

  /** Whether `segment` is one of `segments` (by uuid). */
  def contains(segments: Seq[IndexMetadata], segment: IndexMetadata): Boolean = segments.exists(_.uuid == segment.uuid)
}
