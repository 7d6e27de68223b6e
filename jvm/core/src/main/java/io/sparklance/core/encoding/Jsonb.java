package io.sparklance.core.encoding;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the binary JSON encoding Lance stores `json` columns in (the JSONB format of databend's `jsonb` crate) to
 * compact JSON text, as pylance presents such columns.
 *
 * <p>Layout (all integers big endian): a value starts with a 32-bit header whose top three bits give its kind
 * (0x80000000 array, 0x40000000 object, 0x20000000 scalar) and whose low 29 bits count its elements. A scalar is the
 * header, one JEntry and the JEntry's payload. An array of n is the header, n JEntries, then the n payloads in order.
 * An object of n is the header, n key JEntries, n value JEntries, the n key payloads, then the n value payloads.
 * A JEntry is 32 bits: bits 28-30 the type (0 null, 1 string, 2 number, 3 false, 4 true, 5 container, 6 extension),
 * bits 0-27 the payload length. A container payload is a nested value; a string payload its UTF-8 bytes; a number
 * payload a type byte (0x00 zero, 0x10 NaN, 0x20 +inf, 0x30 -inf, 0x40 signed int of 1/2/4/8 bytes, 0x50 unsigned
 * int of 1/2/4/8 bytes, 0x60 float64, 0x70 decimal: a 64/128/256-bit unscaled value then a scale byte).
 *
 * <p>Text follows serde_json's compact output: object keys in stored order, strings escaped like serde_json,
 * floats in shortest round-trip form (fixed notation for decimal exponents -5..15 with a ".0" on whole numbers,
 * otherwise {@code 1.5e+20} / {@code 1e-7}), NaN and infinities as {@code null}, decimals exactly.
 *
 * <p>Every length is checked against the value's bytes; malformed input throws {@link EncodingException}. Decoding
 * is iterative (no recursion), and the text is at most a small constant factor longer than the input.
 */
public final class Jsonb {
  private Jsonb() {}

  private static final int ARRAY = 0x80000000;
  private static final int OBJECT = 0x40000000;
  private static final int SCALAR = 0x20000000;
  private static final int HEADER_TYPE_MASK = 0xE0000000;
  private static final int HEADER_LEN_MASK = 0x1FFFFFFF;

  private static final int T_NULL = 0;
  private static final int T_STRING = 1;
  private static final int T_NUMBER = 2;
  private static final int T_FALSE = 3;
  private static final int T_TRUE = 4;
  private static final int T_CONTAINER = 5;
  private static final int T_EXTENSION = 6;
  private static final int ENTRY_LEN_MASK = 0x0FFFFFFF;

  /** The JSON text of the JSONB value in {@code data[offset, offset + length)}. */
  public static String toJson(byte[] data, int offset, int length) {
    checkRange(data, offset, length);
    Out out = new Out(Math.max(16, Math.min(length, 1 << 20) * 2));
    write(data, offset, offset + length, out);
    return new String(out.buf, 0, out.len, StandardCharsets.UTF_8);
  }

  /** The JSON text of a whole JSONB value. */
  public static String toJson(byte[] data) {
    return toJson(data, 0, data.length);
  }

  /**
   * Each value of a variable-width block of JSONB values, as UTF-8 JSON text. Empty values (the slots of nulls) stay
   * empty. The result has 64-bit offsets.
   */
  public static DataBlock.VariableWidth toJsonBlock(DataBlock.VariableWidth block) {
    int n = block.numValues;
    byte[] offsets = new byte[8 * (n + 1)];
    long total = block.offset(n) - block.offset(0);
    Out out = new Out((int) Math.max(16, Math.min(total * 2, 1 << 24)));
    for (int i = 0; i < n; i++) {
      long start = block.offset(i);
      long end = block.offset(i + 1);
      if (start < 0 || end < start || end > block.data.length) {
        throw new EncodingException("json value " + i + " spans bytes [" + start + ", " + end + ") of " + block.data.length);
      }
      if (end > start) {
        try {
          write(block.data, (int) start, (int) end, out);
        } catch (EncodingException e) {
          throw new EncodingException("json value " + i + ": " + e.getMessage());
        }
      }
      LittleEndian.putLong(offsets, 8 * (i + 1), out.len);
    }
    byte[] data = out.len == out.buf.length ? out.buf : java.util.Arrays.copyOf(out.buf, out.len);
    return new DataBlock.VariableWidth(64, offsets, data, n);
  }

  private static void checkRange(byte[] data, int offset, int length) {
    if (offset < 0 || length < 0 || (long) offset + length > data.length) {
      throw new EncodingException("json value [" + offset + ", +" + length + ") outside a buffer of " + data.length + " bytes");
    }
  }

  // Frame layout on the explicit stack (ints): kind, total, remaining, entryPos, payloadPos, end, valueEntryPos, valuePayloadPos.
  private static final int F = 8;

  /** Writes the value in {@code data[start, end)}. */
  private static void write(byte[] d, int start, int end, Out out) {
    int[] stack = new int[F * 8];
    int sp = open(d, start, end, out, stack, 0);
    while (sp > 0) {
      int f = sp - F;
      int kind = stack[f];
      int remaining = stack[f + 2];
      if (remaining == 0) {
        out.put(kind == ARRAY ? (byte) ']' : (byte) '}');
        sp -= F;
        continue;
      }
      if (remaining != stack[f + 1]) out.put((byte) ',');
      stack[f + 2] = remaining - 1;
      int frameEnd = stack[f + 5];
      if (kind == OBJECT) {
        int keyEntry = readInt(d, stack[f + 3], frameEnd);
        stack[f + 3] += 4;
        int keyLen = keyEntry & ENTRY_LEN_MASK;
        int keyPos = stack[f + 4];
        if (entryType(keyEntry) != T_STRING) throw new EncodingException("object key of type " + entryType(keyEntry) + " at byte " + keyPos);
        checkPayload(keyPos, keyLen, frameEnd);
        stack[f + 4] = keyPos + keyLen;
        writeString(d, keyPos, keyLen, out);
        out.put((byte) ':');
        int valueEntry = readInt(d, stack[f + 6], frameEnd);
        stack[f + 6] += 4;
        int valueLen = valueEntry & ENTRY_LEN_MASK;
        int valuePos = stack[f + 7];
        checkPayload(valuePos, valueLen, frameEnd);
        stack[f + 7] = valuePos + valueLen;
        if (entryType(valueEntry) == T_CONTAINER) {
          stack = ensure(stack, sp);
          sp = open(d, valuePos, valuePos + valueLen, out, stack, sp);
        } else {
          writeScalar(d, valueEntry, valuePos, valueLen, out);
        }
      } else {
        int entry = readInt(d, stack[f + 3], frameEnd);
        stack[f + 3] += 4;
        int len = entry & ENTRY_LEN_MASK;
        int pos = stack[f + 4];
        checkPayload(pos, len, frameEnd);
        stack[f + 4] = pos + len;
        if (entryType(entry) == T_CONTAINER) {
          stack = ensure(stack, sp);
          sp = open(d, pos, pos + len, out, stack, sp);
        } else {
          writeScalar(d, entry, pos, len, out);
        }
      }
    }
  }

  private static int[] ensure(int[] stack, int sp) {
    return sp + F <= stack.length ? stack : java.util.Arrays.copyOf(stack, stack.length * 2);
  }

  /**
   * Starts the value at {@code [start, end)}: writes a scalar whole, or opens a container, pushing its frame.
   * Returns the new stack pointer.
   */
  private static int open(byte[] d, int start, int end, Out out, int[] stack, int sp) {
    int header = readInt(d, start, end);
    int kind = header & HEADER_TYPE_MASK;
    long count = header & HEADER_LEN_MASK;
    if (kind == SCALAR) {
      int entry = readInt(d, start + 4, end);
      int len = entry & ENTRY_LEN_MASK;
      checkPayload(start + 8, len, end);
      if (entryType(entry) == T_CONTAINER) throw new EncodingException("scalar with a container entry at byte " + start);
      writeScalar(d, entry, start + 8, len, out);
      return sp;
    }
    if (kind != ARRAY && kind != OBJECT) {
      throw new EncodingException(String.format("invalid header 0x%08x at byte %d", header, start));
    }
    long entries = kind == OBJECT ? 2 * count : count;
    long payload = (long) start + 4 + 4 * entries;
    if (payload > end) {
      throw new EncodingException((kind == OBJECT ? "object of " : "array of ") + count + " at byte " + start
          + " needs " + (payload - start) + " bytes, has " + (end - start));
    }
    stack[sp] = kind;
    stack[sp + 1] = (int) count;
    stack[sp + 2] = (int) count;
    stack[sp + 3] = start + 4;
    stack[sp + 5] = end;
    if (kind == OBJECT) {
      // Keys' payloads come first; the values' payloads start after all of them.
      long keyBytes = 0;
      for (int i = 0; i < count; i++) keyBytes += readInt(d, start + 4 + 4 * i, end) & ENTRY_LEN_MASK;
      if (payload + keyBytes > end) throw new EncodingException("object keys at byte " + start + " overrun the value");
      stack[sp + 4] = (int) payload;
      stack[sp + 6] = start + 4 + 4 * (int) count;
      stack[sp + 7] = (int) (payload + keyBytes);
      out.put((byte) '{');
    } else {
      stack[sp + 4] = (int) payload;
      out.put((byte) '[');
    }
    return sp + F;
  }

  private static int entryType(int entry) {
    return (entry >>> 28) & 7;
  }

  private static void checkPayload(int pos, int len, int end) {
    if ((long) pos + len > end) throw new EncodingException("payload of " + len + " bytes at byte " + pos + " overruns the value");
  }

  private static int readInt(byte[] d, int pos, int end) {
    if (pos < 0 || (long) pos + 4 > end) throw new EncodingException("truncated value: 4 bytes at byte " + pos + ", ends at " + end);
    return ((d[pos] & 0xFF) << 24) | ((d[pos + 1] & 0xFF) << 16) | ((d[pos + 2] & 0xFF) << 8) | (d[pos + 3] & 0xFF);
  }

  private static long readBe(byte[] d, int pos, int n) {
    long v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | (d[pos + i] & 0xFF);
    return v;
  }

  private static void writeScalar(byte[] d, int entry, int pos, int len, Out out) {
    switch (entryType(entry)) {
      case T_NULL: out.ascii("null"); return;
      case T_TRUE: out.ascii("true"); return;
      case T_FALSE: out.ascii("false"); return;
      case T_STRING: writeString(d, pos, len, out); return;
      case T_NUMBER: writeNumber(d, pos, len, out); return;
      case T_EXTENSION:
        throw new UnsupportedEncodingException("JSONB extension values (binary, date, timestamp, interval)", "a json column");
      default:
        throw new EncodingException("invalid entry type " + entryType(entry) + " at byte " + pos);
    }
  }

  private static void writeNumber(byte[] d, int pos, int len, Out out) {
    if (len < 1) throw new EncodingException("empty number at byte " + pos);
    int type = d[pos] & 0xFF;
    int n = len - 1;
    int p = pos + 1;
    switch (type) {
      case 0x00: out.put((byte) '0'); return;
      case 0x10: case 0x20: case 0x30: out.ascii("null"); return; // NaN and infinities: serde_json writes null
      case 0x40:
        if (n != 1 && n != 2 && n != 4 && n != 8) throw new EncodingException("signed integer of " + n + " bytes at byte " + pos);
        long v = readBe(d, p, n);
        int shift = 64 - 8 * n;
        out.ascii(Long.toString((v << shift) >> shift));
        return;
      case 0x50:
        if (n != 1 && n != 2 && n != 4 && n != 8) throw new EncodingException("unsigned integer of " + n + " bytes at byte " + pos);
        out.ascii(Long.toUnsignedString(readBe(d, p, n)));
        return;
      case 0x60:
        if (n != 8) throw new EncodingException("float of " + n + " bytes at byte " + pos);
        writeDouble(Double.longBitsToDouble(readBe(d, p, 8)), out);
        return;
      case 0x70: {
        int width;
        int scaleAt;
        switch (n) {
          case 9: width = 8; scaleAt = 9; break;
          case 17: width = 16; scaleAt = 17; break;
          case 18: width = 16; scaleAt = 18; break; // older layout with a precision byte before the scale
          case 33: width = 32; scaleAt = 33; break;
          case 34: width = 32; scaleAt = 34; break;
          default: throw new EncodingException("decimal of " + n + " bytes at byte " + pos);
        }
        BigInteger unscaled = new BigInteger(java.util.Arrays.copyOfRange(d, p, p + width));
        int scale = d[pos + scaleAt] & 0xFF;
        out.ascii(new BigDecimal(unscaled, scale).toPlainString());
        return;
      }
      default:
        throw new EncodingException(String.format("invalid number type 0x%02x at byte %d", type, pos));
    }
  }

  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  /** A JSON string literal, escaped as serde_json does (control characters, quote, backslash); other bytes verbatim. */
  private static void writeString(byte[] d, int pos, int len, Out out) {
    out.reserve(len + 2);
    out.buf[out.len++] = '"';
    int end = pos + len;
    for (int i = pos; i < end; i++) {
      byte b = d[i];
      if (b >= 0x20 && b != '"' && b != '\\') {
        out.put(b);
        continue;
      }
      switch (b) {
        case '"': out.put((byte) '\\'); out.put((byte) '"'); break;
        case '\\': out.put((byte) '\\'); out.put((byte) '\\'); break;
        case '\b': out.put((byte) '\\'); out.put((byte) 'b'); break;
        case '\f': out.put((byte) '\\'); out.put((byte) 'f'); break;
        case '\n': out.put((byte) '\\'); out.put((byte) 'n'); break;
        case '\r': out.put((byte) '\\'); out.put((byte) 'r'); break;
        case '\t': out.put((byte) '\\'); out.put((byte) 't'); break;
        default:
          if (b < 0) { out.put(b); break; } // a UTF-8 continuation or lead byte
          out.ascii("\\u00");
          out.put(HEX[(b >> 4) & 0xF]);
          out.put(HEX[b & 0xF]);
      }
    }
    out.put((byte) '"');
  }

  private static final double TWO_53 = 9007199254740992.0;

  /** A finite double in shortest round-trip form, laid out as serde_json (zmij) does; non-finite values as null. */
  static void writeDouble(double v, Out out) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      out.ascii("null");
      return;
    }
    if (v == 0) {
      out.ascii((Double.doubleToRawLongBits(v) < 0) ? "-0.0" : "0.0");
      return;
    }
    if (v < 0) out.put((byte) '-');
    double a = Math.abs(v);
    String digits;
    int exp; // decimal exponent of the first digit
    if (a < TWO_53 && a == Math.rint(a)) {
      String s = Long.toString((long) a);
      int k = s.length();
      while (s.charAt(k - 1) == '0') k--;
      digits = s.substring(0, k);
      exp = s.length() - 1;
    } else {
      BigDecimal shortest = shortest(a);
      digits = shortest.unscaledValue().toString();
      exp = digits.length() - 1 - shortest.scale();
    }
    int n = digits.length();
    if (exp >= -5 && exp <= 15) {
      if (n - 1 <= exp) {
        out.ascii(digits);
        for (int i = 0; i < exp + 1 - n; i++) out.put((byte) '0');
        out.ascii(".0");
      } else if (exp >= 0) {
        out.ascii(digits.substring(0, exp + 1));
        out.put((byte) '.');
        out.ascii(digits.substring(exp + 1));
      } else {
        out.ascii("0.");
        for (int i = 0; i < -exp - 1; i++) out.put((byte) '0');
        out.ascii(digits);
      }
    } else {
      out.put((byte) digits.charAt(0));
      if (n > 1) {
        out.put((byte) '.');
        out.ascii(digits.substring(1));
      }
      out.put((byte) 'e');
      out.put(exp >= 0 ? (byte) '+' : (byte) '-');
      out.ascii(Integer.toString(Math.abs(exp)));
    }
  }

  /**
   * The shortest decimal that reads back as {@code a} (positive, finite), the closest to it among those of that
   * length; trailing zeros stripped.
   */
  private static BigDecimal shortest(double a) {
    BigDecimal exact = new BigDecimal(a);
    for (int p = 1; p <= 17; p++) {
      BigDecimal near = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
      if (near.doubleValue() == a) return near.stripTrailingZeros();
      // Just past a power of two the rounding interval is narrower below than above: the other neighbour may read back.
      BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
      if (up.doubleValue() == a) return up.stripTrailingZeros();
      BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
      if (down.doubleValue() == a) return down.stripTrailingZeros();
    }
    return exact.round(new MathContext(17, RoundingMode.HALF_EVEN)).stripTrailingZeros();
  }

  /** A growable byte buffer. */
  static final class Out {
    byte[] buf;
    int len;

    Out(int capacity) {
      buf = new byte[capacity];
    }

    void reserve(int more) {
      long need = (long) len + more;
      if (need <= buf.length) return;
      if (need > Integer.MAX_VALUE - 16) throw new EncodingException("json text exceeds " + (Integer.MAX_VALUE - 16) + " bytes");
      long cap = Math.max(need, Math.min((long) buf.length * 2, Integer.MAX_VALUE - 16));
      buf = java.util.Arrays.copyOf(buf, (int) cap);
    }

    void put(byte b) {
      if (len == buf.length) reserve(1);
      buf[len++] = b;
    }

    void ascii(String s) {
      int n = s.length();
      reserve(n);
      for (int i = 0; i < n; i++) buf[len++] = (byte) s.charAt(i);
    }
  }
}
