package io.sparklance.core.table

import java.util.{Locale, UUID}

import scala.util.control.NonFatal

import com.google.protobuf.{ByteString, CodedOutputStream}
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.FixedSizeListVector
import org.apache.arrow.vector.types.pojo.ArrowType
import org.roaringbitmap.RoaringBitmap
import org.roaringbitmap.longlong.Roaring64NavigableMap

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.{Fragment, TableLayout}
import io.sparklance.core.index.{Distance, HnswBuilder, HnswWriter, IndexKind, IndexMetadata, IvfIndex, IvfModel, IvfWriter,
  VectorElement}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.schema.{LanceField, LanceSchema}
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/**
 * An IVF vector index (IVF_FLAT, IVF_PQ with 8-bit codes, or IVF_SQ, or their IVF_HNSW_* forms) being built on one vector column of a pinned
 * version ([[Table.newVectorIndex]]) and committed as one CreateIndex version, in the files and layout pylance 14
 * writes (docs/dev/vector-index-format.md). The steps, as upstream's builder takes them (§5):
 *  1. [[tasks]] first trains the model here, on a random sample of the column's vectors: k-means centroids
 *     (`sample_rate` × `num_partitions` vectors, `max_iters` iterations; cosine normalizes the vectors first, dot
 *     keeps unit-length centroids) and the quantizer (PQ codebooks on the residuals to the centroids, over
 *     `sample_rate` × 256 vectors; the SQ bounds).
 *  2. Each task ([[VectorIndexBuild.run]], anywhere) reads a slice of a fragment and writes a run: its live rows'
 *     row ids (row addresses, or stable row ids) and payloads (vector, PQ codes, SQ codes), grouped by the nearest
 *     centroid.
 *  3. For IVF_HNSW_*, each task of [[graphTasks]] (anywhere) builds one partition's HNSW graph over the partition's
 *     rows in all runs, as their payloads measure them ([[HnswBuilder]]), and writes it.
 *  4. [[commit]] merges the runs (and graphs) into `auxiliary.idx` and `index.idx` and commits the index over every fragment of
 *     the version, in place of the indexes of the same name with `replace`.
 *
 * Options (`WITH (...)`, pylance's names): `num_partitions` (default: rows / 4096 for IVF_FLAT, rows / 8192
 * otherwise, between 1 and 4096), `distance_type` (or `metric`: `l2`, `cosine`, `dot`; default l2), `sample_rate`
 * (default 256), `max_iters` (default 50), for IVF_PQ `num_sub_vectors` (required, dividing the dimension) and
 * `num_bits` (8, or 4: two codes a byte), for IVF_SQ `num_bits` (8); for IVF_HNSW_* also `m` (default 20), `ef_construction` (150) and
 * `max_level` (7), and
 * `num_partitions` defaults to rows / 1,048,576 (Lance's targets).
 *
 * Built as an update of an existing index (`update`: [[Table.newVectorIndexUpdate]], OPTIMIZE INDEX), nothing is
 * trained: the old segments' model and quantizer place and encode the rows of the fragments they do not cover,
 * which alone the tasks read, and [[commit]] writes them with the old segments' live rows into one segment under a
 * new uuid covering every fragment, in place of the old segments, as upstream's `optimize_indices` does when it
 * merges segments and keeps the partitions (`rust/lance/src/index/append.rs`, `optimize_vector_indices_v2`; upstream
 * also splits partitions grown past 4× its target size and joins those under a quarter of it, with new centroids,
 * which this update never does). Rows deleted, or of fragments no longer in the table, are left out. For an
 * IVF_HNSW_* index the old rows are written as runs first ([[carriedRuns]]), so that each partition's graph is
 * rebuilt over its old and new rows, as pylance's `optimize_indices` rebuilds it.
 *
 * The column's element type (float32, float16, float64; uint8 for hamming) is the type the index stores its
 * centroids, codebook and IVF_FLAT vectors in ([[VectorElement]]), as pylance 14 does.
 */
