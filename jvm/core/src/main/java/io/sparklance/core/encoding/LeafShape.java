package io.sparklance.core.encoding;

/**
 * The shape of a leaf column's values (from its schema type), for pages that carry no values of their own
 * (all-null and constant pages) and for checking what other pages decode to.
 */
public abstract class LeafShape {

  /** A block of `n` placeholder values (zeros, empty strings); their validity says they are null. */
  public abstract DataBlock zeros(int n);

  /** The shape of a fixed-size list's items; other shapes have none. */
  public LeafShape item() {
    throw new EncodingException("a fixed-size list encoding over a column that is not a fixed-size list");
  }

  /** `n` copies of one value given as bytes (fixed width: the value's little-endian bytes; variable: the bytes). */
  public abstract DataBlock repeat(byte[] value, int n, long maxBytes);

  public static LeafShape fixed(int bits) {
    return new LeafShape() {
      public DataBlock zeros(int n) {
        return new DataBlock.FixedWidth(bits, new byte[bits == 1 ? (n + 7) / 8 : n * (bits / 8)], n);
      }

      public DataBlock repeat(byte[] value, int n, long maxBytes) {
        if (bits == 1) {
          if (value.length < 1) throw new EncodingException("an empty boolean constant");
          byte[] out = new byte[(n + 7) / 8];
          if ((value[0] & 1) != 0) Bits.set(out, 0, n);
          return new DataBlock.FixedWidth(1, out, n);
        }
        if (value.length != bits / 8) throw new EncodingException("a constant of " + value.length + " bytes for " + bits + "-bit values");
        return Decoders21.constant(value, n, maxBytes);
      }
    };
  }

  public static LeafShape variable(int offsetBits) {
    return new LeafShape() {
      public DataBlock zeros(int n) {
        return new DataBlock.VariableWidth(offsetBits, new byte[(n + 1) * (offsetBits / 8)], new byte[0], n);
      }

      public DataBlock repeat(byte[] value, int n, long maxBytes) {
        long total = (long) value.length * n;
        if (total > maxBytes) throw new EncodingException("a constant of " + n + " x " + value.length + " bytes");
        int ob = offsetBits / 8;
        byte[] offsets = new byte[(n + 1) * ob];
        byte[] data = new byte[(int) total];
        for (int i = 0; i < n; i++) {
          System.arraycopy(value, 0, data, i * value.length, value.length);
          long o = (long) (i + 1) * value.length;
          if (ob == 8) LittleEndian.putLong(offsets, 8 * (i + 1), o); else LittleEndian.putInt(offsets, 4 * (i + 1), (int) o);
        }
        return new DataBlock.VariableWidth(offsetBits, offsets, data, n);
      }
    };
  }

  public static LeafShape fixedSizeList(int dim, LeafShape item) {
    return new LeafShape() {
      @Override
      public LeafShape item() { return item; }

      public DataBlock zeros(int n) {
        return new DataBlock.FixedSizeList(dim, item.zeros(n * dim), null, n);
      }

      public DataBlock repeat(byte[] value, int n, long maxBytes) {
        throw new EncodingException("a constant fixed-size list");
      }
    };
  }

  public static LeafShape struct(LeafShape[] children) {
    return new LeafShape() {
      public DataBlock zeros(int n) {
        DataBlock[] c = new DataBlock[children.length];
        for (int i = 0; i < c.length; i++) c[i] = children[i].zeros(n);
        return new DataBlock.Struct(c, n);
      }

      public DataBlock repeat(byte[] value, int n, long maxBytes) {
        throw new EncodingException("a constant struct");
      }
    };
  }
}
