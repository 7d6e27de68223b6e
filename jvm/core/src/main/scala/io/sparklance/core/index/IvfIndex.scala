package io.sparklance.core.index

import java.nio.ByteOrder
import java.util.function.LongPredicate

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.UInt8Vector

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.Storage
import io.sparklance.proto.IndexProtos

/**
 * One segment of an IVF vector index that pylance built (IVF_FLAT, IVF_PQ, IVF_SQ, IVF_HNSW_*; docs/dev/vector-index-format.md):
 * the centroids of its partitions, from `index.idx`, and where each partition's rows are in `auxiliary.idx`, which
 * holds each row's `_rowid` (a row address, or a stable row id) and its vector, exact or quantized.
 *
 * [[search]] is pylance's index search (§4 steps 1–4): each query's `nprobes` nearest partitions by their centroids,
 * every allowed row of them measured as the index measures it, the `k` nearest kept, ties by row id. Only the
 * probed partitions are read, and what is read is kept in [[IndexCache]] for later searches.
 *
 * For IVF_HNSW_* indexes each probed partition is searched through its HNSW graph, from `index.idx`
 * ([[HnswGraph.search]]), measuring only the rows the graph search visits, as the partition's storage measures them.
 *
 * @param indexType  `IVF_FLAT`, `IVF_PQ`, `IVF_SQ`, `IVF_HNSW_FLAT`, `IVF_HNSW_PQ` or `IVF_HNSW_SQ`
 * @param distance   the distance the index was built for
 */
