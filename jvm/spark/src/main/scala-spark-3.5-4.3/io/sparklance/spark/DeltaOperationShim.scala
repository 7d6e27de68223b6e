package io.sparklance.spark

import org.apache.spark.sql.connector.write.SupportsDelta

/** Spark 3.5 and later rewrite UPDATE and MERGE too, and ask whether an update is written as a delete and an insert. */
trait DeltaOperationShim extends SupportsDelta {
  def updatesAsDeleteAndInsert: Boolean

  override def representUpdateAsDeleteAndInsert(): Boolean = updatesAsDeleteAndInsert
}
