package io.sparklance.spark

import org.apache.spark.sql.connector.write.SupportsDelta

/**
 * Spark 3.4 rewrites only DELETE for delta-based sources (UPDATE and MERGE came in 3.5), so it never asks whether an
 * update is written as a delete and an insert.
 */
trait DeltaOperationShim extends SupportsDelta {
  def updatesAsDeleteAndInsert: Boolean
}
