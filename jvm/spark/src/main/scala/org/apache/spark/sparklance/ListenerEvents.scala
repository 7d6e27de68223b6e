package org.apache.spark.sparklance

import java.util.concurrent.TimeoutException

import org.apache.spark.SparkContext

/** Spark's listener bus, whose wait for its queues is `private[spark]` on every Spark line we build for. */
object ListenerEvents {

  /**
   * Waits until Spark's listeners, the status store's among them, have handled the events posted so far (at most
   * `timeoutMillis`); whether they have. Events posted meanwhile count too, so a busy application may time out.
   */
  def drain(sc: SparkContext, timeoutMillis: Long): Boolean =
    try { sc.listenerBus.waitUntilEmpty(timeoutMillis); true }
    catch { case _: TimeoutException => false }
}
