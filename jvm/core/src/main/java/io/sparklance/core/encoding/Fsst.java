package io.sparklance.core.encoding;

/**
 * FSST string decompression as Lance writes it.
 *
 * The symbol table: a u64 little-endian header (bits 0-7: symbol count; bit 24: compression on; bits 32-63: the
 * magic "FSST"), then `count` u64 symbols (the symbol's bytes from the least significant end), then `count` u8
 * symbol lengths (1 to 8). Compressed strings are code bytes: code 255 escapes the next byte, which is literal;
 * any other code stands for its symbol. With compression off the strings are stored as they are.
 */
public final class Fsst {
  private Fsst() {}

  private static final long MAGIC = 0x46535354L << 32;
  private static final int ESCAPE = 255;

  /** A parsed symbol table. */
  public static final class SymbolTable {
    final boolean enabled;
    final long[] symbols = new long[256];
    final byte[] lengths = new byte[256];

    private SymbolTable(boolean enabled) {
      this.enabled = enabled;
    }

    public static SymbolTable parse(byte[] table) {
      if (table.length < 8) throw new EncodingException("an FSST symbol table of " + table.length + " bytes");
      long header = LittleEndian.getLong(table, 0);
      if ((header & MAGIC) != MAGIC) throw new EncodingException("an FSST symbol table without the FSST magic");
      int n = (int) (header & 0xFF);
      SymbolTable t = new SymbolTable((header & (1L << 24)) != 0);
      if (8 + 9L * n > table.length) throw new EncodingException("an FSST symbol table of " + n + " symbols in " + table.length + " bytes");
      for (int i = 0; i < n; i++) t.symbols[i] = LittleEndian.getLong(table, 8 + 8 * i);
      for (int i = 0; i < n; i++) {
        int len = table[8 + 8 * n + i];
        if (len < 1 || len > 8) throw new EncodingException("FSST symbol " + i + " has length " + len);
        t.lengths[i] = (byte) len;
      }
      return t;
    }
  }

  /** Decompresses every string of `in`; the output is at most `maxBytes` long. */
  public static DataBlock.VariableWidth decompress(SymbolTable t, DataBlock.VariableWidth in, long maxBytes) {
    if (!t.enabled) return in;
    int n = in.numValues;
    byte[] src = in.data;
    byte[] lengths = t.lengths;
    int srcEnd = (int) in.offset(n);
    // First pass: the exact output size, so the second pass never grows its buffer.
    long total = 0;
    for (int j = 0; j < srcEnd; ) {
      int code = src[j] & 0xFF;
      if (code == ESCAPE) { total += 1; j += 2; }
      else {
        int len = lengths[code];
        if (len == 0) throw new EncodingException("FSST code " + code + " is not in the symbol table");
        total += len;
        j += 1;
      }
    }
    if (total > maxBytes || total > Integer.MAX_VALUE - 16) throw new EncodingException("FSST strings inflate to " + total + " bytes");
    // Symbols are written 8 bytes at a time; the slack keeps the last write inside the array.
    byte[] out = new byte[(int) total + 8];
    long[] symbols = t.symbols;
    byte[] offsets = new byte[in.offsets.length];
    boolean wide = in.offsetBits == 64;
    int pos = 0;
    int j = (int) in.offset(0);
    for (int i = 0; i < n; i++) {
      int end = (int) in.offset(i + 1);
      while (j < end) {
        int code = src[j++] & 0xFF;
        if (code == ESCAPE) {
          if (j >= end) throw new EncodingException("an FSST string ends in an escape byte");
          out[pos++] = src[j++];
        } else {
          LittleEndian.putLong(out, pos, symbols[code]);
          pos += lengths[code];
        }
      }
      if (wide) LittleEndian.putLong(offsets, 8 * (i + 1), pos);
      else LittleEndian.putInt(offsets, 4 * (i + 1), pos);
    }
    return new DataBlock.VariableWidth(in.offsetBits, offsets, out, n);
  }
}
