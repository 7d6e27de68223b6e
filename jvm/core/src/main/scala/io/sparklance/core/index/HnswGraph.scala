package io.sparklance.core.index

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.arrow.vector.{FieldVector, UInt4Vector}
import org.apache.arrow.vector.complex.ListVector

import io.sparklance.core.CorruptFileException

/**
 * One partition's HNSW graph, as `index.idx` of an IVF_HNSW_* index holds it (docs/dev/vector-index-format.md §2.5):
 * levels of nodes, level 0 holding every node, each node with its neighbours on each level it is on. A node is a row
 * position in the partition's rows of `auxiliary.idx` (0 to `size - 1`), which holds its row id and vector.
 *
 * Level `l` is three arrays: its nodes in ascending order, where each node's neighbours start in the third, and the
 * neighbours (CSR); on level 0 the nodes are 0 to `size - 1`, so a node is its own position.
 */
private[index] final class HnswGraph(val size: Int, val entryPoint: Int, nodes: Array[Array[Int]],
    starts: Array[Array[Int]], neighbors: Array[Array[Int]]) {

  def numLevels: Int = nodes.length

  def bytes: Long = nodes.map(_.length * 4L).sum + starts.map(_.length * 4L).sum + neighbors.map(_.length * 4L).sum + 64

  /** Where `node`'s neighbours on `level` are in `neighbors(level)`: [from, to), empty if it is not on the level. */
  private def position(level: Int, node: Int): Int =
    if (level == 0) node else java.util.Arrays.binarySearch(nodes(level), node)

  /**
   * The `k` nearest nodes to a query that `distance` measures, found as Lance's HNSW search finds them
   * (`hnsw/builder.rs` `search_inner`, `graph.rs` `greedy_search` and `beam_search`): from the entry point, on each
   * level above 0 the greedy walk to the nearest neighbour while one is nearer, then on level 0 a best-first search
   * keeping the `ef` nearest allowed nodes (nodes not allowed are walked through, never kept). When fewer than a tenth
   * of the nodes are allowed, the allowed nodes are all measured instead, as Lance does. Nearest first, ties by node.
   *
   * @param allowed which nodes may be returned, or null for all
   */
  def search(distance: IvfStorage.NodeDistance, ef: Int, k: Int, allowed: Array[Boolean]): (Array[Int], Array[Float]) = {
    if (size == 0) return (Array.emptyIntArray, Array.emptyFloatArray)
    val remaining = if (allowed == null) size else allowed.count(identity)
    if (allowed != null && remaining < size * 10 / 100) {
      val top = new NodeHeap(k)
      var n = 0
      while (n < size) {
        if (allowed(n)) top.offerBounded(distance(n), n, k)
        n += 1
      }
      return top.sorted(k)
    }
    var ep = entryPoint
    var epd = distance(ep)
    var level = numLevels - 1
    while (level > 0) {
      var moved = true
      while (moved) {
        moved = false
        val at = position(level, ep)
        if (at >= 0) {
          val ns = neighbors(level)
          val from = starts(level)(at)
          val to = starts(level)(at + 1)
          var next = -1
          var i = from
          while (i < to) {
            val d = distance(ns(i))
            if (d < epd) { epd = d; next = ns(i) }
            i += 1
          }
          if (next >= 0) { ep = next; moved = true }
        }
      }
      level -= 1
    }
    val visited = new Array[Boolean](size)
    val candidates = new NodeHeap(64)
    val results = new NodeHeap(ef + 1)
    visited(ep) = true
    candidates.pushMin(epd, ep)
    if (allowed == null || allowed(ep)) results.offerBounded(epd, ep, ef)
    val ns = neighbors(0)
    val st = starts(0)
    var searching = true
    while (searching && candidates.size > 0) {
      val cd = candidates.rootDistance
      val cur = candidates.popMin()
      if (results.size == ef && cd > results.rootDistance) searching = false
      else {
        var i = st(cur)
        val to = st(cur + 1)
        while (i < to) {
          val nb = ns(i)
          if (!visited(nb)) {
            visited(nb) = true
            val d = distance(nb)
            // The farthest kept is read again for every neighbour, as Algorithm 2 of the HNSW paper and pylance 14's
            // `beam_search` read it: once the results fill up during an expansion, their farthest grows past the
            // one read before it, and a neighbour between the two must still become a candidate.
            if (results.size < ef || d <= results.rootDistance) {
              if (allowed == null || allowed(nb)) results.offerBounded(d, nb, ef)
              candidates.pushMin(d, nb)
            }
          }
          i += 1
        }
      }
    }
    results.sorted(k)
  }
}

