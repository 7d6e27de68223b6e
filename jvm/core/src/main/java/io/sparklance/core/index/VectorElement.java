package io.sparklance.core.index;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;

import io.sparklance.proto.IndexProtos;

/**
 * The element type of a vector column that an IVF index is built on, and so of what the index stores in that type:
 * its centroids and PQ codebook tensors and IVF_FLAT's vectors (pylance 14 keeps them in the column's type; uint8
 * vectors are indexed for {@code hamming} only). The build computes in float32 and rounds what it stores to the
 * element type first ({@link #round}), so that the rows are placed and coded by the values the index holds.
 */
public enum VectorElement {
  FLOAT16(2, IndexProtos.Tensor.DataType.FLOAT16),
  FLOAT32(4, IndexProtos.Tensor.DataType.FLOAT32),
  FLOAT64(8, IndexProtos.Tensor.DataType.FLOAT64),
  UINT8(1, IndexProtos.Tensor.DataType.UINT8);

  /** Bytes one value takes. */
  public final int bytes;
  /** The tensor data type of the centroids and codebook. */
  public final IndexProtos.Tensor.DataType tensorType;

  VectorElement(int bytes, IndexProtos.Tensor.DataType tensorType) {
    this.bytes = bytes;
    this.tensorType = tensorType;
  }

  /** The Arrow type of one value. */
  public ArrowType arrowType() {
    switch (this) {
      case FLOAT16: return new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
      case FLOAT64: return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case UINT8: return new ArrowType.Int(8, false);
      default: return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    }
  }

  /** The element type of an Arrow value type, or null when vectors of it are not indexed. */
  public static VectorElement of(ArrowType t) {
    if (t instanceof ArrowType.FloatingPoint) {
      switch (((ArrowType.FloatingPoint) t).getPrecision()) {
        case HALF: return FLOAT16;
        case SINGLE: return FLOAT32;
        default: return FLOAT64;
      }
    }
    if (t.equals(new ArrowType.Int(8, false))) return UINT8;
    return null;
  }

  /** The value of this type nearest to {@code v} (round to nearest even for float16; 0 to 255 for uint8), as a float. */
  public float round(float v) {
    switch (this) {
      case FLOAT16: return halfToFloat(floatToHalf(v));
      case UINT8: return Math.max(0, Math.min(255, Math.round(v)));
      default: return v;
    }
  }

  /**
   * A query vector as pylance measures it against vectors of this type: cast through float32 to float16 for float16
   * vectors (its flat search, refine and index alike); as it is for the other types.
   */
  public double[] query(double[] q) {
    if (this != FLOAT16) return q;
    double[] out = new double[q.length];
    for (int i = 0; i < q.length; i++) out[i] = round((float) q[i]);
    return out;
  }

  /** Rounds each value of {@code values} in place ({@link #round}). */
  public void roundAll(float[] values) {
    if (this == FLOAT32 || this == FLOAT64) return;
    for (int i = 0; i < values.length; i++) values[i] = round(values[i]);
  }

  /** Value {@code i} of little-endian values of this type in {@code bytes}, as a float (float64 rounded). */
  public float get(byte[] bytes, int i) {
    switch (this) {
      case FLOAT16: return halfToFloat((short) ((bytes[2 * i] & 0xFF) | (bytes[2 * i + 1] << 8)));
      case FLOAT64: return (float) Double.longBitsToDouble(getLong(bytes, 8 * i, 8));
      case UINT8: return bytes[i] & 0xFF;
      default: return Float.intBitsToFloat((int) getLong(bytes, 4 * i, 4));
    }
  }

  private static long getLong(byte[] bytes, int at, int n) {
    long v = 0;
    for (int b = 0; b < n; b++) v |= (bytes[at + b] & 0xFFL) << (8 * b);
    return v;
  }

  /** Writes {@code v} as this type, little-endian, at {@code at} of {@code out}. */
  public void put(float v, byte[] out, int at) {
    switch (this) {
      case FLOAT16: {
        short h = floatToHalf(v);
        out[at] = (byte) h;
        out[at + 1] = (byte) (h >> 8);
        break;
      }
      case FLOAT64: putLong(Double.doubleToRawLongBits(v), out, at, 8); break;
      case UINT8: out[at] = (byte) (int) round(v); break;
      default: putLong(Float.floatToRawIntBits(v) & 0xFFFFFFFFL, out, at, 4);
    }
  }

  /** Writes the double {@code v} as this type (float64 exactly; the others through {@link #put(float, byte[], int)}). */
  public void putDouble(double v, byte[] out, int at) {
    if (this == FLOAT64) putLong(Double.doubleToRawLongBits(v), out, at, 8);
    else put((float) v, out, at);
  }

  private static void putLong(long bits, byte[] out, int at, int bytes) {
    for (int b = 0; b < bytes; b++) out[at + b] = (byte) (bits >>> (8 * b));
  }

  /** The float value of IEEE 754 half-precision bits (exact: every half float is a float). */
  public static float halfToFloat(short h) {
    int bits = h & 0xFFFF;
    int sign = (bits >>> 15) << 31;
    int exponent = (bits >>> 10) & 0x1F;
    int mantissa = bits & 0x3FF;
    if (exponent == 0) {
      float v = mantissa * Float.intBitsToFloat(0x33800000); // 2^-24
      return sign != 0 ? -v : v;
    }
    if (exponent == 31) return Float.intBitsToFloat(sign | 0x7F800000 | (mantissa << 13));
    return Float.intBitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }

  /**
   * The half-precision bits nearest to {@code v}, ties to even (IEEE 754 conversion, as Rust's {@code f16::from_f32}):
   * values past the largest half float become infinite, NaN stays NaN.
   */
  public static short floatToHalf(float v) {
    int f = Float.floatToRawIntBits(v);
    int sign = (f >>> 16) & 0x8000;
    int exponent = (f >>> 23) & 0xFF;
    int mantissa = f & 0x7FFFFF;
    if (exponent == 0xFF) return (short) (sign | 0x7C00 | (mantissa != 0 ? 0x200 | (mantissa >>> 13) : 0));
    int e = exponent - 127 + 15;
    if (e >= 0x1F) return (short) (sign | 0x7C00);
    if (e <= 0) {
      if (e < -10) return (short) sign;
      // A subnormal half: the implicit bit made explicit, shifted right, rounded to even.
      int m = mantissa | 0x800000;
      int shift = 14 - e;
      int half = m >>> shift;
      int rest = m & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rest > mid || (rest == mid && (half & 1) != 0)) half++;
      return (short) (sign | half);
    }
    int half = (e << 10) | (mantissa >>> 13);
    int rest = mantissa & 0x1FFF;
    // Rounding may carry into the exponent, up to infinity, as it should.
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1) != 0)) half++;
    return (short) (sign | half);
  }
}
