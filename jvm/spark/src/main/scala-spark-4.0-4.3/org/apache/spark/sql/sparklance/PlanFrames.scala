package org.apache.spark.sql.sparklance

import org.apache.spark.sql.{classic, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * A DataFrame of a logical plan the connector built, analysed once, without SQL text. Spark keeps `Dataset.ofRows`
 * to its own packages, hence this package; Spark 4 keeps it on the classic (not Connect) session.
 */
object PlanFrames {
  def of(spark: SparkSession, plan: LogicalPlan): DataFrame =
    classic.Dataset.ofRows(spark.asInstanceOf[classic.SparkSession], plan)
}