final class VectorIndexBuild private[table] (table: Table, snapshot: Snapshot, val name: String, val column: LanceField,
    val dim: Int, params: IvfModel.Params, hnsw: Option[VectorIndexBuild.Hnsw], seed: Long,
    update: Option[VectorIndexBuild.Update] = None) extends PendingCommit(table) {

  retriesFrom(snapshot)

  /** The table's root. */
  def root: String = table.root

  val uuid: UUID = UUID.randomUUID()

  private val dir = Storage.join(table.root, s"_indices/$uuid")

  /** The index type, `IVF_FLAT`, `IVF_PQ`, `IVF_SQ`, or `IVF_HNSW_FLAT`, `IVF_HNSW_PQ`, `IVF_HNSW_SQ`. */
  def indexType: String = if (hnsw.isDefined) "IVF_HNSW_" + params.indexType.stripPrefix("IVF_") else params.indexType

  /** Whether each partition gets an HNSW graph, built by [[graphTasks]] after [[tasks]]. */
  def buildsGraphs: Boolean = hnsw.isDefined

  /** Whether the build repeats: its seed is fixed ([[VectorIndexBuild.SeedProperty]]), so its graphs get one thread. */
  private val repeatable: Boolean = VectorIndexBuild.fixedSeed.isDefined

  private def graphPath(p: Int): String = Storage.join(dir, s"graph-$p.lance")

  /**
   * For an IVF_HNSW_* index, one task per partition, run after [[tasks]] on their runs: it builds the partition's
   * graph ([[VectorIndexBuild.runGraph]]). None for the other types. The tasks share `cores` cores, each taking at
   * least `coresPerTask`: a build of fewer graphs than cores gives each graph several threads, one of many graphs
   * leaves the parallelism to the tasks (Spark's `spark.task.cpus` each).
   */
  def graphTasks(runs: Seq[String], cores: Int, coresPerTask: Int): Seq[VectorIndexBuild.GraphTask] =
    if (upToDate) Nil else hnsw.toSeq.flatMap { h =>
      val all = carriedRuns ++ runs
      val threads = if (repeatable) 1 else math.max(math.max(1, coresPerTask), cores / model.numPartitions)
      (0 until model.numPartitions).map(p => VectorIndexBuild.GraphTask(all, p, model, h, seed * 31 + p, graphPath(p),
        uuid.toString, threads))
    }

  /** The graph tasks run one after another in this process, each on every core. */
  private def graphTasksHere(runs: Seq[String]): Seq[VectorIndexBuild.GraphTask] =
    graphTasks(runs, 0, Runtime.getRuntime.availableProcessors)

  /**
   * For an update of an IVF_HNSW_* index, the old segments' live rows written as runs (one per segment, on first
   * use), so that each partition's graph is rebuilt over its old and new rows together, as pylance's
   * `optimize_indices` rebuilds it; none otherwise (an IVF_FLAT/PQ/SQ update merges the old rows in [[commit]]).
   */
  private lazy val carriedRuns: Seq[String] = if (hnsw.isEmpty || update.isEmpty) Nil else {
    val allocator = new RootAllocator()
    try {
      carried(allocator).zipWithIndex.map { case (rowsOf, i) =>
        val parts = (0 until model.numPartitions).map(rowsOf)
        val n = parts.map(_._1.length).sum
        val partitions = new Array[Int](n)
        var at = 0
        parts.zipWithIndex.foreach { case ((ids, _), p) => java.util.Arrays.fill(partitions, at, at + ids.length, p); at += ids.length }
        val path = Storage.join(dir, s"run-carried-$i.lance")
        IvfWriter.writeRun(storage, path, model, Array.concat(parts.map(_._1): _*), partitions,
          Array.concat(parts.map(_._2): _*), n, allocator)
        path
      }
    } finally allocator.close()
  }

  /** The segments an update leaves as they are (`num_indices_to_merge`, [[IndexSegments]]), and what they cover. */
  private val unmerged: Seq[IndexMetadata] = update.fold(Seq.empty[IndexMetadata])(_.unmerged)
  private val unmergedCoverage = IndexSegments.coverage(unmerged)

  private val replaced: Seq[IndexMetadata] =
    IndexSegments.replaced(snapshot.indexes, name, unmerged)

  private lazy val model: IvfModel = update.map(_.model).getOrElse {
    val (sample, n, bounds64) = VectorIndexBuild.sample(snapshot, column, dim, params.sampleSize, seed)
    IvfModel.train(column.name, params, dim, sample, n, seed, bounds64)
  }

  /**
   * The fragments the old segments cover, when updating an index, and the fragments a compaction wrote from them
   * (whose rows the old segments hold under their old addresses).
   */
  private val covered = update.fold(new RoaringBitmap()) { u =>
    val b = u.segments.foldLeft(new RoaringBitmap())((b, s) => RoaringBitmap.or(b, s._1.fragmentBitmap))
    u.moves.foreach(m => m.written.foreach(f => b.add(f.toInt)))
    b
  }

  private val present = RoaringBitmap.bitmapOf(snapshot.fragments.map(_.id.toInt): _*)

  /** The fragments whose rows the tasks read: every fragment, or those no segment of the old index covers. */
  val fragments: IndexedSeq[Fragment] =
    snapshot.fragments.filter(f => !covered.contains(f.id.toInt) && !unmergedCoverage.contains(f.id.toInt))

  /**
   * Whether committing an update would change nothing: no fragment is left uncovered and the segments merged are one
   * covering no fragment that is gone, or none. [[commit]] then returns the newest segment as it is. With
   * `num_indices_to_merge` of 1 or more, pylance 14 rewrites a vector index's one merged segment even then (a new
   * uuid over the same rows), and so does this update.
   */
  def upToDate: Boolean = update.exists(u => fragments.isEmpty &&
    ((u.segments.size == 1 && RoaringBitmap.andNot(covered, present).isEmpty && u.merge.forall(_ == 0)) ||
      (u.segments.isEmpty && unmerged.nonEmpty)))

  /** The trained model (centroids, quantizer), trained on first use. */
  def trained: IvfModel = model

  /** One task per slice of at most [[VectorIndexBuild.SliceRows]] rows of a fragment; trains the model first. */
  def tasks: Seq[VectorIndexBuild.Task] = {
    val m = model
    val schema = LanceSchema(IndexedSeq(column), Map.empty).toBytes
    fragments.flatMap { f =>
      (0L until f.physicalRows by VectorIndexBuild.SliceRows.toLong).map { from =>
        VectorIndexBuild.Task(snapshot.layout, snapshot.manifest.path, f.proto.toByteArray, schema, from,
          math.min(f.physicalRows, from + VectorIndexBuild.SliceRows), snapshot.hasStableRowIds, m,
          Storage.join(dir, s"run-${f.id}-$from.lance"), uuid.toString)
      }
    }
  }

  /** The [[tasks]], to run in this process with [[VectorIndexBuild.runInThisProcess]] on this build's storage. */
  def tasksInThisProcess: Seq[VectorIndexBuild.Task] = {
    VectorIndexBuild.inThisProcess.put(uuid.toString, this)
    tasks
  }

  private def storage: Storage = table.storage

  /**
   * Writes the index files from the tasks' runs (and for an IVF_HNSW_* index the graph tasks' graphs, one per
   * partition) and commits the index; returns its metadata.
   */
  def commit(runs: Seq[String], graphs: Seq[String] = Nil): IndexMetadata =
    if (upToDate) {
      VectorIndexBuild.inThisProcess.remove(uuid.toString)
      update.get.segments.headOption.map(_._1).getOrElse(unmerged.last)
    } else written(runs, graphs)

  private def written(runs: Seq[String], graphs: Seq[String]): IndexMetadata = committing {
    val meta = files(runs, graphs)
    table.commit(Transaction.create(snapshot.version, Operation.CreateIndex(Seq(meta), replaced.map(_.proto))),
      Committer.Options(maxRetries = commitRetries))
    new IndexMetadata(meta, snapshot.manifest.path)
  }

  /**
   * Runs every task here and writes the index files, committing nothing: the new index's metadata, for a compaction
   * to commit in its Rewrite ([[Compaction]]). [[abort]] removes the files.
   */
  private[table] def writeHere(): io.sparklance.proto.TableProtos.IndexMetadata = {
    val runs = tasks.map(VectorIndexBuild.run(storage, _))
    files(runs, graphTasksHere(runs).map(VectorIndexBuild.runGraph(storage, _)))
  }

  /** Writes the index files from the runs and graphs; the new index's metadata, not committed. */
  private def files(runs: Seq[String], graphs: Seq[String]): io.sparklance.proto.TableProtos.IndexMetadata = {
    VectorIndexBuild.inThisProcess.remove(uuid.toString)
    val allocator = new RootAllocator()
    val written = try {
      if (hnsw.isEmpty) IvfWriter.merge(storage, runs, carried(allocator), dir, model, snapshot.fileVersion, allocator)
      else {
        val byPartition = (0 until model.numPartitions).map { p =>
          if (!graphs.contains(graphPath(p))) throw new IllegalStateException(s"The graph of partition $p was not built.")
          Some(graphPath(p))
        }
        IvfWriter.mergeWith(storage, carriedRuns ++ runs, Nil, dir, model, snapshot.fileVersion, allocator)(
          HnswWriter.writeIndexFile(storage, dir, model, indexType, byPartition, snapshot.fileVersion, allocator))
      }
    } finally allocator.close()
    (carriedRuns ++ runs ++ graphs).foreach(storage.delete)
    // With num_indices_to_merge, a merged segment keeps the oldest merged one's dataset version, as pylance 14 does.
    val builtAt = update.filter(u => u.merge.isDefined && u.segments.nonEmpty)
      .fold(snapshot.version)(_.segments.map(_._1.datasetVersion).min)
    IndexMetadata.create(uuid, name, Seq(column.id), builtAt, RoaringBitmap.andNot(present, unmergedCoverage), IndexKind.Vector,
      update.fold(VectorIndexBuild.details(params, hnsw))(_.details), update.fold(1)(_.indexVersion), written)
  }

  /**
   * For an update, the old segments' rows the new segment keeps, partition by partition: those of the live rows of
   * the fragments each covers (a row two segments hold, from the newer only).
   */
  private def carried(allocator: RootAllocator): Seq[Int => (Array[Long], Array[Byte])] = update.toSeq.flatMap { u =>
    val taken = new Roaring64NavigableMap()
    u.segments.map { case (meta, segment) =>
      val keep = VectorIndexUse.liveRowIds(snapshot, meta)
      keep.andNot(taken)
      taken.or(keep)
      u.moves match {
        case None => (p: Int) => segment.payloadRows(p, id => keep.contains(id), allocator)
        case Some(moves) =>
          // Rows of the fragments a compaction rewrote keep their payloads under their new addresses, in place.
          (p: Int) => {
            val (ids, payload) = segment.payloadRows(p, id => keep.contains(id) || moves.to(id) >= 0, allocator)
            var i = 0
            while (i < ids.length) { if (!keep.contains(ids(i))) ids(i) = moves.to(ids(i)); i += 1 }
            (ids, payload)
          }
      }
    }
  }

  /** Removes the index directory written so far (unless a commit's outcome is unknown). */
  def abort(): Unit = {
    VectorIndexBuild.inThisProcess.remove(uuid.toString)
    abort(table.storage.list(dir).map(_.path) :+ dir)
  }

  /** Runs every task here and commits: the index built by one process. */
  def runAndCommit(): IndexMetadata =
    try {
      val runs = tasks.map(VectorIndexBuild.run(storage, _))
      commit(runs, graphTasksHere(runs).map(VectorIndexBuild.runGraph(storage, _)))
    } catch { case NonFatal(e) => abort(); throw e }
}

