package io.sparklance.core.file;

import io.sparklance.core.encoding.Blocks;
import io.sparklance.core.encoding.DataBlock;
import io.sparklance.core.encoding.EncodingException;
import io.sparklance.core.encoding.LittleEndian;
import io.sparklance.core.encoding.RepDef;
import io.sparklance.core.util.Utf8;

import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * Expands a dictionary-encoded page of strings or binary values into a fresh Arrow variable-width vector in bulk.
 *
 * The items' bounds are checked and tabled once, and strings are checked for UTF-8 once per item used, not once per
 * value; then each value's offset and bytes go into plain arrays (one byte per value where every item used is one
 * byte long, as in one-byte flags; two whole longs per value where none is longer than 16 bytes), copied into the
 * vector's buffers in one call each. {@link Blocks#materialize}
 * followed by a copy of its offsets and bytes, and a UTF-8 check of the expanded bytes, did the same work once per
 * value, several times over.
 */
final class DictionaryStrings {
  private DictionaryStrings() {}

  /**
   * Values [from, to) of `d` (variable-width items) into `v`, a string or binary vector, with `validity` (null:
   * all valid). An index to the null slot just past the items gives an empty value (the levels make the row null); an
   * index beyond it, item bounds outside the items' bytes, or a string item that is not UTF-8 is an
   * EncodingException.
   */
  static void fill(FieldVector v, DataBlock.Dictionary d, int from, int to, RepDef.Validity validity) {
    DataBlock.VariableWidth items = (DataBlock.VariableWidth) d.items;
    String name = v.getField().getName();
    if (from < 0 || to < from || to > d.numValues) {
      throw new EncodingException("a slice [" + from + ", " + to + ") of " + d.numValues + " values");
    }
    int n = to - from;
    if (validity != null && validity.count != n) {
      throw new EncodingException("field '" + name + "': " + validity.count + " validity bits for " + n + " values");
    }
    int size = items.numValues;
    if ((long) (size + 1) * (items.offsetBits / 8) > items.offsets.length) {
      throw new EncodingException(items.offsets.length + " offset bytes for a dictionary of " + size + " items");
    }
    // Slot 0 is the null slot (no bytes), slot k + 1 item k: Blocks.itemPositions gives -1 for the null slot.
    int[] start = new int[size + 1];
    int[] length = new int[size + 1];
    for (int k = 0; k < size; k++) {
      long s = items.offset(k);
      long e = items.offset(k + 1);
      if (s < 0 || e < s || e > items.data.length) {
        throw new EncodingException("dictionary item " + k + " of field '" + name + "' spans bytes [" + s + ", " + e
            + ") of " + items.data.length);
      }
      start[k + 1] = (int) s;
      length[k + 1] = (int) (e - s);
    }
    int[] pos = Blocks.itemPositions(d, from, n);
    boolean[] used = new boolean[size + 1];
    long total = 0;
    for (int i = 0; i < n; i++) {
      int p = pos[i] + 1;
      used[p] = true;
      total += length[p];
    }
    boolean large = v instanceof BaseLargeVariableWidthVector;
    if (total > Integer.MAX_VALUE - 16) {
      throw new EncodingException("field '" + name + "' has " + total + " bytes of dictionary strings in one batch");
    }
    boolean utf8 = v instanceof VarCharVector || v instanceof LargeVarCharVector;
    byte[] src = items.data;
    int width = -1; // the length of every item used, or -2 where they differ
    int longest = 0;
    for (int p = 0; p <= size; p++) {
      if (!used[p]) continue;
      if (utf8 && Utf8.invalidAt(src, start[p], start[p] + length[p]) >= 0) {
        throw new EncodingException("dictionary item " + (p - 1) + " of field '" + name + "' is not valid UTF-8");
      }
      width = width == -1 || width == length[p] ? length[p] : -2;
      longest = Math.max(longest, length[p]);
    }
    // 16 bytes past the values: items of up to 16 bytes are stored as two whole longs, the next value overwriting
    // what lies past the item.
    byte[] data = new byte[(int) total + 16];
    int ob = large ? 8 : 4;
    byte[] offsets = new byte[(n + 1) * ob];
    if (width == 1) {
      byte[] one = new byte[size + 1];
      for (int p = 0; p <= size; p++) if (used[p]) one[p] = src[start[p]];
      for (int i = 0; i < n; i++) data[i] = one[pos[i] + 1];
      if (large) for (int i = 1; i <= n; i++) LittleEndian.putLong(offsets, 8 * i, i);
      else for (int i = 1; i <= n; i++) LittleEndian.putInt(offsets, 4 * i, i);
    } else if (longest <= 16) {
      long[] low = new long[size + 1];
      long[] high = new long[size + 1];
      byte[] padded = new byte[16];
      for (int p = 0; p <= size; p++) {
        if (!used[p]) continue;
        java.util.Arrays.fill(padded, (byte) 0);
        System.arraycopy(src, start[p], padded, 0, length[p]);
        low[p] = LittleEndian.getLong(padded, 0);
        high[p] = LittleEndian.getLong(padded, 8);
      }
      int at = 0;
      for (int i = 0; i < n; i++) {
        int p = pos[i] + 1;
        LittleEndian.putLong(data, at, low[p]);
        LittleEndian.putLong(data, at + 8, high[p]);
        at += length[p];
        if (large) LittleEndian.putLong(offsets, 8 * (i + 1), at); else LittleEndian.putInt(offsets, 4 * (i + 1), at);
      }
    } else {
      int at = 0;
      for (int i = 0; i < n; i++) {
        int p = pos[i] + 1;
        System.arraycopy(src, start[p], data, at, length[p]);
        at += length[p];
        if (large) LittleEndian.putLong(offsets, 8 * (i + 1), at); else LittleEndian.putInt(offsets, 4 * (i + 1), at);
      }
    }
    // The two vector classes share no interface for allocating and for the last value set; the rest is FieldVector's.
    if (large) ((BaseLargeVariableWidthVector) v).allocateNew(Math.max(total, 1), n);
    else ((BaseVariableWidthVector) v).allocateNew(Math.max(total, 1), n);
    v.getOffsetBuffer().setBytes(0, offsets, 0, offsets.length);
    v.getDataBuffer().setBytes(0, data, 0, total);
    ArrowAssembler.writeValidity(v.getValidityBuffer(), validity, n);
    if (large) ((BaseLargeVariableWidthVector) v).setLastSet(n - 1);
    else ((BaseVariableWidthVector) v).setLastSet(n - 1);
    v.setValueCount(n);
  }
}
