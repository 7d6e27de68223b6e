package io.sparklance.core.index

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.InMemoryStorage

/**
 * HNSW graphs built by [[HnswBuilder]], written by [[HnswWriter]] and read back and searched by [[HnswGraph]], on seeded
 * clustered vectors: the degree limits of docs/dev/vector-index-format.md §2.5, the graph search's recall against a
 * brute-force search, `ef`'s effect, the allowed-row mask, and a damaged graph refused.
 */
class HnswSuite extends AnyFunSuite {
  private val allocator = new RootAllocator()
  private val json = new com.fasterxml.jackson.databind.ObjectMapper()

  private def clustered(random: Random, n: Int, dim: Int): Array[Float] = {
    val centers = Array.fill(8, dim)(random.nextGaussian() * 3)
    Array.tabulate(n * dim)(i => (centers((i / dim) % 8)(i % dim) + random.nextGaussian()).toFloat)
  }

  private def l2(v: Array[Float], q: Array[Float], row: Int, dim: Int): Float = {
    var s = 0.0f
    var d = 0
    while (d < dim) { val x = v(row * dim + d) - q(d); s += x * x; d += 1 }
    s
  }

  /** The graph as written and read back, through an in-memory file. */
  private def roundTrip(builder: HnswBuilder, n: Int, m: Int): HnswGraph = {
    val storage = new InMemoryStorage()
    HnswWriter.writeGraph(storage, "g.lance", builder, m, 50, HnswWriter.MaxLevel, allocator)
    val reader = io.sparklance.core.file.LanceFileReader.openImmutable(storage, "g.lance")
    try {
      val entry = new String(reader.metadata.schema.metadata("lance:hnsw"), "UTF-8")
      val meta = HnswGraph.metas("g.lance", json.writeValueAsString(java.util.Collections.singletonList(entry)), 1)(0)
      val root = reader.read(reader.metadata.schema.fields, 0, reader.numRows, allocator)
      try HnswGraph.decode("g.lance", 0, meta, n, root.getVector(0), root.getVector(1), root.getRowCount)
      finally root.close()
    } finally reader.close()
  }

  /**
   * Checks a graph built over 3,000 seeded clustered rows (m 8, ef_construction 50) by `threads` threads: Lance's
   * degree limits, every node reachable, and the search's recall against a brute-force search.
   */
  private def checkBuiltGraph(threads: Int): Unit = {
    val random = new Random(17)
    val (n, dim, m) = (3000, 16, 8)
    val v = clustered(random, n, dim)
    val builder = new HnswBuilder(v, n, dim, space = Distance.L2, m, 50, HnswWriter.MaxLevel, 5, threads).build()
    (0 until HnswWriter.MaxLevel).foreach { level =>
      val nodes = builder.nodesOn(level)
      nodes.foreach { node =>
        val (ns, ds) = builder.neighbors(level, node)
        // At least m links (pruned-over candidates fill the lists, as pylance's do: docs/dev/vector-index-format.md
        // §2.5); at most 2m on level 0 (one more where a stranded node was linked) and m above.
        assert(ns.length >= math.min(m, nodes.length - 1), s"node $node level $level: ${ns.length} links")
        assert(ns.length <= (if (level == 0) 2 * m + 1 else m), s"node $node level $level: ${ns.length} links")
        assert(!ns.contains(node) && ns.distinct.length == ns.length)
        ns.indices.foreach { i =>
          val exact = l2(v, v.slice(node * dim, node * dim + dim), ns(i), dim)
          assert(math.abs(ds(i) - exact) <= 1e-5f * math.max(1f, exact), s"node $node: ${ds(i)} against $exact")
        }
      }
    }
    assert(builder.nodesOn(0).length == n && builder.nodesOn(1).length < n / 4)
    assert(builder.levels(builder.entryPoint) == builder.levels.max &&
      builder.levels.indexWhere(_ == builder.levels.max) == builder.entryPoint)
    val reached = new Array[Boolean](n)
    var frontier = List(builder.entryPoint)
    reached(builder.entryPoint) = true
    while (frontier.nonEmpty) {
      frontier = frontier.flatMap(node => builder.neighbors(0, node)._1.filterNot(reached).distinct)
      frontier.foreach(reached(_) = true)
    }
    assert(reached.forall(identity), s"${reached.count(!_)} nodes unreachable on level 0 from the entry point")
    val graph = roundTrip(builder, n, m)
    val k = 10
    var narrow, wide = 0
    (0 until 50).foreach { _ =>
      val q = Array.tabulate(dim)(d => v(random.nextInt(n) * dim + d) + random.nextGaussian().toFloat)
      val exact = (0 until n).sortBy(r => (l2(v, q, r, dim), r)).take(k).toSet
      val distance = new IvfStorage.NodeDistance { def apply(row: Int): Float = l2(v, q, row, dim) }
      val (found, ds) = graph.search(distance, k, k, null)
      assert(found.indices.forall(i => ds(i) == l2(v, q, found(i), dim)) && ds.sorted.sameElements(ds))
      narrow += found.count(exact.contains)
      wide += graph.search(distance, 200, k, null)._1.count(exact.contains)
    }
    // Each query takes each coordinate from another row, so it lies far from every row. Measured 0.858 at ef 200
    // (0.526 at ef 10); pylance's recall over its own graph of such data and queries (3,000 rows, m 8,
    // ef_construction 50) was 0.894 at ef 200 (0.617 at ef 10). A graph decoded or linked wrongly falls far below 0.8.
    assert(wide >= narrow && wide >= 0.8 * 50 * k, s"recall@10 at ef 200: ${wide / 500.0}, at ef 10: ${narrow / 500.0}")
  }

