package io.sparklance.core.file;

import io.sparklance.core.encoding.Blocks;
import io.sparklance.core.encoding.DataBlock;
import io.sparklance.core.encoding.EncodingException;
import io.sparklance.core.encoding.RepDef;
import io.sparklance.core.util.Utf8;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;

import java.util.Iterator;
import java.util.List;

/**
 * Fills Arrow vectors from decoded leaf columns (file versions 2.1+): the leaf values and, through the levels, the
 * validity of every layer and the offsets of every list, innermost first.
 *
 * The target vector tree is created from the Arrow field beforehand; leaves are consumed in depth-first order, a
 * packed struct being one leaf.
 */
public final class ArrowAssembler {
  private ArrowAssembler() {}

  /** A decoded leaf column: its levels across pages and its visible values. */
  public static final class Leaf {
    final RepDef.Composite levels;
    final DataBlock values;
    final int from;
    final int to;

    /** Values [from, to) of `values` (a decoded page may be shared between reads, so it is not sliced). */
    public Leaf(RepDef.Composite levels, DataBlock values, int from, int to) {
      this.levels = levels;
      this.values = values;
      this.from = from;
      this.to = to;
    }

    public Leaf(RepDef.Composite levels, DataBlock values) {
      this(levels, values, 0, values.numValues);
    }

    /** The values as a block of their own (copies unless the leaf covers the whole block). */
    DataBlock block() {
      return Blocks.materialize(values, from, to);
    }
  }

  /** Which fields are stored packed (one leaf column for the whole struct). */
  public interface PackedTest {
    boolean isPacked(org.apache.arrow.vector.types.pojo.Field field);
  }

  /** Fills `v` and returns the levels left for the enclosing layers. */
  public static RepDef.Composite fill(FieldVector v, Iterator<Leaf> leaves, PackedTest packed) {
    if (v instanceof StructVector && packed.isPacked(v.getField())) {
      Leaf leaf = next(leaves, v);
      DataBlock block = leaf.block();
      if (!(block instanceof DataBlock.Struct)) throw new EncodingException("a packed struct column without struct values");
      DataBlock.Struct s = (DataBlock.Struct) block;
      StructVector sv = (StructVector) v;
      List<FieldVector> children = sv.getChildrenFromFields();
      if (children.size() != s.children.length) {
        throw new EncodingException("a packed struct of " + s.children.length + " fields for " + children.size() + " children");
      }
      for (int i = 0; i < s.children.length; i++) fillLeafValues(children.get(i), s.children[i], null);
      RepDef.Validity validity = leaf.levels.unravelValidity(s.numValues);
      setStructValidity(sv, validity, s.numValues);
      return leaf.levels;
    }
    if (v instanceof StructVector) {
      StructVector sv = (StructVector) v;
      RepDef.Composite first = null;
      int count = -1;
      for (FieldVector child : sv.getChildrenFromFields()) {
        RepDef.Composite c = fill(child, leaves, packed);
        if (count >= 0 && child.getValueCount() != count) {
          throw new EncodingException("struct '" + v.getField().getName() + "' children have " + count + " and " + child.getValueCount() + " values");
        }
        count = child.getValueCount();
        if (first == null) first = c;
      }
      if (first == null) throw new EncodingException("struct '" + v.getField().getName() + "' has no children to read");
      RepDef.Validity validity = first.unravelValidity(count);
      setStructValidity(sv, validity, count);
      return first;
    }
    if (v instanceof ListVector || v instanceof LargeListVector) {
      FieldVector child = v instanceof ListVector ? ((ListVector) v).getDataVector() : ((LargeListVector) v).getDataVector();
      RepDef.Composite levels = fill(child, leaves, packed);
      RepDef.Offsets offsets = levels.unravelOffsets();
      if (offsets.offsets[offsets.count] != child.getValueCount()) {
        throw new EncodingException("list '" + v.getField().getName() + "' offsets end at " + offsets.offsets[offsets.count]
            + " but its items number " + child.getValueCount());
      }
      setListBuffers(v, offsets);
      return levels;
    }
    Leaf leaf = next(leaves, v);
    int n = leaf.to - leaf.from;
    RepDef.Validity validity = leaf.levels.unravelValidity(n);
    if (leaf.values instanceof DataBlock.FixedWidth || leaf.values instanceof DataBlock.VariableWidth || isPlainVectors(leaf.values)) {
      fillLeafRange(v, leaf.values, leaf.from, leaf.to, validity);
    } else if (expandsInPlace(v, leaf.values)) {
      fillFromDictionary((BaseFixedWidthVector) v, (DataBlock.Dictionary) leaf.values, leaf.from, leaf.to, validity);
    } else if (expandsStringsInPlace(v, leaf.values, leaf.to - leaf.from)) {
      DictionaryStrings.fill(v, (DataBlock.Dictionary) leaf.values, leaf.from, leaf.to, validity);
    } else {
      fillLeafValues(v, leaf.block(), validity);
    }
    return leaf.levels;
  }

