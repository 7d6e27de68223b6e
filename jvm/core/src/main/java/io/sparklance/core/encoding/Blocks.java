package io.sparklance.core.encoding;

import java.util.List;

/** Operations over decoded blocks. */
public final class Blocks {
  private Blocks() {}

  /** Concatenates blocks of the same kind and width, in order. */
  public static DataBlock concat(List<DataBlock> parts) {
    if (parts.isEmpty()) throw new IllegalArgumentException("nothing to concatenate");
    if (parts.size() == 1) return parts.get(0);
    DataBlock first = parts.get(0);
    long total = 0;
    for (DataBlock b : parts) {
      if (b.getClass() != first.getClass()) {
        throw new EncodingException("a page mixes " + first.getClass().getSimpleName() + " and " + b.getClass().getSimpleName() + " values");
      }
      total += b.numValues;
    }
    if (total > Integer.MAX_VALUE - 16) throw new EncodingException(total + " values in one read");
    int n = (int) total;
    if (first instanceof DataBlock.FixedWidth) {
      int bits = ((DataBlock.FixedWidth) first).bitsPerValue;
      if (bits == 1) {
        byte[] out = new byte[(n + 7) / 8];
        int pos = 0;
        for (DataBlock b : parts) {
          DataBlock.FixedWidth f = (DataBlock.FixedWidth) b;
          Bits.copy(f.data, 0, out, pos, f.numValues);
          pos += f.numValues;
        }
        return new DataBlock.FixedWidth(1, out, n);
      }
      int vb = bits / 8;
      byte[] out = new byte[n * vb];
      int pos = 0;
      for (DataBlock b : parts) {
        DataBlock.FixedWidth f = (DataBlock.FixedWidth) b;
        if (f.bitsPerValue != bits) throw new EncodingException("a page mixes " + bits + "- and " + f.bitsPerValue + "-bit values");
        System.arraycopy(f.data, 0, out, pos, f.numValues * vb);
        pos += f.numValues * vb;
      }
      return new DataBlock.FixedWidth(bits, out, n);
    }
    if (first instanceof DataBlock.VariableWidth) {
      long dataLen = 0;
      boolean wide = false;
      for (DataBlock b : parts) {
        DataBlock.VariableWidth v = (DataBlock.VariableWidth) b;
        dataLen += v.offset(v.numValues);
        wide |= v.offsetBits == 64;
      }
      if (dataLen > Integer.MAX_VALUE - 16) throw new EncodingException("a read of " + dataLen + " bytes of strings");
      wide |= dataLen > Integer.MAX_VALUE;
      int ob = wide ? 8 : 4;
      byte[] offsets = new byte[(n + 1) * ob];
      byte[] data = new byte[(int) dataLen];
      int idx = 0;
      long base = 0;
      for (DataBlock b : parts) {
        DataBlock.VariableWidth v = (DataBlock.VariableWidth) b;
        for (int i = 1; i <= v.numValues; i++) {
          long o = base + v.offset(i);
          if (wide) LittleEndian.putLong(offsets, 8 * (idx + i), o); else LittleEndian.putInt(offsets, 4 * (idx + i), (int) o);
        }
        int len = (int) v.offset(v.numValues);
        System.arraycopy(v.data, 0, data, (int) base, len);
        base += len;
        idx += v.numValues;
      }
      return new DataBlock.VariableWidth(wide ? 64 : 32, offsets, data, n);
    }
    if (first instanceof DataBlock.FixedSizeList) {
      int dim = ((DataBlock.FixedSizeList) first).dimension;
      java.util.ArrayList<DataBlock> children = new java.util.ArrayList<>();
      boolean anyValidity = false;
      for (DataBlock b : parts) {
        DataBlock.FixedSizeList f = (DataBlock.FixedSizeList) b;
        if (f.dimension != dim) throw new EncodingException("a page mixes list dimensions " + dim + " and " + f.dimension);
        children.add(f.child);
        anyValidity |= f.itemValidity != null;
      }
      byte[] validity = null;
      if (anyValidity) {
        long items = (long) n * dim;
        validity = new byte[(int) ((items + 7) / 8)];
        int pos = 0;
        for (DataBlock b : parts) {
          DataBlock.FixedSizeList f = (DataBlock.FixedSizeList) b;
          int m = f.numValues * dim;
          if (f.itemValidity != null) Bits.copy(f.itemValidity, 0, validity, pos, m); else Bits.set(validity, pos, m);
          pos += m;
        }
      }
      return new DataBlock.FixedSizeList(dim, concat(children), validity, n);
    }
    if (first instanceof DataBlock.Struct) {
      int k = ((DataBlock.Struct) first).children.length;
      DataBlock[] children = new DataBlock[k];
      for (int c = 0; c < k; c++) {
        java.util.ArrayList<DataBlock> col = new java.util.ArrayList<>();
        for (DataBlock b : parts) col.add(((DataBlock.Struct) b).children[c]);
        children[c] = concat(col);
      }
      return new DataBlock.Struct(children, n);
    }
    throw new EncodingException("cannot concatenate " + first.getClass().getSimpleName() + " blocks");
  }

