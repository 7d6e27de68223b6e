package io.sparklance.core.index

import io.sparklance.core.InvalidArgumentException

/**
 * What an IVF index build learns from a sample of the vectors before it places any row
 * (docs/dev/vector-index-format.md §5): the partitions' centroids and the quantizer's parameters (the PQ codebook,
 * the SQ bounds). Plain data, sent with every task of the build; [[prepare]] and [[encode]] are the per-row work.
 *
 * @param indexType     `IVF_FLAT`, `IVF_PQ` or `IVF_SQ`
 * @param centroids     `[partitions][dim]`, row-major
 * @param loss          the k-means loss of the centroids, recorded in `index.idx`
 * @param numSubVectors PQ sub-vectors (0 for the other types)
 * @param codebook      PQ codewords, `[numSubVectors][2^numBits][dim / numSubVectors]` (§2.3); empty for the other types
 * @param sqStart       SQ bounds (§2.4); unused for the other types
 * @param element       the column's element type, in which the centroids, codebook and IVF_FLAT's vectors are stored
 *                      (their float values here are already rounded to it); uint8 for hamming
 * @param stored        the centroids and codebook tensors of the segment this model was read from, written as they
 *                      are when the segment is extended (float64 ones are rounded in `centroids` and `codebook`);
 *                      None for a model trained here
 * @param numBits       bits of each PQ code: 8, or 4 (two codes a byte, §2.3)
 */
final case class IvfModel(indexType: String, distance: Distance, dim: Int, centroids: Array[Float], loss: Double,
    numSubVectors: Int, codebook: Array[Float], sqStart: Double, sqEnd: Double,
    element: VectorElement = VectorElement.FLOAT32, stored: Option[IvfIndex.Tensors] = None, numBits: Int = 8) {

  def numPartitions: Int = centroids.length / dim

  /** Bytes each row's payload takes in `auxiliary.idx`: its vector (in the element type), its PQ codes or its SQ codes. */
  def width: Int = indexType match {
    case "IVF_FLAT" => dim * element.bytes
    case "IVF_PQ" => numSubVectors * numBits / 8
    case _ => dim
  }

  /**
   * Normalizes the vector at `from` of `v` in place for cosine (as the search normalizes its query, §4 step 1), and
   * says whether it is indexed: Lance keeps only vectors all of whose values are finite once prepared, so a zero
   * vector under cosine (which has no direction: Lance's normalization makes it NaN) is left out, as are vectors
   * holding NaN or infinities (left out before, by [[IvfModel.finite]]).
   */
  def prepare(v: Array[Float], from: Int): Boolean =
    distance != Distance.COSINE || IvfModel.normalize(v, from, dim)

  /** Codewords per PQ sub-vector: `2^numBits`. */
  def codewords: Int = 1 << numBits

  @transient private lazy val centroidTable: CentroidTable = CentroidTable.of(centroids, 0, numPartitions, dim)

  @transient private lazy val codewordTables: Array[CentroidTable] =
    Array.tabulate(numSubVectors)(j => CentroidTable.of(codebook, j * codewords * (dim / numSubVectors),
      codewords, dim / numSubVectors))

  /** Floats of the `scratch` that [[partition]] and [[encode]] take. */
  def scratchSize: Int = dim + math.max(numPartitions, IvfModel.Codewords)

  /**
   * The partition of a prepared vector: its nearest centroid as the search probes them (§4 step 2: by squared L2,
   * for dot by the largest dot product), measured through the centroids' lengths. `scratch` holds [[scratchSize]]
   * floats.
   */
  def partition(v: Array[Float], from: Int, scratch: Array[Float]): Int =
    if (distance == Distance.DOT) centroidTable.nearestDot(v, from, scratch, 0)
    else if (distance == Distance.HAMMING) IvfModel.nearestHamming(v, from, centroids, numPartitions, dim)
    else centroidTable.nearestL2(v, from, scratch, 0)

  /**
   * Writes the payload of the prepared vector at `from` of `v`, in partition `p`, to `out` at `at` (`width` bytes):
   * the vector's values in the element type (little-endian), the nearest codeword of each sub-vector of its residual to the centroid (of
   * the vector itself for dot; 4-bit codes two a byte, sub-vector `2b` in the low nibble of byte `b`, `2b + 1` in its
   * high one, as pylance packs them), or each value's 8-bit code over the bounds. `scratch` holds [[scratchSize]] floats.
   */
  def encode(v: Array[Float], from: Int, p: Int, out: Array[Byte], at: Int, scratch: Array[Float]): Unit = indexType match {
    case "IVF_FLAT" =>
      var d = 0
      while (d < dim) { element.put(v(from + d), out, at + d * element.bytes); d += 1 }
    case "IVF_PQ" =>
      var d = 0
      while (d < dim) {
        scratch(d) = if (distance == Distance.DOT) v(from + d) else v(from + d) - centroids(p * dim + d)
        d += 1
      }
      val subDim = dim / numSubVectors
      var j = 0
      if (numBits == 8) {
        while (j < numSubVectors) {
          out(at + j) = codewordTables(j).nearestL2(scratch, j * subDim, scratch, dim).toByte
          j += 1
        }
      } else {
        while (j < numSubVectors) {
          val low = codewordTables(j).nearestL2(scratch, j * subDim, scratch, dim)
          val high = codewordTables(j + 1).nearestL2(scratch, (j + 1) * subDim, scratch, dim)
          out(at + j / 2) = (low | (high << 4)).toByte
          j += 2
        }
      }
    case _ =>
      var d = 0
      while (d < dim) { out(at + d) = IvfModel.sqCode(v(from + d), sqStart, sqEnd).toByte; d += 1 }
  }

  /**
   * IVF_SQ's payload of a float64 vector: each value's 8-bit code over the bounds, computed from the float64 value (as
   * pylance codes float64 vectors; through its float32 value a code could differ at a code's edge), written to `out`
   * at `at`.
   */
  def encodeSq64(v: Array[Double], from: Int, out: Array[Byte], at: Int): Unit = {
    var d = 0
    while (d < dim) { out(at + d) = IvfModel.sqCode(v(from + d), sqStart, sqEnd).toByte; d += 1 }
  }

  /**
   * IVF_FLAT's payload of a float64 vector, kept in float64 (`encode` takes float32 values): the `dim` values of `v`
   * from `from`, for cosine scaled to unit length in double, written little-endian to `out` at `at`.
   */
  def encodeFlat64(v: Array[Double], from: Int, out: Array[Byte], at: Int): Unit = {
    var norm = 1.0
    if (distance == Distance.COSINE) {
      var s = 0.0
      var d = 0
      while (d < dim) { s += v(from + d) * v(from + d); d += 1 }
      norm = math.sqrt(s)
    }
    var d = 0
    while (d < dim) { VectorElement.FLOAT64.putDouble(v(from + d) / norm, out, at + 8 * d); d += 1 }
  }
}

