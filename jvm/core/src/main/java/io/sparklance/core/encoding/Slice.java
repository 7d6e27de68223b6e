package io.sparklance.core.encoding;

/** A range of a byte array; decoders read through slices to avoid copying page buffers. */
public final class Slice {
  public final byte[] array;
  public final int offset;
  public final int length;

  public Slice(byte[] array, int offset, int length) {
    if (offset < 0 || length < 0 || (long) offset + length > array.length) {
      throw new EncodingException("a buffer range [" + offset + ", " + ((long) offset + length) + ") lies outside the "
          + array.length + " bytes available");
    }
    this.array = array;
    this.offset = offset;
    this.length = length;
  }

  public static Slice of(byte[] a) { return new Slice(a, 0, a.length); }

  public Slice slice(int off, int len) {
    if (off < 0 || len < 0 || (long) off + len > length) {
      throw new EncodingException("a range [" + off + ", " + ((long) off + len) + ") lies outside a buffer of " + length + " bytes");
    }
    return new Slice(array, offset + off, len);
  }

  public byte[] copy() {
    return java.util.Arrays.copyOfRange(array, offset, offset + length);
  }

  /** Checks that `n` bytes are available at relative offset `off`. */
  public void require(long off, long n, String what) {
    if (off < 0 || n < 0 || n > length - off) {
      throw new EncodingException(what + " needs " + n + " bytes at offset " + off + ", but the buffer has " + length);
    }
  }

  /** Checks that `n` bytes are available at relative offset `off`; the message names `what` and `index` (built only on failure). */
  public void require(long off, long n, String what, int index) {
    if (off < 0 || n < 0 || n > length - off) require(off, n, what + " " + index);
  }

  public int u8(int i) { return array[offset + i] & 0xFF; }
  public int u16(int i) { return LittleEndian.getUnsignedShort(array, offset + i); }
  public long u32(int i) { return LittleEndian.getUnsignedInt(array, offset + i); }
  public long i64(int i) { return LittleEndian.getLong(array, offset + i); }
}
