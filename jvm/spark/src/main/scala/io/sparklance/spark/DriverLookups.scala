package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSeq, BindReferences, Expression, InterpretedOrdering, InterpretedPredicate, NamedExpression, Unevaluable}
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, Inline, IntegerLiteral, InterpretedUnsafeProjection, JoinedRow}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Generate, GlobalLimit, LocalLimit, LogicalPlan, Offset, Project, Sort, Union}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.execution.{LeafExecNode, SQLExecution, SparkPlan, SparkStrategy}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * Plans an index lookup that reads a few rows ([[LanceScan.isDriverLookup]]) to run on the driver, without a Spark
 * job: `SELECT * FROM t WHERE id = 42` over a B-tree index costs the index search and the read of one row, where a
 * job costs tens of milliseconds of scheduling before any task runs. The `Project` and `Filter` directly above the
 * scan are evaluated with it, by Spark's own interpreted expressions, so Spark keeps no operator above that would
 * need a job of its own; every condition Spark would evaluate is evaluated, on every row the scan reads, so the
 * result is the one a job would give. Plans whose expressions cannot be evaluated that way (nondeterministic ones,
 * subqueries, Python UDFs) keep their Spark operators above the driver-side scan.
 *
 * A query made only of such lookups and of `Project`, `Filter`, `Sort`, `LIMIT`, `OFFSET`, `UNION ALL` and the `inline` of
 * an array above them (a vector search served by its index: the rows found, taken by row id, their distances, the
 * nearest kept; for a batch, each row paired with the queries that found it) is
 * evaluated on the driver as a whole ([[LanceDriverQueryExec]]), since any Spark operator left above would run a job.
 *
 * A planner strategy of [[LanceSqlExtensions]]; without the extensions, such scans run as jobs.
 */
object DriverLookups extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case _ if plan.exists(isQueryOperator) && local(plan).isDefined =>
      // What it evaluates, for EXPLAIN: its operators from the scans up, then the scans.
      val operators = plan.collect { case node if node.children.nonEmpty => node.simpleString(25) }.reverse
      Seq(LanceDriverQueryExec(plan.output, local(plan).get, operators.mkString("; ") + " over " +
        plan.collectLeaves().collect { case DriverLookup(_, scan) => scan.description() }.mkString(", ")))
    case Project(list, Filter(condition, DriverLookup(relation, scan))) if evaluable(list :+ condition, relation) =>
      Seq(LanceDriverScanExec(list, Some(condition), relation.output, scan))
    case Project(list, DriverLookup(relation, scan)) if evaluable(list, relation) =>
      Seq(LanceDriverScanExec(list, None, relation.output, scan))
    case Filter(condition, DriverLookup(relation, scan)) if evaluable(Seq(condition), relation) =>
      Seq(LanceDriverScanExec(relation.output, Some(condition), relation.output, scan))
    case DriverLookup(relation, scan) => Seq(LanceDriverScanExec(relation.output, None, relation.output, scan))
    case _ => Nil
  }

  /**
   * The rows of `plan` computed here, if it is made of driver lookups and of operators evaluated here, row by row in
   * one partition as Spark's would: `Project`, `Filter`, a `Sort`, `LIMIT` and `OFFSET` of literals, `UNION ALL`, and
   * `Generate` of `inline` (each row joined with the structs of its array, none for an empty or null one).
   */
  private def local(plan: LogicalPlan): Option[() => Array[InternalRow]] = plan match {
    case DriverLookup(relation, scan) => Some { () =>
      val out = ArrayBuffer.empty[InternalRow]
      scan.foreachRowOnDriver(row => out += row.copy())
      out.toArray
    }
    case Project(list, child) if evaluable(list, child.output) => local(child).map { rows => () =>
      val project = InterpretedUnsafeProjection.createProjection(BindReferences.bindReferences(list, child.output))
      project.initialize(0)
      rows().map(r => project(r).copy())
    }
    case Filter(condition, child) if evaluable(Seq(condition), child.output) => local(child).map { rows => () =>
      val keep = InterpretedPredicate(BindReferences.bindReference(condition, child.output))
      keep.initialize(0)
      rows().filter(keep.eval)
    }
    case sort: Sort if sort.global && evaluable(sort.order.map(_.child), sort.child.output) => local(sort.child).map { rows => () =>
      val ordering = new InterpretedOrdering(sort.order.map(o => BindReferences.bindReference(o, sort.child.output)))
      // A stable sort, as Spark's of one partition is.
      rows().sortWith((a, b) => ordering.compare(a, b) < 0)
    }
    case g @ Generate(Inline(array), _, false, _, _, child) if evaluable(Seq(array), child.output) => local(child).map { rows => () =>
      val structs = BindReferences.bindReference(array, child.output)
      val fields = g.generatorOutput.size
      val kept = InterpretedUnsafeProjection.createProjection(BindReferences.bindReferences(g.requiredChildOutput, child.output))
      kept.initialize(0)
      val out = ArrayBuffer.empty[InternalRow]
      rows().foreach { r =>
        val generated = structs.eval(r).asInstanceOf[ArrayData]
        if (generated != null && generated.numElements() > 0) {
          val left = kept(r).copy()
          var i = 0
          while (i < generated.numElements()) {
            // A null struct is a row of nulls, as Spark's Inline makes it.
            val struct = if (generated.isNullAt(i)) new GenericInternalRow(fields) else generated.getStruct(i, fields).copy()
            out += new JoinedRow(left, struct)
            i += 1
          }
        }
      }
      out.toArray
    }
    case GlobalLimit(IntegerLiteral(n), child) => local(child).map(rows => () => rows().take(n))
    case LocalLimit(IntegerLiteral(n), child) => local(child).map(rows => () => rows().take(n))
    case Offset(IntegerLiteral(n), child) => local(child).map(rows => () => rows().drop(n))
    case u: Union if !u.byName && !u.allowMissingCol =>
      val parts = u.children.map(local)
      if (parts.exists(_.isEmpty)) None else Some(() => parts.flatMap(_.get()).toArray)
    case _ => None
  }

  /** An operator that makes a plan a query of its own (else Spark's operators above a lookup need no job). */
  private def isQueryOperator(plan: LogicalPlan): Boolean = plan match {
    case _: Sort | _: GlobalLimit | _: LocalLimit | _: Offset | _: Union => true
    case _ => false
  }

  /** A Lance scan to read on the driver. */
  private object DriverLookup {
    def unapply(plan: LogicalPlan): Option[(DataSourceV2ScanRelation, LanceScan)] = plan match {
      case r: DataSourceV2ScanRelation => r.scan match {
        case s: LanceScan if s.isDriverLookup => Some((r, s))
        case _ => None
      }
      case _ => None
    }
  }

  /** Whether `expressions`, bound to the relation's columns, can be evaluated row by row here, as a task would. */
  private def evaluable(expressions: Seq[Expression], relation: DataSourceV2ScanRelation): Boolean =
    evaluable(expressions, relation.output)

  private def evaluable(expressions: Seq[Expression], input: Seq[Attribute]): Boolean =
    expressions.forall { e =>
      e.deterministic && BindReferences.bindReference(e, input, allowFailures = true)
        .find(_.isInstanceOf[Unevaluable]).isEmpty
    }
}

