package io.sparklance.core.encoding;

/** LSB-first bitmaps. */
public final class Bits {
  private Bits() {}

  public static boolean get(byte[] bits, long i) {
    return (bits[(int) (i >>> 3)] & (1 << (i & 7))) != 0;
  }

  /** Copies `n` bits from `src` at bit `from` to `dst` at bit `to` (dst bits are OR-ed; clear them first). */
  public static void copy(byte[] src, long from, byte[] dst, long to, long n) {
    if ((from & 7) == 0 && (to & 7) == 0) {
      int whole = (int) (n >>> 3);
      System.arraycopy(src, (int) (from >>> 3), dst, (int) (to >>> 3), whole);
      for (long i = (long) whole * 8; i < n; i++) if (get(src, from + i)) dst[(int) ((to + i) >>> 3)] |= (byte) (1 << ((to + i) & 7));
      return;
    }
    for (long i = 0; i < n; i++) if (get(src, from + i)) dst[(int) ((to + i) >>> 3)] |= (byte) (1 << ((to + i) & 7));
  }

  public static void set(byte[] dst, long to, long n) {
    for (long i = 0; i < n; i++) dst[(int) ((to + i) >>> 3)] |= (byte) (1 << ((to + i) & 7));
  }

  public static int countSet(byte[] bits, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) if (get(bits, i)) c++;
    return c;
  }
}
