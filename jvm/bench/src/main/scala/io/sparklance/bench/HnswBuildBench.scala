package io.sparklance.bench

import java.lang.management.ManagementFactory

import io.sparklance.core.index.{Distance, FloatKernels, HnswBuilder, IvfModel}

/**
 * One HNSW graph built without Spark, timed by wall clock and by the CPU of the threads that build it: the graph of
 * an IVF_HNSW_SQ partition (`sq`, the vectors quantized to 8 bits over their global range, as the index's storage
 * measures them) or IVF_HNSW_FLAT's (`flat`), over the `n` float32 vectors of a raw little-endian file (`dim` values
 * each; `integration/bench/hnsw_build_bench.py` writes it and builds pylance's index over the same rows).
 * Prints one line per run: wall and the process's CPU in seconds (all threads, the JIT compiler and GC included, as
 * pylance's is measured) and the graph's level-0 links.
 * Usage: HnswBuildBench VECTORS_FILE DIM KIND(sq|flat) M EF_CONSTRUCTION THREADS RUNS
 */
object HnswBuildBench {
  def main(args: Array[String]): Unit = {
    require(args.length == 7, "Usage: HnswBuildBench VECTORS_FILE DIM KIND(sq|flat) M EF_CONSTRUCTION THREADS RUNS")
    val bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(args(0)))
    val Seq(dim, m, ef, threads, runs) = Seq(args(1), args(3), args(4), args(5), args(6)).map(_.toInt): @unchecked
    val raw = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
    val n = raw.remaining() / dim
    val values = new Array[Float](n * dim)
    raw.get(values)
    val vectors = args(2) match {
      case "flat" => values
      case "sq" =>
        val (start, end) = (values.min.toDouble, values.max.toDouble)
        val scale = ((end - start) / 255.0).toFloat
        values.map(v => (IvfModel.sqCode(v, start, end) & 0xFF) * scale)
      case other => sys.error(s"kind $other: give sq or flat")
    }
    val os = ManagementFactory.getOperatingSystemMXBean.asInstanceOf[com.sun.management.OperatingSystemMXBean]
    println(s"$n vectors of $dim, ${args(2)}, m $m, ef_construction $ef, $threads threads, kernels " +
      FloatKernels.best().describe())
    (0 until runs).foreach { run =>
      val cpu0 = os.getProcessCpuTime
      val wall0 = System.nanoTime()
      val graph = new HnswBuilder(vectors, n, dim, Distance.L2, m, ef, 7, 42L + run, threads).build()
      val wall = (System.nanoTime() - wall0) / 1e9
      val cpu = (os.getProcessCpuTime - cpu0) / 1e9
      val links = (0 until n).map(i => graph.neighbors(0, i)._1.length.toLong).sum
      println(f"run $run: wall $wall%.2f s, cpu $cpu%.2f s, level-0 links $links")
    }
  }

}
