package io.sparklance.core.table

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.FixedSizeListVector
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.index.{Distance, IvfModel, KMeans}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.InMemoryStorage

/**
 * Vector index builds end to end over an in-memory table of seeded clustered vectors in several fragments: the index
 * written ([[VectorIndexBuild]]) is read back by the index search ([[VectorIndexUse]]) and must hold every row once,
 * in the partition of its nearest centroid, with the payload the trained model gives it (IVF_FLAT: the vector;
 * IVF_PQ: the codes whose distance the search reports; IVF_SQ: the codes). pylance's reading of these files is
 * tested in tests/test_vector_index_build.py.
 */
class VectorIndexBuildSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private def schema(dim: Int) = ArrowSchemas.fromArrow(new Schema(java.util.List.of(
    Field.nullable("id", new ArrowType.Int(64, true)),
    new Field("emb", FieldType.nullable(new ArrowType.FixedSizeList(dim)),
      java.util.Collections.singletonList(Field.notNullable("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))))))

  private def batch(vectors: Seq[Array[Float]], first: Long, dim: Int): VectorSchemaRoot = {
    val id = new BigIntVector("id", allocator)
    id.allocateNew(vectors.size)
    val emb = FixedSizeListVector.empty("emb", dim, allocator)
    emb.addOrGetVector[Float4Vector](FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))
    val child = emb.getDataVector.asInstanceOf[Float4Vector]
    child.allocateNew(vectors.size * dim)
    vectors.zipWithIndex.foreach { case (v, i) =>
      id.set(i, first + i)
      emb.setNotNull(i)
      v.indices.foreach(d => child.set(i * dim + d, v(d)))
    }
    child.setValueCount(vectors.size * dim)
    Seq[FieldVector](id, emb).foreach(_.setValueCount(vectors.size))
    new VectorSchemaRoot(java.util.List.of[FieldVector](id, emb))
  }

  /** A table of `fragments` fragments of clustered vectors; the vectors by row address. */
  private def table(r: Random, dim: Int, fragments: Int, rows: Int): (Table, Map[Long, Array[Float]]) = {
    val storage = new InMemoryStorage
    val t = Table.open(storage, CommitHandler.forStorage(storage), "mem://v.lance")
    val centres = Array.fill(12, dim)(r.nextGaussian().toFloat * 4)
    val all = (0 until fragments).map(f => append(t, r, centres, f, rows)).reduce(_ ++ _)
    (t, all)
  }

  /** Appends fragment `f` of `rows` vectors near `centres` (the first creates the table); its vectors by row address. */
  private def append(t: Table, r: Random, centres: Array[Array[Float]], f: Int, rows: Int): Map[Long, Array[Float]] = {
    val dim = centres.head.length
    val vectors = Seq.fill(rows)(centres(r.nextInt(centres.length)).map(_ + r.nextGaussian().toFloat))
    val w = t.newDataWriter(schema(dim), FileVersion.V2_2, rows, 1L << 20)
    val written = try {
      val b = batch(vectors, f.toLong * rows, dim)
      try w.write(b) finally b.close()
      w.finish()
    } finally w.close()
    if (f == 0) t.newOverwrite(0, schema(dim), FileVersion.V2_2, Map.empty).commit(Seq(written))
    else t.newAppend(t.latestVersion()).commit(Seq(written))
    vectors.zipWithIndex.map { case (v, i) => ((f.toLong << 32) | i) -> v }.toMap
  }

  private def use(t: Table, distance: Distance): VectorIndexUse =
    VectorIndexUse.plan(t.latest(), "emb", distance).fold(e => fail(e), identity)

  test("k-means ends at a fixed point (each centroid the mean of its nearest vectors), and spherical k-means keeps unit-length centroids") {
    val r = new Random(11)
    for (trial <- 0 until 10) {
      val dim = 2 + r.nextInt(12)
      val k = 1 + r.nextInt(6)
      val centres = Array.fill(k + 2, dim)(r.nextGaussian().toFloat * 50)
      val n = k * (20 + r.nextInt(50))
      val data = Array.tabulate(n)(i => centres(i % centres.length).map(_ + r.nextGaussian().toFloat * 0.1f)).flatten
      val model = KMeans.train(data, n, dim, k, 100, false, trial)
      val nearest = (0 until n).map(i => KMeans.nearest(data, i * dim, model.centroids, k, dim))
      var loss = 0.0
      (0 until k).foreach { c =>
        val members = (0 until n).filter(nearest(_) == c)
        assert(members.nonEmpty, s"trial $trial: centroid $c has no vectors")
        (0 until dim).foreach { d =>
          val mean = members.map(i => data(i * dim + d).toDouble).sum / members.size
          assert(math.abs(mean - model.centroids(c * dim + d)) < 0.1, s"trial $trial: centroid $c is not its vectors' mean")
        }
        loss += members.map(i => KMeans.squaredL2(data, i * dim, model.centroids, c * dim, dim).toDouble).sum
      }
      assert(math.abs(loss - model.loss) <= 1e-3 * loss + 1e-3, s"trial $trial: loss ${model.loss}, measured $loss")
      val spherical = KMeans.train(data, n, dim, k, 50, true, trial)
      (0 until k).foreach { j =>
        val norm = math.sqrt((0 until dim).map(d => spherical.centroids(j * dim + d).toDouble * spherical.centroids(j * dim + d)).sum)
        assert(math.abs(norm - 1) < 1e-5, s"trial $trial: centroid $j has norm $norm")
      }
    }
  }

  test("k-means on as many well-separated clusters as centroids gives each cluster its own centroid (k-means++ seeds)") {
    val r = new Random(20261128)
    for (trial <- 0 until 10) {
      val dim = 2 + r.nextInt(30)
      val k = 8 + r.nextInt(40)
      val centres = Array.fill(k, dim)(r.nextGaussian().toFloat * 20)
      val n = k * (30 + r.nextInt(30))
      val cluster = Array.tabulate(n)(i => if (i < k) i else r.nextInt(k))
      val data = Array.tabulate(n)(i => centres(cluster(i)).map(_ + r.nextGaussian().toFloat * 0.05f)).flatten
      val model = KMeans.train(data, n, dim, k, 50, false, trial)
      val owner = (0 until n).map(i => KMeans.nearest(data, i * dim, model.centroids, k, dim))
      val byCluster = (0 until n).groupBy(cluster).map { case (c, rows) => c -> rows.map(owner).toSet }
      assert(byCluster.values.forall(_.size == 1), s"trial $trial: a cluster is split over centroids")
      assert(byCluster.values.flatten.toSet.size == k, s"trial $trial: a centroid holds two clusters")
    }
  }

  test("IVF_FLAT probed in every partition finds what an exact search finds, for l2, cosine and dot") {
    val r = new Random(20261126)
    for (distance <- Seq(Distance.L2, Distance.COSINE, Distance.DOT)) {
      val dim = 4 + r.nextInt(20)
      val (t, vectors) = table(r, dim, 3, 150 + r.nextInt(100))
      val partitions = 2 + r.nextInt(8)
      t.newVectorIndex(t.latest(), "emb_idx", "emb", "ivf_flat",
        Map("num_partitions" -> partitions.toString, "distance_type" -> distance.lanceName()), replace = false).runAndCommit()
      val index = use(t, distance)
      assert(index.numPartitions == partitions)
      for (_ <- 0 until 5) {
        val q = Array.fill(dim)(r.nextGaussian() * 4)
        val k = 1 + r.nextInt(20)
        val found = index.search(Seq(q), k, partitions, None).head
        val exact = vectors.toSeq.map { case (id, v) => (distance.between(q, v, 0).toFloat, id) }.sorted.take(k)
        assert(found.rowIds.toSeq == exact.map(_._2), s"$distance: rows")
        found.distances.zip(exact.map(_._1)).foreach { case (a, b) =>
          assert(math.abs(a - b) <= 1e-4 * math.max(1.0, math.abs(b)), s"$distance: distance $a, exact $b")
        }
      }
    }
  }

  test("IVF_PQ and IVF_SQ hold every row once, in its nearest partition, coded as the trained model codes it") {
    val r = new Random(7)
    for ((kind, distance) <- Seq("ivf_pq" -> Distance.L2, "ivf_pq" -> Distance.COSINE, "ivf_pq" -> Distance.DOT,
        "ivf_sq" -> Distance.L2)) {
      val m = Seq(2, 4)(r.nextInt(2))
      val dim = m * (2 + r.nextInt(4))
      val (t, vectors) = table(r, dim, 2 + r.nextInt(2), 200 + r.nextInt(100))
      val partitions = 2 + r.nextInt(6)
      val options = Map("num_partitions" -> partitions.toString, "distance_type" -> distance.lanceName()) ++
        (if (kind == "ivf_pq") Map("num_sub_vectors" -> m.toString) else Map.empty)
      val build = t.newVectorIndex(t.latest(), "emb_idx", "emb", kind, options, replace = false)
      val model = build.trained
      build.runAndCommit()
      val index = use(t, distance)
      for (_ <- 0 until 4) {
        val q = Array.fill(dim)(r.nextGaussian() * 4)
        // Every partition, every row: each row once, at the distance its codes give.
        val all = index.search(Seq(q), vectors.size, partitions, None).head
        assert(all.rowIds.sorted.toSeq == vectors.keys.toSeq.sorted, s"$kind $distance: rows held")
        val qf = io.sparklance.core.index.IvfIndex.preprocess(q, distance)
        all.rowIds.zip(all.distances).foreach { case (id, d) =>
          val v = vectors(id).clone()
          model.prepare(v, 0)
          val scratch = new Array[Float](model.scratchSize)
          val p = model.partition(v, 0, scratch)
          val codes = new Array[Byte](model.width)
          model.encode(v, 0, p, codes, 0, scratch)
          val expected = if (kind == "ivf_sq") {
            val scale = (model.sqEnd - model.sqStart) * (model.sqEnd - model.sqStart) / (255.0 * 255.0)
            (0 until dim).map { j =>
              val c = (codes(j) & 0xFF) - IvfModel.sqCode(qf(j), model.sqStart, model.sqEnd)
              c * c * scale
            }.sum
          } else {
            val sub = dim / m
            val s = (0 until m).map { j =>
              (0 until sub).map { e =>
                val w = model.codebook((j * IvfModel.Codewords + (codes(j) & 0xFF)) * sub + e)
                if (distance == Distance.DOT) qf(j * sub + e).toDouble * w
                else { val x = qf(j * sub + e) - model.centroids(p * dim + j * sub + e) - w; x.toDouble * x }
              }.sum
            }.sum
            if (distance == Distance.DOT) 1 - s else s
          }
          assert(math.abs(d - expected) <= 1e-3 * math.max(1.0, math.abs(expected)), s"$kind $distance row $id: $d, codes give $expected")
        }
        // A row's own vector probes its partition first: one probe finds it.
        val (id, v) = vectors.toSeq(r.nextInt(vectors.size))
        assert(index.search(Seq(v.map(_.toDouble)), vectors.size, 1, None).head.rowIds.contains(id), s"$kind $distance: row $id")
      }
    }
  }

  test("OPTIMIZE INDEX of a vector index: appended rows placed and encoded with the old model, old rows' codes kept, " +
      "deleted rows left out, one segment over every fragment; up to date, it commits nothing") {
    val r = new Random(11)
    for ((kind, distance) <- Seq("ivf_flat" -> Distance.L2, "ivf_flat" -> Distance.COSINE, "ivf_pq" -> Distance.L2,
        "ivf_pq" -> Distance.DOT, "ivf_sq" -> Distance.L2)) {
      val dim = 4 * (2 + r.nextInt(3))
      val rows = 300 + r.nextInt(100)
      val (t, before) = table(r, dim, 2, rows)
      val partitions = 2 + r.nextInt(4)
      val options = Map("num_partitions" -> partitions.toString, "distance_type" -> distance.lanceName()) ++
        (if (kind == "ivf_pq") Map("num_sub_vectors" -> "4") else Map.empty)
      val build = t.newVectorIndex(t.latest(), "emb_idx", "emb", kind, options, replace = false)
      val model = build.trained
      val old = build.runAndCommit()
      val queries = Seq.fill(3)(Array.fill(dim)(r.nextGaussian() * 4))
      val oldDistances = queries.map { q =>
        val f = use(t, distance).search(Seq(q), before.size, partitions, None).head
        f.rowIds.zip(f.distances).toMap
      }
      val centres = Array.fill(6, dim)(r.nextGaussian().toFloat * 4)
      val added = append(t, r, centres, 2, 50 + r.nextInt(100)) ++ append(t, r, centres, 3, 50 + r.nextInt(100))
      val doomed = new DeletedRows
      val gone = r.shuffle((before ++ added).keys.toSeq).take(40)
      gone.foreach(doomed.add)
      t.newDelete(t.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
      val live = (before ++ added) -- gone

      val update = t.newVectorIndexUpdate(t.latest(), "emb_idx")
      assert(update.tasks.map(task => new io.sparklance.core.format.Fragment(
        io.sparklance.proto.TableProtos.DataFragment.parseFrom(task.fragment)).id).distinct == Seq(2L, 3L), "reads only the appended fragments")
      val made = update.runAndCommit()
      val snapshot = t.latest()
      assert(snapshot.indexes.map(_.uuid) == Seq(made.uuid) && made.uuid != old.uuid)
      assert(made.fragmentBitmap.toArray.toSeq == Seq(0, 1, 2, 3))
      val index = use(t, distance)
      assert(index.unindexedFragments.isEmpty)
      queries.zip(oldDistances).foreach { case (q, was) =>
        val all = index.search(Seq(q), live.size + 10, partitions, None).head
        assert(all.rowIds.sorted.toSeq == live.keys.toSeq.sorted, s"$kind $distance: each live row once, no deleted row")
        val qf = io.sparklance.core.index.IvfIndex.preprocess(q, distance)
        all.rowIds.zip(all.distances).foreach { case (id, d) =>
          if (before.contains(id)) assert(d == was(id), s"$kind $distance: old row $id keeps its codes")
          else if (kind == "ivf_flat") {
            val v = added(id).clone()
            model.prepare(v, 0)
            assert(math.abs(d - distance.between(qf.map(_.toDouble), v, 0)) <= 1e-4 * math.max(1.0, math.abs(d)),
              s"$kind $distance: new row $id")
          }
        }
      }
      // Each new row is in the partition the old model places it in: one probe with its own vector finds it.
      added.keys.filter(live.contains).take(10).foreach { id =>
        val v = added(id).clone()
        model.prepare(v, 0)
        val p = model.partition(v, 0, new Array[Float](model.scratchSize))
        val found = index.search(Seq(added(id).map(_.toDouble)), live.size, 1, None).head.rowIds
        assert(found.contains(id), s"$kind $distance: new row $id in partition $p")
      }
      val version = t.latestVersion()
      assert(t.newVectorIndexUpdate(t.latest(), "emb_idx").runAndCommit().uuid == made.uuid)
      assert(t.latestVersion() == version, "an index up to date commits nothing")
    }
  }

  test("OPTIMIZE INDEX of IVF_HNSW_* rebuilds each partition's graph over its old and appended rows; options are refused") {
    val r = new Random(5)
    val (t, old) = table(r, 8, 2, 200)
    t.newVectorIndex(t.latest(), "emb_idx", "emb", "ivf_hnsw_flat", Map("num_partitions" -> "2", "m" -> "4"),
      replace = false).runAndCommit()
    val appended = append(t, r, Array.fill(3, 8)(r.nextGaussian().toFloat), 2, 50)
    val made = t.newVectorIndexUpdate(t.latest(), "emb_idx").runAndCommit()
    val index = use(t, Distance.L2)
    assert(index.isHnsw && index.unindexedFragments.isEmpty && index.index.uuid == made.uuid)
    assert(!t.storage.list(t.latest().indexDir(made)).exists(_.path.contains("run-")), "runs left behind")
    val vectors = old ++ appended
    for (_ <- 0 until 5) {
      val q = Array.fill(8)(r.nextGaussian() * 2)
      val k = 1 + r.nextInt(20)
      // A beam as wide as the table reaches every node of a graph: the index's rows are then the exact nearest.
      val found = index.search(Seq(q), k, 2, None, Some(vectors.size)).head
      val exact = vectors.toSeq.map { case (id, v) => (Distance.L2.between(q, v, 0).toFloat, id) }.sorted.take(k)
      assert(found.rowIds.toSeq == exact.map(_._2))
    }
    val version = t.latestVersion()
    t.newVectorIndex(t.latest(), "emb_idx", "emb", "ivf_flat", Map("num_partitions" -> "2"), replace = true).runAndCommit()
    val o = intercept[InvalidArgumentException](t.newVectorIndexUpdate(t.latest(), "emb_idx", Map("num_partitions" -> "4")))
    assert(o.getMessage.contains("with options num_partitions") && o.getMessage.contains("takes no options"), o.getMessage)
    assert(intercept[InvalidArgumentException](t.newVectorIndexUpdate(t.latest(), "nope")).getMessage.contains("no index named 'nope'"))
    assert(t.latestVersion() == version + 1)
  }

  test("a compaction moves a vector index's rows to their new addresses with their old codes, for every index type") {
    val r = new Random(21)
    for (kind <- Seq("ivf_flat", "ivf_pq", "ivf_sq", "ivf_hnsw_sq")) {
      val dim = 8
      val rows = 200 + r.nextInt(100)
      val (t, before) = table(r, dim, 3, rows)
      val options = Map("num_partitions" -> "3") ++ (if (kind == "ivf_pq") Map("num_sub_vectors" -> "4") else Map.empty)
      t.newVectorIndex(t.latest(), "emb_idx", "emb", kind, options, replace = false).runAndCommit()
      val doomed = new DeletedRows
      val gone = r.shuffle(before.keys.toSeq).take(30)
      gone.foreach(doomed.add)
      t.newDelete(t.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
      def ids(): Map[Long, Long] = ScanRows(t, t.latest().newScan(), 1000, allocator) { (root, i) =>
        root.getVector("id").asInstanceOf[BigIntVector].get(i)
      }.toMap
      val q = Array.fill(dim)(r.nextGaussian() * 4)
      // A beam as wide as the table reaches every node of a graph.
      def distances(): Map[Long, Float] = {
        val byAddress = ids()
        val f = use(t, Distance.L2).search(Seq(q), before.size, 3, None, Some(before.size)).head
        f.rowIds.zip(f.distances).map { case (a, d) => byAddress(a) -> d }.toMap
      }
      val was = distances()
      val storage = t.storage.asInstanceOf[InMemoryStorage]
      storage.opened.clear()
      // 2 × rows + 13 leaves the third fragment in a group of its own, rewritten for its deletions (any share).
      val result = t.compact(Compaction.Options(
        targetRowsPerFragment = if (kind.endsWith("pq") || kind.endsWith("flat")) 10 * rows else 2 * rows + 13,
        deletedFraction = 0.0))
      assert(result.indexesRemapped == Seq("emb_idx"), s"$kind $result")
      val index = use(t, Distance.L2)
      assert(index.unindexedFragments.isEmpty && t.latest().fragments.forall(_.deletionFile.isEmpty), kind)
      val written = t.latest().fragments.flatMap(_.proto.getFilesList.asScala.map(_.getPath))
      assert(written.nonEmpty && !storage.opened.asScala.exists(p => written.exists(p.endsWith)),
        s"$kind: the compaction read the files it wrote (${storage.opened.asScala.filter(p => written.exists(p.endsWith))})")
      val now = distances()
      assert(now.size == before.size - gone.size, s"$kind: each live row once")
      assert(now == was, s"$kind: every row keeps its codes under its new address")
    }
  }

  test("IVF_HNSW_* graph tasks share the cores they are given: fewer graphs than cores take several threads each") {
    val (t, _) = table(new Random(6), 8, 1, 100)
    def threads(partitions: Int, cores: Int, perTask: Int): Seq[Int] = {
      val build = t.newVectorIndex(t.latest(), "emb_idx", "emb", "ivf_hnsw_sq", Map("num_partitions" -> partitions.toString),
        replace = true)
      try build.graphTasks(Nil, cores, perTask).map(_.threads) finally build.abort()
    }
    assert(threads(1, 2, 1) == Seq(2))
    assert(threads(4, 2, 1) == Seq.fill(4)(1))
    assert(threads(2, 8, 1) == Seq(4, 4))
    assert(threads(3, 8, 1) == Seq(2, 2, 2))
    assert(threads(4, 2, 3) == Seq.fill(4)(3), "spark.task.cpus is a floor")
    val flat = t.newVectorIndex(t.latest(), "flat", "emb", "ivf_flat", Map("num_partitions" -> "1"), replace = false)
    try assert(flat.graphTasks(Nil, 8, 1).isEmpty) finally flat.abort()
  }

  test("bad options are refused before anything is written") {
    val (t, _) = table(new Random(3), 12, 2, 100)
    def refused[E <: Exception](kind: String, options: Map[String, String], column: String = "emb")(implicit
        c: scala.reflect.ClassTag[E]): String =
      intercept[E](t.newVectorIndex(t.latest(), "v", column, kind, options, replace = false)).getMessage
    assert(refused[InvalidArgumentException]("ivf_flat", Map.empty, "id").contains("column 'id'"))
    assert(refused[InvalidArgumentException]("ivf_pq", Map("num_sub_vectors" -> "5")).contains(
      "num_sub_vectors = 5 does not divide the dimension 12"))
    assert(refused[InvalidArgumentException]("ivf_flat", Map("num_partitions" -> "201")).contains(
      "num_partitions = 201: the table has only 200 rows"))
    assert(refused[InvalidArgumentException]("ivf_sq", Map("num_sub_vectors" -> "2")).contains(
      "Unknown option num_sub_vectors for an IVF_SQ index"))
    assert(refused[UnsupportedFeatureException]("ivf_rq", Map.empty).contains("IVF_RQ vector indexes are not supported yet"))
    assert(refused[InvalidArgumentException]("ivf_hnsw_sq", Map("m" -> "0")).contains(
      "Index option m of IVF_HNSW_SQ must be a positive whole number, not '0'"))
    assert(refused[InvalidArgumentException]("ivf_hnsw_flat", Map("ef_construction" -> "lots")).contains(
      "Index option ef_construction of IVF_HNSW_FLAT must be a positive whole number, not 'lots'"))
    assert(refused[InvalidArgumentException]("ivf_hnsw_pq", Map("num_sub_vectors" -> "4", "nprobes" -> "2")).contains(
      "Unknown option nprobes for an IVF_HNSW_PQ index"))
    assert(refused[InvalidArgumentException]("ivf_pq", Map("num_sub_vectors" -> "1", "num_bits" -> "4")).contains(
      "num_sub_vectors = 1 is odd, and 4-bit codes are stored two a byte"))
    assert(refused[InvalidArgumentException]("ivf_hnsw_pq", Map("num_sub_vectors" -> "4", "num_bits" -> "5")).contains(
      "Index option num_bits of IVF_HNSW_PQ must be 8 or 4, not '5'"))
    assert(refused[InvalidArgumentException]("ivf_flat", Map("distance_type" -> "hamming")).contains(
      "it holds float32 vectors, and 'hamming' measures vectors of uint8"))
    assert(t.latest().indexes.isEmpty)
  }

  test("training leaves out the sampled vectors Lance does not index: a sample with NaN, infinite (cosine: zero) " +
      "vectors trains the model of the sample without them") {
    val r = new Random(20261126)
    Seq(("ivf_pq", Distance.L2), ("ivf_sq", Distance.L2), ("ivf_flat", Distance.COSINE), ("ivf_pq", Distance.DOT)).foreach {
      case (kind, distance) =>
        val dim = 8
        val good = Array.fill(600 * dim)((r.nextGaussian() * 3).toFloat)
        val bad = Seq[Int => Array[Float]](
          _ => Array.fill(dim)(1f).updated(r.nextInt(dim), Float.NaN),
          _ => Array.fill(dim)(1f).updated(r.nextInt(dim), Float.PositiveInfinity),
          _ => Array.fill(dim)(-1f).updated(r.nextInt(dim), Float.NegativeInfinity)) ++
          (if (distance == Distance.COSINE) Seq[Int => Array[Float]](_ => Array.fill(dim)(0f)) else Nil)
        // The good vectors in order, with bad ones between them.
        val mixed = scala.collection.mutable.ArrayBuffer.empty[Float]
        (0 until 600).foreach { i =>
          if (r.nextInt(5) == 0) mixed ++= bad(r.nextInt(bad.size))(i)
          mixed ++= good.slice(i * dim, (i + 1) * dim)
        }
        val params = IvfModel.Params(kind.toUpperCase, distance, 4, 256, 10, 2)
        val withBad = IvfModel.train("emb", params, dim, mixed.toArray, mixed.size / dim, 7L)
        val without = IvfModel.train("emb", params, dim, good.clone(), 600, 7L)
        assert(withBad.centroids.forall(java.lang.Float.isFinite), s"$kind $distance")
        assert(withBad.centroids.toSeq == without.centroids.toSeq, s"$kind $distance centroids")
        assert(withBad.codebook.toSeq == without.codebook.toSeq, s"$kind $distance codebook")
        assert((withBad.sqStart, withBad.sqEnd) == ((without.sqStart, without.sqEnd)), s"$kind $distance bounds")
    }
  }
}
