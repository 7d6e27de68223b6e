package io.sparklance.core.util;

import java.io.ByteArrayOutputStream;

/**
 * UTF-8 validation as Lance readers apply it (Rust's `str::from_utf8`, RFC 3629): no overlong forms, no UTF-16
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
 */
public final class Utf8 {
  private Utf8() {}

  /** The offset of the first byte of `b[from, to)` that starts no valid UTF-8 sequence, or -1 when all is valid. */
  public static int invalidAt(byte[] b, int from, int to) {
    int i = from;
    // ASCII, by far the common case: one comparison a byte.
    while (i < to && b[i] >= 0) i++;
    while (i < to) {
      int n = sequence(b, i, to);
      if (n < 0) return i;
      i += n;
    }
    return -1;
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