final class IvfIndex private (val dir: String, val indexType: String, val distance: Distance, val dim: Int,
    centroids: Array[Float], loss: Double, offsets: Array[Long], lengths: Array[Int], storage: IvfStorage,
    graphs: Option[IvfIndex.Graphs], store: Storage, element: IndexProtos.Tensor.DataType,
    codebookTensor: Option[IndexProtos.Tensor]) {

  def numPartitions: Int = lengths.length

  /** The partitions the query (preprocessed) probes: the `nprobes` nearest centroids, ties by partition. */
  private def probed(q: Array[Float], nprobes: Int): Array[Int] = {
    val d = new Array[Float](numPartitions)
    var p = 0
    while (p < numPartitions) {
      var s = 0.0f
      var i = 0
      while (i < dim) {
        val c = centroids(p * dim + i)
        if (distance == Distance.DOT) s += q(i) * c
        else if (distance == Distance.HAMMING) s += Integer.bitCount((q(i).toInt ^ c.toInt) & 0xFF).toFloat
        else { val x = q(i) - c; s += x * x }
        i += 1
      }
      // Cosine probes by squared L2 between the normalized query and the stored centroids (§4 step 2).
      d(p) = if (distance == Distance.DOT) 1.0f - s else s
      p += 1
    }
    // Sorted as (distance, partition) pairs packed into longs: the distance's bits ordered as floats, the partition.
    val order = new Array[Long](numPartitions)
    p = 0
    while (p < numPartitions) {
      val bits = java.lang.Float.floatToIntBits(d(p))
      order(p) = ((bits ^ ((bits >> 31) & 0x7fffffff)).toLong << 32) | p
      p += 1
    }
    java.util.Arrays.sort(order)
    val out = new Array[Int](math.min(nprobes, numPartitions))
    p = 0
    while (p < out.length) { out(p) = order(p).toInt; p += 1 }
    out
  }

  /**
   * For each query, the `k` rows nearest to it among the allowed rows of the `nprobes` partitions nearest to it: their
   * row ids and distances as the index measures them (for IVF_PQ an approximation; for cosine IVF_PQ the squared L2
   * between normalized vectors), nearest first, ties by row id. `auxiliary.idx` is opened once, and each partition
   * some query probes is read and decoded once for all the queries that probe it. The partitions (HNSW: the queries)
   * are searched on all the JVM's cores at once (its common fork-join pool); the result does not depend on their order.
   */
  def search(queries: Seq[Array[Double]], nprobes: Int, k: Int, allowed: LongPredicate,
      allocator: BufferAllocator): Seq[IvfIndex.Found] = search(queries, nprobes, k, None, allowed, allocator)

  /** Whether partitions are searched through HNSW graphs (and `ef` has an effect). */
  def isHnsw: Boolean = graphs.isDefined

  /**
   * [[search]] with the HNSW beam width `ef` (for an IVF_HNSW_* index; Lance's default `k + k / 2` when absent, at
   * least `k`); other indexes ignore it.
   */
  def search(queries: Seq[Array[Double]], nprobes: Int, k: Int, ef: Option[Int], allowed: LongPredicate,
      allocator: BufferAllocator): Seq[IvfIndex.Found] = {
    import IvfIndex.Partition
    queries.foreach { query =>
      if (query.length != dim) {
        throw new io.sparklance.core.InvalidArgumentException(
          s"the query vector has ${query.length} values; the index in $dir holds vectors of $dim.")
      }
    }
    // pylance casts the query to the type of the column's vectors, which the centroids are stored in: a float16
    // index's query is rounded to float16 first (its SQ codes, its distances in float16).
    val qs = queries.map { q =>
      IvfIndex.preprocess(if (element != IndexProtos.Tensor.DataType.FLOAT16) q else VectorElement.FLOAT16.query(q), distance)
    }.toArray
    val tops = Array.fill(qs.length)(new TopRows(k))
    val probes = new Array[Array[Int]](qs.length)
    IvfIndex.inParallel(qs.length)(j => probes(j) = probed(qs(j), nprobes))
    // The queries that probe each partition.
    val probing = Array.fill(numPartitions)(List.empty[Int])
    qs.indices.reverse.foreach(j => probes(j).foreach(p => probing(p) = j :: probing(p)))
    val wanted = (0 until numPartitions).filter(p => lengths(p) > 0 && probing(p).nonEmpty)
    val found = new Array[Partition](numPartitions)
    wanted.foreach(p => IndexCache.get[Partition](IvfIndex.PartitionKey(dir, p)).foreach(found(p) = _))
    read(wanted.filter(found(_) == null), allocator) { (p, partition) =>
      IndexCache.put(IvfIndex.PartitionKey(dir, p), partition, partition.bytes)
      found(p) = partition
    }
    if (graphs.isDefined) searchGraphs(graphs.get, qs, probes, wanted, found, k, ef, allowed, tops, allocator)
    else {
      // Partition by partition (its codes stay in the cache for all the queries probing it), each partition's nearest
      // rows for each of its queries kept apart, then offered to the queries' tops: the same rows and order as
      // offering them in any order, since a top keeps the k least (distance, row id) pairs.
      val perPartition = new Array[Array[TopRows]](wanted.length)
      IvfIndex.inParallel(wanted.length) { w =>
        val p = wanted(w)
        val rows = lengths(p)
        val partition = found(p)
        val centroid = java.util.Arrays.copyOfRange(centroids, p * dim, (p + 1) * dim)
        perPartition(w) = probing(p).map { j =>
          val d = storage.distances(qs(j), centroid, partition.payload, rows)
          val top = new TopRows(k)
          var i = 0
          while (i < rows) {
            // The allowed rows are tested only among those near enough to be kept.
            val id = partition.rowIds(i)
            if (top.keeps(d(i), id) && allowed.test(id)) top.offer(d(i), id)
            i += 1
          }
          top
        }.toArray
      }
      wanted.indices.foreach { w =>
        var q = probing(wanted(w))
        var t = 0
        while (q.nonEmpty) { perPartition(w)(t).offerAll(tops(q.head)); q = q.tail; t += 1 }
      }
    }
    tops.toSeq.map(_.result())
  }

  /**
   * Reads partitions `ps` of `auxiliary.idx` (opened once, if any is asked for), each handed to `use` as read: its
   * payload decoded by the storage, or with `raw` the code column's values as stored (bytes, row by row).
   */
  private def read(ps: Seq[Int], allocator: BufferAllocator, raw: Boolean = false)(use: (Int, IvfIndex.Partition) => Unit): Unit =
    if (ps.nonEmpty) {
      val path = Storage.join(dir, IvfIndex.AuxiliaryFile)
      IndexFiles.withReader(store, path) { reader =>
        val fields = IndexFiles.fields(reader, "_rowid", storage.column)
        ps.foreach { p =>
          val rows = lengths(p)
          if (offsets(p) < 0 || offsets(p) + rows > reader.numRows) {
            throw new CorruptFileException(path, s"partition $p spans rows [${offsets(p)}, ${offsets(p) + rows}), past its ${reader.numRows} rows")
          }
          val root = reader.read(fields, offsets(p), offsets(p) + rows, allocator)
          val partition = try {
            val ids = root.getVector(0).asInstanceOf[UInt8Vector]
            val rowIds = new Array[Long](rows)
            var i = 0
            while (i < rows) { rowIds(i) = ids.get(i); i += 1 }
            IvfIndex.Partition(rowIds, if (raw) IvfStorage.rawValues(path, root.getVector(1), dim, rows)
              else storage.decode(path, root.getVector(1), rows))
          } finally root.close()
          use(p, partition)
        }
      }
    }

  /**
   * The segment's IVF model and quantizer, to place and encode more rows as this segment holds its own (an index
   * optimized: upstream's `optimize_vector_indices_v2` reuses them). The segment's type must be IVF_FLAT, IVF_PQ (8- or
   * 4-bit codes), or IVF_SQ; graphs (IVF_HNSW_*) are not part of the model.
   */
  def model: IvfModel = {
    val e = VectorElement.values().find(_.tensorType == element).getOrElse(throw new UnsupportedFeatureException(
      s"The vector index at $dir holds $element centroids, whose model sparklance does not reuse."))
    // The centroids and codebook are written back as read: float64 ones are held as floats here, rounded.
    val kept = Some(IvfIndex.Tensors(storedCentroids, codebookTensor))
    storage match {
      case _: IvfStorage.Flat => IvfModel("IVF_FLAT", distance, dim, centroids, loss, 0, Array.emptyFloatArray, 0, 0, e, kept)
      case pq: IvfStorage.Pq =>
        IvfModel("IVF_PQ", distance, dim, centroids, loss, pq.m, pq.codebook, 0, 0, e, kept, pq.nbits)
      case sq: IvfStorage.Sq =>
        IvfModel("IVF_SQ", distance, dim, centroids, loss, 0, Array.emptyFloatArray, sq.start, sq.end, e, kept)
    }
  }

  /** The centroids tensor as `index.idx` stores it, read again (the cache keeps the centroids as floats only). */
  private def storedCentroids: IndexProtos.Tensor = {
    val path = Storage.join(dir, IvfIndex.IndexFile)
    IndexFiles.withReader(store, path)(reader => IvfIndex.ivf(path, reader).getCentroidsTensor)
  }

  /**
   * The rows of partition `p` whose row id `keep` accepts, as an index build's run holds them: row ids and payloads of
   * [[model]]`.width` bytes each (the vector's values in the column's type, little-endian, as stored; the PQ codes, row
   * by row, 4-bit ones two a byte as stored; the SQ codes). Read from the file, not kept in [[IndexCache]]: an optimized segment's partitions are read
   * once, to be merged.
   */
  def payloadRows(p: Int, keep: LongPredicate, allocator: BufferAllocator): (Array[Long], Array[Byte]) = {
    var out = (Array.emptyLongArray, Array.emptyByteArray)
    read(if (lengths(p) > 0) Seq(p) else Nil, allocator, raw = storage.isInstanceOf[IvfStorage.Flat]) { (_, partition) =>
      val rows = partition.rowIds.length
      val reused = model
      val width = reused.width
      val packed = reused.numBits == 4
      val ids = new Array[Long](rows)
      val payload = new Array[Byte](rows * width)
      var kept = 0
      var i = 0
      while (i < rows) {
        if (keep.test(partition.rowIds(i))) {
          ids(kept) = partition.rowIds(i)
          val at = kept * width
          partition.payload match {
            case codes: Array[Byte] if storage.isInstanceOf[IvfStorage.Pq] =>
              // Decoded PQ codes are sub-vector by sub-vector ([m][rows]); a run holds them row by row, packed again
              // two a byte (low nibble first) for 4-bit codes.
              var j = 0
              if (!packed) while (j < width) { payload(at + j) = codes(j * rows + i); j += 1 }
              else while (j < width) {
                payload(at + j) = (codes(2 * j * rows + i) | (codes((2 * j + 1) * rows + i) << 4)).toByte
                j += 1
              }
            case codes: Array[Byte] => System.arraycopy(codes, i * width, payload, at, width)
            case other => throw new IllegalStateException(s"Unexpected payload ${other.getClass} of $dir")
          }
          kept += 1
        }
        i += 1
      }
      out = (java.util.Arrays.copyOf(ids, kept), java.util.Arrays.copyOf(payload, kept * width))
    }
    out
  }

  /** Each probed partition searched through its HNSW graph, the nodes found offered to their queries' tops. */
  private def searchGraphs(g: IvfIndex.Graphs, qs: Array[Array[Float]], probes: Array[Array[Int]], wanted: Seq[Int],
      found: Array[IvfIndex.Partition], k: Int, ef: Option[Int], allowed: LongPredicate,
      tops: Array[TopRows], allocator: BufferAllocator): Unit = {
    // Lance's default beam width (`HnswQueryParams::from`); a narrower one is refused, as pylance refuses it.
    val width = ef.getOrElse(k + k / 2)
    if (width < k) {
      throw new io.sparklance.core.InvalidArgumentException(s"ef = $width is less than the $k rows the HNSW index in " +
        s"$dir is asked for (num_results × refine_factor); use ef >= $k.")
    }
    // The graphs and allowed nodes of the probed partitions, read and worked out once, before the queries search.
    val graphs = new Array[HnswGraph](numPartitions)
    val allowedNodes = new Array[Array[Boolean]](numPartitions)
    wanted.foreach { p =>
      graphs(p) = g.graph(store, dir, p, lengths(p), allocator)
      allowedNodes(p) = found(p).rowIds.map(id => allowed.test(id))
    }
    IvfIndex.inParallel(qs.length) { j =>
      val centroid = new Array[Float](dim)
      probes(j).foreach { p =>
        if (lengths(p) > 0) {
          val partition = found(p)
          System.arraycopy(centroids, p * dim, centroid, 0, dim)
          val (nodes, d) = graphs(p).search(storage.nodeDistance(qs(j), centroid, partition.payload, lengths(p)), width,
            k, allowedNodes(p))
          var i = 0
          while (i < nodes.length) { tops(j).offer(d(i), partition.rowIds(nodes(i))); i += 1 }
        }
      }
    }
  }

  override def toString: String = s"$indexType(${distance.lanceName()}, $numPartitions partitions)"
}

