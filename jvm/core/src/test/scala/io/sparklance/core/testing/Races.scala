package io.sparklance.core.testing

import java.util.concurrent.{Callable, CountDownLatch, Executors, TimeUnit}

/** Runs writers that race: each on its own thread, all released at once; returns their results in writer order. */
object Races {
  def run[T](writers: Int, timeoutSeconds: Long = 120)(writer: Int => T): Seq[T] = {
    val pool = Executors.newFixedThreadPool(writers)
    val start = new CountDownLatch(1)
    try {
      val results = (0 until writers).map(w => pool.submit(new Callable[T] {
        override def call(): T = { start.await(); writer(w) }
      }))
      start.countDown()
      results.map(_.get(timeoutSeconds, TimeUnit.SECONDS))
    } finally pool.shutdownNow()
  }
}
