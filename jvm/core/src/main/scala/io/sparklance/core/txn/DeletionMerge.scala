package io.sparklance.core.txn

import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CommitConflictException
import io.sparklance.core.format.{FragmentFiles, Manifest, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.core.write.Deletions
import io.sparklance.proto.TableProtos

/**
 * The rebase of a Delete or Update over concurrent changes of the same fragments' deletion files (upstream
 * `finish_delete_update`): for each such fragment, the deletion vector now in the table and the rows this
 * transaction deleted must be disjoint; their union becomes a new deletion file, and a fragment whose every row is
 * then deleted leaves the table.
 */
object DeletionMerge {

  /** The rebased operation, and the deletion files written for it. */
  final case class Result(operation: Operation, files: Seq[String])

  /**
   * Rebases `op` on `current` (the latest manifest of the table at `root`) for the fragments `fragmentIds`, whose
   * deletion files `op` and a transaction committed since `readVersion` both changed, using the rows `op` records
   * it deleted (its `deletedRows`).
   *
   * @throws CommitConflictException when both deleted a row of one of the fragments, when the rows `op` deleted from
   *   one are not known, or when one is no longer in the table
   */
  def rebase(storage: Storage, root: String, op: Operation, fragmentIds: Set[Long], current: Manifest,
      readVersion: Long): Result = {
    val (updated, removed, deletedRows) = op match {
      case Operation.Delete(u, r, _, rows) => (u, r, rows)
      case Operation.Update(r, u, _, rows) => (u, r, rows)
      case other => throw new IllegalArgumentException(s"a ${other.name} has no deletion files to merge")
    }
    def conflict(detail: String) =
      new CommitConflictException(root, s"$detail Read the table again and redo the change.")

    val layout = TableLayout.of(root, current)
    val inTable = current.fragments.map(f => f.id -> f).toMap
    // Every fragment is checked before any file is written, so that a conflict leaves nothing behind.
    val checked = fragmentIds.toSeq.sorted.map { id =>
      val ours = updated.find(_.getId == id).getOrElse(throw new IllegalArgumentException(
        s"fragment $id has no new deletion file in this ${op.name}"))
      val now = inTable.getOrElse(id, throw conflict(s"fragment $id, whose rows this ${op.name} deleted, is no " +
        s"longer in the table at version ${current.version}."))
      val rows = deletedRows.getOrElse(id, throw conflict(s"fragment $id had rows deleted by a transaction committed " +
        s"since this ${op.name} read version $readVersion, and the rows this one deleted from it are not known, so " +
        "the two deletion files cannot be merged."))
      val existing = FragmentFiles.deletionVector(storage, layout, now).toBitmap
      val both = RoaringBitmap.and(existing, rows)
      if (!both.isEmpty) {
        val n = both.getLongCardinality
        val sample = both.toArray.take(5).mkString(", ") + (if (n > 5) ", ..." else "")
        throw conflict(s"fragment $id: $n of the rows this ${op.name} deleted or updated (offsets $sample) were " +
          s"also deleted or updated by a transaction committed since it read version $readVersion.")
      }
      (ours, now, RoaringBitmap.or(existing, rows))
    }
    val outcomes: Map[Long, Option[(TableProtos.DataFragment, String)]] = checked.map { case (ours, now, merged) =>
      ours.getId -> (if (merged.getLongCardinality >= now.physicalRows) None
        else {
          val w = Deletions.write(storage, layout, ours, merged, current.version)
          Some(w.fragment -> w.file)
        })
    }.toMap

    val keptUpdated = updated.flatMap(f => outcomes.get(f.getId).fold(Option(f))(_.map(_._1)))
    val nowRemoved = removed ++ outcomes.collect { case (id, None) => id }.toSeq.sorted
    val rebased = op match {
      case d: Operation.Delete => d.copy(updatedFragments = keptUpdated, deletedFragmentIds = nowRemoved)
      case u: Operation.Update => u.copy(updatedFragments = keptUpdated, removedFragmentIds = nowRemoved)
      case other => other
    }
    Result(rebased, outcomes.values.flatten.map(_._2).toSeq)
  }
}
