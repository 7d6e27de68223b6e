package io.sparklance.spark

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/** The parser methods that differ between Spark lines; Spark 3 has none beyond those every line has. */
abstract class ParserShim(delegate: ParserInterface) extends ParserInterface {
  /** A sparklance statement's plan, or None to leave the text to Spark's parser. */
  protected def lance(sqlText: String): Option[LogicalPlan]
}