object VectorIndexBuild {

  /** Rows of a fragment one task reads at most. */
  val SliceRows: Int = 1 << 17

  /** The index types built, by the names users give (`USING ivf_pq`). */
  val Types: Seq[String] = Seq("IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ", "IVF_HNSW_SQ")

  /** Whether this build's Arrow reads float16 vectors (the Arrow of the Spark 3.x builds has no `Float2Vector`). */
  private lazy val halfFloats: Boolean =
    scala.util.Try(Class.forName("org.apache.arrow.vector.Float2Vector")).isSuccess

  /**
   * The system property that fixes the seed of every vector index build's randoms (the k-means++ seeds, the sample,
   * the PQ codebooks' training, the HNSW nodes' levels), so that a test can build the same index again; unset (as
   * for users: pylance draws its builds from fresh randoms too), each build draws a new seed. With it set, HNSW
   * graphs are built on one thread each, since a build on several threads depends on which insertions overlap.
   */
  val SeedProperty: String = "sparklance.vector-index.seed"

  /** The seed [[SeedProperty]] fixes, read at each build; None when it is unset. */
  private[table] def fixedSeed: Option[Long] = Option(System.getProperty(SeedProperty)).map { v =>
    scala.util.Try(v.trim.toLong).getOrElse(throw new InvalidArgumentException(
      s"System property $SeedProperty must be a whole number (a vector index build's seed), not '$v'. Unset it for " +
        "builds from fresh randoms."))
  }

  /** A build's seed: the fixed one, else a fresh one. */
  private def seed(): Long = fixedSeed.getOrElse(new java.util.Random().nextLong())

  /** Vector index types pylance builds that this builder does not yet. */
  private val NotYet: Set[String] = Set("IVF_RQ", "HNSW", "IVF_HNSW", "IVF")

  /**
   * An existing index being brought up to date: its segments merged (newest first) with their files opened, the model
   * they share, the `index_details` and `index_version` the new segment records as theirs, and the segments left as
   * they are with the `num_indices_to_merge` that picked them ([[IndexSegments]]).
   */
  final case class Update(segments: Seq[(IndexMetadata, IvfIndex)], model: IvfModel, details: ByteString, indexVersion: Int,
      moves: Option[RowMoves] = None, unmerged: Seq[IndexMetadata] = Nil, merge: Option[Int] = None)

