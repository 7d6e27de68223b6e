package io.sparklance.core.write

import java.util.concurrent.ThreadLocalRandom

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.{DeletionFile, DeletionVector, Fragment, FragmentFiles, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * Writes deletion files (shared/spec/table-format.md, "Deletion Files"): the rows a change deletes from a fragment,
 * merged with the fragment's existing deletions, as one new file under `_deletions/`. Like pylance, up to 4096
 * deleted rows go to an Arrow IPC file, more to a Roaring bitmap (shared/research/table-facts.md).
 */
object Deletions {
  /** Deletion vectors of at most this many rows are written as Arrow IPC files, larger ones as bitmaps. */
  val ArrowMaxRows = 4096

  /** What deleting rows did to one fragment. */
  sealed trait Outcome
  /**
   * The fragment with its new deletion file at `file`; `deleted` is the rows this change deleted (not those deleted
   * before), which a commit needs to merge the file with a concurrent change's.
   */
  final case class Updated(fragment: TableProtos.DataFragment, file: String, deleted: RoaringBitmap) extends Outcome
  /** Every row of the fragment is deleted: the fragment leaves the table. */
  final case class Removed(fragmentId: Long) extends Outcome
  /** None of the offsets was live: nothing changes. */
  case object Unchanged extends Outcome

  /**
   * Deletes the rows at `offsets` of `fragment` (as of the version of `layout`, the version the change read). Offsets already
   * deleted are ignored; offsets past the fragment's rows are an error.
   */
  def delete(storage: Storage, layout: TableLayout, fragment: Fragment, offsets: RoaringBitmap): Outcome = {
    if (!offsets.isEmpty && offsets.last().toLong >= fragment.physicalRows) {
      throw new InvalidArgumentException(s"Cannot delete row ${offsets.last()} of fragment ${fragment.id} of " +
        s"${layout.root}: it has ${fragment.physicalRows} rows.")
    }
    val existing = FragmentFiles.deletionVector(storage, layout, fragment).toBitmap
    val merged = RoaringBitmap.or(existing, offsets)
    if (merged.getLongCardinality == existing.getLongCardinality) Unchanged
    else if (merged.getLongCardinality >= fragment.physicalRows) Removed(fragment.id)
    else write(storage, layout, fragment.proto, merged, layout.version).copy(deleted = RoaringBitmap.andNot(merged, existing))
  }

  /**
   * Writes `deleted` (every deleted row of the fragment, old and new; fewer than its physical rows) as a new deletion
   * file of `fragment`, recording `readVersion` as the version it was based on; the outcome's `deleted` is all of
   * `deleted`.
   */
  def write(storage: Storage, layout: TableLayout, fragment: TableProtos.DataFragment, deleted: RoaringBitmap,
      readVersion: Long): Updated = {
    val vector = DeletionVector.fromBitmap(deleted)
    val arrow = deleted.getLongCardinality <= ArrowMaxRows
    val proto = TableProtos.DeletionFile.newBuilder()
      .setFileType(if (arrow) TableProtos.DeletionFile.DeletionFileType.ARROW_ARRAY else TableProtos.DeletionFile.DeletionFileType.BITMAP)
      .setReadVersion(readVersion)
      .setId(ThreadLocalRandom.current().nextLong() & Long.MaxValue)
      .setNumDeletedRows(deleted.getLongCardinality)
      .build()
    val path = layout.deletionFilePath(fragment.getId, new DeletionFile(proto))
    storage.create(path, if (arrow) DeletionVector.encodeArrow(vector) else DeletionVector.encodeRoaring(vector))
    Updated(fragment.toBuilder.setDeletionFile(proto).build(), path, deleted)
  }
}
