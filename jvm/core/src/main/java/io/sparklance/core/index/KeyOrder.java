package io.sparklance.core.index;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.types.pojo.ArrowType;

import io.sparklance.core.UnsupportedFeatureException;

/**
 * The order of index keys, as upstream sorts them to build B-tree pages: nulls first, then ascending values
 * (integers, dates and timestamps by number, unsigned 64-bit integers unsigned, floats in IEEE total order, strings
 * and binaries by unsigned bytes, false before true). Compares rows of two vectors of the same type.
 */
public abstract class KeyOrder {

  /** The sign of (a at i) - (b at j), nulls first. */
  public final int compare(FieldVector a, int i, FieldVector b, int j) {
    boolean na = a.isNull(i), nb = b.isNull(j);
    if (na || nb) return na == nb ? 0 : (na ? -1 : 1);
    return compareValues(a, i, b, j);
  }

  protected abstract int compareValues(FieldVector a, int i, FieldVector b, int j);

  /** Sorts `perm` (row numbers of `v`) by key, ties by row number; stable. */
  public final void sort(FieldVector v, int[] perm) {
    int n = perm.length;
    if (v instanceof BaseIntVector && v.getNullCount() == 0) {
      sortIntegers((BaseIntVector) v, perm);
      return;
    }
    int sorted = 1;
    while (sorted < n && compare(v, perm[sorted - 1], v, perm[sorted]) <= 0) sorted++;
    if (sorted >= n) return;   // already in order, as a sorted or clustered column's fragments often are
    int[] tmp = new int[n];
    mergeSort(v, perm, tmp, 0, perm.length);
  }

  /**
   * {@link #sort} of integer keys without nulls, on a copy of the keys in a primitive array (unsigned 64-bit keys with
   * their sign bit flipped, so that signed order is their order).
   */
  private static void sortIntegers(BaseIntVector v, int[] perm) {
    int n = perm.length;
    long flip = v instanceof UInt8Vector ? Long.MIN_VALUE : 0L;
    long[] keys = new long[n];
    if (v instanceof BigIntVector || v instanceof UInt8Vector) {
      // 64-bit keys straight from the data buffer, without a virtual call and a validity check per key.
      ArrowBuf data = ((BaseFixedWidthVector) v).getDataBuffer();
      for (int i = 0; i < n; i++) keys[i] = data.getLong(8L * perm[i]) ^ flip;
    } else {
      for (int i = 0; i < n; i++) keys[i] = v.getValueAsLong(perm[i]) ^ flip;
    }
    int sorted = 1;
    while (sorted < n && keys[sorted - 1] <= keys[sorted]) sorted++;
    if (sorted >= n) return;
    mergeSort(keys, perm, new long[n], new int[n], 0, n);
  }

