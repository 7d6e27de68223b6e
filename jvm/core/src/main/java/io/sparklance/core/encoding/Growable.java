package io.sparklance.core.encoding;

import java.util.Arrays;

/** Growable primitive arrays for the writers: append-only, little endian, no boxing. */
public final class Growable {
  private Growable() {}

  /** A growable byte array. */
  public static final class Bytes {
    public byte[] data;
    public int size;

    public Bytes(int capacity) { data = new byte[Math.max(16, capacity)]; }

    public void ensure(int extra) {
      long need = (long) size + extra;
      if (need > Integer.MAX_VALUE - 16) throw new IllegalStateException("a buffer over 2 GiB");
      if (need > data.length) data = Arrays.copyOf(data, (int) Math.min(Integer.MAX_VALUE - 16, Math.max(need, data.length * 2L)));
    }

    public void add(byte b) { ensure(1); data[size++] = b; }

    public void add(byte[] src, int off, int n) { ensure(n); System.arraycopy(src, off, data, size, n); size += n; }

    public void zeros(int n) { ensure(n); Arrays.fill(data, size, size + n, (byte) 0); size += n; }

    public void fill(byte b, int n) { ensure(n); Arrays.fill(data, size, size + n, b); size += n; }

    public void u16(int v) { ensure(2); LittleEndian.putShort(data, size, (short) v); size += 2; }

    public void u32(long v) { ensure(4); LittleEndian.putInt(data, size, (int) v); size += 4; }

    public void u64(long v) { ensure(8); LittleEndian.putLong(data, size, v); size += 8; }

    /** Unsigned little-endian integer of `bytes` bytes (1, 2, 4, 8). */
    public void uint(long v, int bytes) {
      switch (bytes) {
        case 1: add((byte) v); break;
        case 2: u16((int) v); break;
        case 4: u32(v); break;
        case 8: u64(v); break;
        default: throw new IllegalArgumentException("integer of " + bytes + " bytes");
      }
    }

    /** Pads with `fill` to a multiple of `align`. */
    public void pad(int align, byte fill) {
      int n = (align - size % align) % align;
      fill(fill, n);
    }

    public byte[] toArray() { return Arrays.copyOf(data, size); }

    public void clear() { size = 0; }
  }

  /** A growable short array. */
  public static final class Shorts {
    public short[] data;
    public int size;

    public Shorts(int capacity) { data = new short[Math.max(16, capacity)]; }

    public void add(int v) {
      if (size == data.length) data = Arrays.copyOf(data, data.length * 2);
      data[size++] = (short) v;
    }

    public void clear() { size = 0; }
  }

  /** A growable long array. */
  public static final class Longs {
    public long[] data;
    public int size;

    public Longs(int capacity) { data = new long[Math.max(16, capacity)]; }

    public void add(long v) {
      if (size == data.length) data = Arrays.copyOf(data, data.length * 2);
      data[size++] = v;
    }

    public long removeLast() { return data[--size]; }

    public long[] toArray() { return Arrays.copyOf(data, size); }

    public void clear() { size = 0; }
  }
}
