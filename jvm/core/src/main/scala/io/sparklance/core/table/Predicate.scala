package io.sparklance.core.table

/**
 * A condition on the rows of a table that a scan can use, in the core's own terms (the Spark module translates
 * Spark's filters into these). Values are Java boxed numbers, booleans or strings.
 *
 * What a scan does with a predicate ([[Scan.filterUse]]): one on the `_fragid` metadata column selects fragments
 * exactly; one on top-level columns of the types [[Predicate.readable]] lists lets the scan skip batches in which no
 * row can match (the caller still evaluates it on the rows returned); any other is not used.
 */
sealed trait Predicate extends Serializable {
  /** The columns the predicate reads. */
  def columns: Set[String] = this match {
    case Predicate.Compare(c, _, _) => Set(c)
    case Predicate.In(c, _) => Set(c)
    case Predicate.IsNull(c) => Set(c)
    case Predicate.IsNotNull(c) => Set(c)
    case Predicate.And(l, r) => l.columns ++ r.columns
    case Predicate.Or(l, r) => l.columns ++ r.columns
  }
}

object Predicate {
  sealed trait Op extends Serializable
  object Op {
    case object Eq extends Op { override def toString = "=" }
    case object Lt extends Op { override def toString = "<" }
    case object Le extends Op { override def toString = "<=" }
    case object Gt extends Op { override def toString = ">" }
    case object Ge extends Op { override def toString = ">=" }
  }

  /** `column op value`; a null column value matches nothing. */
  final case class Compare(column: String, op: Op, value: Any) extends Predicate {
    override def toString = s"$column $op ${show(value)}"
  }
  final case class In(column: String, values: Seq[Any]) extends Predicate {
    override def toString = s"$column IN (${values.map(show).mkString(", ")})"
  }
  final case class IsNull(column: String) extends Predicate { override def toString = s"$column IS NULL" }
  final case class IsNotNull(column: String) extends Predicate { override def toString = s"$column IS NOT NULL" }
  final case class And(left: Predicate, right: Predicate) extends Predicate { override def toString = s"($left AND $right)" }
  final case class Or(left: Predicate, right: Predicate) extends Predicate { override def toString = s"($left OR $right)" }

  private def show(v: Any): String = v match {
    case s: String => s"'$s'"
    case other => String.valueOf(other)
  }

  /** Whether a literal is of a kind the scan compares: an integral or floating number, a boolean or a string. */
  private[table] def literalOk(v: Any): Boolean = v match {
    case _: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte | _: java.lang.Double |
         _: java.lang.Float | _: String | _: java.lang.Boolean => true
    case _ => false
  }

  private[table] def fragmentId(v: Any): Option[Long] = v match {
    case n: java.lang.Number => Some(n.longValue())
    case _ => None
  }
}
