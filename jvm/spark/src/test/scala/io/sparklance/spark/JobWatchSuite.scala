package io.sparklance.spark

import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

import org.apache.spark.{SparkConf, SparkContext, SparkException}
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobEnd}
import org.apache.spark.sparklance.StatusQueue
import org.scalatest.funsuite.AnyFunSuite

/**
 * [[JobWatch]] on a local Spark: after a job failed at one task, the abort of a write waits for the job's other
 * tasks, which Spark does not stop (nothing interrupts them) and whose results it drops.
 */
class JobWatchSuite extends AnyFunSuite {
  import JobWatchSuite._

  test("awaitTasks returns once the tasks a failed job left running have ended, and not before") {
    val sc = new SparkContext(new SparkConf().setMaster("local[2]").setAppName("job-watch").set("spark.ui.enabled", "false"))
    try {
      sc.parallelize(0 until 4, 2).count() // an earlier job, which the watch does not wait for
      val watch = new JobWatch(sc)
      finished.set(0)
      val e = intercept[SparkException](sc.runJob(sc.parallelize(0 until 2, 2), failOrLinger))
      assert(e.getMessage.contains("boom"))
      assert(finished.get == 0, "the lingering task ended before the job failed: nothing was tested")
      assert(watch.awaitTasks(60000), "tasks were still running after a minute")
      assert(finished.get == 1, "awaitTasks returned while a task of the failed job was running")
      val later = new JobWatch(sc)
      val start = System.nanoTime()
      assert(later.awaitTasks(60000) && later.activeTasks(running = true) == 0)
      assert(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "a watch started later waited for older jobs")
    } finally sc.stop()
  }

  test("awaitTasks sees a failed job that the status store learns of late") {
    val sc = new SparkContext(new SparkConf().setMaster("local[2]").setAppName("job-watch").set("spark.ui.enabled", "false"))
    try {
      // The status queue handles its events in order; a listener there that dwells on an earlier job's end holds
      // back the failed job's events from the status store.
      StatusQueue.add(sc, new SparkListener {
        override def onJobEnd(end: SparkListenerJobEnd): Unit = if (end.jobId == 0) lingerFor(1)(0)
      })
      sc.parallelize(0 until 4, 2).count()
      val watch = new JobWatch(sc)
      finished.set(0)
      intercept[SparkException](sc.runJob(sc.parallelize(0 until 2, 2), failOrLinger))
      assert(finished.get == 0, "the lingering task ended before the job failed: nothing was tested")
      assert(watch.awaitTasks(60000))
      assert(finished.get == 1, "awaitTasks returned while a task of the failed job was running")
    } finally sc.stop()
  }

  test("awaitTasks does not wait for a job of another thread that is running well") {
    val sc = new SparkContext(new SparkConf().setMaster("local[2]").setAppName("job-watch").set("spark.ui.enabled", "false"))
    try {
      val watch = new JobWatch(sc)
      val other = new Thread(() => { sc.parallelize(0 until 1, 1).map(lingerFor(8)).count(); () })
      other.start()
      val until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
      while (sc.statusTracker.getActiveJobIds().isEmpty && System.nanoTime() < until) Thread.sleep(10)
      assert(sc.statusTracker.getActiveJobIds().nonEmpty, "the other job did not start")
      assert(watch.awaitTasks(60000))
      assert(other.isAlive, "awaitTasks waited for a job that had not failed")
      other.join()
    } finally sc.stop()
  }
}

object JobWatchSuite {
  val finished = new AtomicInteger()

  /** Partition 0 fails at once; partition 1 waits two seconds (ignoring interrupts), then counts itself finished. */
  val failOrLinger: Iterator[Int] => Int = { rows =>
    val i = rows.next()
    if (i == 0) throw new IllegalStateException("boom")
    lingerFor(2)(i)
    finished.incrementAndGet()
  }

  /** The identity, after `seconds` (ignoring interrupts). */
  def lingerFor(seconds: Int): Int => Int = { i =>
    val until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (System.nanoTime() < until) LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20))
    i
  }
}
