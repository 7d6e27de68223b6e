package io.sparklance.core.table

import io.sparklance.core.index.FtsQuery
import io.sparklance.core.schema.LogicalType

/**
 * A condition on the rows of a table that a scan can use, in the core's own terms (the Spark module translates
 * Spark's filters into these). Values are Java boxed numbers, booleans or strings.
 *
 * What a scan does with a predicate ([[Scan.filterUse]]): one on the `_fragid` metadata column selects fragments
 * exactly; one comparing top-level columns with literals as [[Predicate.comparable]] allows lets the scan skip rows
 * that cannot match (the caller still evaluates it on the rows returned); any other is not used.
 */
sealed trait Predicate extends Serializable {
  /** The columns the predicate reads. */
  def columns: Set[String] = this match {
    case Predicate.Compare(c, _, _) => Set(c)
    case Predicate.In(c, _) => Set(c)
    case Predicate.IsNull(c) => Set(c)
    case Predicate.IsNotNull(c) => Set(c)
    case Predicate.StringMatch(c, _, _) => Set(c)
    case Predicate.ListHasAny(c, _) => Set(c)
    case Predicate.FullTextMatch(targets) => targets.map(_._1).toSet
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
  /** How [[StringMatch]] matches a string with its text. */
  sealed trait StringOp extends Serializable
  object StringOp {
    case object StartsWith extends StringOp
    case object EndsWith extends StringOp
    case object Contains extends StringOp
  }

  /**
   * The string in `column` starts with, ends with or contains `text` (Spark's `LIKE 'x%'`, `'%x'`, `'%x%'`), byte
   * for byte in UTF-8; a null string matches nothing. Empty text matches every string.
   */
  final case class StringMatch(column: String, op: StringOp, text: String) extends Predicate {
    override def toString = s"$op($column, ${show(text)})"
  }

  final case class IsNull(column: String) extends Predicate { override def toString = s"$column IS NULL" }
  final case class IsNotNull(column: String) extends Predicate { override def toString = s"$column IS NOT NULL" }

  /**
   * The list in `column` holds an item equal to one of `values` (Spark's `array_contains` for one value and
   * `arrays_overlap` with literals, upstream's `array_has_any`): true only then, so a null list, and a list that
   * holds none of them but a null item, do not match. A scan uses it only through a label list index.
   */
  final case class ListHasAny(column: String, values: Seq[Any]) extends Predicate {
    override def toString = s"array_has_any($column, [${values.map(show).mkString(", ")}])"
  }
  /**
   * The text of one of the columns matches the full-text query given with it (`lance_match`, `lance_match_phrase`,
   * and `lance_multi_match`, which gives several columns), as the column's INVERTED index analyses texts
   * ([[FtsQuery]]). A scan uses it only through the columns' full-text indexes (batches do not evaluate it), to read
   * the rows of indexed fragments that can match: the caller still evaluates it on the rows read.
   */
  final case class FullTextMatch(targets: Seq[(String, FtsQuery)]) extends Predicate {
    override def toString = targets.map { case (c, q) => s"$q on $c" }.mkString("full_text(", " or ", ")")
  }
  final case class And(left: Predicate, right: Predicate) extends Predicate { override def toString = s"($left AND $right)" }
  final case class Or(left: Predicate, right: Predicate) extends Predicate { override def toString = s"($left OR $right)" }

  private def show(v: Any): String = v match {
    case s: String => s"'$s'"
    case other => String.valueOf(other)
  }

  /** The largest precision of a decimal column a scan compares: its unscaled values fit a signed 64-bit integer. */
  val MaxLongDecimalPrecision = 18

  /**
   * Whether a scan compares the values of a column of type `t` with literal `v`, and how:
   *  - signed integers with integral literals (`Byte`, `Short`, `Integer`, `Long`) exactly, and with floating ones
   *    (`Float`, `Double`) as doubles;
   *  - dates and timestamps with integral literals, by the integer stored (days of `date32`, milliseconds of
   *    `date64`, counts of the timestamp's unit since the epoch, whatever its time zone): an engine translates its
   *    own date and time literals into the column's unit;
   *  - floats and doubles with integral or floating literals, as doubles (NaN above all, -0.0 equal to 0.0);
   *  - booleans with booleans; strings with strings, by their unsigned UTF-8 bytes;
   *  - 128-bit decimals of precision up to [[MaxLongDecimalPrecision]] with `java.math.BigDecimal`s, by value.
   */
  def comparable(t: LogicalType, v: Any): Boolean = {
    val integral = v match {
      case _: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte => true
      case _ => false
    }
    val floating = v.isInstanceOf[java.lang.Double] || v.isInstanceOf[java.lang.Float]
    t match {
      case LogicalType.Int(_, true) => integral || floating
      case LogicalType.Date32 | LogicalType.Date64 | LogicalType.Timestamp(_, _) => integral
      case LogicalType.Float | LogicalType.Double => integral || floating
      case LogicalType.Bool => v.isInstanceOf[java.lang.Boolean]
      case LogicalType.Utf8(_) => v.isInstanceOf[String]
      case LogicalType.Decimal(128, p, _) => p <= MaxLongDecimalPrecision && v.isInstanceOf[java.math.BigDecimal]
      case _ => false
    }
  }

  private[table] def fragmentId(v: Any): Option[Long] = v match {
    case n: java.lang.Number => Some(n.longValue())
    case _ => None
  }
}