  test("a built graph keeps Lance's degree limits, reaches every node and finds the nearest rows as a brute-force search does") {
    checkBuiltGraph(threads = 1)
  }

  test("a graph built by 4 threads at once keeps the same limits, reaches every node and finds the nearest rows") {
    checkBuiltGraph(threads = 4)
  }

  test("a build by one thread is repeatable: the same seed gives the same links on every level") {
    val random = new Random(20)
    val (n, dim, m) = (1500, 8, 6)
    val v = clustered(random, n, dim)
    def links(b: HnswBuilder): Seq[Seq[Int]] =
      (0 until HnswWriter.MaxLevel).flatMap(l => b.nodesOn(l).toSeq.map(node => b.neighbors(l, node)._1.toSeq))
    val first = links(new HnswBuilder(v, n, dim, Distance.L2, m, 30, HnswWriter.MaxLevel, 9, 1).build())
    assert(first == links(new HnswBuilder(v, n, dim, Distance.L2, m, 30, HnswWriter.MaxLevel, 9, 1).build()))
    assert(first != links(new HnswBuilder(v, n, dim, Distance.L2, m, 30, HnswWriter.MaxLevel, 10, 1).build()))
  }

  test("rows not allowed are walked through, never returned; few allowed rows are all measured") {
    val random = new Random(18)
    val (n, dim) = (1000, 8)
    val v = clustered(random, n, dim)
    val graph = roundTrip(new HnswBuilder(v, n, dim, space = Distance.L2, 6, 40, HnswWriter.MaxLevel, 3).build(), n, 6)
    val q = Array.fill(dim)(random.nextGaussian().toFloat)
    val distance = new IvfStorage.NodeDistance { def apply(row: Int): Float = l2(v, q, row, dim) }
    val half = Array.tabulate(n)(_ % 2 == 0)
    assert(graph.search(distance, 50, 10, half)._1.forall(_ % 2 == 0))
    val few = Array.tabulate(n)(_ % 20 == 0)
    val exact = (0 until n).filter(few).sortBy(r => (l2(v, q, r, dim), r)).take(5)
    assert(graph.search(distance, 5, 5, few)._1.toSeq == exact)
  }

  test("a neighbour nearer than the farthest kept becomes a candidate even when the results filled up during the expansion") {
    // Node 0 (the entry point, at 1) links to 1, 2, 3 (at 10, 9, 8); 3 links to 4 (at 7). With ef 3 the results fill
    // up at node 2, their farthest grows from 1 to 10, and node 3 (at 8) must be compared with 10, not with the 1
    // read before the expansion, so that the search goes on to node 4: pylance 14 returns 0, 4, 3 here. Comparing
    // with the stale 1 returned 0, 2, 1, and over real graphs returned rows other than pylance's over the same index
    // (8 of 240 searches of an IVF_HNSW_FLAT dot index, seeds 51 to 56 of test_vector_index_hnsw's table).
    val distances = Array(1f, 10f, 9f, 8f, 7f)
    val graph = new HnswGraph(5, 0, Array(Array(0, 1, 2, 3, 4)), Array(Array(0, 3, 3, 3, 4, 4)), Array(Array(1, 2, 3, 4)))
    val distance = new IvfStorage.NodeDistance { def apply(row: Int): Float = distances(row) }
    val (nodes, found) = graph.search(distance, 3, 3, null)
    assert(nodes.toSeq == Seq(0, 4, 3) && found.toSeq == Seq(1f, 7f, 8f))
    assert(graph.search(distance, 3, 3, Array(true, true, true, true, true))._1.toSeq == Seq(0, 4, 3))
  }

  test("a graph whose node ids or entry point lie outside the partition is refused") {
    val random = new Random(19)
    val (n, dim) = (200, 4)
    val v = clustered(random, n, dim)
    val builder = new HnswBuilder(v, n, dim, space = Distance.L2, 4, 20, HnswWriter.MaxLevel, 1).build()
    val e = intercept[CorruptFileException](roundTrip(builder, n - 1, 4))
    assert(e.getMessage.contains("the HNSW graph of partition 0"), e.getMessage)
    val e2 = intercept[CorruptFileException](HnswGraph.metas("x", "[\"{\\\"entry_point\\\": 1}\"]", 1))
    assert(e2.getMessage.contains("no entry_point or level_offsets"), e2.getMessage)
  }
}
