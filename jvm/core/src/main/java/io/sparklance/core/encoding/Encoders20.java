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
 * The byte-building half of the file version 2.0 writer: page buffers built from the writer's {@link Growable}
 * buffers, and the `lance.encodings.ArrayEncoding` messages that describe them (docs/dev/file-format-2.0.md §2).
 *
 * Every buffer an encoding refers to is a page buffer, numbered in the order the writer emits them (validity before
 * values, outer before inner, indices before bytes), as pylance 14.0.2 does.
 */
public final class Encoders20 {
  private Encoders20() {}

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
  public static ByteBuffer binaryIndices(Growable.Longs ends, Growable.Bits validity, long nullAdjustment) {
    int n = ends.size;
    byte[] out = new byte[8 * n];
    for (int i = 0; i < n; i++) {
      long e = ends.data[i];
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
