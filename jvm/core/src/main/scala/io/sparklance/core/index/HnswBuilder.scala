package io.sparklance.core.index

/**
 * Builds one partition's HNSW graph as Lance's builder does (`hnsw/builder.rs`; docs/dev/vector-index-format.md
 * §2.5), over the partition's vectors as its storage holds them (exact, or decoded from their PQ or SQ codes), so that
 * the graph's distances are the storage's:
 *  - each node's level is `floor(-ln(U) / ln(m))`, capped at `maxLevel - 1`, with U drawn from a seeded random, so
 *    that a build is repeatable;
 *  - nodes are inserted in order: a greedy walk down from the entry point to the level above the node's, then on each
 *    of its levels a best-first search keeping `efConstruction` candidates, from which the node keeps up to `m`
 *    neighbours (`2m` on level 0: the mirror's builder prunes the candidates to the level's maximum) chosen by Lance's
 *    heuristic (`select_neighbors_heuristic`: nearest first, a candidate kept only if it is nearer to
 *    the node than to every neighbour kept so far), and each neighbour links back, pruned by the same heuristic when
 *    it exceeds `2m` links on level 0 or `m` above;
 *  - a node with more levels than the entry point becomes the entry point.
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

  /** Neighbours and their distances of each node on each level (`null` where the node is not on the level). */
  private val links: Array[Array[Array[Int]]] = Array.tabulate(maxLevel)(l => new Array[Array[Int]](n))
  private val linkDistances: Array[Array[Array[Float]]] = Array.tabulate(maxLevel)(l => new Array[Array[Float]](n))
  private val counts: Array[Array[Int]] = Array.tabulate(maxLevel)(l => new Array[Int](n))

  var entryPoint: Int = 0

  private def distance(a: Int, b: Int): Float = {
    var s = 0.0f
    var i = 0
    val (x, y) = (a * dim, b * dim)
    if (space == Distance.DOT) {
      while (i < dim) { s += vectors(x + i) * vectors(y + i); i += 1 }
      1.0f - s
    } else if (space == Distance.HAMMING) {
      var bits = 0
      while (i < dim) { bits += Integer.bitCount((vectors(x + i).toInt ^ vectors(y + i).toInt) & 0xFF); i += 1 }
      bits.toFloat
    } else {
      while (i < dim) { val d = vectors(x + i) - vectors(y + i); s += d * d; i += 1 }
      s
    }
  }

  private def maxLinks(level: Int): Int = if (level == 0) 2 * m else m

  /** Puts the node on the level, without links yet. */
  private def place(level: Int, node: Int): Unit = if (links(level)(node) == null) {
    links(level)(node) = new Array[Int](maxLinks(level) + 1)
    linkDistances(level)(node) = new Array[Float](maxLinks(level) + 1)
  }

  private def addLink(level: Int, node: Int, to: Int, d: Float): Unit = {
    place(level, node)
    val c = counts(level)(node)
    links(level)(node)(c) = to
    linkDistances(level)(node)(c) = d
    counts(level)(node) = c + 1
  }

  /** The node's links on the level, reduced by the heuristic to the level's maximum when over it. */
  private def prune(level: Int, node: Int): Unit = {
    val c = counts(level)(node)
    if (c > maxLinks(level)) {
      val (keep, kept) = select(links(level)(node), linkDistances(level)(node), c, maxLinks(level))
      System.arraycopy(keep, 0, links(level)(node), 0, kept)
      val ds = keep.take(kept).map(v => distance(node, v))
      System.arraycopy(ds, 0, linkDistances(level)(node), 0, kept)
      counts(level)(node) = kept
    }
  }

  /**
   * Lance's neighbour selection: of `count` candidates (ids and distances to the node), nearest first, each kept when
   * it is nearer to the node than to every one kept before, up to `k`. Returns the kept ids and how many.
   */
  private def select(ids: Array[Int], ds: Array[Float], count: Int, k: Int): (Array[Int], Int) = {
    val order = (0 until count).sortWith((a, b) => ds(a) < ds(b) || (ds(a) == ds(b) && ids(a) < ids(b))).toArray
    val out = new Array[Int](k)
    var kept = 0
    var i = 0
    while (i < order.length && kept < k) {
      val u = ids(order(i))
      val du = ds(order(i))
      var ok = true
      var j = 0
      while (ok && j < kept) { if (!(du < distance(u, out(j)))) ok = false; j += 1 }
      if (ok) { out(kept) = u; kept += 1 }
      i += 1
    }
    (out, kept)
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

  /** Builds the graph: every node inserted in order. */
  def build(): this.type = {
    if (n > 0) {
      entryPoint = 0
      var level = 0
      while (level <= levels(0)) { place(level, 0); level += 1 }
      var node = 1
      while (node < n) { insert(node); node += 1 }
    }
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
    level = math.min(top, levels(entryPoint))
    var l = top
    while (l > level) { place(l, node); l -= 1 }
    while (level >= 0) {
      val found = searchLevel(node, ep, epd, level, math.max(efConstruction, m))
      val (ids, ds) = found.sorted(found.size)
      val (chosen, kept) = select(ids, ds, ids.length, maxLinks(level))
      place(level, node)
      var i = 0
      while (i < kept) {
        val v = chosen(i)
        val d = distance(node, v)
        addLink(level, node, v, d)
        addLink(level, v, node, d)
        prune(level, v)
        i += 1
      }
      ep = ids(0)
      epd = ds(0)
      level -= 1
    }
    if (top > levels(entryPoint)) entryPoint = node
  }

  /** The nodes on `level`, ascending. */
  def nodesOn(level: Int): Array[Int] = (0 until n).filter(levels(_) >= level).toArray

  /** A node's neighbours on a level it is on, and their distances. */
  def neighbors(level: Int, node: Int): (Array[Int], Array[Float]) = {
    val c = counts(level)(node)
    (java.util.Arrays.copyOf(links(level)(node), c), java.util.Arrays.copyOf(linkDistances(level)(node), c))
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
