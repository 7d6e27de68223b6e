package io.sparklance.core.encoding;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.arrow.memory.ArrowBuf;

import io.sparklance.proto.Encodings20Protos.ArrayEncoding;
import io.sparklance.proto.Encodings20Protos.Binary;
import io.sparklance.proto.Encodings20Protos.Buffer;
import io.sparklance.proto.Encodings20Protos.Dictionary;
import io.sparklance.proto.Encodings20Protos.FixedSizeList;
import io.sparklance.proto.Encodings20Protos.Flat;
import io.sparklance.proto.Encodings20Protos.Nullable;
import io.sparklance.proto.Encodings20Protos.PackedStruct;
import io.sparklance.proto.Encodings20Protos.SimpleStruct;

/**
 * The byte-building half of the file version 2.0 writer: growable page buffers filled from Arrow buffers, and the
 * `lance.encodings.ArrayEncoding` messages that describe them (docs/dev/file-format-2.0.md §2).
 *
 * Every buffer an encoding refers to is a page buffer, numbered in the order the writer emits them (validity before
 * values, outer before inner, indices before bytes), as pylance 14.0.2 does.
 */
public final class Encoders20 {
  private Encoders20() {}

  /** A growable byte array: the bytes of one page buffer while its page fills. */
  public static final class ByteSink {
    private byte[] data = new byte[256];
    private int size;

    public int size() {
      return size;
    }

    private void ensure(long extra) {
      long need = size + extra;
      if (need > Integer.MAX_VALUE - 64) throw new IllegalStateException("a page buffer of " + need + " bytes");
      if (need > data.length) {
        long grown = Math.max(need, Math.min((long) Integer.MAX_VALUE - 64, 2L * data.length));
        data = java.util.Arrays.copyOf(data, (int) grown);
      }
    }

    /** Appends bytes [offset, offset + length) of an Arrow buffer. */
    public void append(ArrowBuf src, long offset, int length) {
      ensure(length);
      if (length > 0) src.getBytes(offset, data, size, length);
      size += length;
    }

    public void append(byte[] src, int offset, int length) {
      ensure(length);
      System.arraycopy(src, offset, data, size, length);
      size += length;
    }

    public void appendZeros(int length) {
      ensure(length);
      java.util.Arrays.fill(data, size, size + length, (byte) 0);
      size += length;
    }

    public void appendLong(long v) {
      ensure(8);
      LittleEndian.putLong(data, size, v);
      size += 8;
    }

    /** The backing array: bytes [0, size) are the ones appended; valid until the next append or clear. */
    public byte[] array() {
      return data;
    }

    /** A view of the bytes so far; valid until the next append or clear. */
    public ByteBuffer view() {
      return ByteBuffer.wrap(data, 0, size);
    }

    public void clear() {
      size = 0;
      if (data.length > (1 << 20)) data = new byte[256];
    }
  }

  /** A growable array of longs (end offsets) while a page fills. */
  public static final class LongSink {
    private long[] data = new long[64];
    private int size;

    public int size() {
      return size;
    }

    public void append(long v) {
      if (size == data.length) data = java.util.Arrays.copyOf(data, Math.max(64, 2 * size));
      data[size++] = v;
    }

    public long get(int i) {
      return data[i];
    }

    public long last() {
      return size == 0 ? 0 : data[size - 1];
    }

    public void clear() {
      size = 0;
      if (data.length > (1 << 17)) data = new long[64];
    }
  }

  /** A growable LSB-first bitmap (validity or bool values) that counts its set bits. */
  public static final class BitSink {
    private byte[] data = new byte[64];
    private int size;
    private int ones;

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
      if (need > Integer.MAX_VALUE - 64) throw new IllegalStateException("a bitmap of " + need + " bytes");
      if (need > data.length) data = java.util.Arrays.copyOf(data, (int) Math.max(need, Math.min(Integer.MAX_VALUE - 64L, 2L * data.length)));
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
      java.util.Arrays.fill(data, size >>> 3, (size >>> 3) + full, set ? (byte) 0xFF : 0);
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

    public void clear() {
      size = 0;
      ones = 0;
      if (data.length > (1 << 20)) data = new byte[64];
    }
  }

  /** Counts the set bits [from, from + count) of an Arrow bitmap. */
  public static int countOnes(ArrowBuf bitmap, long from, int count) {
    int c = 0;
    for (int i = 0; i < count; i++) {
      long b = from + i;
      c += (bitmap.getByte(b >>> 3) >>> (b & 7)) & 1;
    }
    return c;
  }

