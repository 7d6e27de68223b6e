package io.sparklance.core.encoding;

/**
 * UTF-8 validation of string data read from a file: pylance refuses string pages whose bytes are not UTF-8, so
 * the reader must too rather than return other strings. A run of ASCII is skipped eight bytes at a time; only
 * pages with other bytes are decoded sequence by sequence.
 */
public final class Utf8 {
  private Utf8() {}

  /** The index of the first byte of `data[from, to)` that does not belong to a well-formed UTF-8 sequence, or -1. */
  public static int firstInvalid(byte[] data, int from, int to) {
    int i = from;
    while (i < to) {
      if (i + 8 <= to && (LittleEndian.getLong(data, i) & 0x8080808080808080L) == 0) { i += 8; continue; }
      int b = data[i] & 0xFF;
      if (b < 0x80) { i++; continue; }
      int len;
      int min;
      if (b >= 0xC2 && b <= 0xDF) { len = 2; min = 0x80; }
      else if (b >= 0xE0 && b <= 0xEF) { len = 3; min = 0x800; }
      else if (b >= 0xF0 && b <= 0xF4) { len = 4; min = 0x10000; }
      else return i;
      if (i + len > to) return i;
      int cp = b & (0xFF >> (len + 1));
      for (int k = 1; k < len; k++) {
        int c = data[i + k] & 0xFF;
        if ((c & 0xC0) != 0x80) return i;
        cp = (cp << 6) | (c & 0x3F);
      }
      if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
      i += len;
    }
    return -1;
  }

  /** True if `data[at]` starts a character (is not a continuation byte); `at == data.length` counts as a start. */
  public static boolean startsCharacter(byte[] data, int at) {
    return at >= data.length || (data[at] & 0xC0) != 0x80;
  }
}