  /**
   * Where a compaction moved rows: for each fragment it rewrote (`from`, by id), the new row address of each of its
   * physical rows (-1 for a deleted row); `written` are the fragments it wrote them to. An index update given the
   * moves carries the old segments' payloads of the moved rows under their new addresses instead of reading the
   * written fragments again, as upstream's remap of a vector index does.
   */
  final class RowMoves(from: Map[Long, Array[Long]], val written: Seq[Long]) {
    /** The new address of the row at old address `address`, or -1 (deleted, or not moved). */
    def to(address: Long): Long = from.get(address >>> 32) match {
      case Some(news) if (address & 0xFFFFFFFFL) < news.length => news((address & 0xFFFFFFFFL).toInt)
      case _ => -1L
    }
  }

  /**
   * The HNSW graph's build options: `m` links per node (2m on level 0), `ef_construction` candidates per insert,
   * `max_level` levels at most.
   */
  final case class Hnsw(m: Int, efConstruction: Int, maxLevel: Int)

  /**
   * The graph of partition `partition` of an IVF_HNSW_* build, from the rows the build's `runs` hold of it (in the
   * order the merge writes them, which numbers the graph's nodes), written to `path`, on `threads` threads.
   */
  final case class GraphTask(runs: Seq[String], partition: Int, model: IvfModel, hnsw: Hnsw, seed: Long, path: String,
      build: String, threads: Int)

  /**
   * Runs a graph task (anywhere): reads the partition's payloads, decodes them to the storage's vectors, builds the
   * graph with Lance's algorithm ([[HnswBuilder]], on the task's threads, see [[HnswBuilder.threads]]) and writes it
   * ([[HnswWriter.writeGraph]]); returns its path.
   */
  def runGraph(storage: Storage, task: GraphTask): String = {
    val allocator = new RootAllocator()
    try {
      val (rowIds, payload) = IvfWriter.readPartition(storage, task.runs, task.partition, task.model, allocator)
      val n = rowIds.length
      val builder = new HnswBuilder(HnswBuilder.vectors(task.model, payload, n), n, task.model.dim,
        HnswBuilder.space(task.model), task.hnsw.m, task.hnsw.efConstruction, task.hnsw.maxLevel, task.seed,
        HnswBuilder.threads(task.threads)).build()
      HnswWriter.writeGraph(storage, task.path, builder, task.hnsw.m, task.hnsw.efConstruction, task.hnsw.maxLevel,
        allocator)
    } finally allocator.close()
    task.path
  }

  /** Whether `kind` names a vector index type (built here, or refused as not supported yet), not a scalar one. */
  def isVector(kind: String): Boolean = {
    val k = kind.toUpperCase(Locale.ROOT)
    Types.contains(k) || NotYet.contains(k) || k.contains("HNSW")
  }

  /** Runs a graph task of [[VectorIndexBuild.graphTasks]] in the process of its build (local mode), on its storage. */
  def runGraphInThisProcess(task: GraphTask): String = {
    val build = Option(inThisProcess.get(task.build)).getOrElse(throw new IllegalStateException(
      s"The vector index build writing ${task.path} is not running in this process: run its graph tasks with VectorIndexBuild.runGraph."))
    runGraph(build.storage, task)
  }

  /**
   * The work on rows [from, to) of one fragment of build `build` (its uuid): where the version's files are, the
   * fragment and column, the trained model, and the run to write.
   */
  final case class Task(layout: TableLayout, manifestPath: String, fragment: Array[Byte], column: Array[Byte], from: Long,
      to: Long, rowIds: Boolean, model: IvfModel, runPath: String, build: String)

  private val inThisProcess = new java.util.concurrent.ConcurrentHashMap[String, VectorIndexBuild]()

  /** Runs a task of [[VectorIndexBuild.tasksInThisProcess]] in the process of its build, with the build's storage. */
  def runInThisProcess(task: Task): String = {
    val build = Option(inThisProcess.get(task.build)).getOrElse(throw new IllegalStateException(
      s"Vector index build ${task.build} is not running in this process (committed, aborted, or made elsewhere): run " +
        "its tasks with VectorIndexBuild.run."))
    run(build.storage, task)
  }

  /**
   * Runs a task (anywhere): the slice's live rows with a vector, each placed in its partition and encoded, written as
   * the task's run ([[IvfWriter.writeRun]]); returns the run's path.
   */
  def run(storage: Storage, task: Task): String = {
    val fragment = new Fragment(io.sparklance.proto.TableProtos.DataFragment.parseFrom(task.fragment))
    val model = task.model
    val dim = model.dim
    val allocator = new RootAllocator()
    try {
      IndexBuild.readIndexed(storage, task.layout, task.manifestPath, fragment, task.column, task.rowIds, task.from, task.to,
        allocator) { root =>
        val n = root.getRowCount
        val (vectors, valid) = floats(root.getVector(0), n, dim)
        // IVF_FLAT keeps float64 vectors in float64, and IVF_SQ codes them from their float64 values: read as doubles
        // too, not through their float32 values.
        val exact = if (model.indexType != "IVF_PQ" && model.element == VectorElement.FLOAT64) doubles(root.getVector(0), n, dim)
          else null
        val addresses = root.getVector(1).asInstanceOf[org.apache.arrow.vector.BigIntVector]
        val keptIds = new Array[Long](n)
        val partitions = new Array[Int](n)
        val payload = new Array[Byte](n * model.width)
        val scratch = new Array[Float](model.scratchSize)
        var kept = 0
        var i = 0
        while (i < n) {
          // Rows whose vector Lance leaves out of an index (NaN, infinite or null values; for cosine a zero
          // vector) are not indexed: a search never finds them, as it never finds them in pylance's indexes.
          if (valid(i) && IvfModel.finite(vectors, i * dim, dim) && model.prepare(vectors, i * dim)) {
            val p = model.partition(vectors, i * dim, scratch)
            keptIds(kept) = addresses.get(i)
            partitions(kept) = p
            if (exact != null && model.indexType == "IVF_FLAT") model.encodeFlat64(exact, i * dim, payload, kept * model.width)
            else if (exact != null) model.encodeSq64(exact, i * dim, payload, kept * model.width)
            else model.encode(vectors, i * dim, p, payload, kept * model.width, scratch)
            kept += 1
          }
          i += 1
        }
        IvfWriter.writeRun(storage, task.runPath, model, keptIds, partitions, payload, kept, allocator)
      }
    } finally allocator.close()
    task.runPath
  }