  /** A stable merge sort of `keys[from, to)`, moving `perm` along. */
  private static void mergeSort(long[] keys, int[] perm, long[] tmpKeys, int[] tmpPerm, int from, int to) {
    if (to - from <= 24) {
      for (int i = from + 1; i < to; i++) {
        long k = keys[i];
        int p = perm[i];
        int j = i - 1;
        while (j >= from && keys[j] > k) { keys[j + 1] = keys[j]; perm[j + 1] = perm[j]; j--; }
        keys[j + 1] = k;
        perm[j + 1] = p;
      }
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(keys, perm, tmpKeys, tmpPerm, from, mid);
    mergeSort(keys, perm, tmpKeys, tmpPerm, mid, to);
    if (keys[mid - 1] <= keys[mid]) return;
    System.arraycopy(keys, from, tmpKeys, from, to - from);
    System.arraycopy(perm, from, tmpPerm, from, to - from);
    int i = from, j = mid, k = from;
    while (i < mid && j < to) {
      if (tmpKeys[j] < tmpKeys[i]) { keys[k] = tmpKeys[j]; perm[k++] = tmpPerm[j++]; }
      else { keys[k] = tmpKeys[i]; perm[k++] = tmpPerm[i++]; }
    }
    while (i < mid) { keys[k] = tmpKeys[i]; perm[k++] = tmpPerm[i++]; }
    while (j < to) { keys[k] = tmpKeys[j]; perm[k++] = tmpPerm[j++]; }
  }

  private void mergeSort(FieldVector v, int[] a, int[] tmp, int from, int to) {
    if (to - from <= 24) {
      for (int i = from + 1; i < to; i++) {
        int x = a[i];
        int j = i - 1;
        while (j >= from && compare(v, a[j], v, x) > 0) { a[j + 1] = a[j]; j--; }
        a[j + 1] = x;
      }
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(v, a, tmp, from, mid);
    mergeSort(v, a, tmp, mid, to);
    if (compare(v, a[mid - 1], v, a[mid]) <= 0) return;
    System.arraycopy(a, from, tmp, from, to - from);
    int i = from, j = mid, k = from;
    while (i < mid && j < to) a[k++] = compare(v, tmp[j], v, tmp[i]) < 0 ? tmp[j++] : tmp[i++];
    while (i < mid) a[k++] = tmp[i++];
    while (j < to) a[k++] = tmp[j++];
  }

  /** Whether keys of this type can be indexed by a B-tree this writer builds. */
  public static boolean supports(ArrowType t) {
    return t instanceof ArrowType.Int || t instanceof ArrowType.FloatingPoint || t instanceof ArrowType.Utf8
        || t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.Binary || t instanceof ArrowType.LargeBinary
        || t instanceof ArrowType.Bool || t instanceof ArrowType.Date || t instanceof ArrowType.Timestamp;
  }

  /** The order of keys in vectors like `v`. */
  public static KeyOrder of(FieldVector v) {
    if (v instanceof UInt8Vector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return Long.compareUnsigned(((UInt8Vector) a).get(i), ((UInt8Vector) b).get(j));
        }
      };
    }
    if (v instanceof BaseIntVector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return Long.compare(((BaseIntVector) a).getValueAsLong(i), ((BaseIntVector) b).getValueAsLong(j));
        }
      };
    }
    if (v instanceof DateDayVector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return Integer.compare(((DateDayVector) a).get(i), ((DateDayVector) b).get(j));
        }
      };
    }
    if (v instanceof TimeStampVector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return Long.compare(((TimeStampVector) a).get(i), ((TimeStampVector) b).get(j));
        }
      };
    }
    if (v instanceof Float8Vector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return totalOrder(((Float8Vector) a).get(i), ((Float8Vector) b).get(j));
        }
      };
    }
    if (v instanceof Float4Vector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return totalOrder(((Float4Vector) a).get(i), ((Float4Vector) b).get(j));
        }
      };
    }
    if (v instanceof BitVector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return Integer.compare(((BitVector) a).get(i), ((BitVector) b).get(j));
        }
      };
    }
    if (v instanceof BaseVariableWidthVector || v instanceof org.apache.arrow.vector.BaseLargeVariableWidthVector) {
      return new KeyOrder() {
        protected int compareValues(FieldVector a, int i, FieldVector b, int j) {
          return java.util.Arrays.compareUnsigned(bytes(a, i), bytes(b, j));
        }
      };
    }
    throw new UnsupportedFeatureException("Cannot order index keys of type " + v.getField().getType() + ".");
  }

  /** The bytes of a string or binary value (Arrow 11 has no common accessor). */
  public static byte[] bytes(FieldVector v, int i) {
    if (v instanceof org.apache.arrow.vector.VarCharVector) return ((org.apache.arrow.vector.VarCharVector) v).get(i);
    if (v instanceof org.apache.arrow.vector.VarBinaryVector) return ((org.apache.arrow.vector.VarBinaryVector) v).get(i);
    if (v instanceof org.apache.arrow.vector.LargeVarCharVector) return ((org.apache.arrow.vector.LargeVarCharVector) v).get(i);
    if (v instanceof org.apache.arrow.vector.LargeVarBinaryVector) return ((org.apache.arrow.vector.LargeVarBinaryVector) v).get(i);
    throw new UnsupportedFeatureException("Cannot read index keys of type " + v.getField().getType() + " as bytes.");
  }

  /** IEEE 754 totalOrder, as upstream sorts floats: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN. */
  private static int totalOrder(double x, double y) {
    long a = Double.doubleToRawLongBits(x), b = Double.doubleToRawLongBits(y);
    a ^= (a >> 63) >>> 1;
    b ^= (b >> 63) >>> 1;
    return Long.compare(a, b);
  }
}
