package io.sparklance.core.index;

import java.util.Random;

/**
 * Lloyd's k-means over vectors held row-major in a float array, as Lance trains an IVF model's centroids and a PQ
 * sub-vector's codewords (docs/dev/vector-index-format.md §5; upstream {@code rust/lance-index/src/vector/kmeans.rs}):
 * the centroids start as {@code k} vectors drawn by k-means++ ({@link #seed}), each iteration assigns every vector to
 * its nearest centroid and moves each centroid to the mean of its vectors, and training stops after {@code maxIters}
 * iterations or once the loss changes by less than {@link #TOLERANCE} of itself. A centroid left without vectors is
 * re-seeded by splitting the largest cluster.
 *
 * <p>With {@code spherical} (Lance's dot-product models, whose centroids pylance 14 keeps at unit length) a vector's
 * nearest centroid is the one of largest dot product and each mean is normalized; otherwise nearest is by squared
 * L2.
 */
public final class KMeans {
  private static final FloatKernels KERNELS = FloatKernels.best();

  /** The relative change of the loss under which training stops (upstream's default). */
  public static final double TOLERANCE = 1e-4;

  /** Trained centroids ({@code k × dim}, row-major) and the loss of the last assignment. */
  public static final class Model {
    public final float[] centroids;
    public final double loss;

    Model(float[] centroids, double loss) {
      this.centroids = centroids;
      this.loss = loss;
    }
  }

  private KMeans() {}

  /**
   * Trains {@code k} centroids on the {@code n} vectors of {@code dim} values in {@code data} (which needs at least
   * {@code k} vectors), drawing the first centroids with a generator seeded by {@code seed}.
   */
  public static Model train(float[] data, int n, int dim, int k, int maxIters, boolean spherical, long seed) {
    if (k <= 0 || n < k) throw new IllegalArgumentException("k-means needs at least " + k + " vectors, has " + n);
    Random random = new Random(seed);
    float[] centroids = seed(data, n, dim, k, random);
    if (spherical) for (int c = 0; c < k; c++) normalize(centroids, c * dim, dim);
    int[] assignment = new int[n];
    double[] sums = new double[k * dim];
    int[] counts = new int[k];
    double loss = Double.MAX_VALUE;
    for (int iter = 0; iter < Math.max(1, maxIters); iter++) {
      double next = assign(data, n, dim, centroids, k, spherical, assignment);
      update(data, n, dim, centroids, k, spherical, assignment, sums, counts, random);
      boolean converged = Math.abs(loss - next) <= TOLERANCE * Math.abs(next);
      loss = next;
      if (converged) break;
    }
    return new Model(centroids, assign(data, n, dim, centroids, k, spherical, assignment));
  }

  /**
   * The first {@code k} centroids by k-means++ (Arthur and Vassilvitskii, 2007): a row drawn at random, then each next
   * one a row drawn with probability proportional to its squared L2 distance to the nearest one drawn so far (any row
   * when every row equals one drawn; a row with NaN values is drawn only so). Lance draws {@code k} rows uniformly instead; on clustered data that leaves
   * some clusters without a seed and others with two, which Lloyd's iterations do not undo, and the index's
   * partitions then mix clusters (docs/vector-search.md, "How sparklance trains").
   */
  private static float[] seed(float[] data, int n, int dim, int k, Random random) {
    float[] centroids = new float[k * dim];
    float[] nearest = new float[n];
    java.util.Arrays.fill(nearest, Float.POSITIVE_INFINITY);
    int chunk = 4096;
    int chunks = (n + chunk - 1) / chunk;
    double[] sums = new double[chunks];
    int row = random.nextInt(n);
    for (int c = 0; c < k; c++) {
      System.arraycopy(data, row * dim, centroids, c * dim, dim);
      if (c == k - 1) break;
      int from = row * dim;
      java.util.stream.IntStream.range(0, chunks).parallel().forEach(t -> {
        double sum = 0;
        for (int i = t * chunk, end = Math.min(n, (t + 1) * chunk); i < end; i++) {
          float d = KERNELS.squaredL2(data, i * dim, data, from, dim);
          if (d < nearest[i]) nearest[i] = d;
          else if (Float.isNaN(d)) nearest[i] = 0f;
          sum += nearest[i];
        }
        sums[t] = sum;
      });
      double total = 0;
      for (double s : sums) total += s;
      if (!(total > 0) || Double.isInfinite(total)) {
        row = random.nextInt(n);
        continue;
      }
      double target = random.nextDouble() * total;
      int t = 0;
      while (t < chunks - 1 && target >= sums[t]) target -= sums[t++];
      int i = t * chunk;
      int end = Math.min(n, (t + 1) * chunk) - 1;
      while (i < end && target >= nearest[i]) target -= nearest[i++];
      row = i;
    }
    return centroids;
  }