object IvfIndex {
  val IndexFile = "index.idx"

  /**
   * Runs `work(i)` for each `i < n`: on the JVM's common fork-join pool and the calling thread at once when there
   * are several (the searches hand each `i` its own output, and partitions, graphs and the allowed rows are only
   * read), in the calling thread for one.
   */
  private def inParallel(n: Int)(work: Int => Unit): Unit =
    if (n == 1) work(0)
    else java.util.stream.IntStream.range(0, n).parallel().forEach(new java.util.function.IntConsumer {
      def accept(i: Int): Unit = work(i)
    })
  val AuxiliaryFile = "auxiliary.idx"

  /** The index types this reader searches. */
  val Searchable: Set[String] = Set("IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ", "IVF_HNSW_SQ")

  /**
   * Where the partitions' HNSW graphs are in `index.idx` (its IVF message's offsets and lengths, in rows) and their
   * `lance:hnsw` metadata; each graph is read when a search first probes its partition, then kept in [[IndexCache]].
   */
  private final case class Graphs(offsets: Array[Long], lengths: Array[Int], metas: Array[HnswGraph.Meta]) {
    def graph(store: Storage, dir: String, p: Int, size: Int, allocator: BufferAllocator): HnswGraph =
      IndexCache.getOrLoad[HnswGraph](GraphKey(dir, p), _.bytes) {
        val path = Storage.join(dir, IndexFile)
        IndexFiles.withReader(store, path) { reader =>
          val rows = lengths(p)
          if (offsets(p) < 0 || rows < 0 || offsets(p) + rows > reader.numRows) {
            throw new CorruptFileException(path, s"partition $p spans rows [${offsets(p)}, ${offsets(p) + rows}), past its ${reader.numRows} rows")
          }
          if (rows == 0) HnswGraph.decode(path, p, metas(p), size, null, null, 0)
          else {
            val root = reader.read(IndexFiles.fields(reader, "__vector_id", "__neighbors"), offsets(p), offsets(p) + rows, allocator)
            try HnswGraph.decode(path, p, metas(p), size, root.getVector(0), root.getVector(1), rows)
            finally root.close()
          }
        }
      }
  }