  /**
   * The `n` vectors of a fixed-size list column of float16, float32, float64 or uint8 values as one row-major array
   * of floats (float64 rounded to float32, uint8 as 0 to 255), and which rows have a vector: not null and without null
   * values (Lance counts a null value as not finite). The values are read by their bits from the data buffer, as
   * the Arrow of the Spark 3.x builds has no vector class for float16.
   */
  private def floats(v: FieldVector, n: Int, dim: Int): (Array[Float], Array[Boolean]) = {
    val list = v.asInstanceOf[FixedSizeListVector]
    val child = list.getDataVector
    val element = VectorElement.of(child.getField.getType)
    val out = new Array[Float](n * dim)
    val valid = new Array[Boolean](n)
    val buf = child.getDataBuffer
    val valuesMayBeNull = child.getNullCount > 0
    var i = 0
    while (i < n) {
      valid(i) = !list.isNull(i)
      if (valid(i)) {
        var d = 0
        while (d < dim) {
          val at = i.toLong * dim + d
          out(i * dim + d) = element match {
            case VectorElement.FLOAT32 => buf.getFloat(at * 4)
            case VectorElement.FLOAT64 => buf.getDouble(at * 8).toFloat
            case VectorElement.FLOAT16 => VectorElement.halfToFloat(buf.getShort(at * 2))
            case _ => (buf.getByte(at) & 0xFF).toFloat
          }
          if (valuesMayBeNull && child.isNull(i * dim + d)) valid(i) = false
          d += 1
        }
      }
      i += 1
    }
    (out, valid)
  }

  /** The `n` vectors of a fixed-size list of float64 column as one row-major array of doubles (nulls as stored). */
  private def doubles(v: FieldVector, n: Int, dim: Int): Array[Double] = {
    val buf = v.asInstanceOf[FixedSizeListVector].getDataVector.getDataBuffer
    val out = new Array[Double](n * dim)
    var i = 0
    while (i < out.length) { out(i) = buf.getDouble(i * 8L); i += 1 }
    out
  }

  /**
   * A random sample of at most `size` of the column's non-null vectors in live rows, in random order (every one
   * when the table has no more rows): rows drawn uniformly over the fragments' rows, read where they are. For a
   * float64 column also the smallest and largest float64 value of the sampled vectors whose values are finite (as
   * floats too), the bounds of an IVF_SQ quantizer.
   */
  private def sample(snapshot: Snapshot, column: LanceField, dim: Int, size: Int,
      seed: Long): (Array[Float], Int, Option[(Double, Double)]) = {
    val random = new java.util.Random(seed)
    val fragments = snapshot.fragments.filter(_.physicalRows > 0)
    val total = fragments.map(_.physicalRows).sum
    val chosen: Map[Long, Array[Long]] = if (fragments.map(_.numRows).sum <= size) Map.empty else {
      // Floyd's algorithm: `size` distinct positions among the physical rows of all fragments.
      val picked = new java.util.HashSet[Long]()
      var j = total - size
      while (j < total) {
        val t = (random.nextDouble() * (j + 1)).toLong
        if (!picked.add(t)) picked.add(j)
        j += 1
      }
      val sorted = picked.toArray.map(_.asInstanceOf[Long]).sorted
      val starts = fragments.scanLeft(0L)(_ + _.physicalRows)
      fragments.zipWithIndex.map { case (f, k) =>
        f.id -> sorted.filter(p => p >= starts(k) && p < starts(k + 1)).map(_ - starts(k))
      }.toMap
    }
    val out = scala.collection.mutable.ArrayBuffer.empty[Array[Float]]
    val float64 = LanceFileReader.readField(column).getChildren.get(0).getType == VectorElement.FLOAT64.arrowType()
    var lo = Double.PositiveInfinity
    var hi = Double.NegativeInfinity
    val allocator = new RootAllocator()
    try {
      fragments.foreach { f =>
        val reader = new FragmentReader(snapshot.storage, snapshot.layout, f, Seq(column), Nil, snapshot.deletionVector(f), None)
        try {
          def add(root: VectorSchemaRoot): Unit = try {
            val (v, valid) = floats(root.getVector(0), root.getRowCount, dim)
            val exact = if (float64) doubles(root.getVector(0), root.getRowCount, dim) else null
            var i = 0
            while (i < root.getRowCount) {
              if (valid(i)) {
                out += java.util.Arrays.copyOfRange(v, i * dim, (i + 1) * dim)
                if (float64 && IvfModel.finite(v, i * dim, dim)) {
                  var d = i * dim
                  while (d < (i + 1) * dim) { lo = math.min(lo, exact(d)); hi = math.max(hi, exact(d)); d += 1 }
                }
              }
              i += 1
            }
          } finally root.close()
          if (chosen.isEmpty) {
            (0L until f.physicalRows by SliceRows.toLong).foreach(from =>
              add(reader.read(from, math.min(f.physicalRows, from + SliceRows), allocator)))
          } else {
            val offsets = chosen.getOrElse(f.id, Array.emptyLongArray)
            if (offsets.nonEmpty) add(reader.readRows(offsets, allocator))
          }
        } finally reader.close()
      }
    } finally allocator.close()
    val rows = out.toArray
    // Random order, so that the IVF k-means' share (the first rows) is a random sample too.
    var i = rows.length - 1
    while (i > 0) {
      val j = random.nextInt(i + 1)
      val t = rows(i); rows(i) = rows(j); rows(j) = t
      i -= 1
    }
    val flat = new Array[Float](rows.length * dim)
    rows.indices.foreach(r => System.arraycopy(rows(r), 0, flat, r * dim, dim))
    (flat, rows.length, if (float64 && lo <= hi) Some((lo, hi)) else None)
  }