  /** Whether `b` is dictionary-encoded whole-byte fixed-width values that `v`, a fixed-width vector, holds as they are. */
  private static boolean expandsInPlace(FieldVector v, DataBlock b) {
    if (!(b instanceof DataBlock.Dictionary) || !(v instanceof BaseFixedWidthVector) || v instanceof BitVector) return false;
    DataBlock.Dictionary d = (DataBlock.Dictionary) b;
    int ib = d.indices.bitsPerValue;
    return d.items instanceof DataBlock.FixedWidth && ((DataBlock.FixedWidth) d.items).bitsPerValue % 8 == 0
        && (ib == 8 || ib == 16 || ib == 32 || ib == 64);
  }

  /**
   * Whether `b` is dictionary-encoded variable-width items that `v`, a string or binary vector, holds, with no more
   * items than 4 per value read ({@link DictionaryStrings}: the items' bounds are tabled once per read).
   */
  private static boolean expandsStringsInPlace(FieldVector v, DataBlock b, int n) {
    if (!(b instanceof DataBlock.Dictionary) || !(v instanceof BaseVariableWidthVector || v instanceof BaseLargeVariableWidthVector)) return false;
    DataBlock.Dictionary d = (DataBlock.Dictionary) b;
    int ib = d.indices.bitsPerValue;
    return d.items instanceof DataBlock.VariableWidth && d.items.numValues <= 4L * Math.max(n, 1)
        && (ib == 8 || ib == 16 || ib == 32 || ib == 64);
  }

  /**
   * Values [from, to) of a dictionary-encoded block of whole-byte fixed-width items, written straight into a fresh
   * fixed-width vector, without the block {@link Blocks#materialize} would make first. An index to the null slot
   * just past the items leaves zeros (the levels make the row null); one beyond it is an EncodingException, as in
   * {@code materialize}.
   */
  private static void fillFromDictionary(BaseFixedWidthVector fv, DataBlock.Dictionary d, int from, int to, RepDef.Validity validity) {
    DataBlock.FixedWidth items = (DataBlock.FixedWidth) d.items;
    int width = fv.getTypeWidth();
    if (items.bitsPerValue != width * 8) {
      throw new EncodingException("field '" + fv.getField().getName() + "' holds " + (width * 8) + "-bit values, the page "
          + items.bitsPerValue + "-bit dictionary items");
    }
    if (from < 0 || to < from || to > d.numValues) throw new EncodingException("a slice [" + from + ", " + to + ") of " + d.numValues + " values");
    int n = to - from;
    if (validity != null && validity.count != n) {
      throw new EncodingException("field '" + fv.getField().getName() + "': " + validity.count + " validity bits for " + n + " values");
    }
    int size = items.numValues;
    if ((long) size * width > items.data.length) {
      throw new EncodingException("a dictionary of " + size + " items of " + width + " bytes in " + items.data.length + " bytes");
    }
    int ib = d.indices.bitsPerValue / 8;
    byte[] idx = d.indices.data;
    if ((long) to * ib > idx.length) {
      throw new EncodingException(d.indices.bitsPerValue + "-bit dictionary indices of " + d.numValues + " values in " + idx.length + " bytes");
    }
    // Gathered into an array, then copied once: a store into the vector's buffer per value checks its bounds and
    // reference count each time. A null slot leaves zeros.
    byte[] dst = Blocks.gather(items.data, width, Blocks.itemPositions(d, from, n));
    allocateExact(fv, n, validity).setBytes(0, dst, 0, dst.length);
  }