  private final case class GraphKey(dir: String, partition: Int)

  /** Row ids and their distances, nearest first. */
  final case class Found(rowIds: Array[Long], distances: Array[Float])

  /** A partition of `auxiliary.idx` as read: its rows' `_rowid`s and their vectors or codes, decoded by [[IvfStorage]]. */
  private final case class Partition(rowIds: Array[Long], payload: AnyRef) {
    def bytes: Long = rowIds.length * 8L + (payload match {
      case f: Array[Float] => f.length * 4L
      case b: Array[Byte] => b.length.toLong
      case _ => 0L
    }) + 64
  }

  private final case class PartitionKey(dir: String, partition: Int)
  private final case class ModelKey(dir: String)
  private final case class DescriptionKey(dir: String)

  /** What `open` reads of an index segment, kept in [[IndexCache]]. */
  private final case class Model(indexType: String, distance: Distance, dim: Int, centroids: Array[Float], loss: Double,
      offsets: Array[Long], lengths: Array[Int], storage: IvfStorage, graphs: Option[Graphs],
      element: IndexProtos.Tensor.DataType, codebookTensor: Option[IndexProtos.Tensor]) {
    def bytes: Long = centroids.length * 4L + offsets.length * 12L + (storage match {
      case pq: IvfStorage.Pq => pq.codebook.length * 4L
      case _ => 0L
    }) + codebookTensor.map(_.getSerializedSize.toLong).getOrElse(0L) + 256
  }