object IvfModel {
  /**
   * The nearest of `k` centroids (`[k][dim]`, byte values held as floats) to the uint8 vector at `from` of `v` by
   * hamming distance, the first of equally near ones (as Lance's `argmin`).
   */
  def nearestHamming(v: Array[Float], from: Int, centroids: Array[Float], k: Int, dim: Int): Int = {
    var best = 0
    var bestBits = Int.MaxValue
    var c = 0
    while (c < k) {
      val bits = Distance.hammingBits(v, from, centroids, c * dim, dim)
      if (bits < bestBits) { bestBits = bits; best = c }
      c += 1
    }
    best
  }

  /** Codewords per PQ sub-vector of 8-bit codes, and the SQ codes' range. */
  val Codewords = 256

  /** The build parameters (`WITH (...)` options, Lance's names and defaults, §5). */
  final case class Params(indexType: String, distance: Distance, numPartitions: Int, sampleRate: Int, maxIters: Int,
      numSubVectors: Int, element: VectorElement = VectorElement.FLOAT32, numBits: Int = 8) {
    /** Vectors the IVF k-means trains on at most. */
    def ivfSample: Int = math.min(Int.MaxValue.toLong, sampleRate.toLong * numPartitions).toInt
    /** Vectors the whole training reads at most: the quantizer trains on `sampleRate × 2^numBits` (PQ; SQ: 256). */
    def sampleSize: Int =
      if (indexType == "IVF_FLAT") ivfSample else math.max(ivfSample, math.min(Int.MaxValue.toLong, sampleRate.toLong * (1 << numBits)).toInt)
  }

  /** The SQ code of a value: `floor((x − start) × 255 / (end − start))` in double, saturated to 0..255 (§2.4). */
  def sqCode(x: Float, start: Double, end: Double): Int = sqCode(x.toDouble, start, end)

  /** [[sqCode]] of a float64 value. */
  def sqCode(x: Double, start: Double, end: Double): Int = {
    val c = math.floor((x - start) * 255.0 / (end - start))
    if (c.isNaN || c < 0) 0 else if (c > 255) 255 else c.toInt
  }

  /**
   * Scales a vector to unit length in float32 as [[IvfIndex.preprocess]] scales a query; false (the vector left as
   * it is) for a zero vector, which has no unit vector.
   */
  def normalize(v: Array[Float], from: Int, dim: Int): Boolean = {
    var s = 0.0f
    var d = 0
    while (d < dim) { s += v(from + d) * v(from + d); d += 1 }
    val norm = math.sqrt(s.toDouble).toFloat
    if (norm > 0) { d = 0; while (d < dim) { v(from + d) = v(from + d) / norm; d += 1 } }
    norm > 0
  }