  /**
   * The index's `VectorIndexDetails` message (§3, package `lance.index.pb`): the metric (left out for l2), the
   * quantizer (`pq` {num_bits, num_sub_vectors}, `sq` {num_bits}, or `flat` {}), and the build parameters as
   * runtime hints, as pylance records them.
   */
  private[table] def details(params: IvfModel.Params, hnsw: Option[Hnsw] = None): ByteString = {
    def message(body: CodedOutputStream => Unit): ByteString = {
      val out = ByteString.newOutput()
      val c = CodedOutputStream.newInstance(out)
      body(c)
      c.flush()
      out.toByteString
    }
    val hints = Seq("lance.ivf.max_iters" -> params.maxIters.toString, "lance.ivf.sample_rate" -> params.sampleRate.toString) ++
      (params.indexType match {
        case "IVF_PQ" => Seq("lance.pq.max_iters" -> params.maxIters.toString, "lance.pq.sample_rate" -> params.sampleRate.toString,
          "lance.pq.kmeans_redos" -> "1")
        case "IVF_SQ" => Seq("lance.sq.sample_rate" -> params.sampleRate.toString)
        case _ => Nil
      }) ++ hnsw.map(_ => "lance.hnsw.prefetch_distance" -> "2")
    message { c =>
      params.distance match {
        case Distance.COSINE => c.writeEnum(1, 1)
        case Distance.DOT => c.writeEnum(1, 2)
        case Distance.HAMMING => c.writeEnum(1, 3)
        case _ =>
      }
      hnsw.foreach { h =>
        c.writeBytes(3, message { m =>
          m.writeUInt32(1, h.m); m.writeUInt32(2, h.efConstruction); m.writeUInt32(3, h.maxLevel)
        })
      }
      params.indexType match {
        case "IVF_PQ" => c.writeBytes(4, message { q => q.writeUInt32(1, params.numBits); q.writeUInt32(2, params.numSubVectors) })
        case "IVF_SQ" => c.writeBytes(5, message(_.writeUInt32(1, 8)))
        case _ => c.writeBytes(8, ByteString.EMPTY)
      }
      hints.foreach { case (k, v) => c.writeBytes(9, message { e => e.writeString(1, k); e.writeString(2, v) }) }
    }
  }

  private val Common = Set("num_partitions", "distance_type", "metric", "sample_rate", "max_iters")

  /** The options each type takes; any other is an error, never ignored. */
  private val Options: Map[String, Set[String]] = {
    val ivf = Map("IVF_FLAT" -> Common, "IVF_PQ" -> (Common ++ Set("num_sub_vectors", "num_bits")),
      "IVF_SQ" -> (Common + "num_bits"))
    ivf ++ ivf.map { case (t, o) => ("IVF_HNSW_" + t.stripPrefix("IVF_")) -> (o ++ Set("m", "ef_construction", "max_level")) }
  }

  private def positive(index: String, params: Map[String, String], key: String): Option[Int] = params.get(key).map { v =>
    scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(
      throw new InvalidArgumentException(s"Index option $key of $index must be a positive whole number, not '$v'."))
  }

  /** The index types whose segments an update extends ([[update]]). */
  private val Extended: Set[String] = Set("IVF_FLAT", "IVF_PQ", "IVF_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ", "IVF_HNSW_SQ")

  /**
   * The HNSW build options an IVF_HNSW_* index's `index_details` records (`VectorIndexDetails.hnsw`, field 3: m = 1,
   * ef_construction = 2, max_level = 3, as pylance and this builder write them), Lance's defaults where absent.
   */
  private def hnswOf(details: ByteString): Hnsw = {
    var h = Hnsw(20, 150, 7)
    val in = details.newCodedInput()
    var tag = in.readTag()
    while (tag != 0) {
      if (tag == ((3 << 3) | 2)) {
        val sub = in.readBytes().newCodedInput()
        var t = sub.readTag()
        while (t != 0) {
          t match {
            case 8 => h = h.copy(m = sub.readUInt32())
            case 16 => h = h.copy(efConstruction = sub.readUInt32())
            case 24 => h = h.copy(maxLevel = sub.readUInt32())
            case _ => sub.skipField(t)
          }
          t = sub.readTag()
        }
      } else in.skipField(tag)
      tag = in.readTag()
    }
    h
  }