  /** Values [from, to) of a block. */
  public static DataBlock slice(DataBlock b, int from, int to) {
    if (from < 0 || to < from || to > b.numValues) throw new EncodingException("a slice [" + from + ", " + to + ") of " + b.numValues + " values");
    if (from == 0 && to == b.numValues) return b;
    int n = to - from;
    if (b instanceof DataBlock.FixedWidth) {
      DataBlock.FixedWidth f = (DataBlock.FixedWidth) b;
      if (f.bitsPerValue == 1) {
        byte[] out = new byte[(n + 7) / 8];
        Bits.copy(f.data, from, out, 0, n);
        return new DataBlock.FixedWidth(1, out, n);
      }
      int vb = f.bitsPerValue / 8;
      return new DataBlock.FixedWidth(f.bitsPerValue, java.util.Arrays.copyOfRange(f.data, from * vb, to * vb), n);
    }
    if (b instanceof DataBlock.VariableWidth) {
      DataBlock.VariableWidth v = (DataBlock.VariableWidth) b;
      long start = v.offset(from), end = v.offset(to);
      int ob = v.offsetBits / 8;
      byte[] offsets = new byte[(n + 1) * ob];
      for (int i = 0; i <= n; i++) {
        long o = v.offset(from + i) - start;
        if (ob == 8) LittleEndian.putLong(offsets, 8 * i, o); else LittleEndian.putInt(offsets, 4 * i, (int) o);
      }
      return new DataBlock.VariableWidth(v.offsetBits, offsets, java.util.Arrays.copyOfRange(v.data, (int) start, (int) end), n);
    }
    if (b instanceof DataBlock.FixedSizeList) {
      DataBlock.FixedSizeList f = (DataBlock.FixedSizeList) b;
      byte[] validity = null;
      if (f.itemValidity != null) {
        validity = new byte[(int) (((long) n * f.dimension + 7) / 8)];
        Bits.copy(f.itemValidity, (long) from * f.dimension, validity, 0, (long) n * f.dimension);
      }
      return new DataBlock.FixedSizeList(f.dimension, slice(f.child, from * f.dimension, to * f.dimension), validity, n);
    }
    if (b instanceof DataBlock.Struct) {
      DataBlock.Struct s = (DataBlock.Struct) b;
      DataBlock[] children = new DataBlock[s.children.length];
      for (int c = 0; c < children.length; c++) children[c] = slice(s.children[c], from, to);
      return new DataBlock.Struct(children, n);
    }
    if (b instanceof DataBlock.Dictionary) {
      DataBlock.Dictionary d = (DataBlock.Dictionary) b;
      return new DataBlock.Dictionary((DataBlock.FixedWidth) slice(d.indices, from, to), d.items);
    }
    throw new EncodingException("cannot slice " + b.getClass().getSimpleName());
  }

  /** Replaces dictionary indices by the items they point to. */
  public static DataBlock materialize(DataBlock b) {
    return b instanceof DataBlock.Dictionary ? materialize(b, 0, b.numValues) : b;
  }

  /**
   * Values [from, to) of a block as a block of their own, dictionary indices replaced by the items they point to:
   * `materialize(slice(b, from, to))` without copying the indices first.
   */
  public static DataBlock materialize(DataBlock b, int from, int to) {
    if (!(b instanceof DataBlock.Dictionary)) return slice(b, from, to);
    if (from < 0 || to < from || to > b.numValues) throw new EncodingException("a slice [" + from + ", " + to + ") of " + b.numValues + " values");
    DataBlock.Dictionary d = (DataBlock.Dictionary) b;
    int n = to - from;
    int[] pos = positions(d.indices, from, n, d.items.numValues);
    if (d.items instanceof DataBlock.FixedWidth) {
      DataBlock.FixedWidth it = (DataBlock.FixedWidth) d.items;
      if (it.bitsPerValue == 1) throw new EncodingException("a dictionary of booleans");
      int vb = it.bitsPerValue / 8;
      byte[] items = it.data;
      byte[] out = gather(items, vb, pos);
      return new DataBlock.FixedWidth(it.bitsPerValue, out, n);
    }
    if (d.items instanceof DataBlock.VariableWidth) {
      DataBlock.VariableWidth it = (DataBlock.VariableWidth) d.items;
      long total = 0;
      for (int i = 0; i < n; i++) if (pos[i] >= 0) total += it.offset(pos[i] + 1) - it.offset(pos[i]);
      if (total > Integer.MAX_VALUE - 16) throw new EncodingException("dictionary strings of " + total + " bytes");
      boolean wide = it.offsetBits == 64;
      byte[] offsets = new byte[(n + 1) * (wide ? 8 : 4)];
      byte[] data = new byte[(int) total];
      int at = 0;
      for (int i = 0; i < n; i++) {
        if (pos[i] >= 0) {
          int s = (int) it.offset(pos[i]);
          int len = (int) (it.offset(pos[i] + 1) - s);
          System.arraycopy(it.data, s, data, at, len);
          at += len;
        }
        if (wide) LittleEndian.putLong(offsets, 8 * (i + 1), at); else LittleEndian.putInt(offsets, 4 * (i + 1), at);
      }
      return new DataBlock.VariableWidth(it.offsetBits, offsets, data, n);
    }
    throw new EncodingException("a dictionary of " + d.items.getClass().getSimpleName());
  }

