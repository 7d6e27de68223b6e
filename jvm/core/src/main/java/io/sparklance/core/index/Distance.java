package io.sparklance.core.index;

import java.util.Locale;

import io.sparklance.core.InvalidArgumentException;

/**
 * Lance's vector distances, smaller is nearer:
 * <ul>
 *   <li>{@code l2}: the squared Euclidean distance (no square root, as Lance reports it);</li>
 *   <li>{@code cosine}: 1 - cos(angle); a zero vector on either side has no cosine (NaN);</li>
 *   <li>{@code dot}: 1 - the dot product;</li>
 *   <li>{@code hamming}: the number of bits that differ between two vectors of uint8 values (Lance's definition;
 *   Lance measures uint8 vectors by hamming only). Values are taken as bytes: their low 8 bits.</li>
 * </ul>
 * Computed in double over values that are float16, float32 or float64 in the file (uint8 for hamming), and reported
 * as float32, as Lance reports {@code _distance}. NaN means "no distance": Lance leaves such rows out of every search.
 */
public enum Distance {
  L2 {
    @Override public double between(double[] q, float[] v, int from) {
      double s0 = 0, s1 = 0;
      int n = q.length, i = 0;
      for (; i + 1 < n; i += 2) {
        double d0 = q[i] - v[from + i], d1 = q[i + 1] - v[from + i + 1];
        s0 += d0 * d0;
        s1 += d1 * d1;
      }
      if (i < n) { double d = q[i] - v[from + i]; s0 += d * d; }
      return s0 + s1;
    }
  },
  COSINE {
    @Override public double between(double[] q, float[] v, int from) {
      double dot = 0, qq = 0, vv = 0;
      for (int i = 0; i < q.length; i++) {
        double x = v[from + i];
        dot += q[i] * x;
        qq += q[i] * q[i];
        vv += x * x;
      }
      return 1.0 - dot / (Math.sqrt(qq) * Math.sqrt(vv));
    }
  },
  DOT {
    @Override public double between(double[] q, float[] v, int from) {
      double s0 = 0, s1 = 0;
      int n = q.length, i = 0;
      for (; i + 1 < n; i += 2) {
        s0 += q[i] * v[from + i];
        s1 += q[i + 1] * v[from + i + 1];
      }
      if (i < n) s0 += q[i] * v[from + i];
      return 1.0 - (s0 + s1);
    }
  },
  HAMMING {
    @Override public double between(double[] q, float[] v, int from) {
      int bits = 0;
      for (int i = 0; i < q.length; i++) bits += Integer.bitCount(((int) q[i] ^ (int) v[from + i]) & 0xFF);
      return bits;
    }
  };

  /**
   * The bits that differ between the `n` uint8 values (held as floats) of `a` from `ai` and of `b` from `bi`: the
   * hamming distance of two stored vectors, as index builds measure them.
   */
  public static int hammingBits(float[] a, int ai, float[] b, int bi, int n) {
    int bits = 0;
    for (int i = 0; i < n; i++) bits += Integer.bitCount(((int) a[ai + i] ^ (int) b[bi + i]) & 0xFF);
    return bits;
  }

  /** The distance between the query `q` and the vector of `q.length` values of `v` starting at `from`. */
  public abstract double between(double[] q, float[] v, int from);

  /** The distance of a vector held as doubles (float64 columns), by the same definition. */
  public final double between(double[] q, double[] v) {
    double s = 0, a = 0, b = 0;
    switch (this) {
      case L2:
        for (int i = 0; i < q.length; i++) { double d = q[i] - v[i]; s += d * d; }
        return s;
      case COSINE:
        for (int i = 0; i < q.length; i++) { s += q[i] * v[i]; a += q[i] * q[i]; b += v[i] * v[i]; }
        return 1.0 - s / (Math.sqrt(a) * Math.sqrt(b));
      case HAMMING:
        for (int i = 0; i < q.length; i++) s += Integer.bitCount(((int) q[i] ^ (int) v[i]) & 0xFF);
        return s;
      default:
        for (int i = 0; i < q.length; i++) s += q[i] * v[i];
        return 1.0 - s;
    }
  }

  /** Lance's name of the distance: {@code l2}, {@code cosine}, {@code dot} or {@code hamming}. */
  public String lanceName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The distance a user names (case-insensitive; {@code euclidean} is {@code l2}, as in Lance), or an error that
   * lists the ones there are.
   */
  public static Distance named(String name, String option) {
    String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    switch (n) {
      case "l2": case "euclidean": return L2;
      case "cosine": return COSINE;
      case "dot": return DOT;
      case "hamming": return HAMMING;
      default:
        throw new InvalidArgumentException(
            option + " = '" + name + "' is not a distance type; use l2, cosine, dot or hamming (uint8 vectors).");
    }
  }
}
