package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.{Predicate => V2Predicate}
import org.apache.spark.sql.sources._

import io.sparklance.core.table.Predicate
import io.sparklance.core.table.Predicate.Op

/**
 * Spark's filters as the core's [[Predicate]]s: comparisons, `IN`, `IS [NOT] NULL` and `AND`/`OR` of those, on a
 * column named by one name part. Anything else has no translation and stays Spark's alone.
 */
object SparkPredicates {

  def of(f: Filter): Option[Predicate] = f match {
    case EqualTo(a, v) => Some(Predicate.Compare(column(a), Op.Eq, v))
    case GreaterThan(a, v) => Some(Predicate.Compare(column(a), Op.Gt, v))
    case GreaterThanOrEqual(a, v) => Some(Predicate.Compare(column(a), Op.Ge, v))
    case LessThan(a, v) => Some(Predicate.Compare(column(a), Op.Lt, v))
    case LessThanOrEqual(a, v) => Some(Predicate.Compare(column(a), Op.Le, v))
    case In(a, vs) => Some(Predicate.In(column(a), vs.toSeq))
    case IsNull(a) => Some(Predicate.IsNull(column(a)))
    case IsNotNull(a) => Some(Predicate.IsNotNull(column(a)))
    case And(l, r) => for (x <- of(l); y <- of(r)) yield Predicate.And(x, y)
    case Or(l, r) => for (x <- of(l); y <- of(r)) yield Predicate.Or(x, y)
    case _ => None
  }

  /**
   * The column a V1 filter names: Spark quotes a name that is not a plain identifier (`my col`) and joins the parts
   * of a nested one with dots; a top-level name comes back unquoted, a nested one as Spark gave it (the core reads
   * names with a dot as nested, which no predicate is used on).
   */
  private def column(attribute: String): String =
    if (!attribute.contains('`')) attribute
    else scala.util.Try(org.apache.spark.sql.catalyst.parser.CatalystSqlParser.parseMultipartIdentifier(attribute))
      .toOption.collect { case Seq(one) => one }.getOrElse(attribute)

  /** A DataSourceV2 comparison or `IN` of one column with literals (what DELETE hands a table). */
  def of(p: V2Predicate): Option[Predicate] = {
    val children = p.children().toSeq
    val column = children.headOption.collect { case r: NamedReference if r.fieldNames().length == 1 => r.fieldNames()(0) }
    val values = children.drop(1).map { case l: Literal[_] => Option(l.value()); case _ => None }
    if (column.isEmpty || values.exists(_.isEmpty)) None
    else {
      val c = column.get
      (p.name(), values.flatten) match {
        case ("=", Seq(v)) => Some(Predicate.Compare(c, Op.Eq, v))
        case ("<", Seq(v)) => Some(Predicate.Compare(c, Op.Lt, v))
        case ("<=", Seq(v)) => Some(Predicate.Compare(c, Op.Le, v))
        case (">", Seq(v)) => Some(Predicate.Compare(c, Op.Gt, v))
        case (">=", Seq(v)) => Some(Predicate.Compare(c, Op.Ge, v))
        case ("IN", all) if all.nonEmpty => Some(Predicate.In(c, all))
        case _ => None
      }
    }
  }
}
