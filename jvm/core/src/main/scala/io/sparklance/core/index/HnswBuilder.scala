package io.sparklance.core.index

/**
 * Builds one partition's HNSW graph as pylance 14's builder does (`hnsw/builder.rs`; docs/dev/vector-index-format.md
 * §2.5), over the partition's vectors as its storage holds them (exact, or decoded from their PQ or SQ codes), so that
 * the graph's distances are the storage's:
 *  - each node's level is `floor(-ln(U) / ln(m))`, capped at `maxLevel - 1`, drawn for every node before any is
 *    inserted from a seeded random; the entry point is the first node of the highest level, and it stays the entry
 *    point;
 *  - every other node is inserted (in order by one thread; by `threads` threads at once, each taking the next node,
 *    as Lance's builder inserts in parallel): a greedy walk down from the entry point to the level above the node's,
 *    then on each of its levels a best-first search keeping `efConstruction` candidates, from which the node keeps
 *    `m` neighbours on every level (Algorithm 1 of the HNSW paper; `2m` on level 0 is the room left for links back);
 *  - neighbours are chosen by the paper's heuristic with `keepPrunedConnections` (Algorithm 4, as Lance's
 *    `select_neighbors_heuristic`): nearest first, a candidate kept when it is nearer to the node than to every one
 *    kept before, then the candidates it passed over, nearest first, until the limit is reached; a list within its
 *    limit is kept whole;
 *  - each chosen neighbour links back, then its list is reduced by the same selection when it exceeds `2m` links on
 *    level 0 or `m` above;
 *  - finally every node that no level-0 path from the entry point reaches is linked from a reachable node near it
 *    (Lance's `connect_stranded_nodes`), so that a search can reach every row.
 * Without `keepPrunedConnections` the heuristic leaves many nodes a handful of links (in `1 - x·y`, which is not a
 * metric, often one or two), and pylance's searches over such graphs missed 3 points of recall@10 for dot.
 *
 * With `threads = 1` a build is repeatable: the same seed gives the same graph. With more threads the nodes' lists
 * depend on which insertions overlap (as pylance's do); each node's lists are guarded by its lock and a search
 * reads a published list whole, so every list still keeps the limits above.
 *
 * @param vectors   `n` vectors of `dim` values, row-major; node i is row i
 * @param space     how nodes are measured: [[Distance.DOT]] `1 - x·y` (dot, and cosine over normalized vectors),
 *                  [[Distance.HAMMING]] the bits that differ (uint8 values held as floats), else squared L2
 * @param threads   threads inserting nodes at once; 1 for a repeatable build
 */
