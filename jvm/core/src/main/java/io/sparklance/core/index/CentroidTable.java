package io.sparklance.core.index;

/**
 * {@code k} centroids of {@code dim} values laid out for finding a vector's nearest one: transposed
 * ({@code [dim][k]}, row-major) beside their squared lengths. A vector's dot products with all {@code k} centroids
 * are then {@code dim} passes of {@code out[c] += v[d] × t[d][c]} over contiguous arrays ({@link FloatKernels#addScaled}),
 * which the Vector API kernels run 16 lanes at a time (a dot product of one pair is a reduction over only
 * {@code dim} values, too few lanes' work for a PQ sub-vector of 8). Nearest by
 * squared L2 is the smallest {@code |c|² − 2 v·c}, the vector's own length being the same for every centroid; by dot
 * the largest {@code v·c}. Ties go to the lower centroid.
 *
 * <p>Immutable once made; the {@code scratch} arrays the methods take ({@code k} floats from {@code at}) make them
 * safe to call from several threads at once.
 */
public final class CentroidTable {
  private static final FloatKernels KERNELS = FloatKernels.best();

  private final int k;
  private final int dim;
  private final float[] transposed;
  private final float[] norms;

  private CentroidTable(int k, int dim, float[] transposed, float[] norms) {
    this.k = k;
    this.dim = dim;
    this.transposed = transposed;
    this.norms = norms;
  }

  /** The table of the {@code k} centroids of {@code dim} values that start at {@code base} of {@code centroids}. */
  public static CentroidTable of(float[] centroids, int base, int k, int dim) {
    float[] transposed = new float[k * dim];
    float[] norms = new float[k];
    for (int c = 0; c < k; c++) {
      int at = base + c * dim;
      for (int d = 0; d < dim; d++) transposed[d * k + c] = centroids[at + d];
      norms[c] = FloatKernels.plain().dot(centroids, at, centroids, at, dim);
    }
    return new CentroidTable(k, dim, transposed, norms);
  }

  /** Centroids in the table. */
  public int size() {
    return k;
  }

  /** The dot products of the vector at {@code from} of {@code v} with each centroid, into {@code out[at, at + k)}. */
  public void dots(float[] v, int from, float[] out, int at) {
    java.util.Arrays.fill(out, at, at + k, 0f);
    for (int d = 0; d < dim; d++) KERNELS.addScaled(out, at, v[from + d], transposed, d * k, k);
  }

  /** The centroid nearest by squared L2 to the vector at {@code from} of {@code v}. */
  public int nearestL2(float[] v, int from, float[] scratch, int at) {
    dots(v, from, scratch, at);
    int best = 0;
    float bestDistance = Float.POSITIVE_INFINITY;
    for (int c = 0; c < k; c++) {
      float d = norms[c] - 2 * scratch[at + c];
      if (d < bestDistance) { bestDistance = d; best = c; }
    }
    return best;
  }

  /** The centroid of the largest dot product with the vector at {@code from} of {@code v} (smallest 1 − dot). */
  public int nearestDot(float[] v, int from, float[] scratch, int at) {
    dots(v, from, scratch, at);
    int best = 0;
    float bestDistance = Float.POSITIVE_INFINITY;
    for (int c = 0; c < k; c++) {
      float d = 1.0f - scratch[at + c];
      if (d < bestDistance) { bestDistance = d; best = c; }
    }
    return best;
  }
}