private[index] object HnswGraph {
  private val json = new ObjectMapper()

  /** A partition's entry in `lance:hnsw` (§2.5): its entry point and where each level's rows start. */
  final case class Meta(entryPoint: Int, levelOffsets: Array[Int])

  /** The partitions' metadata from `lance:hnsw`, a JSON array of one JSON string per partition ("" when empty). */
  def metas(path: String, text: String, partitions: Int): Array[Meta] = {
    val outer = try json.readTree(text)
    catch { case NonFatal(e) => throw new CorruptFileException(path, s"its schema metadata 'lance:hnsw' is not JSON: ${e.getMessage}", e) }
    if (!outer.isArray || outer.size != partitions) {
      throw new CorruptFileException(path, s"its 'lance:hnsw' metadata is not an array of $partitions partitions")
    }
    Array.tabulate(partitions) { p =>
      val s = outer.get(p).asText("")
      if (s.isEmpty) Meta(0, Array(0))
      else {
        val node = try json.readTree(s)
        catch { case NonFatal(e) => throw new CorruptFileException(path, s"its 'lance:hnsw' entry $p is not JSON: ${e.getMessage}", e) }
        val offsets = node.path("level_offsets")
        if (!node.path("entry_point").canConvertToInt || !offsets.isArray || offsets.size == 0) {
          throw new CorruptFileException(path, s"its 'lance:hnsw' entry $p ($s) has no entry_point or level_offsets")
        }
        Meta(node.get("entry_point").asInt, Array.tabulate(offsets.size)(i => offsets.get(i).asInt(-1)))
      }
    }
  }

  /**
   * The graph of a partition of `size` nodes from its `rows` rows of `index.idx` (`__vector_id`, `__neighbors`), with
   * the partition's metadata; every node id checked to be below `size`, level 0 to hold every node once.
   */
  def decode(path: String, partition: Int, meta: Meta, size: Int, ids: FieldVector, lists: FieldVector, rows: Int): HnswGraph = {
    def corrupt(detail: String) = new CorruptFileException(path, s"the HNSW graph of partition $partition $detail")
    if (rows == 0) {
      if (size != 0) throw corrupt(s"has no rows for its $size nodes")
      return new HnswGraph(0, 0, Array(Array.emptyIntArray), Array(Array(0)), Array(Array.emptyIntArray))
    }
    val lo = meta.levelOffsets
    if (lo(0) != 0 || lo.last != rows || lo.sliding(2).exists(w => w.length == 2 && w(1) < w(0))) {
      throw corrupt(s"has level offsets [${lo.mkString(", ")}] for its $rows rows")
    }
    val idv = ids match {
      case u: UInt4Vector => u
      case other => throw corrupt(s"has node ids of ${other.getField.getType}, not uint32")
    }
    val list = lists match {
      case l: ListVector if l.getDataVector.isInstanceOf[UInt4Vector] => l
      case other => throw corrupt(s"has neighbours of ${other.getField.getType}, not lists of uint32")
    }
    val values = list.getDataVector.asInstanceOf[UInt4Vector]
    val levels = math.max(1, lo.length - 1)
    val nodes = new Array[Array[Int]](levels)
    val starts = new Array[Array[Int]](levels)
    val neighbors = new Array[Array[Int]](levels)
    var level = 0
    while (level < levels) {
      val from = if (lo.length > 1) lo(level) else 0
      val to = if (lo.length > 1) lo(level + 1) else 0
      val order = (from until to).sortBy(r => idv.get(r) & 0xFFFFFFFFL).toArray
      val ns = new Array[Int](order.length)
      val st = new Array[Int](order.length + 1)
      var total = 0
      var i = 0
      while (i < order.length) {
        val r = order(i)
        val id = idv.get(r) & 0xFFFFFFFFL
        if (idv.isNull(r) || id >= size || (i > 0 && ns(i - 1) == id)) throw corrupt(s"has node id $id on level $level, for $size nodes")
        ns(i) = id.toInt
        if (!list.isNull(r)) total += list.getElementEndIndex(r) - list.getElementStartIndex(r)
        st(i + 1) = total
        i += 1
      }
      if (level == 0 && order.length != size) throw corrupt(s"holds ${order.length} nodes on level 0, not its $size")
      val out = new Array[Int](total)
      i = 0
      while (i < order.length) {
        val r = order(i)
        if (!list.isNull(r)) {
          var j = list.getElementStartIndex(r)
          var at = st(i)
          while (j < list.getElementEndIndex(r)) {
            val n = values.get(j) & 0xFFFFFFFFL
            if (n >= size) throw corrupt(s"has neighbour $n on level $level, for $size nodes")
            out(at) = n.toInt
            at += 1
            j += 1
          }
        }
        i += 1
      }
      nodes(level) = ns
      starts(level) = st
      neighbors(level) = out
      level += 1
    }
    // The search starts on the highest level that holds a node.
    var top = levels
    while (top > 1 && nodes(top - 1).isEmpty) top -= 1
    if (size > 0 && (meta.entryPoint < 0 || meta.entryPoint >= size ||
        java.util.Arrays.binarySearch(nodes(top - 1), meta.entryPoint) < 0)) {
      throw corrupt(s"has entry point ${meta.entryPoint}, not a node of its top level")
    }
    new HnswGraph(size, meta.entryPoint, nodes.take(top), starts.take(top), neighbors.take(top))
  }
}

