package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, ExpressionInfo, Literal, Unevaluable}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{BooleanType, DataType, StringType}
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.index.FtsQuery
import io.sparklance.core.table.{FullTextIndexUse, Snapshot}

/**
 * The other Lance connector's full-text search functions, registered by [[LanceSqlExtensions]]: the filters
 * `lance_match(column, query [, options])`, `lance_match_phrase(column, query [, slop])` and
 * `lance_multi_match(query [, options], column, column, ...)`, which select the rows whose text matches (no
 * score: they are filters, as in the other connector). Each column must be a string column of a Lance table with an
 * INVERTED index; the query and each row's text are analysed as that index says ([[FullTextIndexUse]]), so rows the
 * index does not cover yet match as the covered ones do, and deleted rows are never read. [[ListItemFilters]] hands
 * each [[FullTextSearch.Matches]] over a Lance scan to the scan, which then reads only the rows the index's posting
 * lists give in the fragments it covers.
 *
 * The function builder makes a [[FullTextSearch.Call]], which [[FullTextSearch.Resolution]] turns into a
 * [[FullTextSearch.Matches]] once its columns are resolved and the Lance table they come from is known. Ranked search
 * (`search`, `hybrid_search`, with `_score`) is [[RankedSearch]]'s.
 */
object FullTextSearch {
  val Functions: Seq[String] = Seq("lance_match", "lance_match_phrase", "lance_multi_match")

  def info(name: String): ExpressionInfo = new ExpressionInfo(getClass.getCanonicalName, name)

  def call(name: String)(args: Seq[Expression]): Expression = Call(name, args)

  /** A call of one of [[Functions]] before its columns are known to be a Lance table's: never resolved. */
  final case class Call(name: String, children: Seq[Expression]) extends Expression with Unevaluable {
    override lazy val resolved: Boolean = false
    override def dataType: DataType = BooleanType
    override def nullable: Boolean = false
    override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
      copy(children = newChildren)
  }

  /** The rows where `query` matches the text in any of `children` (one per column, with its index's analysis). */
  final case class Matches(name: String, children: Seq[Expression], queries: Seq[FtsQuery], uses: Seq[FullTextIndexUse])
      extends Expression with CodegenFallback {
    override def dataType: DataType = BooleanType
    override def nullable: Boolean = false
    override def prettyName: String = name

    @transient private lazy val matchers = new ThreadLocal[Seq[FtsQuery.Matcher]] {
      override def initialValue(): Seq[FtsQuery.Matcher] = uses.zip(queries).map { case (u, q) => u.matcher(q) }
    }

    override def eval(input: InternalRow): Any = {
      val ms = matchers.get()
      var i = 0
      var found = false
      while (!found && i < children.size) {
        val v = children(i).eval(input)
        found = v != null && ms(i).matches(v.asInstanceOf[UTF8String].toString)
        i += 1
      }
      found
    }

    override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Expression =
      copy(children = newChildren)
  }

  /** Turns each [[Call]] whose arguments are resolved into [[Matches]] over the Lance table its columns come from. */
  object Resolution extends Rule[LogicalPlan] {
    override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
      case p if p.childrenResolved && p.expressions.exists(_.exists(_.isInstanceOf[Call])) =>
        p.transformExpressions {
          case c: Call if c.childrenResolved => LanceSparkException.translate(resolve(c, p))
        }
    }

    private def resolve(c: Call, plan: LogicalPlan): Expression = {
      val args = c.children
      def literal(e: Expression, what: String): String = e match {
        case Literal(v: UTF8String, StringType) => v.toString
        case Literal(v, _) if v != null && what == "slop" => v.toString
        case _ => throw new InvalidArgumentException(s"${c.name}: the $what must be a literal, not ${e.sql}.")
      }
      def column(e: Expression): (AttributeReference, FullTextIndexUse, Snapshot) = e match {
        case a: AttributeReference if a.dataType == StringType =>
          val table = plan.collectFirst {
            case r: DataSourceV2Relation if r.output.exists(_.exprId == a.exprId) => r.table
          }.collect { case t: LanceTable => t }.getOrElse(throw new InvalidArgumentException(
            s"${c.name}: ${a.name} is not a column of a Lance table here; full-text search needs a string column of a " +
              "Lance table with an INVERTED index, named as it is (no alias or expression)."))
          (a, FullTextIndexUse.plan(table.snapshot, a.name, c.name), table.snapshot)
        case _ => throw new InvalidArgumentException(s"${c.name}: ${e.sql} is not a string column of a Lance " +
          "table; full-text search needs a string column with an INVERTED index, named as it is.")
      }
      def arity(ok: Boolean, usage: String): Unit =
        if (!ok) throw new InvalidArgumentException(s"${c.name} takes $usage; it was called with ${args.size} arguments.")
      c.name match {
        case "lance_match" =>
          arity(args.size == 2 || args.size == 3, "(column, query [, 'key=value,...'])")
          val (col, use, snapshot) = column(args(0))
          val q = FtsQuery.matchWithOptions(literal(args(1), "query"), args.lift(2).map(literal(_, "options")).getOrElse(""), c.name)
          Matches(c.name, Seq(col), Seq(FullTextIndexUse.expand(snapshot, use, q, c.name)), Seq(use))
        case "lance_match_phrase" =>
          arity(args.size == 2 || args.size == 3, "(column, query [, slop])")
          val (col, use, _) = column(args(0))
          val slop = args.lift(2).map { e =>
            val s = literal(e, "slop")
            scala.util.Try(s.toInt).toOption.getOrElse(throw new InvalidArgumentException(
              s"${c.name}: slop is '$s'; it must be a whole number of 0 or more."))
          }.getOrElse(0)
          val q = FtsQuery.Phrase(literal(args(1), "query"), slop)
          use.check(q, c.name)
          Matches(c.name, Seq(col), Seq(q), Seq(use))
        case _ =>
          arity(args.size >= 2, "(query [, 'operator=AND|OR'], column, column, ...)")
          val text = literal(args(0), "query")
          val (options, columnArgs) = args(1) match {
            case Literal(v: UTF8String, StringType) if FtsQuery.looksLikeOptions(v.toString) => (v.toString, args.drop(2))
            case _ => ("", args.drop(1))
          }
          arity(columnArgs.nonEmpty, "(query [, 'operator=AND|OR'], column, column, ...)")
          val q = FtsQuery.Match(text, FtsQuery.multiMatchOperator(options, c.name), 1.0f)
          val cols = columnArgs.map(column)
          Matches(c.name, cols.map(_._1), cols.map(_ => q), cols.map(_._2))
      }
    }
  }
}