final class HnswBuilder(vectors: Array[Float], n: Int, dim: Int, space: Distance, m: Int, efConstruction: Int,
    maxLevel: Int, seed: Long, threads: Int) {

  /** A sequential build (`threads = 1`): the same graph on every run with the same seed. */
  def this(vectors: Array[Float], n: Int, dim: Int, space: Distance, m: Int, efConstruction: Int, maxLevel: Int,
      seed: Long) = this(vectors, n, dim, space, m, efConstruction, maxLevel, seed, 1)

  require(threads >= 1, s"HNSW build threads must be at least 1, got $threads")

  /** Each node's top level. */
  val levels: Array[Int] = {
    val random = new java.util.Random(seed)
    val ml = 1.0 / math.log(m.toDouble)
    Array.fill(n)(math.min((-math.log(1.0 - random.nextDouble()) * ml).toInt, maxLevel - 1))
  }

  /** The first node of the highest level, where every insertion and every search starts. */
  val entryPoint: Int = {
    var e = 0
    var i = 1
    while (i < n) { if (levels(i) > levels(e)) e = i; i += 1 }
    e
  }

  /**
   * Each node's links on each level (`null` where it has none yet). A [[HnswBuilder.Links]] is never changed once
   * published: a writer holding the node's lock publishes a new one, so a search reads a consistent list without a
   * lock, as Lance's readers take a snapshot of a node's `Arc` list under its read lock.
   */
  private val links: Array[Array[HnswBuilder.Links]] = Array.tabulate(maxLevel)(_ => new Array[HnswBuilder.Links](n))

  /** The locks of nodes' link lists, striped: node `i` is guarded by `locks(i % locks.length)`. */
  private val locks: Array[AnyRef] = Array.fill(if (threads == 1) 1 else 4096)(new AnyRef)

  private val kernels = FloatKernels.best()

  /** The distance of two nodes, through the Vector API kernels where the JVM has them (the build's hot loop). */
  private def distance(a: Int, b: Int): Float =
    if (space == Distance.DOT) 1.0f - kernels.dot(vectors, a * dim, vectors, b * dim, dim)
    else if (space == Distance.HAMMING) Distance.hammingBits(vectors, a * dim, vectors, b * dim, dim).toFloat
    else kernels.squaredL2(vectors, a * dim, vectors, b * dim, dim)

  private def maxLinks(level: Int): Int = if (level == 0) 2 * m else m

  /**
   * Adds the link `node -> to` (at distance `d`) on the level, then reduces the node's list by [[select]] to `limit`
   * when it holds more; under the node's lock, publishing a new list.
   */
  private def addLink(level: Int, node: Int, to: Int, d: Float, limit: Int, scratch: Scratch): Unit =
    locks(node % locks.length).synchronized {
      val have = links(level)(node)
      val c = if (have == null) 0 else have.count
      val ids = new Array[Int](c + 1)
      val ds = new Array[Float](c + 1)
      if (c > 0) {
        System.arraycopy(have.ids, 0, ids, 0, c)
        System.arraycopy(have.distances, 0, ds, 0, c)
      }
      ids(c) = to
      ds(c) = d
      links(level)(node) = new HnswBuilder.Links(ids, ds, select(ids, ds, c + 1, limit, scratch))
    }

  /** A float's bits as an int that orders as the floats do (NaN aside). */
  @inline private def orderedBits(f: Float): Int = {
    val bits = java.lang.Float.floatToIntBits(f)
    bits ^ ((bits >> 31) & 0x7fffffff)
  }

  /**
   * Lance's neighbour selection over `count` candidates (ids and their distances to the node), in place: when more
   * than `k`, nearest first, each kept when it is nearer to the node than to every one kept before, then
   * the candidates passed over, nearest first, until `k` are kept. Returns how many are kept (at the front).
   */
  private def select(ids: Array[Int], ds: Array[Float], count: Int, k: Int, scratch: Scratch): Int =
    if (count <= k) count
    else {
      scratch.room(count)
      val order = scratch.order
      var i = 0
      while (i < count) { order(i) = (orderedBits(ds(i)).toLong << 32) | i; i += 1 }
      java.util.Arrays.sort(order, 0, count)
      val sortedIds = scratch.ids
      val sortedDs = scratch.distances
      i = 0
      while (i < count) {
        val at = order(i).toInt
        sortedIds(i) = ids(at)
        sortedDs(i) = ds(at)
        i += 1
      }
      val passed = scratch.passed
      var passedCount = 0
      var kept = 0
      i = 0
      while (i < count && kept < k) {
        val u = sortedIds(i)
        val du = sortedDs(i)
        var ok = true
        var j = 0
        while (ok && j < kept) { if (!(du < distance(u, ids(j)))) ok = false; j += 1 }
        if (ok) { ids(kept) = u; ds(kept) = du; kept += 1 }
        else { passed(passedCount) = i; passedCount += 1 }
        i += 1
      }
      var p = 0
      while (kept < k && p < passedCount) {
        ids(kept) = sortedIds(passed(p))
        ds(kept) = sortedDs(passed(p))
        kept += 1
        p += 1
      }
      kept
    }

  /**
   * One inserting thread's working memory, reused from node to node: its marks of the nodes a search has visited, the
   * search's two heaps, and room for the neighbour selection's candidates.
   */
  private final class Scratch {
    val marks = new Array[Int](n)
    var mark = 0
    val candidates = new NodeHeap(64)
    val results = new NodeHeap(efConstruction + 1)
    var order = new Array[Long](0)
    var ids = new Array[Int](0)
    var distances = new Array[Float](0)
    var passed = new Array[Int](0)

    /** Makes the selection's arrays hold at least `count` candidates. */
    def room(count: Int): Unit = if (order.length < count) {
      order = new Array[Long](count)
      ids = new Array[Int](count)
      distances = new Array[Float](count)
      passed = new Array[Int](count)
    }
  }

  /** The `ef` nodes nearest to `node` found from `ep` on `level` (Lance's `beam_search`), in a max-heap. */
  private def searchLevel(node: Int, ep: Int, epd: Float, level: Int, ef: Int, visits: Scratch): NodeHeap = {
    visits.mark += 1
    val visitMark = visits.mark
    val visited = visits.marks
    val candidates = visits.candidates
    val results = visits.results
    candidates.clear()
    results.clear()
    visited(ep) = visitMark
    candidates.pushMin(epd, ep)
    results.offerBounded(epd, ep, ef)
    var searching = true
    while (searching && candidates.size > 0) {
      val cd = candidates.rootDistance
      val cur = candidates.popMin()
      val furthest = results.rootDistance
      if (cd > furthest && results.size == ef) searching = false
      else {
        val list = links(level)(cur)
        if (list != null) {
          val ns = list.ids
          val c = list.count
          var i = 0
          while (i < c) {
            val nb = ns(i)
            if (visited(nb) != visitMark) {
              visited(nb) = visitMark
              val d = distance(node, nb)
              if (d <= results.rootDistance || results.size < ef) {
                results.offerBounded(d, nb, ef)
                candidates.pushMin(d, nb)
              }
            }
            i += 1
          }
        }
      }
    }
    results
  }

  /**
   * Builds the graph: every node but the entry point inserted, then stranded nodes linked. With one thread the
   * nodes go in in order; with more, as Lance's `index_vectors` does, the threads take the next node in order from
   * a shared counter and insert concurrently, each node's links guarded by its lock.
   */
  def build(): this.type = {
    if (threads == 1 || n < 2 * threads) {
      val visits = new Scratch
      var node = 0
      while (node < n) { if (node != entryPoint) insert(node, visits); node += 1 }
    } else {
      val next = new java.util.concurrent.atomic.AtomicInteger(0)
      val pool = java.util.concurrent.Executors.newFixedThreadPool(threads, HnswBuilder.threadFactory)
      try {
        val inserting = (0 until threads).map { _ =>
          pool.submit(new java.util.concurrent.Callable[Unit] {
            def call(): Unit = {
              val visits = new Scratch
              var node = next.getAndIncrement()
              while (node < n) {
                if (node != entryPoint) insert(node, visits)
                node = next.getAndIncrement()
              }
            }
          })
        }
        // A failed insertion stops the others (they take no node past the end) and is thrown here as it was raised.
        inserting.foreach { f =>
          try f.get()
          catch {
            case e: java.util.concurrent.ExecutionException =>
              next.set(n)
              throw e.getCause
          }
        }
      } finally pool.shutdownNow()
    }
    if (n > 0) connectStranded()
    this
  }

  private def insert(node: Int, visits: Scratch): Unit = {
    val top = levels(node)
    var ep = entryPoint
    var epd = distance(node, ep)
    var level = levels(entryPoint)
    while (level > top) {
      var moved = true
      while (moved) {
        moved = false
        val list = links(level)(ep)
        var next = -1
        if (list != null) {
          var i = 0
          while (i < list.count) {
            val d = distance(node, list.ids(i))
            if (d < epd) { epd = d; next = list.ids(i) }
            i += 1
          }
        }
        if (next >= 0) { ep = next; moved = true }
      }
      level -= 1
    }
    // The node's own lists are published before any other node links to it: it is found only through the links
    // back below, so no other writer touches its lists before then.
    val own = new Array[HnswBuilder.Links](top + 1)
    level = top
    while (level >= 0) {
      val found = searchLevel(node, ep, epd, level, math.max(efConstruction, m), visits)
      val (ids, ds) = found.sorted(found.size)
      ep = ids(0)
      epd = ds(0)
      own(level) = new HnswBuilder.Links(ids, ds, select(ids, ds, ids.length, m, visits))
      locks(node % locks.length).synchronized { links(level)(node) = own(level) }
      level -= 1
    }
    level = 0
    while (level <= top) {
      val list = own(level)
      var i = 0
      while (i < list.count) {
        addLink(level, list.ids(i), node, list.distances(i), maxLinks(level), visits)
        i += 1
      }
      level += 1
    }
  }

  /** The links of a node on a level (0 where none). */
  private def count(level: Int, node: Int): Int = {
    val list = links(level)(node)
    if (list == null) 0 else list.count
  }

  /**
   * Links every node that no level-0 path from the entry point reaches, in node order, each link making the node and
   * all it reaches reachable: from the reachable node nearest to it among its own level-0 neighbours that has not
   * anchored a stranded node yet, else from the node linked last if it has anchored none, else from the
   * entry point. The link goes over the limit of `2m` rather than replacing one, which could strand another node; as each
   * node anchors at most one, no list exceeds `2m + 1` (Lance's `connect_stranded_nodes` bounds it alike).
   */
  private def connectStranded(): Unit = {
    val reachable = new Array[Boolean](n)
    val anchored = new Array[Boolean](n)
    val queue = new Array[Int](n)
    def reach(start: Int): Unit = if (!reachable(start)) {
      reachable(start) = true
      queue(0) = start
      var head = 0
      var tail = 1
      while (head < tail) {
        val cur = queue(head)
        head += 1
        val list = links(0)(cur)
        var i = 0
        while (i < count(0, cur)) {
          val nb = list.ids(i)
          if (!reachable(nb)) { reachable(nb) = true; queue(tail) = nb; tail += 1 }
          i += 1
        }
      }
    }
    reach(entryPoint)
    val scratch = new Scratch
    var last = -1
    var node = 0
    while (node < n) {
      if (!reachable(node)) {
        var anchor = -1
        var anchorD = Float.PositiveInfinity
        val list = links(0)(node)
        var i = 0
        while (i < count(0, node)) {
          val nb = list.ids(i)
          if (reachable(nb) && !anchored(nb) && (anchor < 0 || list.distances(i) < anchorD)) {
            anchor = nb
            anchorD = list.distances(i)
          }
          i += 1
        }
        if (anchor < 0) {
          anchor = if (last >= 0 && !anchored(last)) last else entryPoint
          anchorD = distance(anchor, node)
        }
        addLink(0, anchor, node, anchorD, Int.MaxValue, scratch)
        anchored(anchor) = true
        last = node
        reach(node)
      }
      node += 1
    }
  }

  /** The nodes on `level`, ascending. */
  def nodesOn(level: Int): Array[Int] = (0 until n).filter(levels(_) >= level).toArray

  /** A node's neighbours on a level it is on, and their distances. */
  def neighbors(level: Int, node: Int): (Array[Int], Array[Float]) = {
    val c = count(level, node)
    if (c == 0) (new Array[Int](0), new Array[Float](0))
    else {
      val list = links(level)(node)
      (java.util.Arrays.copyOf(list.ids, c), java.util.Arrays.copyOf(list.distances, c))
    }
  }
}
object HnswBuilder {