  /**
   * The `width`-byte items of `items` at positions `pos` (as {@link #itemPositions} gives them), one after the other; a
   * null slot (-1) leaves zeros. One loop per common width, so the copy has no branch on it.
   */
  public static byte[] gather(byte[] items, int width, int[] pos) {
    int n = pos.length;
    byte[] out = new byte[Math.multiplyExact(n, width)];
    switch (width) {
      case 16:
        for (int i = 0; i < n; i++) {
          int p = pos[i];
          if (p >= 0) {
            LittleEndian.putLong(out, 16 * i, LittleEndian.getLong(items, 16 * p));
            LittleEndian.putLong(out, 16 * i + 8, LittleEndian.getLong(items, 16 * p + 8));
          }
        }
        break;
      case 8:
        for (int i = 0; i < n; i++) if (pos[i] >= 0) LittleEndian.putLong(out, 8 * i, LittleEndian.getLong(items, 8 * pos[i]));
        break;
      case 4:
        for (int i = 0; i < n; i++) if (pos[i] >= 0) LittleEndian.putInt(out, 4 * i, LittleEndian.getInt(items, 4 * pos[i]));
        break;
      default:
        for (int i = 0; i < n; i++) if (pos[i] >= 0) System.arraycopy(items, pos[i] * width, out, i * width, width);
    }
    return out;
  }

  /**
   * The item positions of the indices [from, from + n) of a dictionary block, as `materialize` reads them: -1 for
   * the null slot just past the items; an index beyond it is an EncodingException.
   */
  public static int[] itemPositions(DataBlock.Dictionary d, int from, int n) {
    if (from < 0 || n < 0 || from + n > d.numValues) throw new EncodingException("a slice [" + from + ", " + (from + n) + ") of " + d.numValues + " values");
    return positions(d.indices, from, n, d.items.numValues);
  }

  /**
   * The item positions of dictionary indices [from, from + n): -1 for the null slot just past the `size` items; an
   * index beyond it is an EncodingException.
   */
  private static int[] positions(DataBlock.FixedWidth idx, int from, int n, int size) {
    int ib = idx.bitsPerValue / 8;
    byte[] data = idx.data;
    int[] pos = new int[n];
    boolean valid = true;
    long bad = 0;
    switch (ib) {
      case 1:
        for (int i = 0; i < n; i++) pos[i] = data[from + i] & 0xFF;
        break;
      case 2:
        for (int i = 0; i < n; i++) pos[i] = LittleEndian.getUnsignedShort(data, 2 * (from + i));
        break;
      case 4:
        for (int i = 0; i < n; i++) {
          int k = LittleEndian.getInt(data, 4 * (from + i));
          if (k < 0) { valid = false; bad = k & 0xFFFFFFFFL; break; }
          pos[i] = k;
        }
        break;
      default:
        for (int i = 0; i < n; i++) {
          long k = LittleEndian.getUnsigned(data, (from + i) * ib, ib);
          if (k < 0 || k > size) { valid = false; bad = k; break; }  // k < 0: a u64 index of 2^63 or more
          pos[i] = (int) k;
        }
    }
    if (valid) {
      for (int i = 0; i < n; i++) {
        int k = pos[i];
        if (k >= size) {
          if (k == size) pos[i] = -1;  // a null slot past the items
          else { valid = false; bad = k; break; }
        }
      }
    }
    if (!valid) throw new EncodingException("dictionary index " + Long.toUnsignedString(bad) + " of a dictionary of " + size + " items");
    return pos;
  }

  /** A variable-width block of the given values, with offsets of `offsetBits` (32 or 64). */
  public static DataBlock.VariableWidth ofValues(java.util.List<byte[]> values, int offsetBits) {
    long total = 0;
    for (byte[] v : values) total += v.length;
    if (total > Integer.MAX_VALUE - 16 || (offsetBits == 32 && total > Integer.MAX_VALUE)) {
      throw new EncodingException("values of " + total + " bytes in one page");
    }
    int n = values.size();
    int ob = offsetBits / 8;
    byte[] offsets = new byte[(n + 1) * ob];
    byte[] data = new byte[(int) total];
    int at = 0;
    for (int i = 0; i < n; i++) {
      byte[] v = values.get(i);
      System.arraycopy(v, 0, data, at, v.length);
      at += v.length;
      if (ob == 8) LittleEndian.putLong(offsets, 8 * (i + 1), at); else LittleEndian.putInt(offsets, 4 * (i + 1), at);
    }
    return new DataBlock.VariableWidth(offsetBits, offsets, data, n);
  }
}
