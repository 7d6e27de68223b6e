package io.sparklance.core.encoding;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.arrow.memory.ArrowBuf;

/**
 * Growable primitive arrays and bitmaps for the writers: append-only, little endian, no boxing.
 *
 * Each doubles its array as it fills, up to {@link #MAX_LENGTH} elements, and fails with an
 * `IllegalStateException` naming the length it was asked for beyond that. `clear()` keeps the array for the next
 * page; `clearAndShrink()` also gives back an array that grew past about 1 MiB, for a writer that holds a buffer
 * per column between pages and should not pin the memory of its largest page.
 */
public final class Growable {
  private Growable() {}

  /** The most elements one buffer holds: a little under Integer.MAX_VALUE, which JVMs cannot allocate. */
  public static final int MAX_LENGTH = Integer.MAX_VALUE - 64;

  /** Bytes above which `clearAndShrink()` gives back a buffer's array. */
  private static final int SHRINK_BYTES = 1 << 20;

  /** The length to grow an array of `length` elements to so that it holds `need`: double, at least `need`. */
  private static int grownLength(int length, long need, String what) {
    if (need > MAX_LENGTH) {
      throw new IllegalStateException("Cannot grow a buffer to " + need + " " + what + ": a Java array holds at most "
          + MAX_LENGTH + ". Write smaller pages or smaller values.");
    }
    return (int) Math.max(need, Math.min(MAX_LENGTH, 2L * length));
  }

  /** A growable byte array. */
  public static final class Bytes {
    public byte[] data;
    public int size;
    private final int initial;

    public Bytes(int capacity) {
      initial = Math.max(16, capacity);
      data = new byte[initial];
    }

    public void ensure(int extra) {
      long need = (long) size + extra;
      if (need > data.length) data = Arrays.copyOf(data, grownLength(data.length, need, "bytes"));
    }

    public void add(byte b) { ensure(1); data[size++] = b; }

    public void add(byte[] src, int off, int n) { ensure(n); System.arraycopy(src, off, data, size, n); size += n; }

    /** Appends bytes [offset, offset + n) of an Arrow buffer. */
    public void add(ArrowBuf src, long offset, int n) {
      ensure(n);
      if (n > 0) src.getBytes(offset, data, size, n);
      size += n;
    }

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

    /** A view of the bytes so far; valid until the next add or clear. */
    public ByteBuffer view() { return ByteBuffer.wrap(data, 0, size); }

    public void clear() { size = 0; }

    /** Clears, and gives back the array if it grew past 1 MiB. */
    public void clearAndShrink() {
      size = 0;
      if (data.length > Math.max(SHRINK_BYTES, initial)) data = new byte[initial];
    }
  }

  /** A growable short array. */
  public static final class Shorts {
    public short[] data;
    public int size;

    public Shorts(int capacity) { data = new short[Math.max(16, capacity)]; }

    public void add(int v) {
      if (size == data.length) data = Arrays.copyOf(data, grownLength(data.length, size + 1L, "shorts"));
      data[size++] = (short) v;
    }

    /** Adds `n` zeros. */
    public void addZeros(int n) {
      if (size + n > data.length) data = Arrays.copyOf(data, grownLength(data.length, size + (long) n, "shorts"));
      Arrays.fill(data, size, size + n, (short) 0);
      size += n;
    }

    public void clear() { size = 0; }
  }

  /** A growable long array. */
  public static final class Longs {
    public long[] data;
    public int size;
    private final int initial;

    public Longs(int capacity) {
      initial = Math.max(16, capacity);
      data = new long[initial];
    }

    public void add(long v) {
      if (size == data.length) data = Arrays.copyOf(data, grownLength(data.length, size + 1L, "longs"));
      data[size++] = v;
    }

    /** The last value, or 0 if there is none (the end offset before the first value). */
    public long last() { return size == 0 ? 0 : data[size - 1]; }

    public long removeLast() { return data[--size]; }

    public long[] toArray() { return Arrays.copyOf(data, size); }

    public void clear() { size = 0; }

    /** Clears, and gives back the array if it grew past 1 MiB. */
    public void clearAndShrink() {
      size = 0;
      if (data.length > Math.max(SHRINK_BYTES / 8, initial)) data = new long[initial];
    }
  }

  /** A growable LSB-first bitmap (validity or bool values) that counts its set bits. */
  public static final class Bits {
    private byte[] data;
    private int size;
    private int ones;
    private final int initial;

    /** A bitmap with room for `capacity` bits before it grows. */
    public Bits(int capacity) {
      initial = Math.max(8, (int) ((capacity + 7L) >>> 3));
      data = new byte[initial];
    }

    public int size() {
      return size;
    }

    public int ones() {
      return ones;
    }

    public int bytes() {
      return (size + 7) >>> 3;
    }

    private void ensure(int extraBits) {
      long need = ((long) size + extraBits + 7) >>> 3;
      if (need > data.length) data = Arrays.copyOf(data, grownLength(data.length, need, "bytes of bitmap"));
    }

    /** Appends `count` bits of an Arrow bitmap starting at bit `from`. */
    public void append(ArrowBuf src, long from, int count) {
      ensure(count);
      if ((from & 7) == 0 && (size & 7) == 0 && count > 0) {
        int nbytes = (count + 7) >>> 3;
        src.getBytes(from >>> 3, data, size >>> 3, nbytes);
        int full = count >>> 3;
        int c = 0;
        for (int i = 0; i < full; i++) c += Integer.bitCount(data[(size >>> 3) + i] & 0xFF);
        int rest = count & 7;
        if (rest != 0) {
          int last = (size >>> 3) + full;
          data[last] &= (byte) ((1 << rest) - 1);
          c += Integer.bitCount(data[last] & 0xFF);
        }
        size += count;
        ones += c;
        return;
      }
      for (int i = 0; i < count; i++) {
        long b = from + i;
        boolean set = ((src.getByte(b >>> 3) >>> (b & 7)) & 1) != 0;
        appendBit(set);
      }
    }

    public void appendBit(boolean set) {
      ensure(1);
      int i = size >>> 3;
      if ((size & 7) == 0) data[i] = 0;
      if (set) {
        data[i] |= (byte) (1 << (size & 7));
        ones++;
      }
      size++;
    }

    /** Appends `count` copies of one bit. */
    public void appendConstant(boolean set, int count) {
      ensure(count);
      while (count > 0 && (size & 7) != 0) {
        appendBit(set);
        count--;
      }
      int full = count >>> 3;
      Arrays.fill(data, size >>> 3, (size >>> 3) + full, set ? (byte) 0xFF : 0);
      size += full << 3;
      if (set) ones += full << 3;
      for (int i = 0; i < (count & 7); i++) appendBit(set);
    }

    public boolean get(int i) {
      return ((data[i >>> 3] >>> (i & 7)) & 1) != 0;
    }

    /** A view of the bitmap so far (unused high bits of the last byte are 0). */
    public ByteBuffer view() {
      return ByteBuffer.wrap(data, 0, bytes());
    }

    /** Clears, and gives back the array if it grew past 1 MiB. */
    public void clearAndShrink() {
      size = 0;
      ones = 0;
      if (data.length > Math.max(SHRINK_BYTES, initial)) data = new byte[initial];
    }
  }
}
