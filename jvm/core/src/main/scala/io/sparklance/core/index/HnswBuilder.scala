package io.sparklance.core.index

/**
 * Builds one partition's HNSW graph as pylance 14's builder does (`hnsw/builder.rs`; docs/dev/vector-index-format.md
 * §2.5), over the partition's vectors as its storage holds them (exact, or decoded from their PQ or SQ codes), so that
 * the graph's distances are the storage's:
 *  - each node's level is `floor(-ln(U) / ln(m))`, capped at `maxLevel - 1`, drawn for every node before any is
 *    inserted from a seeded random, so that a build is repeatable; the entry point is the first node of the highest
 *    level, and it stays the entry point;
 *  - every other node is inserted in order: a greedy walk down from the entry point to the level above the node's,
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
 * @param vectors   `n` vectors of `dim` values, row-major; node i is row i
 * @param space     how nodes are measured: [[Distance.DOT]] `1 - x·y` (dot, and cosine over normalized vectors),
 *                  [[Distance.HAMMING]] the bits that differ (uint8 values held as floats), else squared L2
 */
final class HnswBuilder(vectors: Array[Float], n: Int, dim: Int, space: Distance, m: Int, efConstruction: Int,
    maxLevel: Int, seed: Long) {

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

  /** Neighbours and their distances of each node on each level (`null` where the node has no links yet). */
  private val links: Array[Array[Array[Int]]] = Array.tabulate(maxLevel)(_ => new Array[Array[Int]](n))
  private val linkDistances: Array[Array[Array[Float]]] = Array.tabulate(maxLevel)(_ => new Array[Array[Float]](n))
  private val counts: Array[Array[Int]] = Array.tabulate(maxLevel)(_ => new Array[Int](n))

  private val kernels = FloatKernels.best()

  /** The distance of two nodes, through the Vector API kernels where the JVM has them (the build's hot loop). */
  private def distance(a: Int, b: Int): Float =
    if (space == Distance.DOT) 1.0f - kernels.dot(vectors, a * dim, vectors, b * dim, dim)
    else if (space == Distance.HAMMING) Distance.hammingBits(vectors, a * dim, vectors, b * dim, dim).toFloat
    else kernels.squaredL2(vectors, a * dim, vectors, b * dim, dim)

  private def maxLinks(level: Int): Int = if (level == 0) 2 * m else m

  /** Makes room for `extra` more links of the node on the level. */
  private def reserve(level: Int, node: Int, extra: Int): Unit = {
    val c = counts(level)(node)
    val have = links(level)(node)
    if (have == null || have.length < c + extra) {
      val size = math.max(c + extra, maxLinks(level) + 1)
      links(level)(node) = if (have == null) new Array[Int](size) else java.util.Arrays.copyOf(have, size)
      linkDistances(level)(node) =
        if (have == null) new Array[Float](size) else java.util.Arrays.copyOf(linkDistances(level)(node), size)
    }
  }

  private def addLink(level: Int, node: Int, to: Int, d: Float): Unit = {
    reserve(level, node, 1)
    val c = counts(level)(node)
    links(level)(node)(c) = to
    linkDistances(level)(node)(c) = d
    counts(level)(node) = c + 1
  }

  /** Reduces the node's links on the level by [[select]] to at most `k`. */
  private def prune(level: Int, node: Int, k: Int): Unit = {
    val c = counts(level)(node)
    if (c > k) counts(level)(node) = select(links(level)(node), linkDistances(level)(node), c, k)
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
  private def select(ids: Array[Int], ds: Array[Float], count: Int, k: Int): Int =
    if (count <= k) count
    else {
      val order = new Array[Long](count)
      var i = 0
      while (i < count) { order(i) = (orderedBits(ds(i)).toLong << 32) | i; i += 1 }
      java.util.Arrays.sort(order)
      val sortedIds = new Array[Int](count)
      val sortedDs = new Array[Float](count)
      i = 0
      while (i < count) {
        val at = order(i).toInt
        sortedIds(i) = ids(at)
        sortedDs(i) = ds(at)
        i += 1
      }
      val passed = new Array[Int](count)
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

  private val visited = new Array[Int](n)
  private var visitMark = 0

  /** The `ef` nodes nearest to `node` found from `ep` on `level` (Lance's `beam_search`), in a max-heap. */
  private def searchLevel(node: Int, ep: Int, epd: Float, level: Int, ef: Int): NodeHeap = {
    visitMark += 1
    val candidates = new NodeHeap(64)
    val results = new NodeHeap(ef + 1)
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
        val ns = links(level)(cur)
        val c = counts(level)(cur)
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
    results
  }

  /** Builds the graph: every node but the entry point inserted in order, then stranded nodes linked. */
  def build(): this.type = {
    var node = 0
    while (node < n) { if (node != entryPoint) insert(node); node += 1 }
    if (n > 0) connectStranded()
    this
  }

  private def insert(node: Int): Unit = {
    val top = levels(node)
    var ep = entryPoint
    var epd = distance(node, ep)
    var level = levels(entryPoint)
    while (level > top) {
      var moved = true
      while (moved) {
        moved = false
        val ns = links(level)(ep)
        var i = 0
        var next = -1
        while (i < counts(level)(ep)) {
          val d = distance(node, ns(i))
          if (d < epd) { epd = d; next = ns(i) }
          i += 1
        }
        if (next >= 0) { ep = next; moved = true }
      }
      level -= 1
    }
    level = top
    while (level >= 0) {
      val found = searchLevel(node, ep, epd, level, math.max(efConstruction, m))
      val (ids, ds) = found.sorted(found.size)
      ep = ids(0)
      epd = ds(0)
      val kept = select(ids, ds, ids.length, m)
      reserve(level, node, kept)
      System.arraycopy(ids, 0, links(level)(node), 0, kept)
      System.arraycopy(ds, 0, linkDistances(level)(node), 0, kept)
      counts(level)(node) = kept
      level -= 1
    }
    level = 0
    while (level <= top) {
      var i = 0
      val c = counts(level)(node)
      while (i < c) {
        val v = links(level)(node)(i)
        addLink(level, v, node, linkDistances(level)(node)(i))
        prune(level, v, maxLinks(level))
        i += 1
      }
      level += 1
    }
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
        val ns = links(0)(cur)
        var i = 0
        while (i < counts(0)(cur)) {
          val nb = ns(i)
          if (!reachable(nb)) { reachable(nb) = true; queue(tail) = nb; tail += 1 }
          i += 1
        }
      }
    }
    reach(entryPoint)
    var last = -1
    var node = 0
    while (node < n) {
      if (!reachable(node)) {
        var anchor = -1
        var anchorD = Float.PositiveInfinity
        val ns = links(0)(node)
        var i = 0
        while (i < counts(0)(node)) {
          val nb = ns(i)
          if (reachable(nb) && !anchored(nb) && (anchor < 0 || linkDistances(0)(node)(i) < anchorD)) {
            anchor = nb
            anchorD = linkDistances(0)(node)(i)
          }
          i += 1
        }
        if (anchor < 0) {
          anchor = if (last >= 0 && !anchored(last)) last else entryPoint
          anchorD = distance(anchor, node)
        }
        addLink(0, anchor, node, anchorD)
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
    val c = counts(level)(node)
    if (c == 0) (new Array[Int](0), new Array[Float](0))
    else (java.util.Arrays.copyOf(links(level)(node), c), java.util.Arrays.copyOf(linkDistances(level)(node), c))
  }
}
object HnswBuilder {

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
            val code = payload(r * width + j) & 0xFF
            System.arraycopy(model.codebook, (j * IvfModel.Codewords + code) * sub, out, r * dim + j * sub, sub)
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
