package io.sparklance.core.index

import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.VectorSchemaRoot

/**
 * The sorted runs of one index build kept in this JVM's memory in place of their run files, for a build whose tasks
 * run in the process that merges them (Spark's local mode, [[io.sparklance.core.table.IndexBuild.runAndCommit]]): the
 * merge takes a held run by its path, so it is neither encoded to a file nor decoded again. A run that does not fit
 * the budget (held runs of all builds together take at most [[HeldRuns.Budget]] bytes) is written to its file as
 * usual, which the merge then reads.
 *
 * The build owns it: it opens one for its tasks in this process and closes it after its commit or abort, which frees
 * the runs still held (a failed build's) and refuses any held later. A held run belongs to it until the merge
 * [[take]]s it (then to the merge).
 */
private[core] final class HeldRuns private (budget: Long) extends AutoCloseable {

  /** Allocates the vectors of runs that may be held; they outlive the task that sorted them. */
  val allocator: BufferAllocator = new RootAllocator()

  private val runs = new java.util.HashMap[String, VectorSchemaRoot]()
  private var closed = false

  /**
   * Holds `root` (allocated from [[allocator]]) as the run at `path` if it fits the budget, replacing a run held
   * there before (a retried task's); false, leaving `root` to the caller, if it does not fit or the build is over.
   */
  def hold(path: String, root: VectorSchemaRoot): Boolean = {
    val n = HeldRuns.size(root)
    val (fits, replaced) = synchronized {
      val old = runs.get(path)
      val freed = if (old == null) 0L else HeldRuns.size(old)
      if (closed || !HeldRuns.reserve(n - freed, budget)) (false, null)
      else {
        runs.put(path, root)
        (true, old)
      }
    }
    if (replaced != null) replaced.close()
    fits
  }

  /** The run held for `path`, now the caller's to close; None if it went to its file. */
  def take(path: String): Option[VectorSchemaRoot] = synchronized {
    val root = runs.remove(path)
    if (root != null) HeldRuns.release(HeldRuns.size(root))
    Option(root)
  }

  /** Frees the runs still held and refuses more; the runs taken must be closed before. */
  override def close(): Unit = {
    val released = synchronized {
      closed = true
      val all = runs.values.asScala.toList
      runs.clear()
      all.foreach(r => HeldRuns.release(HeldRuns.size(r)))
      all
    }
    try released.foreach(_.close()) finally allocator.close()
  }
}

private[core] object HeldRuns {

  /** Bytes the held runs of all builds may take together: an eighth of the JVM's maximum heap. */
  val Budget: Long = Runtime.getRuntime.maxMemory / 8

  private val bytes = new AtomicLong()

  /** Runs of one build, within [[Budget]] (`budget` bytes, for tests) for all builds' held runs. */
  def open(budget: Long = Budget): HeldRuns = new HeldRuns(budget)

  private def size(root: VectorSchemaRoot): Long = root.getFieldVectors.asScala.map(_.getBufferSize.toLong).sum

  /** Takes `n` bytes (n may be negative) of the budget if they fit. */
  private def reserve(n: Long, budget: Long): Boolean = {
    var done = false
    var fits = true
    while (!done) {
      val now = bytes.get
      if (n > 0 && now + n > budget) { fits = false; done = true }
      else done = bytes.compareAndSet(now, now + n)
    }
    fits
  }

  private def release(n: Long): Unit = bytes.addAndGet(-n)

  /** Bytes held now by all builds. */
  def heldBytes: Long = bytes.get
}
