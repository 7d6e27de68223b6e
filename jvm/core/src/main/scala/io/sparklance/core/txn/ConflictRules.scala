package io.sparklance.core.txn

import scala.jdk.CollectionConverters._

import io.sparklance.core.index.IndexMetadata
import io.sparklance.core.util.Parse
import io.sparklance.proto.TableProtos

/**
 * Whether a transaction may be rebased over one committed since it read the table, following upstream Lance's
 * conflict resolver (`rust/lance/src/io/commit/conflict_resolver.rs`). The table, for the operations sparklance
 * commits (rows: ours; columns: theirs):
 *
 * | ours \ theirs | Append | Delete, Update | Rewrite | Overwrite | anything else, or no transaction file |
 * |---|---|---|---|---|---|
 * | Append         | yes | yes | yes | no | no |
 * | Delete, Update | yes | yes if other fragments; same fragments: merge deletion files (*) | if other fragments | no | no |
 * | Rewrite        | yes | if other fragments | if other fragments and other remapped indexes (**) | no | CreateIndex: (**) |
 * | Overwrite      | yes | yes | yes | yes | no |
 * | CreateIndex    | yes | Delete: yes; Update: if no fragment the new indexes cover | if no fragment they cover, and none of the indexes it removes was remapped (**) | no | CreateIndex: if other names and uuids |
 * | UpdateConfig   | yes | yes | yes | if it sets none of our keys | UpdateConfig: if other keys; others known: yes |
 *
 * A ReserveFragments (fragment ids set aside for a compaction) only raises the table's highest fragment id, so every
 * operation above combines with it in either direction (a schema change too, as upstream has it).
 *
 * (**) A rewrite that remaps indexes (`rewritten_indices`) replaces each by uuid: it conflicts with a CreateIndex
 * that removed one of them (a drop, a replacement, an OPTIMIZE INDEX) or whose new indexes cover a fragment it
 * rewrote (their row addresses are the old ones), as upstream's `check_rewrite_txn` rules; a CreateIndex removing an
 * index a rewrite committed meanwhile remapped conflicts too (the uuid it removes is gone), and so do two rewrites
 * remapping the same index.
 *
 * A commit of data or indexes over an UpdateConfig (theirs) is compatible too, as upstream has it: the next manifest
 * is built from the latest, config and all. An UpdateConfig of ours over one that changed the same keys, replaced the
 * whole config or changed metadata conflicts: which value should win is the user's call.
 *
 * A commit over a CreateIndex (theirs) is compatible for appends, deletes, updates, rewrites and overwrites: the
 * index section is rebuilt from the latest one at commit time ([[ManifestBuilder.indexSection]]).
 *
 * (*) When both changed the deletion file of a fragment, ours is merged with the one now in the table
 * ([[DeletionMerge]]), and the merge itself conflicts when both deleted (or updated) the same row. Upstream treats
 * that as a conflict even for two deletes of the same row, and so do we: a row deleted by one and updated by the
 * other must not be resolved silently, and the deletion files alone cannot tell the two apart. A fragment the other
 * removed (every row deleted), rewrote (compaction) or gave other data files conflicts: our deletion file would
 * apply to rows that are no longer where it says.
 *
 * A schema change (Project) combines with nothing, in either direction: data written for the old schema must not
 * land under the new one, and two schema changes must not be merged blindly. An append after a concurrent
 * overwrite would add rows to a table that no longer exists in that shape; an overwrite replaces whatever was
 * committed meanwhile. Anything unknown conflicts: when in doubt, do not commit.
 */
object ConflictRules {

  /** The outcome of checking our transaction against one committed since it read the table. */
  sealed trait Verdict
  object Verdict {
    /** Ours applies on top of theirs as it is. */
    case object Compatible extends Verdict
    /** Ours applies once its deletion files of these fragments are merged with the ones now in the table. */
    final case class MergeDeletions(fragmentIds: Set[Long]) extends Verdict
    /** Ours cannot be committed; `reason` completes "version v, committed since ..., is a T: ". */
    final case class Conflict(reason: String) extends Verdict
  }
  import Verdict._