  /** A segment's centroids and PQ codebook tensors as its files store them (in the column's type). */
  final case class Tensors(centroids: IndexProtos.Tensor, codebook: Option[IndexProtos.Tensor])

  /** The query as the index searches it: float32, normalized for cosine (§4 step 1). */
  def preprocess(query: Array[Double], distance: Distance): Array[Float] = {
    val q = query.map(_.toFloat)
    if (distance == Distance.COSINE) {
      var s = 0.0f
      q.foreach(x => s += x * x)
      val norm = math.sqrt(s.toDouble).toFloat
      var i = 0
      while (i < q.length) { q(i) = q(i) / norm; i += 1 }
    }
    q
  }

  private val json = new ObjectMapper()

  /** The index type and distance `index.idx` records (its `lance:index` schema metadata), without reading more. */
  def describe(store: Storage, dir: String): (String, Distance) =
    IndexCache.getOrLoad[(String, Distance)](DescriptionKey(dir), _ => 128L) {
      val path = Storage.join(dir, IndexFile)
      IndexFiles.withReader(store, path)(reader => typeAndDistance(path, reader))
    }

  private def typeAndDistance(path: String, reader: LanceFileReader): (String, Distance) = {
    import IndexFiles.SchemaMetadata
    val meta = reader.schemaMetadataString("lance:index").getOrElse(
      throw new CorruptFileException(path, "its schema metadata has no 'lance:index'"))
    val node = parse(path, "lance:index", meta)
    val t = Option(node.get("type")).map(_.asText).getOrElse(
      throw new CorruptFileException(path, s"its 'lance:index' metadata $meta has no type"))
    val d = Option(node.get("distance_type")).map(_.asText).getOrElse("l2")
    (t, Distance.named(d, s"$path distance_type"))
  }