/**
 * A query over driver lookups computed on the driver as a whole ([[DriverLookups]]): `rows` computes its rows, of
 * `output`; `described` says what it evaluates. Collecting it runs no job; as the input of other operators, its rows are one partition.
 */
final case class LanceDriverQueryExec(output: Seq[Attribute], @transient rows: () => Array[InternalRow],
    described: String) extends LeafExecNode {

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  override def simpleString(maxFields: Int): String =
    s"LanceDriverQuery ${output.mkString("[", ", ", "]")}: $described"

  private def computed(): Array[InternalRow] = {
    val project = InterpretedUnsafeProjection.createProjection(BindReferences.bindReferences(output, output))
    val out = LanceSparkException.translate(rows()).map(r => project(r).copy(): InternalRow)
    longMetric("numOutputRows").add(out.length)
    SQLMetrics.postDriverMetricUpdates(sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY), metrics.values.toSeq)
    out
  }

  override def executeCollect(): Array[InternalRow] = computed()

  override def executeTake(limit: Int): Array[InternalRow] = computed().take(limit)

  override def executeTail(limit: Int): Array[InternalRow] = computed().takeRight(limit)

  override protected def doExecute(): RDD[InternalRow] = sparkContext.parallelize(computed().toSeq, 1)
}

/**
 * A Lance scan read on the driver ([[DriverLookups]]), with the condition and projection Spark would apply to its
 * rows. Collecting it runs no job; as the input of other operators, its rows are one partition.
 */
final case class LanceDriverScanExec(projectList: Seq[NamedExpression], condition: Option[Expression],
    scanOutput: Seq[Attribute], @transient scan: LanceScan) extends LeafExecNode {

  override def output: Seq[Attribute] = projectList.map(_.toAttribute)

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  override def simpleString(maxFields: Int): String =
    s"LanceDriverScan ${output.mkString("[", ", ", "]")}" + condition.map(c => s" where ${c.sql}").getOrElse("") +
      s", ${scan.description()}"

  /** The rows, as unsafe rows of [[output]]. */
  private def rows(): Array[InternalRow] = {
    val keep = condition.map(c => InterpretedPredicate(BindReferences.bindReference(c, scanOutput)))
    keep.foreach(_.initialize(0))
    val project = InterpretedUnsafeProjection.createProjection(BindReferences.bindReferences(projectList, scanOutput))
    project.initialize(0)
    val out = ArrayBuffer.empty[InternalRow]
    scan.foreachRowOnDriver { row => if (keep.forall(_.eval(row))) out += project(row).copy() }
    longMetric("numOutputRows").add(out.size)
    SQLMetrics.postDriverMetricUpdates(sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY), metrics.values.toSeq)
    out.toArray
  }

  override def executeCollect(): Array[InternalRow] = rows()

  override def executeTake(limit: Int): Array[InternalRow] = rows().take(limit)

  override def executeTail(limit: Int): Array[InternalRow] = rows().takeRight(limit)

  override protected def doExecute(): RDD[InternalRow] = sparkContext.parallelize(rows().toSeq, 1)
}