  def check(ours: Operation, theirs: Option[Operation]): Verdict = (ours, theirs) match {
    case (_: Operation.ReserveFragments, Some(t)) if !t.isInstanceOf[Operation.Other] => Compatible
    case (o, Some(_: Operation.ReserveFragments)) if !o.isInstanceOf[Operation.Other] => Compatible
    case (o: Operation.Rewrite, Some(t: Operation.Rewrite)) if remapped(o).intersect(remapped(t)).nonEmpty =>
      Conflict("it remapped (rewrote the files of) the same index as this Rewrite; compact again")
    case (o: Operation.Rewrite, Some(t: Operation.CreateIndex)) if o.rewrittenIndices.nonEmpty =>
      val removed = t.removedIndices.map(_.getUuid.getUuid).toSet.intersect(remapped(o))
      lazy val covered = t.newIndices.flatMap(i => new IndexMetadata(i, "").fragmentBitmap.toArray.map(_.toLong)).toSet
        .intersect(touched(o))
      if (removed.nonEmpty) Conflict("it dropped or replaced an index this Rewrite remaps; compact again")
      else if (covered.nonEmpty) Conflict(s"it created an index covering ${fragments(covered)}, which this Rewrite " +
        "compacts; compact again")
      else Compatible
    case (_: Operation.Append, Some(_: Operation.Append | _: Operation.Delete | _: Operation.Update | _: Operation.Rewrite)) =>
      Compatible
    case (_: Operation.Delete | _: Operation.Update | _: Operation.Rewrite, Some(_: Operation.Append)) => Compatible
    case (o @ (_: Operation.Delete | _: Operation.Update), Some(t @ (_: Operation.Delete | _: Operation.Update))) =>
      rowLevel(o, t)
    case (o @ (_: Operation.Delete | _: Operation.Update | _: Operation.Rewrite), Some(t: Operation.Rewrite)) =>
      val both = touched(o).intersect(touched(t))
      if (both.isEmpty) Compatible
      else Conflict(s"it rewrote (compacted) ${fragments(both)}, which this ${o.name} also changed")
    case (o: Operation.Rewrite, Some(t @ (_: Operation.Delete | _: Operation.Update))) =>
      val both = touched(o).intersect(touched(t))
      if (both.isEmpty) Compatible
      else Conflict(s"it deleted rows of ${fragments(both)}, which this Rewrite compacts")
    case (_: Operation.Overwrite, Some(_: Operation.Append | _: Operation.Overwrite | _: Operation.Delete |
          _: Operation.Update | _: Operation.Rewrite)) => Compatible
    case (_: Operation.Append | _: Operation.Delete | _: Operation.Update | _: Operation.Rewrite | _: Operation.Overwrite,
          Some(_: Operation.CreateIndex)) => Compatible
    case (o: Operation.CreateIndex, Some(t)) => createIndex(o, t)
    case (_: Operation.Append | _: Operation.Delete | _: Operation.Update | _: Operation.Rewrite,
          Some(_: Operation.UpdateConfig)) => Compatible
    case (o: Operation.UpdateConfig, Some(t)) => updateConfig(o, t)
    case (o, t) => Conflict(s"which a ${o.name} cannot be combined with")
  }

  /** A CreateIndex over a commit: see the table. */
  private def createIndex(ours: Operation.CreateIndex, theirs: Operation): Verdict = {
    lazy val covered = ours.newIndices.flatMap(i => new IndexMetadata(i, "").fragmentBitmap.toArray.map(_.toLong)).toSet
    theirs match {
      case _: Operation.Append | _: Operation.Delete | _: Operation.UpdateConfig => Compatible
      case t: Operation.Rewrite if ours.removedIndices.exists(i => remapped(t).contains(i.getUuid.getUuid)) =>
        Conflict("it remapped an index this CreateIndex drops or replaces (under a new uuid); run it again")
      case _: Operation.Update | _: Operation.Rewrite =>
        val both = touched(theirs).intersect(covered)
        if (both.isEmpty) Compatible
        else Conflict(s"it changed ${fragments(both)}, which the index being created covers; create the index again")
      case Operation.CreateIndex(added, removed) =>
        val names = added.map(_.getName).toSet.intersect(ours.newIndices.map(_.getName).toSet)
        val uuids = removed.map(_.getUuid).toSet.intersect(ours.removedIndices.map(_.getUuid).toSet)
        if (names.isEmpty && uuids.isEmpty) Compatible
        else Conflict(s"it also created or dropped index ${(names ++ removed.filter(r => uuids.contains(r.getUuid)).map(_.getName)).mkString(", ")}")
      case t => Conflict(s"which a ${ours.name} cannot be combined with")
    }
  }

