package org.apache.spark.sql.sparklance

import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connector.catalog.CatalogPlugin

/**
 * A DataFrame of a logical plan the connector built, analysed once, without SQL text; and the session's catalog of a
 * name. Spark keeps `Dataset.ofRows` and its catalog manager to its own packages, hence this package.
 */
object PlanFrames {
  def of(spark: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(spark, plan)

  /** The catalog registered as `name` in the session, if there is one (none is created). */
  def catalog(spark: SparkSession, name: String): Option[CatalogPlugin] = {
    val catalogs = spark.sessionState.catalogManager
    if (catalogs.isCatalogRegistered(name)) Some(catalogs.catalog(name)) else None
  }
}