  /**
   * The update of vector index `name` of `snapshot` (OPTIMIZE INDEX), checked before anything is written: its
   * segments must be of one type it extends (IVF_FLAT, IVF_PQ with 8-bit codes, IVF_SQ, their IVF_HNSW_* forms), over a
   * column of float16, float32, float64 or uint8 (hamming) vectors, and share one model, as the
   * segments pylance's `optimize_indices` adds do. `requested` options are refused: the model is kept.
   */
  private[table] def update(table: Table, snapshot: Snapshot, name: String, requested: Map[String, String],
      moves: Option[RowMoves] = None, merge: Option[Int] = None): VectorIndexBuild = {
    val root = snapshot.root
    io.sparklance.core.format.FeatureFlags.checkWritable(root, snapshot.version, snapshot.manifest.proto.getWriterFeatureFlags)
    val segments = snapshot.indexes.filter(_.name == name).sortBy(-_.datasetVersion)
    val newest = segments.headOption.getOrElse(throw new InvalidArgumentException(s"Table $root has no index named " +
      s"'$name'. Its indexes: ${if (snapshot.indexes.isEmpty) "none" else snapshot.indexes.map(_.name).distinct.mkString(", ")}."))
    def refuse(why: String) = new UnsupportedFeatureException(s"Cannot optimize vector index '$name' of $root: $why " +
      "Re-create it over every fragment with CREATE INDEX ... WITH (replace = true), or optimize it with pylance " +
      "(optimize_indices).")
    if (requested.nonEmpty) {
      throw new InvalidArgumentException(s"Cannot optimize vector index '$name' of $root with options " +
        s"${requested.keys.toSeq.sorted.mkString(", ")}: OPTIMIZE INDEX keeps its model (centroids and quantizer) and " +
        "takes no options of its own. Leave them out, or re-create it with CREATE INDEX ... WITH (replace = true, ...).")
    }
    val field = (newest.fieldIds match {
      case Seq(id) => snapshot.schema.field(id)
      case _ => None
    }).getOrElse(throw refuse("it does not index one column of the table."))
    val arrow = LanceFileReader.readField(field)
    val element = arrow.getType match {
      case _: ArrowType.FixedSizeList => Option(VectorElement.of(arrow.getChildren.get(0).getType))
      case _ => None
    }
    element match {
      case Some(VectorElement.FLOAT16) if !VectorIndexBuild.halfFloats =>
        throw new UnsupportedFeatureException(s"Cannot optimize vector index '$name' of $root: its column " +
          s"'${field.name}' holds float16 vectors, which this build of sparklance (for Spark 3.x, whose Arrow has no " +
          "float16 vectors) does not read. Optimize it on Spark 4, or with pylance (optimize_indices).")
      case Some(_) =>
      case None => throw refuse(s"its column '${field.name}' holds ${arrow.getType} values, not vectors of float16, " +
        "float32, float64 or uint8.")
    }
    val opened = segments.map { s =>
      val dir = snapshot.indexDir(s)
      val (indexType, distance) = IvfIndex.describe(snapshot.storage, dir)
      if (!Extended.contains(indexType) || (indexType.endsWith("_SQ") && distance != Distance.L2)) {
        throw refuse(s"it is $indexType for ${distance.lanceName()}, and sparklance extends ${Extended.toSeq.sorted.mkString(", ")} " +
          "indexes (IVF_SQ, IVF_HNSW_SQ for l2) only (not supported yet for the others).")
      }
      if (indexType != IvfIndex.describe(snapshot.storage, snapshot.indexDir(newest))._1) {
        throw refuse(s"its segments are of different types ($indexType and " +
          s"${IvfIndex.describe(snapshot.storage, snapshot.indexDir(newest))._1}), so their rows cannot share one segment.")
      }
      val ivf = try IvfIndex.open(snapshot.storage, dir) catch { case e: UnsupportedFeatureException => throw refuse(e.getMessage) }
      val model = try ivf.model catch { case e: UnsupportedFeatureException => throw refuse(e.getMessage) }
      if (model.element != element.get) {
        throw refuse(s"its segment ${s.uuid} stores ${model.element.name.toLowerCase(java.util.Locale.ROOT)} " +
          s"centroids for a column of ${element.get.name.toLowerCase(java.util.Locale.ROOT)} vectors.")
      }
      (s, ivf, model)
    }
    val model = opened.head._3
    opened.tail.foreach { case (s, _, other) =>
      if (other.indexType != model.indexType || other.distance != model.distance || other.dim != model.dim ||
          !java.util.Arrays.equals(other.centroids, model.centroids) || !java.util.Arrays.equals(other.codebook, model.codebook) ||
          other.sqStart != model.sqStart || other.sqEnd != model.sqEnd) {
        throw refuse(s"its segments ${newest.uuid} and ${s.uuid} were trained apart (other centroids or quantizer), so " +
          "their rows cannot share one segment (not supported yet).")
      }
    }
    val params = IvfModel.Params(model.indexType, model.distance, model.numPartitions, 256, 50, model.numSubVectors,
      model.element, model.numBits)
    val graphs = if (opened.head._2.isHnsw) Some(hnswOf(newest.proto.getIndexDetails.getValue)) else None
    val (merged, unmerged) = IndexSegments.pick(snapshot.indexes.filter(_.name == name), merge)
    new VectorIndexBuild(table, snapshot, name, field, model.dim, params, graphs, seed(),
      Some(Update(opened.filter(o => IndexSegments.contains(merged, o._1)).map(o => (o._1, o._2)), model,
        newest.proto.getIndexDetails.getValue, newest.indexVersion, moves, unmerged, merge)))
  }

