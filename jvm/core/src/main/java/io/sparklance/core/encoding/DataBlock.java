package io.sparklance.core.encoding;

/**
 * Values decoded from a Lance page or buffer, before they become Arrow vectors.
 *
 * The kinds mirror what Lance's compressive encodings produce: fixed-width values (including 1-bit booleans),
 * variable-width values with offsets, fixed-size lists and (packed) structs. Data is little endian.
 */
public abstract class DataBlock {
  /** Number of values (items at the encoding's level). */
  public final int numValues;

  protected DataBlock(int numValues) {
    if (numValues < 0) throw new IllegalArgumentException("negative value count " + numValues);
    this.numValues = numValues;
  }

  /** Fixed-width values: `bitsPerValue` of 1 means LSB-first bits, otherwise whole bytes per value. */
  public static final class FixedWidth extends DataBlock {
    public final int bitsPerValue;
    public final byte[] data;

    public FixedWidth(int bitsPerValue, byte[] data, int numValues) {
      super(numValues);
      this.bitsPerValue = bitsPerValue;
      this.data = data;
      long need = bitsPerValue == 1 ? (numValues + 7L) / 8 : (long) numValues * (bitsPerValue / 8);
      if (bitsPerValue != 1 && bitsPerValue % 8 != 0) throw new IllegalArgumentException("bits per value " + bitsPerValue);
      if (data.length < need) {
        throw new IllegalArgumentException(numValues + " values of " + bitsPerValue + " bits need " + need + " bytes, got " + data.length);
      }
    }

    public int bytesPerValue() { return bitsPerValue / 8; }
  }

  /**
   * Variable-width values: `numValues + 1` offsets of `offsetBits` (32 or 64), starting at 0, into `data`.
   */
  public static final class VariableWidth extends DataBlock {
    public final int offsetBits;
    public final byte[] offsets;
    public final byte[] data;

    public VariableWidth(int offsetBits, byte[] offsets, byte[] data, int numValues) {
      super(numValues);
      this.offsetBits = offsetBits;
      this.offsets = offsets;
      this.data = data;
    }

    public long offset(int i) {
      return offsetBits == 64 ? LittleEndian.getLong(offsets, 8 * i) : LittleEndian.getUnsignedInt(offsets, 4 * i);
    }
  }

  /** A fixed-size list per value: `numValues * dimension` child values, and per-item validity when present. */
  public static final class FixedSizeList extends DataBlock {
    public final int dimension;
    public final DataBlock child;
    /** LSB-first validity of the child items, or null when every item is valid. */
    public final byte[] itemValidity;

    public FixedSizeList(int dimension, DataBlock child, byte[] itemValidity, int numValues) {
      super(numValues);
      this.dimension = dimension;
      this.child = child;
      this.itemValidity = itemValidity;
    }
  }

  /** Struct values, one block per child field (from packed struct encodings). */
  public static final class Struct extends DataBlock {
    public final DataBlock[] children;

    public Struct(DataBlock[] children, int numValues) {
      super(numValues);
      this.children = children;
    }
  }

  /** Dictionary-encoded values: indices (fixed width) into a block of dictionary items. */
  public static final class Dictionary extends DataBlock {
    public final FixedWidth indices;
    public final DataBlock items;

    public Dictionary(FixedWidth indices, DataBlock items) {
      super(indices.numValues);
      this.indices = indices;
      this.items = items;
    }
  }
}
