package io.sparklance.core.index

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.VectorSchemaRoot

/**
 * Sorted runs kept in this JVM's memory in place of their run files, for an index build whose tasks run in the
 * process that merges them (Spark's local mode, [[io.sparklance.core.table.IndexBuild.runAndCommit]]): the merge
 * takes a held run by its path, so it is neither encoded to a file nor decoded again. Held runs together take at
 * most [[Budget]] bytes; a run that does not fit is written to its file as usual, which the merge then reads.
 *
 * A held run belongs to this object until the merge [[take]]s it (then to the merge) or its build releases the
 * directory ([[releaseUnder]]: after its commit or abort), so that a failed build frees what its tasks held.
 */
private[core] object HeldRuns {

  /** Allocates the vectors of runs that may be held; they outlive the task that sorted them. */
  val allocator: BufferAllocator = new RootAllocator()

  /** Bytes all held runs may take together: an eighth of the JVM's maximum heap. */
  val Budget: Long = Runtime.getRuntime.maxMemory / 8

  private val runs = new java.util.HashMap[String, VectorSchemaRoot]()
  private var bytes = 0L

  private def size(root: VectorSchemaRoot): Long = root.getFieldVectors.asScala.map(_.getBufferSize.toLong).sum

  /**
   * Holds `root` (allocated from [[allocator]]) as the run at `path` if it fits the budget, replacing a run held
   * there before (a retried task's); false, leaving `root` to the caller, if it does not fit.
   */
  def hold(path: String, root: VectorSchemaRoot): Boolean = hold(path, root, Budget)

  /** [[hold]] within `budget` bytes for all held runs. */
  private[index] def hold(path: String, root: VectorSchemaRoot, budget: Long): Boolean = {
    val n = size(root)
    val (fits, replaced) = synchronized {
      val old = runs.get(path)
      val freed = if (old == null) 0L else size(old)
      if (bytes - freed + n > budget) (false, null)
      else {
        runs.put(path, root)
        bytes += n - freed
        (true, old)
      }
    }
    if (replaced != null) replaced.close()
    fits
  }

  /** The run held for `path`, now the caller's to close; None if it went to its file. */
  def take(path: String): Option[VectorSchemaRoot] = synchronized {
    val root = runs.remove(path)
    if (root != null) bytes -= size(root)
    Option(root)
  }

  /** Frees the runs held for paths under directory `dir` (a build's index directory). */
  def releaseUnder(dir: String): Unit = {
    val prefix = if (dir.endsWith("/")) dir else dir + "/"
    val released = synchronized {
      val paths = runs.keySet.asScala.filter(_.startsWith(prefix)).toList
      paths.map { p =>
        val root = runs.remove(p)
        bytes -= size(root)
        root
      }
    }
    released.foreach(_.close())
  }

  /** Bytes held now. */
  def heldBytes: Long = synchronized(bytes)
}