  /** Our config change over a commit: see the table. */
  private def updateConfig(ours: Operation.UpdateConfig, theirs: Operation): Verdict = theirs match {
    case _: Operation.Project | _: Operation.Merge | _: Operation.Overwrite | _: Operation.Restore
        if ours.fieldMetadata.nonEmpty =>
      Conflict(s"it changed the table's schema, whose fields this ${ours.name} sets metadata on; run it again")
    case t: Operation.UpdateConfig if ours.fieldMetadata.nonEmpty && t.fieldMetadata.nonEmpty =>
      Conflict("it also set field metadata; run it again")
    case t: Operation.UpdateConfig if t.otherUpdates =>
      Conflict("it replaced the table's config or changed its metadata; set the properties again")
    case t: Operation.UpdateConfig if t.keys.intersect(ours.keys).nonEmpty =>
      Conflict(s"it also set or removed ${t.keys.intersect(ours.keys).toSeq.sorted.mkString(", ")}")
    case t: Operation.Overwrite if t.config.keySet.intersect(ours.keys).nonEmpty =>
      Conflict(s"it replaced the table and set ${t.config.keySet.intersect(ours.keys).toSeq.sorted.mkString(", ")}")
    case _: Operation.Other => Conflict(s"which a ${ours.name} cannot be combined with")
    case _ => Compatible
  }

  /** Two row-level changes: see the table. */
  private def rowLevel(ours: Operation, theirs: Operation): Verdict = {
    val (ourUpdated, ourRemoved) = changes(ours)
    val (theirUpdated, theirRemoved) = changes(theirs)
    val both = (ourUpdated.keySet ++ ourRemoved).intersect(theirUpdated.keySet ++ theirRemoved)
    def conflictIn(id: Long): Option[Conflict] =
      if (theirRemoved.contains(id)) {
        Some(Conflict(s"it removed fragment $id (deleted every row of it), which this ${ours.name} also changed"))
      } else if (ourRemoved.contains(id)) {
        Some(Conflict(s"it deleted rows of fragment $id, every row of which this ${ours.name} deletes"))
      } else if (ourUpdated(id).getFilesList.asScala != theirUpdated(id).getFilesList.asScala) {
        Some(Conflict(s"it changed the data files of fragment $id, which this ${ours.name} also changed"))
      } else None
    if (both.isEmpty) Compatible
    else Parse.first(both.toSeq.sorted.iterator.flatMap(conflictIn)).getOrElse(MergeDeletions(both))
  }

  /** The fragments a Delete or Update gave new deletion files (by id), and those it removed. */
  private def changes(op: Operation): (Map[Long, TableProtos.DataFragment], Set[Long]) = op match {
    case Operation.Delete(updated, deleted, _, _) => (updated.map(f => f.getId -> f).toMap, deleted.toSet)
    case Operation.Update(removed, updated, _, _) => (updated.map(f => f.getId -> f).toMap, removed.toSet)
    case _ => (Map.empty, Set.empty)
  }

  /** The existing fragments a row-level operation or a rewrite changed or removed. */
  private def touched(op: Operation): Set[Long] = op match {
    case Operation.Rewrite(groups, _) => groups.flatMap(_._1.map(_.getId)).toSet
    case _ => val (updated, removed) = changes(op); updated.keySet ++ removed
  }

  /** The uuids (bytes) of the indexes a rewrite remaps. */
  private def remapped(op: Operation.Rewrite): Set[com.google.protobuf.ByteString] =
    op.rewrittenIndices.map(_.getOldId.getUuid).toSet

  private def fragments(ids: Set[Long]): String = {
    val sorted = ids.toSeq.sorted
    if (sorted.size == 1) s"fragment ${sorted.head}" else s"fragments ${sorted.mkString(", ")}"
  }
}
