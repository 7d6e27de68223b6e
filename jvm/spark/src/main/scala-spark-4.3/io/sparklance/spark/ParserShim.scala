package io.sparklance.spark

import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.StructType

/** The parser methods that differ between Spark lines: Spark 4.3 adds splitting a script into statements. */
abstract class ParserShim(delegate: ParserInterface) extends ParserInterface {
  /** A sparklance statement's plan, or None to leave the text to Spark's parser. */
  protected def lance(sqlText: String): Option[LogicalPlan]

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)

  override def parsePlanWithParameters(sqlText: String, ctx: ParameterContext): LogicalPlan =
    lance(sqlText).getOrElse(delegate.parsePlanWithParameters(sqlText, ctx))

  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
}
