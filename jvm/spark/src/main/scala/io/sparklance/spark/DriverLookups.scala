package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSeq, BindReferences, Expression, InterpretedPredicate, NamedExpression, Unevaluable}
import org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
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
 * A planner strategy of [[LanceSqlExtensions]]; without the extensions, such scans run as jobs.
 */
object DriverLookups extends SparkStrategy {

  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case Project(list, Filter(condition, DriverLookup(relation, scan))) if evaluable(list :+ condition, relation) =>
      Seq(LanceDriverScanExec(list, Some(condition), relation.output, scan))
    case Project(list, DriverLookup(relation, scan)) if evaluable(list, relation) =>
      Seq(LanceDriverScanExec(list, None, relation.output, scan))
    case Filter(condition, DriverLookup(relation, scan)) if evaluable(Seq(condition), relation) =>
      Seq(LanceDriverScanExec(relation.output, Some(condition), relation.output, scan))
    case DriverLookup(relation, scan) => Seq(LanceDriverScanExec(relation.output, None, relation.output, scan))
    case _ => Nil
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
    expressions.forall { e =>
      e.deterministic && BindReferences.bindReference(e, relation.output, allowFailures = true)
        .find(_.isInstanceOf[Unevaluable]).isEmpty
    }
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