  /**
   * The indices buffer of a `Binary` page: the end of each value, plus `nullAdjustment` for a null value
   * (file-format-2.0.md §2.3), as u64 LE.
   */
  public static ByteBuffer binaryIndices(LongSink ends, BitSink validity, long nullAdjustment) {
    int n = ends.size();
    byte[] out = new byte[8 * n];
    for (int i = 0; i < n; i++) {
      long e = ends.get(i);
      LittleEndian.putLong(out, 8 * i, validity.get(i) ? e : e + nullAdjustment);
    }
    return ByteBuffer.wrap(out);
  }

  /** Dictionary indices of `width` bytes each (LE), from int indices. */
  public static ByteBuffer narrowIndices(int[] indices, int n, int width) {
    byte[] out = new byte[n * width];
    for (int i = 0; i < n; i++) {
      int v = indices[i];
      for (int b = 0; b < width; b++) out[i * width + b] = (byte) (width > 4 && b >= 4 ? 0 : v >>> (8 * b));
    }
    return ByteBuffer.wrap(out);
  }

  // ---- encoding messages ----

  public static Buffer buffer(int index) {
    return Buffer.newBuilder().setBufferIndex(index).build();
  }

  public static ArrayEncoding flat(int bitsPerValue, int buffer) {
    return ArrayEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bitsPerValue).setBuffer(buffer(buffer))).build();
  }

  public static ArrayEncoding noNulls(ArrayEncoding values) {
    return ArrayEncoding.newBuilder().setNullable(Nullable.newBuilder().setNoNulls(Nullable.NoNull.newBuilder().setValues(values))).build();
  }

  public static ArrayEncoding someNulls(int validityBuffer, ArrayEncoding values) {
    return ArrayEncoding.newBuilder().setNullable(Nullable.newBuilder().setSomeNulls(
        Nullable.SomeNull.newBuilder().setValidity(flat(1, validityBuffer)).setValues(values))).build();
  }

  public static ArrayEncoding allNulls() {
    return ArrayEncoding.newBuilder().setNullable(Nullable.newBuilder().setAllNulls(Nullable.AllNull.getDefaultInstance())).build();
  }

  public static ArrayEncoding fixedSizeList(int dimension, ArrayEncoding items) {
    return ArrayEncoding.newBuilder().setFixedSizeList(FixedSizeList.newBuilder().setDimension(dimension).setItems(items)).build();
  }

  /** `binary{indices: nullable.no_nulls(flat64 @indices), bytes: flat8 @bytes}`. */
  public static ArrayEncoding binary(int indicesBuffer, int bytesBuffer, long nullAdjustment) {
    return ArrayEncoding.newBuilder().setBinary(Binary.newBuilder().setIndices(noNulls(flat(64, indicesBuffer)))
        .setBytes(flat(8, bytesBuffer)).setNullAdjustment(nullAdjustment)).build();
  }

  /** A list offsets page: `list{offsets: nullable.no_nulls(flat64 @0), null_offset_adjustment, num_items}`. */
  public static ArrayEncoding list(long nullOffsetAdjustment, long numItems) {
    return ArrayEncoding.newBuilder().setList(io.sparklance.proto.Encodings20Protos.List.newBuilder()
        .setOffsets(noNulls(flat(64, 0))).setNullOffsetAdjustment(nullOffsetAdjustment).setNumItems(numItems)).build();
  }

  public static ArrayEncoding struct() {
    return ArrayEncoding.newBuilder().setStruct(SimpleStruct.getDefaultInstance()).build();
  }

  public static ArrayEncoding packedStruct(List<ArrayEncoding> inner, int buffer) {
    return ArrayEncoding.newBuilder().setPackedStruct(PackedStruct.newBuilder().addAllInner(inner).setBuffer(buffer(buffer))).build();
  }

  public static ArrayEncoding dictionary(ArrayEncoding indices, ArrayEncoding items, int numItems) {
    return ArrayEncoding.newBuilder().setDictionary(Dictionary.newBuilder().setIndices(indices).setItems(items)
        .setNumDictionaryItems(numItems)).build();
  }

  /** A page encoding as the `google.protobuf.Any` a 2.0 page carries (type URL `/lance.encodings.ArrayEncoding`). */
  public static com.google.protobuf.Any any(ArrayEncoding e) {
    return com.google.protobuf.Any.newBuilder().setTypeUrl("/lance.encodings.ArrayEncoding").setValue(e.toByteString()).build();
  }
}