  /** Whether the `dim` values of `v` from `from` are all finite (neither NaN nor infinite). */
  def finite(v: Array[Float], from: Int, dim: Int): Boolean = {
    var d = 0
    var all = true
    while (all && d < dim) { all = java.lang.Float.isFinite(v(from + d)); d += 1 }
    all
  }

  /**
   * Trains the model on the first `sampled` vectors of `sample` (row-major, in random order, not yet prepared), those
   * of them Lance indexes (finite; for cosine not zero), moved to the front and prepared in place: the centroids by k-means on the first `params.ivfSample` of them (§5: normalized first for cosine, spherical for
   * dot), then the quantizer on all of them: one `2^numBits`-codeword k-means per PQ sub-vector over the residuals to the
   * vectors' centroids (over the vectors themselves for dot), or the SQ bounds as the sample's smallest and largest
   * value (`sqBounds` when given: a float64 column's bounds, taken from its float64 values as pylance takes them).
   */
  def train(column: String, params: Params, dim: Int, sample: Array[Float], sampled: Int, seed: Long,
      sqBounds: Option[(Double, Double)] = None): IvfModel = {
    val k = params.numPartitions
    // Lance trains on the sampled vectors that are finite once prepared (normalized for cosine): NaN, infinities and,
    // for cosine, zero vectors are left out of the sample, as they are left out of the index.
    var n = 0
    var i = 0
    while (i < sampled) {
      if (finite(sample, i * dim, dim) && (params.distance != Distance.COSINE || normalize(sample, i * dim, dim))) {
        if (n != i) System.arraycopy(sample, i * dim, sample, n * dim, dim)
        n += 1
      }
      i += 1
    }
    if (n < k) {
      throw new InvalidArgumentException(s"Cannot build a ${params.indexType} index on column '$column' with " +
        s"num_partitions = $k: the column has only $n vectors that can be indexed (not null, no NaN or infinite " +
        s"values${if (params.distance == Distance.COSINE) ", not zero" else ""}) among those sampled. Use " +
        s"num_partitions <= $n.")
    }
    val ivfRows = math.min(n, params.ivfSample)
    // Hamming (uint8 vectors) trains by k-modes, as Lance does; the others by k-means in float32, the centroids then
    // rounded to the column's type they are stored in.
    val ivf = if (params.distance == Distance.HAMMING) KModes.train(sample, ivfRows, dim, k, params.maxIters, KModes.IVF_BALANCE, seed)
      else KMeans.train(sample, ivfRows, dim, k, params.maxIters, params.distance == Distance.DOT, seed)
    params.element.roundAll(ivf.centroids)
    val base = IvfModel(params.indexType, params.distance, dim, ivf.centroids, ivf.loss, params.numSubVectors,
      Array.emptyFloatArray, 0.0, 0.0, params.element, numBits = params.numBits)
    params.indexType match {
      case "IVF_PQ" =>
        val codewords = base.codewords
        if (n < codewords) {
          throw new InvalidArgumentException(s"Cannot build an IVF_PQ index on column '$column': training its " +
            s"$codewords codewords per sub-vector needs at least $codewords vectors that can be indexed, and it has $n.")
        }
        val m = params.numSubVectors
        val subDim = dim / m
        val residual = new Array[Float](n * dim)
        val scratch = new Array[Float](base.scratchSize)
        i = 0
        while (i < n) {
          val p = base.partition(sample, i * dim, scratch)
          var d = 0
          while (d < dim) {
            residual(i * dim + d) = if (params.distance == Distance.DOT) sample(i * dim + d) else sample(i * dim + d) - ivf.centroids(p * dim + d)
            d += 1
          }
          i += 1
        }
        val codebook = new Array[Float](m * codewords * subDim)
        // One k-means per sub-vector, independent of the others.
        java.util.stream.IntStream.range(0, m).parallel().forEach { j =>
          val sub = new Array[Float](n * subDim)
          var r = 0
          while (r < n) { System.arraycopy(residual, r * dim + j * subDim, sub, r * subDim, subDim); r += 1 }
          val trained = KMeans.train(sub, n, subDim, codewords, params.maxIters, false, seed + 1 + j)
          System.arraycopy(trained.centroids, 0, codebook, j * codewords * subDim, codewords * subDim)
        }
        params.element.roundAll(codebook)
        base.copy(codebook = codebook)
      case "IVF_SQ" =>
        var lo = Float.PositiveInfinity
        var hi = Float.NegativeInfinity
        i = 0
        while (i < n * dim) { lo = math.min(lo, sample(i)); hi = math.max(hi, sample(i)); i += 1 }
        val (start, end) = sqBounds.getOrElse((lo.toDouble, hi.toDouble))
        base.copy(sqStart = start, sqEnd = if (end > start) end else start + 1.0)
      case _ => base
    }
  }
}
