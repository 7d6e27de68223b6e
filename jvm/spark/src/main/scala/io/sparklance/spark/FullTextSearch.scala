package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import io.sparklance.core.UnsupportedFeatureException

/**
 * The other Lance connector's full-text search functions, registered by [[LanceSqlExtensions]] so that a query
 * using them fails with an error saying sparklance has no full-text search, instead of Spark's "function not
 * found": the filters `lance_match`, `lance_match_phrase`, `lance_multi_match` and the table functions `search` and
 * `hybrid_search`. Each refuses when the query is analysed, before anything is read.
 */
object FullTextSearch {
  val Functions: Seq[String] = Seq("lance_match", "lance_match_phrase", "lance_multi_match")
  val TableFunctions: Seq[String] = Seq("search", "hybrid_search")

  def info(name: String): ExpressionInfo = new ExpressionInfo(getClass.getCanonicalName, name)

  def refuse(name: String)(args: Seq[Expression]): Expression = throw error(name)

  def refuseTable(name: String)(args: Seq[Expression]): LogicalPlan = throw error(name)

  private def error(name: String): LanceSparkException = new LanceSparkException(new UnsupportedFeatureException(
    s"$name: full-text search is not supported by sparklance yet (it builds and reads no full-text, inverted " +
      "index). Filter with LIKE or a regular expression, or search the table with pylance."))
}