  /**
   * Assigns each vector its nearest centroid; the total distance (squared L2, or 1 - dot when spherical). The rows
   * are split in chunks measured in parallel (on the common fork-join pool and the caller), each through one
   * {@link CentroidTable} of the centroids.
   */
  private static double assign(float[] data, int n, int dim, float[] centroids, int k, boolean spherical, int[] out) {
    CentroidTable table = CentroidTable.of(centroids, 0, k, dim);
    int chunk = 4096;
    int chunks = (n + chunk - 1) / chunk;
    double[] losses = new double[chunks];
    java.util.stream.IntStream.range(0, chunks).parallel().forEach(t -> {
      float[] scratch = new float[k];
      double loss = 0;
      for (int i = t * chunk, end = Math.min(n, (t + 1) * chunk); i < end; i++) {
        int best = spherical ? table.nearestDot(data, i * dim, scratch, 0) : table.nearestL2(data, i * dim, scratch, 0);
        out[i] = best;
        loss += spherical ? 1.0 - KERNELS.dot(data, i * dim, centroids, best * dim, dim)
            : KERNELS.squaredL2(data, i * dim, centroids, best * dim, dim);
      }
      losses[t] = loss;
    });
    double loss = 0;
    for (double l : losses) loss += l;
    return loss;
  }

  private static void update(float[] data, int n, int dim, float[] centroids, int k, boolean spherical, int[] assignment,
      double[] sums, int[] counts, Random random) {
    java.util.Arrays.fill(sums, 0.0);
    java.util.Arrays.fill(counts, 0);
    for (int i = 0; i < n; i++) {
      int c = assignment[i];
      counts[c]++;
      int s = c * dim, x = i * dim;
      for (int d = 0; d < dim; d++) sums[s + d] += data[x + d];
    }
    for (int c = 0; c < k; c++) {
      if (counts[c] == 0) continue;
      for (int d = 0; d < dim; d++) centroids[c * dim + d] = (float) (sums[c * dim + d] / counts[c]);
      if (spherical) normalize(centroids, c * dim, dim);
    }
    // An empty cluster takes half of the largest one: both centroids move apart from the large one's mean.
    for (int c = 0; c < k; c++) {
      if (counts[c] != 0) continue;
      int largest = 0;
      for (int j = 1; j < k; j++) if (counts[j] > counts[largest]) largest = j;
      for (int d = 0; d < dim; d++) {
        float v = centroids[largest * dim + d];
        float eps = (float) (1e-3 * (random.nextDouble() - 0.5)) * (Math.abs(v) + 1e-3f);
        centroids[c * dim + d] = v + eps;
        centroids[largest * dim + d] = v - eps;
      }
      if (spherical) { normalize(centroids, c * dim, dim); normalize(centroids, largest * dim, dim); }
      counts[c] = counts[largest] / 2;
      counts[largest] -= counts[c];
    }
  }

  /** The centroid nearest (squared L2) to the vector at {@code from} of {@code v}; ties to the lower partition. */
  public static int nearest(float[] v, int from, float[] centroids, int k, int dim) {
    return nearest(v, from, centroids, 0, k, dim);
  }

  /** {@link #nearest} among the {@code k} centroids that start at {@code base} of {@code centroids}. */
  public static int nearest(float[] v, int from, float[] centroids, int base, int k, int dim) {
    int best = 0;
    float bestDistance = Float.POSITIVE_INFINITY;
    for (int c = 0; c < k; c++) {
      float d = squaredL2(v, from, centroids, base + c * dim, dim);
      if (d < bestDistance) { bestDistance = d; best = c; }
    }
    return best;
  }

  /** The centroid of the largest dot product with the vector at {@code from} (smallest 1 - dot); ties to the lower. */
  public static int nearestByDot(float[] v, int from, float[] centroids, int k, int dim) {
    int best = 0;
    float bestDistance = Float.POSITIVE_INFINITY;
    for (int c = 0; c < k; c++) {
      float d = 1.0f - FloatKernels.plain().dot(v, from, centroids, c * dim, dim);
      if (d < bestDistance) { bestDistance = d; best = c; }
    }
    return best;
  }

  /** The squared L2 distance in float32, summed in order (the order pylance's probe uses, §4 step 2). */
  public static float squaredL2(float[] a, int from, float[] b, int at, int dim) {
    float s = 0f;
    for (int d = 0; d < dim; d++) {
      float x = a[from + d] - b[at + d];
      s += x * x;
    }
    return s;
  }

  /** Scales the vector at {@code from} to unit length (a zero vector stays zero). */
  public static void normalize(float[] v, int from, int dim) {
    double s = 0;
    for (int d = 0; d < dim; d++) s += (double) v[from + d] * v[from + d];
    if (s == 0) return;
    float norm = (float) Math.sqrt(s);
    for (int d = 0; d < dim; d++) v[from + d] = v[from + d] / norm;
  }
}
