package io.sparklance.spark

import org.apache.spark.{JobExecutionStatus, SparkContext}
import org.apache.spark.sparklance.ListenerEvents

/**
 * The Spark jobs the current thread starts from now on (in its job group), watched so that an abort can wait for
 * their tasks. Spark fails a job at its first failed task and drops the results of the tasks still running; those
 * may still finish their files after the job has failed. An abort that deletes the files of a write waits here first
 * ([[awaitTasks]]), then deletes them by their tag ([[io.sparklance.core.table.PendingCommit.fileTag]]).
 *
 * Jobs are known from Spark's status store, which its listener bus updates late: a job failed in the scheduler
 * may not be in the store at all yet, so the wait first lets the bus handle the events posted so far (a failed
 * job's start, its failed task and its end are posted before the job's caller learns of the failure). A job may
 * still show as running and its tasks as active after they ended, which only makes the wait longer. A stage's count
 * of active tasks is written at its events (a task's end, the stage's failure), so a failed job's stragglers are
 * counted from its failure on, while a healthy job's tasks may show as none for a while. Create it on the driver,
 * before the job, on the thread that runs it.
 */
private[spark] final class JobWatch(sc: SparkContext) {
  private val group = sc.getLocalProperty(JobWatch.GroupProperty)
  private val after = sc.statusTracker.getJobIdsForGroup(group).foldLeft(-1)(math.max)

  /**
   * Tasks still running in the jobs started since this watch that failed (or, with `running`, that have not
   * succeeded). A job shows as failed when one of its tasks failed, before its own end reaches the status store.
   */
  def activeTasks(running: Boolean = false): Int = {
    val tracker = sc.statusTracker
    tracker.getJobIdsForGroup(group).filter(_ > after).flatMap(tracker.getJobInfo(_))
      .filter(_.status != JobExecutionStatus.SUCCEEDED)
      .map(job => (job.status, job.stageIds.flatMap(tracker.getStageInfo(_))))
      .filter { case (status, stages) => running || status == JobExecutionStatus.FAILED || stages.exists(_.numFailedTasks > 0) }
      .flatMap(_._2.map(_.numActiveTasks)).sum
  }

  /**
   * Waits until no task of the watched jobs that failed runs (at most `timeoutMillis`); whether none does. For the
   * first second after the listener bus was drained, jobs that have not failed yet count too, in case the drain
   * timed out or the store has not written the failure yet.
   */
  def awaitTasks(timeoutMillis: Long = JobWatch.DefaultTimeoutMillis): Boolean = {
    val deadline = System.nanoTime() + timeoutMillis * 1000000L
    if (!ListenerEvents.drain(sc, math.min(timeoutMillis, JobWatch.DrainMillis)))
      JobWatch.log.warn(s"Spark's listeners were still busy after ${JobWatch.DrainMillis / 1000} s; the tasks of a " +
        "failed write are counted from what its status store knows so far.")
    val start = System.nanoTime()
    def quiet = activeTasks(running = System.nanoTime() - start < 1000000000L) == 0
    var idle = quiet
    while (!idle && System.nanoTime() < deadline) {
      Thread.sleep(50)
      idle = quiet
    }
    if (!idle) JobWatch.log.warn(s"Tasks of a failed write were still running after ${timeoutMillis / 1000} s; " +
      "files they finish later are not part of the table, and Lance's cleanup removes them.")
    idle
  }
}

private[spark] object JobWatch {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[JobWatch])
  private val GroupProperty = "spark.jobGroup.id"
  val DefaultTimeoutMillis: Long = 60000L
  private val DrainMillis = 10000L

  /** A watch of the active session's jobs from now on, or none outside a Spark driver. */
  def start(): Option[JobWatch] = {
    import org.apache.spark.sql.SparkSession
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).map(s => new JobWatch(s.sparkContext))
  }
}
