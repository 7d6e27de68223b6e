package io.sparklance.core.file;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Copies one row of a vector into a slot of another of the same type, children included: what a take needs for
 * every type the reader returns. Arrow's own {@code copyFromSafe} goes through its complex writers for nested
 * vectors, which support neither large lists nor null vectors.
 *
 * Rows must be copied into increasing slots of the target (list and variable-width offsets are appended).
 */
public final class RowCopier {
  private RowCopier() {}

  /**
   * A new vector, owned by the caller, of rows `rows[0..count)` of `from` in that order (any order, repeats
   * allowed): what keeps the rows of a batch that a filter selected.
   */
  public static FieldVector select(FieldVector from, int[] rows, int count, BufferAllocator allocator) {
    FieldVector to = from.getField().createVector(allocator);
    try {
      to.setInitialCapacity(count);
      to.allocateNew();
      if (isFixedWidth(from)) {
        BaseFixedWidthVector f = (BaseFixedWidthVector) from, t = (BaseFixedWidthVector) to;
        boolean nulls = f.getNullCount() > 0;
        for (int i = 0; i < count; i++) copyFixed(f, rows[i], t, i, nulls);
      } else {
        for (int i = 0; i < count; i++) copy(from, rows[i], to, i);
      }
      to.setValueCount(count);
      return to;
    } catch (RuntimeException e) {
      to.close();
      throw e;
    }
  }

  /**
   * Copies rows [row, row + count) of `from` into slots [slot, slot + count) of `to`, a vector of the same type
   * whose value count the caller sets; fixed-width values are copied as one block of bytes.
   */
  public static void copyRange(FieldVector from, int row, int count, FieldVector to, int slot) {
    if (isFixedWidth(from)) {
      BaseFixedWidthVector f = (BaseFixedWidthVector) from, t = (BaseFixedWidthVector) to;
      while (t.getValueCapacity() < slot + count) t.reAlloc();
      long w = f.getTypeWidth();
      t.getDataBuffer().setBytes(slot * w, f.getDataBuffer(), row * w, count * w);
      copyBits(f.getValidityBuffer(), row, t.getValidityBuffer(), slot, count);
    } else {
      for (int i = 0; i < count; i++) copy(from, row + i, to, slot + i);
    }
  }

  /** Copies bits [from, from + count) of `f` to bits [to, to + count) of `t`, a byte at a time where `t` is aligned. */
  static void copyBits(ArrowBuf f, long from, ArrowBuf t, long to, int count) {
    int i = 0;
    while (i < count && ((to + i) & 7) != 0) { BitVectorHelper.setValidityBit(t, (int) (to + i), BitVectorHelper.get(f, (int) (from + i))); i++; }
    while (count - i >= 8) {
      long s = from + i;
      int shift = (int) (s & 7);
      int b = (f.getByte(s >>> 3) & 0xFF) >>> shift;
      if (shift != 0) b |= (f.getByte((s >>> 3) + 1) & 0xFF) << (8 - shift);
      t.setByte((to + i) >>> 3, (byte) b);
      i += 8;
    }
    while (i < count) { BitVectorHelper.setValidityBit(t, (int) (to + i), BitVectorHelper.get(f, (int) (from + i))); i++; }
  }

  private static boolean isFixedWidth(ValueVector v) {
    return v instanceof BaseFixedWidthVector && !(v instanceof BitVector);
  }

  /** One value of a fixed-width vector into a slot within `to`'s capacity; with no `nulls` in `from`, valid. */
  private static void copyFixed(BaseFixedWidthVector from, int row, BaseFixedWidthVector to, int slot, boolean nulls) {
    int w = from.getTypeWidth();
    ArrowBuf f = from.getDataBuffer(), t = to.getDataBuffer();
    if (w == 8) t.setLong(8L * slot, f.getLong(8L * row));
    else if (w == 4) t.setInt(4L * slot, f.getInt(4L * row));
    else t.setBytes((long) slot * w, f, (long) row * w, w);
    boolean valid = !nulls || BitVectorHelper.get(from.getValidityBuffer(), row) != 0;
    BitVectorHelper.setValidityBit(to.getValidityBuffer(), slot, valid ? 1 : 0);
  }

  static void copy(ValueVector from, int row, ValueVector to, int slot) {
    if (from instanceof NullVector) return;   // nothing but the row count, set by the caller
    if (from instanceof BaseFixedWidthVector || from instanceof BaseVariableWidthVector
        || from instanceof BaseLargeVariableWidthVector) {
      to.copyFromSafe(row, slot, from);
    } else if (from instanceof StructVector) {
      StructVector f = (StructVector) from, t = (StructVector) to;
      int n = f.size();
      for (int c = 0; c < n; c++) {
        ValueVector child = t.getChildByOrdinal(c);
        copy(f.getChildByOrdinal(c), row, child, slot);
      }
      if (f.isNull(row)) t.setNull(slot); else t.setIndexDefined(slot);
    } else if (from instanceof LargeListVector) {
      LargeListVector f = (LargeListVector) from, t = (LargeListVector) to;
      ArrowBuf o = f.getOffsetBuffer();
      long s = o.getLong(8L * row), e = o.getLong(8L * (row + 1));
      long at = t.startNewValue(slot);
      for (long j = s; j < e; j++) copy(f.getDataVector(), (int) j, t.getDataVector(), (int) (at + j - s));
      t.endValue(slot, e - s);
      if (f.isNull(row)) t.setNull(slot);
    } else if (from instanceof ListVector) {   // maps too
      ListVector f = (ListVector) from, t = (ListVector) to;
      ArrowBuf o = f.getOffsetBuffer();
      int s = o.getInt(4L * row), e = o.getInt(4L * (row + 1));
      int at = t.startNewValue(slot);
      for (int j = s; j < e; j++) copy(f.getDataVector(), j, t.getDataVector(), at + j - s);
      t.endValue(slot, e - s);
      if (f.isNull(row)) t.setNull(slot);
    } else if (from instanceof FixedSizeListVector) {
      FixedSizeListVector f = (FixedSizeListVector) from, t = (FixedSizeListVector) to;
      int d = f.getListSize();
      ValueVector items = f.getDataVector();
      if (items instanceof BaseFixedWidthVector && !(items instanceof BitVector)) {
        // A vector's items are contiguous: one copy of their bytes, and their validity bit by bit.
        BaseFixedWidthVector fi = (BaseFixedWidthVector) items, ti = (BaseFixedWidthVector) t.getDataVector();
        long w = fi.getTypeWidth();
        while (ti.getValueCapacity() < (slot + 1) * d) ti.reAlloc();
        ti.getDataBuffer().setBytes((long) slot * d * w, fi.getDataBuffer(), (long) row * d * w, d * w);
        ArrowBuf fv = fi.getValidityBuffer(), tv = ti.getValidityBuffer();
        if (d % 8 == 0) tv.setBytes((long) slot * d / 8, fv, (long) row * d / 8, d / 8);   // whole bytes of bits
        else for (int j = 0; j < d; j++) BitVectorHelper.setValidityBit(tv, slot * d + j, BitVectorHelper.get(fv, row * d + j));
      } else {
        for (int j = 0; j < d; j++) copy(items, row * d + j, t.getDataVector(), slot * d + j);
      }
      if (f.isNull(row)) t.setNull(slot); else t.setNotNull(slot);
    } else {
      to.copyFromSafe(row, slot, from);
    }
  }
}