  /**
   * Gives `fv` a data buffer for exactly `n` values, not zeroed, and `validity` (null: all valid), and returns the
   * data buffer for the caller to write every byte of. `allocateNew` would round the buffers up to a power of two
   * and zero all of them first, which costs about as much as filling them (a 16-byte decimal column of 8192 rows:
   * 256 KB zeroed for 128 KB written).
   */
  private static ArrowBuf allocateExact(BaseFixedWidthVector fv, int n, RepDef.Validity validity) {
    org.apache.arrow.memory.BufferAllocator allocator = fv.getAllocator();
    int bytes = (n + 7) / 8;
    ArrowBuf data = allocator.buffer(Math.max(1L, (long) n * fv.getTypeWidth()));
    try {
      ArrowBuf bits = allocator.buffer(Math.max(1, bytes));
      try {
        bits.setZero(0, bits.capacity());
        writeValidity(bits, validity, n);
        int nulls = validity == null || validity.bits == null ? 0 : n - countValid(validity, n);
        fv.loadFieldBuffers(new org.apache.arrow.vector.ipc.message.ArrowFieldNode(n, nulls), java.util.List.of(bits, data));
      } finally {
        bits.getReferenceManager().release();
      }
    } finally {
      data.getReferenceManager().release();
    }
    return fv.getDataBuffer();
  }

  private static Leaf next(Iterator<Leaf> leaves, FieldVector v) {
    if (!leaves.hasNext()) throw new EncodingException("no column left for field '" + v.getField().getName() + "'");
    return leaves.next();
  }

  private static boolean isPlainVectors(DataBlock b) {
    return b instanceof DataBlock.FixedSizeList && ((DataBlock.FixedSizeList) b).itemValidity == null
        && ((DataBlock.FixedSizeList) b).child instanceof DataBlock.FixedWidth
        && ((DataBlock.FixedWidth) ((DataBlock.FixedSizeList) b).child).bitsPerValue % 8 == 0;
  }

  /**
   * Writes values [from, to) of a fixed-width, variable-width or plain fixed-size-list block straight into a fresh
   * vector, without slicing the block first.
   */
  static void fillLeafRange(FieldVector v, DataBlock block, int from, int to, RepDef.Validity validity) {
    int n = to - from;
    if (from == 0 && to == block.numValues) {
      fillLeafValues(v, block, validity);
      return;
    }
    if (block instanceof DataBlock.FixedWidth && ((DataBlock.FixedWidth) block).bitsPerValue % 8 == 0
        && v instanceof BaseFixedWidthVector && !(v instanceof BitVector)) {
      fillFixedWidth((BaseFixedWidthVector) v, (DataBlock.FixedWidth) block, from, n, validity);
      return;
    }
    if (isPlainVectors(block) && v instanceof FixedSizeListVector) {
      DataBlock.FixedSizeList f = (DataBlock.FixedSizeList) block;
      FixedSizeListVector fv = (FixedSizeListVector) v;
      if (fv.getListSize() != f.dimension) throw new EncodingException("a fixed-size list of " + f.dimension + " for '" + v.getField().getName() + "' of " + fv.getListSize());
      if ((long) f.child.numValues != (long) f.numValues * f.dimension) {
        throw new EncodingException(f.child.numValues + " items for " + f.numValues + " fixed-size lists of " + f.dimension);
      }
      fillLeafRange(fv.getDataVector(), f.child, from * f.dimension, to * f.dimension, null);
      loadOwnBuffers(fv, validity, n, null);
      return;
    }
    fillLeafValues(v, Blocks.slice(block, from, to), validity);
  }

