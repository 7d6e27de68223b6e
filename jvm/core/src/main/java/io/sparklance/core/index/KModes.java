package io.sparklance.core.index;

import java.util.Random;

/**
 * k-modes over uint8 vectors by hamming distance, as Lance trains the IVF centroids of a hamming index (upstream
 * {@code rust/lance-index/src/vector/kmeans.rs}, {@code KModeAlgo} under {@code train_kmeans}; the IVF build asks for
 * a balance factor of 1, {@code rust/lance/src/index/vector/ivf.rs}): the centroids start as {@code k} distinct
 * vectors drawn uniformly; each iteration assigns every vector to the centroid of the smallest biased distance, its
 * hamming distance plus {@code b × size}, where {@code size} is the centroid's number of vectors in the previous
 * iteration and {@code b} is the smaller of 1 and {@code (radius − mean) / n} of the previous iteration's largest
 * cluster (its largest and mean biased distance; the first cluster to reach the largest size), the first of equally
 * near ones; then each bit of a centroid becomes the majority of that bit over its vectors (a tie gives 0) and a
 * centroid left without vectors becomes all zeros (Lance leaves it null, whose values are zeros). Training stops after
 * {@code maxIters} iterations or once the loss (the biased distances summed, plus
 * {@code b × (Σ size² − n² / k)}) changes by less than {@link KMeans#TOLERANCE} of itself.
 *
 * <p>On hamming distances, which tie often, the bias decides between equally near centroids in favour of the smaller
 * cluster; without it the largest partition held 1.16 to 1.29 times the mean against pylance's 1.09 to 1.16 (ours
 * now 1.10 to 1.18, docs/vector-search.md). Vectors are held row-major in a float array, one byte value (0 to 255)
 * per float, as the build reads them.
 */
public final class KModes {
  private KModes() {}

  /** The balance factor Lance's IVF training asks for ({@code with_balance_factor(1.0)}). */
  public static final float IVF_BALANCE = 1.0f;

  /**
   * Trains {@code k} centroids on the {@code n} vectors of {@code dim} bytes in {@code data} (at least {@code k}),
   * with the bias factor {@code b} at most {@code balance} ({@link #IVF_BALANCE} as Lance's IVF build; 0 for plain
   * k-modes).
   */
  public static KMeans.Model train(float[] data, int n, int dim, int k, int maxIters, float balance, long seed) {
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
    float[] biased = new float[n];
    int[] ones = new int[k * dim * 8];
    int[] sizes = new int[k];
    float[] radius = new float[k];
    double[] losses = new double[k];
    float adjusted = Float.MAX_VALUE;
    double loss = Double.MAX_VALUE;
    double last = Double.MAX_VALUE;
    for (int iter = 0; iter < Math.max(1, maxIters); iter++) {
      float b = Math.min(adjusted, balance);
      assign(bytes, n, dim, centroids, k, b, sizes, assignment, biased);
      java.util.Arrays.fill(sizes, 0);
      java.util.Arrays.fill(radius, 0f);
      java.util.Arrays.fill(losses, 0.0);
      int largest = 0;
      int largestSize = 0;
      for (int i = 0; i < n; i++) {
        int c = assignment[i];
        radius[c] = Math.max(radius[c], biased[i]);
        losses[c] += biased[i];
        if (++sizes[c] > largestSize) {
          largestSize = sizes[c];
          largest = c;
        }
      }
      adjusted = (radius[largest] - (float) losses[largest] / sizes[largest]) / n;
      double squares = 0;
      double sum = 0;
      for (int c = 0; c < k; c++) {
        squares += (double) sizes[c] * sizes[c];
        sum += losses[c];
      }
      last = sum + b * (float) (squares - (double) n * n / k);
      update(bytes, n, dim, centroids, k, assignment, ones, sizes);
      if (Math.abs(loss - last) < KMeans.TOLERANCE * last) break;
      loss = last;
    }
    float[] out = new float[k * dim];
    for (int i = 0; i < out.length; i++) out[i] = centroids[i] & 0xFF;
    return new KMeans.Model(out, last);
  }

  /**
   * Assigns each vector the centroid of the smallest hamming distance plus {@code balance × sizes[c]} (the first of
   * equally near ones), and writes that biased distance to {@code biased}.
   */
  static void assign(byte[] data, int n, int dim, byte[] centroids, int k, float balance, int[] sizes,
      int[] out, float[] biased) {
    java.util.stream.IntStream.range(0, n).parallel().forEach(i -> {
      int best = 0;
      float bestDistance = Float.POSITIVE_INFINITY;
      for (int c = 0; c < k; c++) {
        int bits = 0;
        for (int d = 0; d < dim; d++) bits += Integer.bitCount((data[i * dim + d] ^ centroids[c * dim + d]) & 0xFF);
        float distance = bits + balance * sizes[c];
        if (distance < bestDistance) {
          bestDistance = distance;
          best = c;
        }
      }
      out[i] = best;
      biased[i] = bestDistance;
    });
  }

  private static void update(byte[] data, int n, int dim, byte[] centroids, int k, int[] assignment, int[] ones,
      int[] sizes) {
    java.util.Arrays.fill(ones, 0);
    for (int i = 0; i < n; i++) {
      int c = assignment[i];
      for (int d = 0; d < dim; d++) {
        int v = data[i * dim + d] & 0xFF;
        int base = (c * dim + d) * 8;
        for (int b = 0; b < 8; b++) ones[base + b] += (v >>> b) & 1;
      }
    }
    for (int c = 0; c < k; c++) {
      for (int d = 0; d < dim; d++) {
        int v = 0;
        int base = (c * dim + d) * 8;
        for (int b = 0; b < 8; b++) if (ones[base + b] * 2 > sizes[c]) v |= 1 << b;
        centroids[c * dim + d] = (byte) v;
      }
    }
  }
}
