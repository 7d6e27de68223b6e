package io.sparklance.core.util;

import java.io.ByteArrayOutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * UTF-8 validation as Lance readers apply it (Rust's `str::from_utf8`, RFC 3629): no overlong forms, no UTF-16
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
 */
public final class Utf8 {
  private Utf8() {}

  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * The offset of the first byte of `b[from, to)` that starts no valid UTF-8 sequence, or -1 when all is valid.
   * Used on every string page a reader decodes and every string a writer stores: runs of ASCII, by far the common
   * case, are skipped eight bytes at a time.
   */
  public static int invalidAt(byte[] b, int from, int to) {
    int i = from;
    while (i < to) {
      if (i + 8 <= to && (((long) LONGS.get(b, i)) & 0x8080808080808080L) == 0) { i += 8; continue; }
      if (b[i] >= 0) { i++; continue; }
      int n = sequence(b, i, to);
      if (n < 0) return i;
      i += n;
    }
    return -1;
  }

  /** True if `data[at]` starts a character (is not a continuation byte); `at == data.length` counts as a start. */
  public static boolean startsCharacter(byte[] data, int at) {
    return at >= data.length || (data[at] & 0xC0) != 0x80;
  }

  /**
   * `b` with U+FFFD in place of each maximal invalid subsequence (the Unicode standard's "substitution of maximal
   * subparts", as Rust's `String::from_utf8_lossy` and Python's `errors="replace"` do).
   */
  public static byte[] replaceInvalid(byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(b.length + 8);
    int i = 0;
    while (i < b.length) {
      int n = sequence(b, i, b.length);
      if (n > 0) { out.write(b, i, n); i += n; }
      else { out.write(0xEF); out.write(0xBF); out.write(0xBD); i -= n; }
    }
    return out.toByteArray();
  }

  /** The length of the valid sequence at `i`, or minus the length of the invalid prefix to replace there. */
  private static int sequence(byte[] b, int i, int to) {
    int c = b[i] & 0xFF;
    if (c < 0x80) return 1;
    int n;
    int lo = 0x80, hi = 0xBF;   // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;        // overlong
      else if (c == 0xED) hi = 0x9F;   // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;        // overlong
      else if (c == 0xF4) hi = 0x8F;   // above U+10FFFF
    } else return -1;
    if (i + 1 >= to) return -1;
    int second = b[i + 1] & 0xFF;
    if (second < lo || second > hi) return -1;
    for (int k = 2; k < n; k++) {
      if (i + k >= to) return -k;
      int cont = b[i + k] & 0xFF;
      if (cont < 0x80 || cont > 0xBF) return -k;
    }
    return n;
  }
}