  /** Writes a leaf's values (and validity, null meaning all valid) into a fresh vector. */
  public static void fillLeafValues(FieldVector v, DataBlock block, RepDef.Validity validity) {
    int n = block.numValues;
    if (validity != null && validity.count != n) {
      throw new EncodingException("field '" + v.getField().getName() + "': " + validity.count + " validity bits for " + n + " values");
    }
    if (v instanceof NullVector) {
      ((NullVector) v).setValueCount(n);
      return;
    }
    if (v instanceof FixedSizeListVector) {
      if (!(block instanceof DataBlock.FixedSizeList)) throw mismatch(v, block);
      DataBlock.FixedSizeList f = (DataBlock.FixedSizeList) block;
      FixedSizeListVector fv = (FixedSizeListVector) v;
      if (fv.getListSize() != f.dimension) throw new EncodingException("a fixed-size list of " + f.dimension + " for '" + v.getField().getName() + "' of " + fv.getListSize());
      if ((long) f.child.numValues != (long) n * f.dimension) {
        throw new EncodingException(f.child.numValues + " items for " + n + " fixed-size lists of " + f.dimension);
      }
      RepDef.Validity items = new RepDef.Validity(f.itemValidity, f.child.numValues);
      fillLeafValues(fv.getDataVector(), f.child, items);
      loadOwnBuffers(fv, validity, n, null);
      return;
    }
    if (v instanceof BitVector) {
      if (!(block instanceof DataBlock.FixedWidth) || ((DataBlock.FixedWidth) block).bitsPerValue != 1) throw mismatch(v, block);
      BitVector bv = (BitVector) v;
      bv.allocateNew(n);
      byte[] bits = ((DataBlock.FixedWidth) block).data;
      bv.getDataBuffer().setBytes(0, bits, 0, (n + 7) / 8);
      writeValidity(bv.getValidityBuffer(), validity, n);
      bv.setValueCount(n);
      return;
    }
    if (v instanceof BaseFixedWidthVector) {
      if (!(block instanceof DataBlock.FixedWidth)) throw mismatch(v, block);
      fillFixedWidth((BaseFixedWidthVector) v, (DataBlock.FixedWidth) block, 0, n, validity);
      return;
    }
    if (v instanceof BaseVariableWidthVector || v instanceof BaseLargeVariableWidthVector) {
      if (!(block instanceof DataBlock.VariableWidth)) throw mismatch(v, block);
      DataBlock.VariableWidth w = (DataBlock.VariableWidth) block;
      long total = w.offset(n);
      checkVariableWidth(w, n, v instanceof VarCharVector || v instanceof LargeVarCharVector);
      boolean large = v instanceof BaseLargeVariableWidthVector;
      if (!large && total > Integer.MAX_VALUE) throw new EncodingException("field '" + v.getField().getName() + "' has " + total + " bytes in one batch");
      ArrowBuf offsets, data, valid;
      if (large) {
        BaseLargeVariableWidthVector lv = (BaseLargeVariableWidthVector) v;
        lv.allocateNew(Math.max(total, 1), n);
        offsets = lv.getOffsetBuffer(); data = lv.getDataBuffer(); valid = lv.getValidityBuffer();
        for (int i = 0; i <= n; i++) offsets.setLong(8L * i, w.offset(i));
      } else {
        BaseVariableWidthVector vv = (BaseVariableWidthVector) v;
        vv.allocateNew(Math.max(total, 1), n);
        offsets = vv.getOffsetBuffer(); data = vv.getDataBuffer(); valid = vv.getValidityBuffer();
        if (w.offsetBits == 32) offsets.setBytes(0, w.offsets, 0, 4L * (n + 1));
        else for (int i = 0; i <= n; i++) offsets.setInt(4L * i, (int) w.offset(i));
      }
      data.setBytes(0, w.data, 0, total);
      writeValidity(valid, validity, n);
      if (large) { ((BaseLargeVariableWidthVector) v).setLastSet(n - 1); ((BaseLargeVariableWidthVector) v).setValueCount(n); }
      else { ((BaseVariableWidthVector) v).setLastSet(n - 1); ((BaseVariableWidthVector) v).setValueCount(n); }
      return;
    }
    throw new EncodingException("field '" + v.getField().getName() + "' of type " + v.getField().getType() + " cannot be read from "
        + block.getClass().getSimpleName() + " values");
  }

  /**
   * Checks variable-width values before they are copied: offsets start at 0, never go backwards and stay within the
   * data; string values are well-formed UTF-8 (pylance refuses pages that are not), each starting on a character.
   */
  private static void checkVariableWidth(DataBlock.VariableWidth w, int n, boolean utf8) {
    if ((long) w.offsets.length < (long) (n + 1) * (w.offsetBits / 8)) {
      throw new EncodingException(w.offsets.length + " offset bytes for " + n + " values");
    }
    long previous = w.offset(0);
    if (previous != 0) throw new EncodingException("the first value starts at byte " + previous);
    for (int i = 1; i <= n; i++) {
      long end = w.offset(i);
      if (end < previous || end > w.data.length) {
        throw new EncodingException("value " + (i - 1) + " ends at byte " + end + ", outside ["
            + previous + ", " + w.data.length + "]");
      }
      previous = end;
    }
    if (!utf8) return;
    int bad = Utf8.invalidAt(w.data, 0, (int) previous);
    if (bad >= 0) throw new EncodingException("byte " + bad + " of the string data is not valid UTF-8");
    for (int i = 1; i < n; i++) {
      if (!Utf8.startsCharacter(w.data, (int) w.offset(i))) {
        throw new EncodingException("value " + i + " starts inside a UTF-8 character");
      }
    }
  }