  /**
   * Checks a new vector index's name, column, type and options against `snapshot` (before anything is written);
   * the build. `params` has lower-case keys.
   */
  private[table] def create(table: Table, snapshot: Snapshot, name: String, columnName: String, kind: String,
      params: Map[String, String], replace: Boolean): VectorIndexBuild = {
    val root = snapshot.root
    io.sparklance.core.format.FeatureFlags.checkWritable(root, snapshot.version, snapshot.manifest.proto.getWriterFeatureFlags)
    if (name.isEmpty || name.exists(c => c.isControl || c == '/')) {
      throw new InvalidArgumentException(s"'$name' is not a valid index name: use letters, digits and underscores.")
    }
    val indexType = kind.toUpperCase(Locale.ROOT)
    if (!Types.contains(indexType)) {
      throw new UnsupportedFeatureException(s"Cannot create index '$name' on $root: $indexType vector indexes are not " +
        s"supported yet; sparklance builds ${Types.mkString(", ")}. Build $indexType indexes with pylance " +
        "(create_index); sparklance keeps them.")
    }
    val field = snapshot.schema.field(columnName).getOrElse(throw new InvalidArgumentException(
      s"Cannot create index '$name' on $root: it has no column '$columnName' (its columns: " +
        s"${snapshot.schema.fields.map(_.name).mkString(", ")})."))
    val arrow = LanceFileReader.readField(field)
    val (dim, element) = arrow.getType match {
      case l: ArrowType.FixedSizeList if VectorElement.of(arrow.getChildren.get(0).getType) != null =>
        (l.getListSize, VectorElement.of(arrow.getChildren.get(0).getType))
      case other =>
        throw new InvalidArgumentException(s"Cannot create a $indexType index on column '$columnName' of $root: it is " +
          s"$other, not a vector column (a fixed-size list of float16, float32, float64, or uint8 for hamming).")
    }
    if (element == VectorElement.FLOAT16 && !VectorIndexBuild.halfFloats) {
      throw new UnsupportedFeatureException(s"Cannot create a $indexType index on column '$columnName' of $root: it " +
        "holds float16 vectors, which this build of sparklance (for Spark 3.x, whose Arrow has no float16 vectors) " +
        "cannot read (not supported on Spark 3.x). Build it with pylance, or on Spark 4.")
    }
    // IVF_HNSW_PQ is an IVF_PQ index with a graph per partition, and so on: the checks below are the quantizer's.
    val base = "IVF_" + indexType.stripPrefix("IVF_HNSW_").stripPrefix("IVF_")
    val known = Options(indexType)
    val unknown = params.keySet -- known
    if (unknown.nonEmpty) {
      throw new InvalidArgumentException(s"Unknown option${if (unknown.size > 1) "s" else ""} " +
        s"${unknown.toSeq.sorted.mkString(", ")} for an $indexType index; it takes: ${known.toSeq.sorted.mkString(", ")}.")
    }
    val distanceName = params.get("distance_type").orElse(params.get("metric")).getOrElse("l2").trim.toLowerCase(Locale.ROOT)
    val distance = distanceName match {
      case "l2" | "euclidean" => Distance.L2
      case "cosine" => Distance.COSINE
      case "dot" => Distance.DOT
      case "hamming" => Distance.HAMMING
      case other => throw new InvalidArgumentException(s"Index option distance_type of $indexType must be l2, cosine or " +
        s"dot (hamming for uint8 vectors), not '$other'.")
    }
    // Lance measures uint8 vectors by hamming only, and hamming measures uint8 vectors only.
    if (element == VectorElement.UINT8 && distance != Distance.HAMMING) {
      throw new InvalidArgumentException(s"Cannot create a $indexType index for distance_type $distanceName on column " +
        s"'$columnName': it holds uint8 vectors, which Lance indexes for distance_type 'hamming' only. Use " +
        "distance_type = 'hamming'.")
    }
    if (element != VectorElement.UINT8 && distance == Distance.HAMMING) {
      throw new InvalidArgumentException(s"Cannot create a $indexType index for distance_type hamming on column " +
        s"'$columnName': it holds ${element.name.toLowerCase(Locale.ROOT)} vectors, and 'hamming' measures vectors of " +
        "uint8. Use l2, cosine or dot.")
    }
    if (distance == Distance.HAMMING && base != "IVF_FLAT") {
      throw new UnsupportedFeatureException(s"Cannot create an $indexType index for distance_type hamming on column " +
        s"'$columnName': Lance builds hamming indexes as IVF_FLAT and IVF_HNSW_FLAT only (its PQ and SQ quantizers " +
        "take float vectors). Use ivf_flat or ivf_hnsw_flat.")
    }
    if (base == "IVF_SQ" && distance != Distance.L2) {
      throw new UnsupportedFeatureException(s"Cannot create an $indexType index for distance_type $distanceName on column " +
        s"'$columnName': sparklance builds $indexType indexes for l2 only (not supported yet for $distanceName). Use IVF_PQ " +
        "or IVF_FLAT, or build it with pylance.")
    }
    val numBits = params.get("num_bits").fold(8) { v =>
      val bits = scala.util.Try(v.trim.toInt).toOption
      if (base == "IVF_PQ" && !bits.contains(8) && !bits.contains(4)) {
        throw new InvalidArgumentException(s"Index option num_bits of $indexType must be 8 or 4, not '$v'.")
      }
      if (base != "IVF_PQ" && !bits.contains(8)) {
        throw new InvalidArgumentException(s"Index option num_bits of $indexType must be 8, not '$v'.")
      }
      bits.get
    }
    val rows = snapshot.fragments.map(_.numRows).sum
    // Lance's target partition sizes (§5): one partition per 1,048,576 rows for IVF_HNSW_*.
    val target = if (indexType.startsWith("IVF_HNSW_")) 1 << 20 else if (indexType == "IVF_FLAT") 4096 else 8192
    val partitions = positive(indexType, params, "num_partitions").getOrElse(math.max(1, math.min(4096, (rows / target).toInt)))
    if (partitions > rows) {
      throw new InvalidArgumentException(s"Cannot create an $indexType index on column '$columnName' with num_partitions " +
        s"= $partitions: the table has only $rows rows. Use num_partitions <= $rows.")
    }
    val subVectors = if (base != "IVF_PQ") 0 else {
      val m = positive(indexType, params, "num_sub_vectors").getOrElse(throw new InvalidArgumentException(
        s"Cannot create an $indexType index on column '$columnName': option num_sub_vectors is required (a divisor of the " +
          s"dimension $dim, e.g. ${(1 to dim).filter(dim % _ == 0).filter(_ <= 16).last})."))
      if (dim % m != 0) {
        throw new InvalidArgumentException(s"Cannot create an $indexType index on column '$columnName': num_sub_vectors = $m " +
          s"does not divide the dimension $dim of its vectors.")
      }
      // 4-bit codes are stored two a byte (§2.3), as pylance requires.
      if (numBits == 4 && m % 2 != 0) {
        throw new InvalidArgumentException(s"Cannot create an $indexType index with num_bits = 4 on column '$columnName': " +
          s"num_sub_vectors = $m is odd, and 4-bit codes are stored two a byte. Use an even num_sub_vectors.")
      }
      m
    }
    val sampleRate = positive(indexType, params, "sample_rate").getOrElse(256)
    val maxIters = positive(indexType, params, "max_iters").getOrElse(50)
    if (!replace && snapshot.indexes.exists(_.name == name)) {
      throw new InvalidArgumentException(s"Table $root already has an index named '$name'. Drop it first " +
        "(DROP INDEX), or create it with replace = true.")
    }
    // HNSW's defaults (`HnswBuildParams::default`, §5): m = 20, ef_construction = 150, max_level = 7.
    val hnsw = if (base == indexType) None else Some(Hnsw(positive(indexType, params, "m").getOrElse(20),
      positive(indexType, params, "ef_construction").getOrElse(150), positive(indexType, params, "max_level").getOrElse(7)))
    hnsw.foreach { h =>
      if (h.m < 2) throw new InvalidArgumentException(s"Index option m of $indexType must be at least 2, not ${h.m}.")
      if (h.maxLevel > 16) {
        throw new InvalidArgumentException(s"Index option max_level of $indexType must be at most 16, not ${h.maxLevel}.")
      }
    }
    val p = IvfModel.Params(base, distance, partitions, sampleRate, maxIters, subVectors, element, numBits)
    new VectorIndexBuild(table, snapshot, name, field, dim, p, hnsw, seed())
  }
}
