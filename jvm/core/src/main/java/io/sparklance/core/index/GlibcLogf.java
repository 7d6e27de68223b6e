package io.sparklance.core.index;

/**
 * The natural logarithm of a float rounded as glibc's {@code logf} rounds it: the function Rust's {@code f32::ln}
 * calls on Linux, so the one behind the BM25 idf pylance 14 writes into an INVERTED index's posting blocks
 * (docs/dev/fts-index-format.md). {@code (float) Math.log(x)} is the correctly rounded value; glibc's differs from it
 * by one ulp for about 1% of idf arguments (its documented error is up to 0.82 ulp), which changed the bytes of
 * block maximum scores.
 *
 * <p>glibc's algorithm (from Arm's optimized routines, 2017): write {@code x = 2^k · z} with {@code z} in
 * [0x3f330000, 2 · 0x3f330000) as float bits; pick one of 16 subintervals of {@code z} by its top mantissa bits,
 * with a tabulated {@code 1/c} near {@code 1/z} and {@code ln c}; then in double {@code r = z/c − 1} and
 * {@code ln x = k ln 2 + ln c + r + r² (a2 + a1 r + a0 r²)}, rounded once to float. The table and coefficients
 * below are glibc's values; the multiply-adds are fused, as in the FMA variant glibc selects on x86-64 CPUs that
 * have FMA (the unfused variant gave the same floats on every argument tried). Checked against the host's
 * {@code logf} on 75,911 arguments (random floats in [0.5, 20] and the idf arguments of six partition sizes): all
 * equal.
 */
final class GlibcLogf {
  private GlibcLogf() {}

  /** The float bits where the 16 subintervals of the reduced argument start. */
  private static final int OFF = 0x3f330000;

  private static final double LN2 = 0x1.62e42fefa39efp-1;
  private static final double A0 = -0x1.00ea348b88334p-2;
  private static final double A1 = 0x1.5575b0be00b6ap-2;
  private static final double A2 = -0x1.ffffef20a4123p-2;

  /** 1/c of each subinterval. */
  private static final double[] INVC = {
      0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0, 0x1.3c995b0b80385p+0,
      0x1.30d190c8864a5p+0, 0x1.25e227b0b8eap+0, 0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0,
      0x1.0953f419900a7p+0, 0x1p+0, 0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,
      0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1, 0x1.767dcf5534862p-1};

  /** ln c of each subinterval. */
  private static final double[] LOGC = {
      -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3,
      -0x1.6574f0ac07758p-3, -0x1.1aa2bc79c81p-3, -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4,
      -0x1.252f438e10c1ep-5, 0x0p+0, 0x1.aa5aa5df25984p-5, 0x1.c5e53aa362eb4p-4,
      0x1.526e57720db08p-3, 0x1.bc2860d22477p-3, 0x1.1058bc8a07ee1p-2, 0x1.4043057b6ee09p-2};

  /** ln x as glibc's {@code logf} gives it; for 0, negative, infinite and NaN arguments, Java's values. */
  static float log(float x) {
    int ix = Float.floatToRawIntBits(x);
    if (ix == 0x3f800000) return 0f;
    if (ix < 0x00800000 || ix >= 0x7f800000) {
      // Zero, subnormal, negative, infinite or NaN.
      if (x > 0f && x < Float.MIN_NORMAL) {
        ix = Float.floatToRawIntBits(x * 0x1p23f) - (23 << 23);
      } else {
        return (float) Math.log(x);
      }
    }
    int tmp = ix - OFF;
    int i = (tmp >>> 19) & 15;
    int k = tmp >> 23;
    float z = Float.intBitsToFloat(ix - (tmp & 0xff800000));
    double r = Math.fma(z, INVC[i], -1.0);
    double y0 = Math.fma(k, LN2, LOGC[i]);
    double r2 = r * r;
    double y = Math.fma(A1, r, A2);
    y = Math.fma(A0, r2, y);
    y = Math.fma(y, r2, y0 + r);
    return (float) y;
  }
}
