package io.sparklance.spark

import org.apache.spark.SparkThrowable

/** Spark 3's [[SparkThrowable]] names the error class `getErrorClass`; `getCondition` is Spark 4's name, kept too. */
trait SparkThrowableShim extends SparkThrowable {
  def condition: String

  override def getErrorClass: String = condition
  def getCondition: String = condition
}
