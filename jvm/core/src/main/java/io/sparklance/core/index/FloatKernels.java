package io.sparklance.core.index;

/**
 * The float32 vector arithmetic that index builds spend their time in: dot products, squared L2 and cosine distances
 * between two vectors of float arrays, and {@link #addScaled} (the inner loop of {@link CentroidTable}).
 *
 * <p>Two implementations give the same results up to float32 rounding (they sum in different orders): {@link #plain},
 * Java loops, and one through the JDK's Vector API ({@code jdk.incubator.vector}), used where the JVM was started
 * with {@code --add-modules jdk.incubator.vector} (docs/vector-search.md, "Vector instructions"). {@link #best} is the
 * one this JVM uses; the Vector API class is only loaded when its module is there, so the plain loops run on any JVM
 * (and the Scala 2.12 builds, which target Java 11, carry no Vector API class at all).
 */
public abstract class FloatKernels {
  /** The class that implements the kernels with {@code jdk.incubator.vector}, loaded by name only when present. */
  private static final String VECTOR_CLASS = "io.sparklance.core.index.VectorApiKernels";

  private static final FloatKernels PLAIN = new Plain();

  private static final FloatKernels BEST = load();

  /** The sum of {@code a[from + i] × b[at + i]} over {@code i < dim}. */
  public abstract float dot(float[] a, int from, float[] b, int at, int dim);

  /** The sum of {@code (a[from + i] − b[at + i])²} over {@code i < dim}. */
  public abstract float squaredL2(float[] a, int from, float[] b, int at, int dim);

  /** 1 − cos of the angle between the two vectors; NaN where either is zero (no angle). */
  public abstract float cosineDistance(float[] a, int from, float[] b, int at, int dim);

  /** {@code out[at + i] += x × t[from + i]} for {@code i < n}. */
  public abstract void addScaled(float[] out, int at, float x, float[] t, int from, int n);

  /** A short name: {@code plain} or {@code vector-api (N lanes)}. */
  public abstract String describe();

  /** The kernels this JVM runs: the Vector API's where its module is present, else the plain loops. */
  public static FloatKernels best() {
    return BEST;
  }

  /** The plain Java loops, on any JVM. */
  public static FloatKernels plain() {
    return PLAIN;
  }

  /** The Vector API kernels where this JVM has {@code jdk.incubator.vector}, else null. */
  public static FloatKernels vectorApi() {
    return BEST == PLAIN ? null : BEST;
  }

  /** The kernels this JVM runs, logged once (at INFO, with the reason for plain loops). */
  private static FloatKernels load() {
    org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FloatKernels.class);
    if (Boolean.getBoolean("sparklance.vector.plain")) {
      log.info("sparklance vector kernels: plain Java loops (-Dsparklance.vector.plain=true)");
      return PLAIN;
    }
    if (!ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) {
      log.info("sparklance vector kernels: plain Java loops (start the JVM with --add-modules=jdk.incubator.vector "
          + "for the Vector API ones)");
      return PLAIN;
    }
    try {
      FloatKernels kernels = (FloatKernels) Class.forName(VECTOR_CLASS).getDeclaredConstructor().newInstance();
      log.info("sparklance vector kernels: {}", kernels.describe());
      return kernels;
    } catch (ReflectiveOperationException | LinkageError e) {
      log.info("sparklance vector kernels: plain Java loops (the Vector API ones did not load: {})", e.toString());
      return PLAIN;
    }
  }

  /** Java loops; the reductions in four running sums, which the JIT keeps in flight together. */
  private static final class Plain extends FloatKernels {
    @Override public float dot(float[] a, int from, float[] b, int at, int dim) {
      float s0 = 0f, s1 = 0f, s2 = 0f, s3 = 0f;
      int d = 0;
      for (; d + 3 < dim; d += 4) {
        s0 += a[from + d] * b[at + d];
        s1 += a[from + d + 1] * b[at + d + 1];
        s2 += a[from + d + 2] * b[at + d + 2];
        s3 += a[from + d + 3] * b[at + d + 3];
      }
      for (; d < dim; d++) s0 += a[from + d] * b[at + d];
      return (s0 + s1) + (s2 + s3);
    }

    @Override public float squaredL2(float[] a, int from, float[] b, int at, int dim) {
      float s0 = 0f, s1 = 0f, s2 = 0f, s3 = 0f;
      int d = 0;
      for (; d + 3 < dim; d += 4) {
        float x0 = a[from + d] - b[at + d], x1 = a[from + d + 1] - b[at + d + 1];
        float x2 = a[from + d + 2] - b[at + d + 2], x3 = a[from + d + 3] - b[at + d + 3];
        s0 += x0 * x0;
        s1 += x1 * x1;
        s2 += x2 * x2;
        s3 += x3 * x3;
      }
      for (; d < dim; d++) { float x = a[from + d] - b[at + d]; s0 += x * x; }
      return (s0 + s1) + (s2 + s3);
    }

    @Override public float cosineDistance(float[] a, int from, float[] b, int at, int dim) {
      float ab = 0f, aa = 0f, bb = 0f;
      for (int d = 0; d < dim; d++) {
        float x = a[from + d], y = b[at + d];
        ab += x * y;
        aa += x * x;
        bb += y * y;
      }
      return cosine(ab, aa, bb);
    }

    @Override public void addScaled(float[] out, int at, float x, float[] t, int from, int n) {
      for (int i = 0; i < n; i++) out[at + i] += x * t[from + i];
    }

    @Override public String describe() {
      return "plain";
    }
  }

  /** 1 − ab / (|a| |b|) from the three sums; NaN where a length is zero. */
  static float cosine(float ab, float aa, float bb) {
    if (aa == 0f || bb == 0f) return Float.NaN;
    return (float) (1.0 - ab / (Math.sqrt(aa) * Math.sqrt(bb)));
  }
}