  private def parse(path: String, key: String, text: String): JsonNode =
    try json.readTree(text)
    catch { case NonFatal(e) => throw new CorruptFileException(path, s"its schema metadata '$key' is not JSON: ${e.getMessage}", e) }

  /** The IVF message of the global buffer that the file's `lance:ivf` metadata names (§1.2: 0 is the schema). */
  private[index] def ivf(path: String, reader: LanceFileReader): IndexProtos.IVF = {
    import IndexFiles.SchemaMetadata
    val position = reader.schemaMetadataString("lance:ivf").map(IndexFiles.positiveInt(path, "lance:ivf", _)).getOrElse(
      throw new CorruptFileException(path, "its schema metadata has no 'lance:ivf'"))
    try IndexProtos.IVF.parseFrom(reader.globalBuffer(position))
    catch { case e: com.google.protobuf.InvalidProtocolBufferException =>
      throw new CorruptFileException(path, s"its global buffer $position is not an IVF message: ${e.getMessage}", e) }
  }

  /** A tensor's values as floats, checked to hold `count` of them. */
  private def floats(path: String, what: String, t: IndexProtos.Tensor, count: Long): Array[Float] = {
    val bytes = t.getData.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN)
    val width = t.getDataType match {
      case IndexProtos.Tensor.DataType.FLOAT16 => 2
      case IndexProtos.Tensor.DataType.FLOAT32 => 4
      case IndexProtos.Tensor.DataType.FLOAT64 => 8
      case IndexProtos.Tensor.DataType.UINT8 => 1
      case other => throw new UnsupportedFeatureException(s"Cannot search the vector index at $path: its $what are $other; " +
        "sparklance reads float16, float32, float64 and uint8 ones. Search with bypass_vector_index => true.")
    }
    if (count > Int.MaxValue || bytes.remaining() != count * width) {
      throw new CorruptFileException(path, s"its $what hold ${bytes.remaining()} bytes, not $count values of $width bytes")
    }
    val out = new Array[Float](count.toInt)
    var i = 0
    while (i < out.length) {
      out(i) = width match {
        case 1 => (bytes.get(i) & 0xFF).toFloat
        case 2 => IvfStorage.halfToFloat(bytes.getShort(i * 2))
        case 4 => bytes.getFloat(i * 4)
        case _ => bytes.getDouble(i * 8).toFloat
      }
      i += 1
    }
    out
  }

  /**
   * The index segment in `dir`: its type and distance, centroids, partition layout and quantizer, read and checked.
   * A type this reader does not search (RQ, IVF_SQ for cosine or dot) is an
   * [[UnsupportedFeatureException]]. What is read is kept in [[IndexCache]], so that an index is read once.
   */
  def open(store: Storage, dir: String): IvfIndex = {
    val m = IndexCache.getOrLoad[Model](ModelKey(dir), _.bytes)(model(store, dir))
    new IvfIndex(dir, m.indexType, m.distance, m.dim, m.centroids, m.loss, m.offsets, m.lengths, m.storage, m.graphs, store, m.element, m.codebookTensor)
  }

  private def model(store: Storage, dir: String): Model = {
    val indexPath = Storage.join(dir, IndexFile)
    val (indexType, distance, centroidTensor, loss, graphLayout) = IndexFiles.withReader(store, indexPath) { reader =>
      val (t, d) = typeAndDistance(indexPath, reader)
      if (!Searchable.contains(t)) {
        throw new UnsupportedFeatureException(s"Cannot search the vector index at $dir: it is $t, and sparklance searches " +
          s"${Searchable.toSeq.sorted.mkString(", ")} indexes. Search with bypass_vector_index => true.")
      }
      if (t.endsWith("_SQ") && d != Distance.L2) {
        throw new UnsupportedFeatureException(s"Cannot search the vector index at $dir: it is $t for ${d.lanceName()}, " +
          s"and sparklance searches $t indexes for l2 only. Search with bypass_vector_index => true.")
      }
      val model = ivf(indexPath, reader)
      if (!model.hasCentroidsTensor) throw new CorruptFileException(indexPath, "its IVF message has no centroids")
      val layout = if (!t.startsWith("IVF_HNSW_")) None else {
        import IndexFiles.SchemaMetadata
        val lengths = model.getLengthsList.asScala.map(_.intValue).toArray
        val offsets = model.getOffsetsList.asScala.map(_.longValue).toArray
        val meta = reader.schemaMetadataString("lance:hnsw").getOrElse(
          throw new CorruptFileException(indexPath, "its schema metadata has no 'lance:hnsw'"))
        if (offsets.length != lengths.length) {
          throw new CorruptFileException(indexPath, s"its IVF message lists ${offsets.length} offsets and ${lengths.length} lengths")
        }
        Some(Graphs(offsets, lengths, HnswGraph.metas(indexPath, meta, lengths.length)))
      }
      (t, d, model.getCentroidsTensor, model.getLoss, layout)
    }
    val shape = centroidTensor.getShapeList.asScala.map(_.longValue & 0xFFFFFFFFL)
    if (shape.size != 2 || shape(0) <= 0 || shape(1) <= 0) {
      throw new CorruptFileException(indexPath, s"its centroids have shape [${shape.mkString(", ")}], not [partitions, dim]")
    }
    val (partitions, dim) = (shape(0).toInt, shape(1).toInt)
    graphLayout.foreach { g =>
      if (g.lengths.length != partitions) {
        throw new CorruptFileException(indexPath, s"its IVF message lists ${g.lengths.length} graphs for $partitions centroids")
      }
    }
    val centroids = floats(indexPath, "centroids", centroidTensor, shape(0) * shape(1))
    val auxPath = Storage.join(dir, AuxiliaryFile)
    IndexFiles.withReader(store, auxPath) { reader =>
      import IndexFiles.SchemaMetadata
      val model = ivf(auxPath, reader)
      val lengths = model.getLengthsList.asScala.map(_.intValue).toArray
      val offsets = model.getOffsetsList.asScala.map(_.longValue).toArray
      if (lengths.length != partitions || offsets.length != partitions) {
        throw new CorruptFileException(auxPath, s"its IVF message lists ${offsets.length} offsets and ${lengths.length} " +
          s"lengths for the $partitions partitions of $IndexFile")
      }
      if (lengths.exists(_ < 0)) throw new CorruptFileException(auxPath, "a partition has a negative length")
      val stored = reader.schemaMetadataString("storage_metadata").getOrElse(
        throw new CorruptFileException(auxPath, "its schema metadata has no 'storage_metadata'"))
      // A JSON array of one JSON string holding the quantizer's metadata (§1.4).
      val outer = parse(auxPath, "storage_metadata", stored)
      if (!outer.isArray || outer.size != 1 || !outer.get(0).isTextual) {
        throw new CorruptFileException(auxPath, s"its 'storage_metadata' is $stored, not an array of one JSON string")
      }
      val meta = parse(auxPath, "storage_metadata", outer.get(0).asText)
      def int(key: String): Int = Option(meta.get(key)).filter(_.canConvertToInt).map(_.asInt).getOrElse(
        throw new CorruptFileException(auxPath, s"its storage metadata ${outer.get(0).asText} has no whole number '$key'"))
      val (storage, codebookTensor) = indexType.stripPrefix("IVF_HNSW_").stripPrefix("IVF_") match {
        case "FLAT" =>
          if (int("dim") != dim) throw new CorruptFileException(auxPath, s"it holds vectors of ${int("dim")}, the centroids $dim")
          (IvfStorage.Flat(dim, distance), None)
        case "PQ" =>
          val (m, nbits) = (int("num_sub_vectors"), int("nbits"))
          if (int("dimension") != dim || m <= 0 || dim % m != 0 || (nbits != 8 && nbits != 4) || (nbits == 4 && m % 2 != 0)) {
            throw new CorruptFileException(auxPath, s"its PQ metadata ${outer.get(0).asText} does not fit vectors of $dim")
          }
          val position = int("codebook_position")
          val codebook = try IndexProtos.Tensor.parseFrom(reader.globalBuffer(position))
          catch { case e: com.google.protobuf.InvalidProtocolBufferException =>
            throw new CorruptFileException(auxPath, s"its global buffer $position is not a codebook tensor: ${e.getMessage}", e) }
          val transposed = Option(meta.get("transposed")).forall(_.asBoolean(true))
          (IvfStorage.Pq(dim, m, nbits, floats(auxPath, "codebook", codebook, (1L << nbits) * dim), transposed, distance),
            Some(codebook))
        case _ =>
          if (int("dim") != dim || int("num_bits") != 8) {
            throw new CorruptFileException(auxPath, s"its SQ metadata ${outer.get(0).asText} does not fit vectors of $dim")
          }
          val bounds = Option(meta.get("bounds")).getOrElse(throw new CorruptFileException(auxPath, "its SQ metadata has no bounds"))
          val (start, end) = (bounds.path("start").asDouble(Double.NaN), bounds.path("end").asDouble(Double.NaN))
          if (start.isNaN || end.isNaN || !(end > start)) {
            throw new CorruptFileException(auxPath, s"its SQ bounds are [$start, $end]")
          }
          (IvfStorage.Sq(dim, start, end, distance), None)
      }
      Model(indexType, distance, dim, centroids, loss, offsets, lengths, storage, graphLayout, centroidTensor.getDataType,
        codebookTensor)
    }
  }
}

