package org.apache.spark.sparklance

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.SparkListener

/** Spark's status queue, which feeds the status store, open to tests that need its listeners to fall behind. */
object StatusQueue {
  def add(sc: SparkContext, listener: SparkListener): Unit = sc.listenerBus.addToStatusQueue(listener)
}
