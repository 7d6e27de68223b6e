package io.sparklance.core.index;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link FloatKernels} through the JDK's Vector API: {@code SPECIES_PREFERRED} lanes (16 floats with AVX-512, 8 with
 * AVX2), fused multiply-adds, the tail in plain loops. Loaded by {@link FloatKernels} only where the JVM has the
 * {@code jdk.incubator.vector} module; built for Java 17 only, in its own project (jvm/core-vector, build.sbt).
 */
final class VectorApiKernels extends FloatKernels {
  private static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;

  @Override public float dot(float[] a, int from, float[] b, int at, int dim) {
    int lanes = SPECIES.length();
    int bound = dim - dim % lanes;
    FloatVector acc = FloatVector.zero(SPECIES);
    int d = 0;
    for (; d < bound; d += lanes) {
      acc = FloatVector.fromArray(SPECIES, a, from + d).fma(FloatVector.fromArray(SPECIES, b, at + d), acc);
    }
    float s = acc.reduceLanes(VectorOperators.ADD);
    for (; d < dim; d++) s += a[from + d] * b[at + d];
    return s;
  }

  @Override public float squaredL2(float[] a, int from, float[] b, int at, int dim) {
    int lanes = SPECIES.length();
    int bound = dim - dim % lanes;
    FloatVector acc = FloatVector.zero(SPECIES);
    int d = 0;
    for (; d < bound; d += lanes) {
      FloatVector x = FloatVector.fromArray(SPECIES, a, from + d).sub(FloatVector.fromArray(SPECIES, b, at + d));
      acc = x.fma(x, acc);
    }
    float s = acc.reduceLanes(VectorOperators.ADD);
    for (; d < dim; d++) { float x = a[from + d] - b[at + d]; s += x * x; }
    return s;
  }

  @Override public float cosineDistance(float[] a, int from, float[] b, int at, int dim) {
    int lanes = SPECIES.length();
    int bound = dim - dim % lanes;
    FloatVector ab = FloatVector.zero(SPECIES), aa = FloatVector.zero(SPECIES), bb = FloatVector.zero(SPECIES);
    int d = 0;
    for (; d < bound; d += lanes) {
      FloatVector x = FloatVector.fromArray(SPECIES, a, from + d), y = FloatVector.fromArray(SPECIES, b, at + d);
      ab = x.fma(y, ab);
      aa = x.fma(x, aa);
      bb = y.fma(y, bb);
    }
    float sab = ab.reduceLanes(VectorOperators.ADD), saa = aa.reduceLanes(VectorOperators.ADD);
    float sbb = bb.reduceLanes(VectorOperators.ADD);
    for (; d < dim; d++) {
      float x = a[from + d], y = b[at + d];
      sab += x * y;
      saa += x * x;
      sbb += y * y;
    }
    return cosine(sab, saa, sbb);
  }

  @Override public void addScaled(float[] out, int at, float x, float[] t, int from, int n) {
    int lanes = SPECIES.length();
    int bound = n - n % lanes;
    FloatVector s = FloatVector.broadcast(SPECIES, x);
    int i = 0;
    for (; i < bound; i += lanes) {
      FloatVector.fromArray(SPECIES, t, from + i).fma(s, FloatVector.fromArray(SPECIES, out, at + i))
          .intoArray(out, at + i);
    }
    for (; i < n; i++) out[at + i] += x * t[from + i];
  }

  @Override public String describe() {
    return "vector-api (" + SPECIES.length() + " lanes)";
  }
}
