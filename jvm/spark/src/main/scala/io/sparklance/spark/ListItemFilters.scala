package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{ArrayContains, ArraysOverlap, AttributeReference, Expression, Literal, PredicateHelper}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
import org.apache.spark.sql.types._

import io.sparklance.core.table.Predicate

/**
 * Hands the conditions of a filter on a Lance scan that test a list column's items to the scan, which searches a
 * label list index with them: `array_contains(column, literal)` and `arrays_overlap(column, array(literals))` (either
 * order) of a top-level list of strings, integers or booleans, as [[Predicate.ListHasAny]]. Several such conditions
 * each search the index, and the rows found are intersected. The full-text filters of [[FullTextSearch]]
 * (`lance_match`, `lance_match_phrase`, `lance_multi_match`) are handed over the same way, as
 * [[Predicate.FullTextMatch]], for the scan to read only the rows their full-text indexes' posting lists give.
 *
 * Spark's filter push-down translates neither function (not into V1 filters, nor into V2 predicates up to 4.3), and
 * the optimizer rules that extensions can add all run before the push-down builds the scan. So this is a planner
 * strategy, which [[LanceSqlExtensions]] puts before Spark's own: it sees the `Project` and `Filter` nodes above a
 * `DataSourceV2ScanRelation` as Spark's `DataSourceV2Strategy` would plan them together, and when their conditions
 * hold any such test, hands back the same nodes over the relation with a scan that also uses them, for Spark's
 * strategies to plan (this one then declines: the scan uses them already). The filter stays: Spark still evaluates
 * every condition on the rows read, so the scan only reads fewer rows. Both conditions are true only on a row whose
 * list holds one of the literals, which is exactly what the index finds.
 */
object ListItemFilters extends SparkStrategy with PredicateHelper {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = withListFilters(plan, Nil).map(planLater).toSeq

  /** `plan` (projections and deterministic filters over a Lance scan) with a scan that uses `conditions` too. */
  private def withListFilters(plan: LogicalPlan, conditions: Seq[Expression]): Option[LogicalPlan] = plan match {
    case p @ Project(list, child) if list.forall(_.deterministic) => withListFilters(child, conditions).map(c => p.copy(child = c))
    case f @ Filter(condition, child) if condition.deterministic =>
      withListFilters(child, conditions ++ splitConjunctivePredicates(condition)).map(c => f.copy(child = c))
    case relation: DataSourceV2ScanRelation => relation.scan match {
      case scan: LanceScan =>
        // Only tests of the relation's own columns: a projection between may give another value a column's name.
        val own = conditions.filter(_.references.subsetOf(relation.outputSet)).flatMap(listPredicate)
        val withLists = scan.withListFilters(own)
        if (withLists eq scan) None else Some(relation.copy(scan = withLists))
      case _ => None
    }
    case _ => None
  }

  private def listPredicate(e: Expression): Option[Predicate] = e match {
    case m: FullTextSearch.Matches if m.children.forall(_.isInstanceOf[AttributeReference]) =>
      Some(Predicate.FullTextMatch(m.children.map(_.asInstanceOf[AttributeReference].name).zip(m.queries)))
    case ArrayContains(a: AttributeReference, Literal(v, t)) if v != null => item(v, t).map(x => Predicate.ListHasAny(a.name, Seq(x)))
    case ArraysOverlap(a: AttributeReference, l: Literal) => overlap(a, l)
    case ArraysOverlap(l: Literal, a: AttributeReference) => overlap(a, l)
    case _ => None
  }

  /** The non-null items of a literal array, if there is one and each has a translation. */
  private def overlap(a: AttributeReference, l: Literal): Option[Predicate.ListHasAny] = (l.value, l.dataType) match {
    case (items: ArrayData, ArrayType(t, _)) =>
      val xs = (0 until items.numElements()).filterNot(items.isNullAt).map(i => item(items.get(i, t), t))
      if (xs.nonEmpty && xs.forall(_.isDefined)) Some(Predicate.ListHasAny(a.name, xs.flatten)) else None
    case _ => None
  }

  /**
   * An item literal in the core's terms. Strings only of Spark's default (binary) collation: an index compares
   * bytes.
   */
  private def item(v: Any, t: DataType): Option[Any] = t match {
    case s: StringType if s == StringType => Some(v.toString)
    case ByteType | ShortType | IntegerType | LongType => Some(java.lang.Long.valueOf(v.asInstanceOf[Number].longValue()))
    case BooleanType => Some(v)
    case _ => None
  }
}