  /**
   * One node's links on one level: the first `count` of `ids`, with their distances to the node. Published whole
   * and never changed after (its fields are final, so a thread that reads the reference sees the arrays as written).
   */
  final class Links(val ids: Array[Int], val distances: Array[Float], val count: Int)

  /**
   * The threads a graph build uses: the JVM system property `sparklance.hnsw-build-threads` when set (1 for
   * repeatable builds), else `wanted` (by default the cores of this JVM, as Lance's builder uses rayon's pool of all
   * cores), at most the cores of this JVM.
   */
  def threads(wanted: Int = Runtime.getRuntime.availableProcessors): Int = {
    val cores = Runtime.getRuntime.availableProcessors
    Option(Integer.getInteger("sparklance.hnsw-build-threads")).map(_.intValue) match {
      case Some(set) if set < 1 =>
        throw new io.sparklance.core.InvalidArgumentException(s"The JVM system property sparklance.hnsw-build-threads " +
          s"is $set; give a number of threads of at least 1 (1 for repeatable HNSW builds), or leave it unset for " +
          s"the $cores cores of this JVM.")
      case Some(set) => set
      case None => math.max(1, math.min(wanted, cores))
    }
  }

  private val threadFactory: java.util.concurrent.ThreadFactory = new java.util.concurrent.ThreadFactory {
    private val made = new java.util.concurrent.atomic.AtomicInteger(0)
    def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"sparklance-hnsw-build-${made.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  }

  /**
   * The `n` payloads of a partition (as [[IvfModel.encode]] writes them) as vectors in the space the index's storage
   * measures: IVF_FLAT's values (of any element type) as floats; IVF_PQ's codewords put together (the residual, or for dot the vector, its codes
   * stand for), whose squared L2 is the distance of two coded rows; IVF_SQ's codes scaled by `(end - start) / 255`,
   * whose squared L2 is the SQ distance (§4 step 3).
   */
  def vectors(model: IvfModel, payload: Array[Byte], n: Int): Array[Float] = {
    val dim = model.dim
    val out = new Array[Float](n * dim)
    val width = model.width
    model.indexType match {
      case "IVF_FLAT" =>
        var i = 0
        while (i < out.length) { out(i) = model.element.get(payload, i); i += 1 }
      case "IVF_PQ" =>
        val m = model.numSubVectors
        val sub = dim / m
        var r = 0
        while (r < n) {
          var j = 0
          while (j < m) {
            val byte = payload(r * width + j * model.numBits / 8) & 0xFF
            val code = if (model.numBits == 8) byte else if (j % 2 == 0) byte & 0x0F else byte >> 4
            System.arraycopy(model.codebook, (j * model.codewords + code) * sub, out, r * dim + j * sub, sub)
            j += 1
          }
          r += 1
        }
      case _ =>
        val scale = ((model.sqEnd - model.sqStart) / 255.0).toFloat
        var i = 0
        while (i < out.length) { out(i) = (payload(i) & 0xFF) * scale; i += 1 }
    }
    out
  }

  /**
   * How the graph of `model`'s storage measures nodes: `1 - x·y` (dot; cosine over the normalized IVF_FLAT vectors),
   * hamming, or squared L2 (the others).
   */
  def space(model: IvfModel): Distance =
    if (model.distance == Distance.DOT || (model.distance == Distance.COSINE && model.indexType == "IVF_FLAT")) Distance.DOT
    else if (model.distance == Distance.HAMMING) Distance.HAMMING
    else Distance.L2
}
