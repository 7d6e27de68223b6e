package org.apache.spark.sql.sparklance

import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * A DataFrame of a logical plan the connector built, analysed once, without SQL text. Spark keeps `Dataset.ofRows`
 * to its own packages, hence this package.
 */
object PlanFrames {
  def of(spark: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(spark, plan)
}