/** The `k` smallest (distance, row id) pairs offered, in a bounded max-heap of primitives. */
private[index] final class TopRows(k: Int) {
  private val d = new Array[Float](k)
  private val id = new Array[Long](k)
  private var size = 0

  /** Whether (da, ia) comes after (db, ib): farther, or as far with a larger row id. */
  private def after(da: Float, ia: Long, db: Float, ib: Long): Boolean = {
    val c = java.lang.Float.compare(da, db)
    c > 0 || (c == 0 && java.lang.Long.compareUnsigned(ia, ib) > 0)
  }

  /** Whether [[offer]] would keep (distance, rowId) now. */
  def keeps(distance: Float, rowId: Long): Boolean =
    !distance.isNaN && k > 0 && (size < k || after(d(0), id(0), distance, rowId))

  def offer(distance: Float, rowId: Long): Unit = {
    if (distance.isNaN || k == 0) return
    if (size < k) {
      var i = size
      size += 1
      while (i > 0 && after(distance, rowId, d((i - 1) / 2), id((i - 1) / 2))) {
        d(i) = d((i - 1) / 2); id(i) = id((i - 1) / 2); i = (i - 1) / 2
      }
      d(i) = distance; id(i) = rowId
    } else if (after(d(0), id(0), distance, rowId)) {
      var i = 0
      var done = false
      while (!done) {
        val l = 2 * i + 1
        if (l >= size) done = true
        else {
          val c = if (l + 1 < size && after(d(l + 1), id(l + 1), d(l), id(l))) l + 1 else l
          if (after(d(c), id(c), distance, rowId)) { d(i) = d(c); id(i) = id(c); i = c } else done = true
        }
      }
      d(i) = distance; id(i) = rowId
    }
  }

  /** Offers the pairs kept here to `other`. */
  def offerAll(other: TopRows): Unit = {
    var i = 0
    while (i < size) { other.offer(d(i), id(i)); i += 1 }
  }

  /** The pairs kept, nearest first. */
  def result(): IvfIndex.Found = {
    val order = (0 until size).sortWith((a, b) => after(d(b), id(b), d(a), id(a)))
    IvfIndex.Found(order.map(id(_)).toArray, order.map(d(_)).toArray)
  }
}
