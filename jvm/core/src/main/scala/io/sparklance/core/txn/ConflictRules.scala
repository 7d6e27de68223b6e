package io.sparklance.core.txn

/**
 * Whether a transaction may be rebased over one committed since it read the table, following upstream Lance's
 * conflict resolver. The table, for the operations sparklance commits (rows: ours; columns: theirs):
 *
 * | ours \ theirs | Append | Overwrite | anything else, or no transaction file |
 * |---|---|---|---|
 * | Append        | yes    | no        | no |
 * | Overwrite     | yes    | yes       | no |
 *
 * An append after a concurrent overwrite would add rows to a table that no longer exists in that shape; an
 * overwrite replaces whatever was appended meanwhile. Anything unknown conflicts: when in doubt, do not commit.
 */
object ConflictRules {
  def compatible(ours: Operation, theirs: Option[Operation]): Boolean = (ours, theirs) match {
    case (_: Operation.Append, Some(_: Operation.Append)) => true
    case (_: Operation.Overwrite, Some(_: Operation.Append | _: Operation.Overwrite)) => true
    case _ => false
  }
}
