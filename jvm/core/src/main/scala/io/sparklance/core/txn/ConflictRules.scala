package io.sparklance.core.txn

/**
 * Whether a transaction may be rebased over one committed since it read the table, following upstream Lance's
 * conflict resolver. The table, for the operations sparklance commits (rows: ours; columns: theirs):
 *
 * | ours \ theirs | Append | Delete, Update, Rewrite | Overwrite | anything else, or no transaction file |
 * |---|---|---|---|---|
 * | Append         | yes    | yes (and Rewrite) | no     | no |
 * | Delete, Update, Rewrite | yes | if they touched other fragments | no | no |
 * | Overwrite      | yes    | yes            | yes       | no |
 *
 * A schema change (Project) combines with nothing, in either direction: data written for the old schema must not
 * land under the new one, and two schema changes must not be merged blindly.
 *
 * An append after a concurrent overwrite would add rows to a table that no longer exists in that shape; an
 * overwrite replaces whatever was committed meanwhile. Two row-level changes commute when they changed (deletion
 * files, removals) disjoint sets of fragments; otherwise the later one must read the table again, since it would
 * replace the other's deletion file. Anything unknown conflicts: when in doubt, do not commit.
 */
object ConflictRules {
  def compatible(ours: Operation, theirs: Option[Operation]): Boolean = (ours, theirs) match {
    case (_: Operation.Append, Some(_: Operation.Append | _: Operation.Delete | _: Operation.Update)) => true
    case (_: Operation.Delete | _: Operation.Update, Some(_: Operation.Append)) => true
    case (_: Operation.Append, Some(_: Operation.Rewrite)) => true
    case (_: Operation.Rewrite, Some(_: Operation.Append)) => true
    case (_: Operation.Delete | _: Operation.Update | _: Operation.Rewrite,
          Some(t @ (_: Operation.Delete | _: Operation.Update | _: Operation.Rewrite))) =>
      touched(ours).intersect(touched(t)).isEmpty
    case (_: Operation.Overwrite, Some(_: Operation.Append | _: Operation.Overwrite | _: Operation.Delete | _: Operation.Update |
          _: Operation.Rewrite)) => true
    case _ => false
  }

  /** The existing fragments a row-level operation changed or removed. */
  private def touched(op: Operation): Set[Long] = op match {
    case Operation.Delete(updated, deleted, _) => updated.map(_.getId).toSet ++ deleted
    case Operation.Update(removed, updated, _) => updated.map(_.getId).toSet ++ removed
    case Operation.Rewrite(groups) => groups.flatMap(_._1.map(_.getId)).toSet
    case _ => Set.empty
  }
}
