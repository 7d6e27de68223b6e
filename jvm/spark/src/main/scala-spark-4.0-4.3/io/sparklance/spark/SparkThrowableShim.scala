package io.sparklance.spark

import org.apache.spark.SparkThrowable

/** Spark 4's [[SparkThrowable]] names the error class `getCondition` (its `getErrorClass` defaults to it). */
trait SparkThrowableShim extends SparkThrowable {
  def condition: String

  override def getCondition: String = condition
}
