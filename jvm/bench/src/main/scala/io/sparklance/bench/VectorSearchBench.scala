package io.sparklance.bench

import java.lang.management.ManagementFactory

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.index.Distance
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.{Dataset, Predicate, VectorIndexUse}

/**
 * The core's part of one warm IVF index search, without Spark: for each query of a file of float64 queries (`dim`
 * little-endian doubles each), (1) the latest version opened and its vector index planned ([[VectorIndexUse.plan]]),
 * (2) the index search of the top `k` at `nprobes` ([[VectorIndexUse.search]]), (3) the take of the rows found by
 * row id (column `id`), each timed by wall clock and by the thread's CPU time after `warmup` queries. Prints the
 * medians in milliseconds and the row ids found, one query per line, for the caller to compare with pylance's.
 * Usage: VectorSearchBench TABLE COLUMN QUERIES_FILE DIM K NPROBES WARMUP
 */
object VectorSearchBench {
  def main(args: Array[String]): Unit = {
    require(args.length == 7, "Usage: VectorSearchBench TABLE COLUMN QUERIES_FILE DIM K NPROBES WARMUP")
    val (root, column, queryFile) = (args(0), args(1), args(2))
    val Seq(dim, k, nprobes, warmup) = args.toSeq.drop(3).map(_.toInt): @unchecked
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(queryFile))
    val in = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val queries = (0 until bytes.length / 8 / dim).map(i => Array.tabulate(dim)(j => in.getDouble((i * dim + j) * 8)))
    val threads = ManagementFactory.getThreadMXBean
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    val times = Array.fill(3)(scala.collection.mutable.ArrayBuffer.empty[(Double, Double)])
    def timed[T](step: Int, i: Int)(f: => T): T = {
      val (w, c) = (System.nanoTime(), threads.getCurrentThreadCpuTime)
      val out = f
      if (i >= warmup) times(step) += (((System.nanoTime() - w) / 1e6, (threads.getCurrentThreadCpuTime - c) / 1e6))
      out
    }
    queries.zipWithIndex.foreach { case (q, i) =>
      val (snapshot, use) = timed(0, i) {
        val s = Dataset.open(storage, root).checkoutLatest()
        (s, VectorIndexUse.plan(s, column, Distance.L2).fold(r => sys.error(r), identity))
      }
      val found = timed(1, i)(use.search(Seq(q), k, nprobes, None).head)
      val ids = timed(2, i) {
        val scan = snapshot.newScan().withProjection(snapshot.schema.field("id").toSeq)
          .withFilters(Seq(Predicate.In("_rowid", found.rowIds.toSeq.map(Long.box))))
        val out = scala.collection.mutable.ArrayBuffer.empty[Long]
        scan.planTasks(1L << 20).foreach { task =>
          val reader = snapshot.table.read(task, allocator)
          try {
            var batch = reader.next()
            while (batch.isDefined) {
              val v = batch.get.getVector(0).asInstanceOf[org.apache.arrow.vector.BigIntVector]
              (0 until batch.get.getRowCount).foreach(r => out += v.get(r))
              batch.get.close()
              batch = reader.next()
            }
          } finally reader.close()
        }
        out.sorted
      }
      if (i >= warmup) println(s"ids\t$i\t${ids.mkString(",")}")
    }
    def median(xs: Seq[Double]): Double = xs.sorted.apply(xs.size / 2)
    Seq("open and plan", "index search", "take by row id").zipWithIndex.foreach { case (name, s) =>
      println(f"median\t$name\t${median(times(s).map(_._1).toSeq)}%.3f ms wall\t${median(times(s).map(_._2).toSeq)}%.3f ms CPU")
    }
    allocator.close()
  }
}
