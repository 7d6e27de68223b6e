package io.sparklance.core.index;

import java.util.Random;

/**
 * k-modes over uint8 vectors by hamming distance, as Lance trains the IVF centroids of a hamming index (upstream
 * {@code rust/lance-index/src/vector/kmeans.rs}, {@code KModeAlgo}): the centroids start as {@code k} distinct vectors
 * drawn uniformly, each iteration assigns every vector to its nearest centroid by hamming distance (the first of
 * equally near ones) and sets each bit of a centroid to the majority of that bit over its vectors (a tie gives 0), and
 * training stops after {@code maxIters} iterations or once the loss (the sum of the distances) changes by less than
 * {@link KMeans#TOLERANCE} of itself. A centroid left without vectors keeps its value (Lance leaves it null).
 *
 * <p>Vectors are held row-major in a float array, one byte value (0 to 255) per float, as the build reads them.
 */
public final class KModes {
  private KModes() {}

  /** Trains {@code k} centroids on the {@code n} vectors of {@code dim} bytes in {@code data} (at least {@code k}). */
  public static KMeans.Model train(float[] data, int n, int dim, int k, int maxIters, long seed) {
    if (k <= 0 || n < k) throw new IllegalArgumentException("k-modes needs at least " + k + " vectors, has " + n);
    byte[] bytes = new byte[n * dim];
    for (int i = 0; i < bytes.length; i++) bytes[i] = (byte) (int) data[i];
    Random random = new Random(seed);
    // k distinct rows (Floyd's algorithm), in the order drawn.
    java.util.LinkedHashSet<Integer> chosen = new java.util.LinkedHashSet<>();
    for (int j = n - k; j < n; j++) {
      int t = random.nextInt(j + 1);
      if (!chosen.add(t)) chosen.add(j);
    }
    byte[] centroids = new byte[k * dim];
    int c0 = 0;
    for (int row : chosen) System.arraycopy(bytes, row * dim, centroids, (c0++) * dim, dim);
    int[] assignment = new int[n];
    int[] ones = new int[k * dim * 8];
    int[] counts = new int[k];
    double loss = Double.MAX_VALUE;
    for (int iter = 0; iter < Math.max(1, maxIters); iter++) {
      double next = assign(bytes, n, dim, centroids, k, assignment);
      update(bytes, n, dim, centroids, k, assignment, ones, counts);
      boolean converged = Math.abs(loss - next) <= KMeans.TOLERANCE * Math.abs(next);
      loss = next;
      if (converged) break;
    }
    double last = assign(bytes, n, dim, centroids, k, assignment);
    float[] out = new float[k * dim];
    for (int i = 0; i < out.length; i++) out[i] = centroids[i] & 0xFF;
    return new KMeans.Model(out, last);
  }

  private static double assign(byte[] data, int n, int dim, byte[] centroids, int k, int[] out) {
    long loss = 0;
    for (int i = 0; i < n; i++) {
      int best = 0;
      int bestBits = Integer.MAX_VALUE;
      for (int c = 0; c < k; c++) {
        int bits = 0;
        for (int d = 0; d < dim; d++) bits += Integer.bitCount((data[i * dim + d] ^ centroids[c * dim + d]) & 0xFF);
        if (bits < bestBits) {
          bestBits = bits;
          best = c;
        }
      }
      out[i] = best;
      loss += bestBits;
    }
    return loss;
  }

  private static void update(byte[] data, int n, int dim, byte[] centroids, int k, int[] assignment, int[] ones,
      int[] counts) {
    java.util.Arrays.fill(ones, 0);
    java.util.Arrays.fill(counts, 0);
    for (int i = 0; i < n; i++) {
      int c = assignment[i];
      counts[c]++;
      for (int d = 0; d < dim; d++) {
        int v = data[i * dim + d] & 0xFF;
        int base = (c * dim + d) * 8;
        for (int b = 0; b < 8; b++) ones[base + b] += (v >>> b) & 1;
      }
    }
    for (int c = 0; c < k; c++) {
      if (counts[c] == 0) continue;
      for (int d = 0; d < dim; d++) {
        int v = 0;
        int base = (c * dim + d) * 8;
        for (int b = 0; b < 8; b++) if (ones[base + b] * 2 > counts[c]) v |= 1 << b;
        centroids[c * dim + d] = (byte) v;
      }
    }
  }
}
