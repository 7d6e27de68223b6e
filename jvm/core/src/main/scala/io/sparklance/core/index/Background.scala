package io.sparklance.core.index

import java.util.concurrent.{Callable, ExecutorService, Executors, Future, Semaphore, ThreadFactory, TimeUnit}

import scala.util.control.NonFatal

import org.apache.arrow.vector.VectorSchemaRoot

import io.sparklance.core.file.LanceFileWriter

/**
 * One daemon thread doing work in order beside the caller's: how an index build's merge overlaps decoding its runs
 * and encoding its pages with merging. [[close]] waits for every task submitted, so that each frees what it holds.
 */
private[index] final class Background(name: String) extends AutoCloseable {
  private val pool: ExecutorService = Executors.newSingleThreadExecutor(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, name)
      t.setDaemon(true)
      t
    }
  })

  def submit[T](work: () => T): Future[T] = pool.submit(new Callable[T] { override def call(): T = work() })

  override def close(): Unit = {
    pool.shutdown()
    while (!pool.awaitTermination(1, TimeUnit.MINUTES)) {}
  }
}

private[index] object Background {

  /** The result of `f`, or what it threw (unwrapped from the executor's ExecutionException). */
  def await[T](f: Future[T]): T =
    try f.get()
    catch { case e: java.util.concurrent.ExecutionException if e.getCause != null => throw e.getCause }

  /**
   * Writes pages to `data` on a thread of its own, in order, at most `maxPending` waiting: [[write]] takes over a
   * page (and frees it once written). The first failure is thrown by the next [[write]] or by [[finish]]; pages
   * after it are freed unwritten.
   */
  final class PageWriter(data: LanceFileWriter, maxPending: Int) extends AutoCloseable {
    private val thread = new Background("sparklance-index-page-writer")
    private val slots = new Semaphore(maxPending)
    @volatile private var failure: Throwable = _

    def write(page: VectorSchemaRoot): Unit = {
      var handedOver = false
      try {
        if (failure != null) throw failure
        slots.acquire()
        thread.submit { () =>
          try if (failure == null) data.write(page)
          catch { case NonFatal(e) => failure = e }
          finally { page.close(); slots.release() }
        }
        handedOver = true
      } finally if (!handedOver) page.close()
    }

    /** Waits for the pages written so far; then finishes the file and returns its size. */
    def finish(): Long = {
      slots.acquire(maxPending)
      slots.release(maxPending)
      if (failure != null) throw failure
      data.finish()
    }

    override def close(): Unit = thread.close()
  }
}