/**
 * A binary heap of (distance, node) pairs, used either as a min-heap ([[pushMin]], [[popMin]]) or as a bounded max-heap
 * of the nearest ([[offerBounded]]); never both. Pairs order by distance as `Float.compare` orders them, then by node.
 * Each pair is one long, the float's bits made to order as signed ints above the node, so that one comparison of
 * primitives orders two pairs; a max-heap keeps the bitwise complement of its keys, which reverses their order, and
 * is then the same min-heap.
 */
private[index] final class NodeHeap(initial: Int) {
  private var keys = new Array[Long](math.max(initial, 4))
  /** Whether the keys are complemented (a bounded max-heap). */
  private var max = false
  var size = 0

  /** Empties the heap for reuse (as either kind). */
  def clear(): Unit = { size = 0; max = false }

  private def grow(): Unit = keys = java.util.Arrays.copyOf(keys, keys.length * 2)

  private def push(key: Long): Unit = {
    if (size == keys.length) grow()
    var i = size
    size += 1
    while (i > 0 && key < keys((i - 1) >>> 1)) {
      keys(i) = keys((i - 1) >>> 1)
      i = (i - 1) >>> 1
    }
    keys(i) = key
  }

  /** Moves `key` down from the root, which it replaces. */
  private def siftDown(key: Long): Unit = {
    var i = 0
    var done = false
    while (!done) {
      val l = 2 * i + 1
      if (l >= size) done = true
      else {
        val c = if (l + 1 < size && keys(l + 1) < keys(l)) l + 1 else l
        if (keys(c) < key) { keys(i) = keys(c); i = c } else done = true
      }
    }
    keys(i) = key
  }

  /** The distance at the root: the nearest of a min-heap, the farthest kept of a bounded max-heap. */
  def rootDistance: Float = NodeHeap.distance(if (max) ~keys(0) else keys(0))

  def pushMin(dist: Float, node: Int): Unit = push(NodeHeap.key(dist, node))

  def popMin(): Int = {
    val top = keys(0).toInt
    size -= 1
    if (size > 0) siftDown(keys(size))
    top
  }

  /** Keeps (dist, node) among the `bound` nearest offered (a max-heap). */
  def offerBounded(dist: Float, node: Int, bound: Int): Unit =
    if (!dist.isNaN && bound > 0) {
      max = true
      val key = NodeHeap.key(dist, node)
      if (size < bound) push(~key)
      else if (key < ~keys(0)) siftDown(~key)
    }

  /** The `k` nearest kept, nearest first (a bounded max-heap's contents, sorted). */
  def sorted(k: Int): (Array[Int], Array[Float]) = {
    val sortedKeys = new Array[Long](size)
    var i = 0
    while (i < size) { sortedKeys(i) = if (max) ~keys(i) else keys(i); i += 1 }
    java.util.Arrays.sort(sortedKeys)
    val count = math.min(k, size)
    val nodes = new Array[Int](count)
    val dists = new Array[Float](count)
    i = 0
    while (i < count) {
      nodes(i) = sortedKeys(i).toInt
      dists(i) = NodeHeap.distance(sortedKeys(i))
      i += 1
    }
    (nodes, dists)
  }
}

private[index] object NodeHeap {
  /** (distance, node) as one long that orders as the pairs do (node at least 0). */
  @inline def key(dist: Float, node: Int): Long = {
    val bits = java.lang.Float.floatToIntBits(dist)
    ((bits ^ ((bits >> 31) & 0x7fffffff)).toLong << 32) | (node & 0xFFFFFFFFL)
  }

  /** The distance of a [[key]]. */
  @inline def distance(key: Long): Float = {
    val high = (key >> 32).toInt
    java.lang.Float.intBitsToFloat(high ^ ((high >> 31) & 0x7fffffff))
  }
}