  /**
   * The name of the first field in `v`'s tree declared not nullable that holds a null (one its struct parent does
   * not mask), or null if there is none: what a table declares not nullable must hold no nulls, and pylance
   * refuses such data. Costs a null count per vector; values are visited only for non-nullable fields with nulls
   * under a struct with nulls.
   */
  public static String unmaskedNull(FieldVector v, FieldVector structParent) {
    if (!v.getField().isNullable() && !(v instanceof NullVector) && v.getNullCount() > 0) {
      if (structParent == null || structParent.getNullCount() == 0) return v.getName();
      int n = v.getValueCount();
      for (int i = 0; i < n; i++) {
        if (v.isNull(i) && !structParent.isNull(i)) return v.getName();
      }
    }
    for (FieldVector child : v.getChildrenFromFields()) {
      String found = unmaskedNull(child, v instanceof StructVector ? v : null);
      if (found != null) return v.getName() + "." + found;
    }
    return null;
  }

  /** Values [from, from + n) of a whole-byte fixed-width block into a fresh fixed-width vector. */
  private static void fillFixedWidth(BaseFixedWidthVector fv, DataBlock.FixedWidth f, int from, int n, RepDef.Validity validity) {
    int width = fv.getTypeWidth();
    if (f.bitsPerValue != width * 8) {
      throw new EncodingException("field '" + fv.getField().getName() + "' holds " + (width * 8) + "-bit values, the page "
          + f.bitsPerValue + "-bit");
    }
    if ((long) (from + n) * width > f.data.length) {
      throw new EncodingException("values [" + from + ", " + (from + n) + ") of " + width + " bytes in " + f.data.length + " bytes");
    }
    allocateExact(fv, n, validity).setBytes(0, f.data, from * width, (long) n * width);
  }

  private static EncodingException mismatch(FieldVector v, DataBlock block) {
    return new EncodingException("field '" + v.getField().getName() + "' of type " + v.getField().getType() + " got "
        + block.getClass().getSimpleName() + " values");
  }

  static void writeValidity(ArrowBuf buf, RepDef.Validity validity, int n) {
    int bytes = (n + 7) / 8;
    if (validity == null || validity.bits == null) {
      buf.setOne(0, bytes);
    } else {
      buf.setBytes(0, validity.bits, 0, Math.min(bytes, validity.bits.length));
    }
  }

  public static void setStructValidity(StructVector sv, RepDef.Validity validity, int n) {
    loadOwnBuffers(sv, validity, n, null);
  }

  public static void setListBuffers(FieldVector v, RepDef.Offsets o) {
    int n = o.count;
    boolean large = v instanceof LargeListVector;
    ArrowBuf off = v.getAllocator().buffer((long) (n + 1) * (large ? 8 : 4));
    try {
      for (int i = 0; i <= n; i++) {
        if (large) off.setLong(8L * i, o.offsets[i]); else off.setInt(4L * i, (int) o.offsets[i]);
      }
      loadOwnBuffers(v, o.validity, n, off);
    } finally {
      off.getReferenceManager().release();
    }
  }

  /**
   * Loads a nested vector's own buffers (validity, and offsets for lists) without touching its children, which
   * are already filled: Arrow's allocateNew on a nested vector would reset them.
   */
  private static void loadOwnBuffers(FieldVector v, RepDef.Validity validity, int n, ArrowBuf offsets) {
    int nulls = 0;
    ArrowBuf bits = v.getAllocator().buffer(Math.max(1, (n + 7) / 8));
    try {
      bits.setZero(0, bits.capacity());
      writeValidity(bits, validity, n);
      if (validity != null && validity.bits != null) nulls = n - countValid(validity, n);
      org.apache.arrow.vector.ipc.message.ArrowFieldNode node = new org.apache.arrow.vector.ipc.message.ArrowFieldNode(n, nulls);
      java.util.List<ArrowBuf> own = offsets == null ? java.util.List.of(bits) : java.util.List.of(bits, offsets);
      v.loadFieldBuffers(node, own);
    } finally {
      bits.getReferenceManager().release();
    }
  }

  private static int countValid(RepDef.Validity validity, int n) {
    byte[] bits = validity.bits;
    int whole = Math.min(n >>> 3, bits.length);
    int c = 0;
    for (int i = 0; i < whole; i++) c += Integer.bitCount(bits[i] & 0xFF);
    for (int i = whole * 8; i < n; i++) if (validity.isValid(i)) c++;
    return c;
  }

}
