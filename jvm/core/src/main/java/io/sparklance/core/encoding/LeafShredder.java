package io.sparklance.core.encoding;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.BaseRepeatedValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Turns the Arrow values of one leaf column into repetition/definition levels and a stream of visible values
 * (docs/dev/file-format-2.1.md §7): the writer's side of the structural encodings of file versions 2.1 and 2.2.
 *
 * The path from the top-level field down to the leaf is a chain of nodes, outermost first: structs, lists (maps
 * are lists of an entries struct) and the leaf. Definition levels are recorded in a "full" numbering in which
 * every item layer has a null code and every list layer a null and an empty code; a page keeps only the layers it
 * needs and renumbers them ({@link StructuralPageEncoder}). Values are kept for visible levels only, with a zero placeholder for
 * null ones.
 */
public final class LeafShredder {
  public static final byte STRUCT = 0, LIST = 1, LEAF = 2;

  /** The value kinds of a leaf. */
  public static final byte FIXED = 0, BOOL = 1, VARIABLE = 2, FIXED_SIZE_LIST = 3, NULL = 4, PACKED_STRUCT = 5,
      VARIABLE_PACKED_STRUCT = 6;

  private final byte[] kinds;
  private final String[] childNames;
  final int[] nullCode;
  final int[] emptyCode;
  private final int[] elementRep;
  public final int maxRep;
  public final int maxFullDef;
  /** Levels with a full definition code at most this have a value slot. */
  public final int maxVisibleDef;

  public final byte valueKind;
  /** Bytes per value (FIXED), offset bits (VARIABLE), element bytes (FIXED_SIZE_LIST). */
  public final int width;
  /** Dimensions of nested fixed-size lists, outermost first (FIXED_SIZE_LIST). */
  public final int[] dims;
  /** Items per value below each fixed-size list layer, outermost first: dims[0]*...*dims[j]. */
  public final int[] cumDims;

  public final Growable.Shorts rep = new Growable.Shorts(1024);
  public final Growable.Shorts def = new Growable.Shorts(1024);
  public final Growable.Bytes values = new Growable.Bytes(1 << 12);
  /** End offset of each visible value in `values` (VARIABLE). */
  public final Growable.Longs ends = new Growable.Longs(1024);
  /** Item validity (one byte per item, 1 = valid) under each fixed-size list layer. */
  public final Growable.Bytes[] itemValidity;
  /** Which full definition codes occur (to pick the page's layers). */
  public final boolean[] seen;
  /**
   * Each child of a packed struct: for PACKED_STRUCT its bytes; for VARIABLE_PACKED_STRUCT its bytes when positive,
   * or minus the bits of its length prefix (-32, -64) for a variable-width child. A value is the children's bytes
   * (variable ones after their length) in order.
   */
  public int[] packedWidths;
  /** A json column: the values are JSON text, stored as JSONB. */
  public boolean json;
  /** Bits of the dictionary key of a dictionary-typed column (its pages hold indices into a page dictionary); 0 otherwise. */
  public int dictionaryKeyBits;
  public int numVisible;
  public int numValid;
  public long maxValueBytes;
  public long rows;

  private final ValueVector[] chain;
  /** Whether the items under each fixed-size list layer have nulls, counted once per shredded batch. */
  private final boolean[] itemNulls;

  public LeafShredder(byte[] kinds, String[] childNames, byte valueKind, int width, int[] dims) {
    int n = kinds.length;
    if (n == 0 || kinds[n - 1] != LEAF) throw new IllegalArgumentException("a leaf path must end at a leaf");
    this.kinds = kinds;
    this.childNames = childNames;
    this.valueKind = valueKind;
    this.width = width;
    this.dims = dims == null ? new int[0] : dims;
    this.cumDims = new int[this.dims.length];
    int c = 1;
    for (int j = 0; j < this.dims.length; j++) { c *= this.dims[j]; cumDims[j] = c; }
    nullCode = new int[n];
    emptyCode = new int[n];
    elementRep = new int[n];
    int code = 0, lists = 0, visible = -1;
    for (int k = n - 1; k >= 0; k--) {
      if (kinds[k] == LIST) {
        if (visible < 0) visible = code;
        nullCode[k] = ++code;
        emptyCode[k] = ++code;
        lists++;
        elementRep[k] = lists - 1;
      } else {
        nullCode[k] = ++code;
      }
    }
    maxRep = lists;
    maxFullDef = code;
    maxVisibleDef = visible < 0 ? code : visible;
    seen = new boolean[code + 1];
    itemValidity = new Growable.Bytes[this.dims.length];
    for (int j = 0; j < itemValidity.length; j++) itemValidity[j] = new Growable.Bytes(1024);
    chain = new ValueVector[n];
    itemNulls = new boolean[this.dims.length];
  }

  public int numLevels() { return def.size; }

  /** Bytes held (a page is cut when this reaches the page size). */
  public long bufferedBytes() {
    long b = (long) values.size + 2L * def.size + 2L * rep.size + 8L * ends.size;
    for (Growable.Bytes v : itemValidity) b += v.size;
    return b;
  }

  public void clear() {
    rep.clear(); def.clear(); values.clear(); ends.clear();
    for (Growable.Bytes v : itemValidity) v.clear();
    java.util.Arrays.fill(seen, false);
    numVisible = 0; numValid = 0; maxValueBytes = 0; rows = 0;
  }

  /** Shreds rows [from, to) of the top-level vector. */
  public void shred(FieldVector top, int from, int to) {
    chain[0] = top;
    for (int k = 0; k + 1 < kinds.length; k++) {
      ValueVector v = chain[k];
      if (kinds[k] == STRUCT) chain[k + 1] = ((StructVector) v).getChild(childNames[k + 1]);
      else if (v instanceof LargeListVector) chain[k + 1] = ((LargeListVector) v).getDataVector();
      else chain[k + 1] = ((BaseRepeatedValueVector) v).getDataVector();
      if (chain[k + 1] == null) throw new IllegalArgumentException("no child '" + childNames[k + 1] + "' in " + v.getField());
    }
    if (valueKind == FIXED_SIZE_LIST) {
      ValueVector layer = chain[kinds.length - 1];
      for (int j = 0; j < dims.length; j++) {
        layer = ((FixedSizeListVector) layer).getDataVector();
        itemNulls[j] = layer.getNullCount() > 0;
      }
    }
    if (kinds.length == 1) shredFlat(top, from, to);
    else for (int i = from; i < to; i++) visit(0, i, maxRep);
    rows += to - from;
  }

  private void shredFlat(FieldVector v, int from, int to) {
    int leafNull = nullCode[0];
    // Nulls are counted in [from, to) alone: the vector's own null count reads all of its validity bits, on
    // every slice of a large vector.
    int nulls = nullsIn(v, from, to);
    if (nulls == 0) {
      def.addZeros(to - from);
    } else {
      for (int i = from; i < to; i++) def.add(v.isNull(i) ? leafNull : 0);
    }
    if (nulls > 0) seen[leafNull] = true;
    if (nulls < to - from) seen[0] = true;
    if (valueKind == FIXED && nulls == 0) {
      int n = to - from;
      values.ensure(n * width);
      ((BaseFixedWidthVector) v).getDataBuffer().getBytes((long) from * width, values.data, values.size, n * width);
      values.size += n * width;
      numVisible += n;
      numValid += n;
    } else {
      for (int i = from; i < to; i++) {
        if (v.isNull(i)) { placeholder(); numVisible++; } else { value(v, i); numVisible++; numValid++; }
      }
    }
  }

  static int nullsIn(FieldVector v, int from, int to) {
    if (from >= to) return 0;
    if (v instanceof BaseFixedWidthVector || v instanceof BaseVariableWidthVector
        || v instanceof BaseLargeVariableWidthVector) {
      return to - from - validIn(v.getValidityBuffer(), from, to);
    }
    int nulls = 0;
    for (int i = from; i < to; i++) if (v.isNull(i)) nulls++;
    return nulls;
  }

  /** Set bits [from, to) of a validity buffer, counted a byte or eight at a time. */
  private static int validIn(ArrowBuf validity, int from, int to) {
    int valid = 0;
    int i = from;
    while (i < to && (i & 7) != 0) { valid += (validity.getByte(i >>> 3) >>> (i & 7)) & 1; i++; }
    while (i + 64 <= to) { valid += Long.bitCount(validity.getLong(i >>> 3)); i += 64; }
    while (i + 8 <= to) { valid += Integer.bitCount(validity.getByte(i >>> 3) & 0xFF); i += 8; }
    while (i < to) { valid += (validity.getByte(i >>> 3) >>> (i & 7)) & 1; i++; }
    return valid;
  }

  private void level(int r, int d) {
    if (maxRep > 0) rep.add(r);
    def.add(d);
    seen[d] = true;
  }

  private void visit(int k, int i, int r) {
    ValueVector v = chain[k];
    switch (kinds[k]) {
      case STRUCT:
        if (v.isNull(i)) {
          level(r, nullCode[k]);
          if (nullCode[k] <= maxVisibleDef) { placeholder(); numVisible++; }
        } else {
          visit(k + 1, i, r);
        }
        break;
      case LIST:
        if (v.isNull(i)) {
          level(r, nullCode[k]);
        } else {
          long s, e;
          if (v instanceof LargeListVector) {
            ArrowBuf o = ((LargeListVector) v).getOffsetBuffer();
            s = o.getLong(8L * i); e = o.getLong(8L * (i + 1));
          } else {
            ArrowBuf o = ((BaseRepeatedValueVector) v).getOffsetBuffer();
            s = o.getInt(4L * i); e = o.getInt(4L * (i + 1));
          }
          if (s == e) level(r, emptyCode[k]);
          else for (long j = s; j < e; j++) visit(k + 1, (int) j, j == s ? r : elementRep[k]);
        }
        break;
      default:
        if (v.isNull(i)) {
          level(r, nullCode[k]);
          placeholder();
        } else {
          level(r, 0);
          value(v, i);
          numValid++;
        }
        numVisible++;
    }
  }

  // Where the last value `locate` found starts (a field, so that finding it allocates nothing).
  private ArrowBuf at;
  private long atStart;

  /** Finds value i of a variable-width vector: sets {@link #at} and {@link #atStart}, returns its length. */
  private int locate(ValueVector v, int i) {
    long e;
    if (v instanceof BaseLargeVariableWidthVector) {
      BaseLargeVariableWidthVector w = (BaseLargeVariableWidthVector) v;
      atStart = w.getOffsetBuffer().getLong(8L * i); e = w.getOffsetBuffer().getLong(8L * (i + 1)); at = w.getDataBuffer();
    } else {
      BaseVariableWidthVector w = (BaseVariableWidthVector) v;
      atStart = w.getOffsetBuffer().getInt(4L * i); e = w.getOffsetBuffer().getInt(4L * (i + 1)); at = w.getDataBuffer();
    }
    return (int) (e - atStart);
  }

  private void placeholder() {
    switch (valueKind) {
      case FIXED: case PACKED_STRUCT: values.zeros(width); break;
      case BOOL: values.add((byte) 0); break;
      case VARIABLE: case VARIABLE_PACKED_STRUCT: ends.add(values.size); break;
      case FIXED_SIZE_LIST:
        values.zeros(cumDims[cumDims.length - 1] * width);
        for (int j = 0; j < dims.length; j++) itemValidity[j].fill((byte) 1, cumDims[j]);
        break;
      default: break;
    }
  }

  private void value(ValueVector v, int i) {
    switch (valueKind) {
      case FIXED:
        values.ensure(width);
        ((BaseFixedWidthVector) v).getDataBuffer().getBytes((long) i * width, values.data, values.size, width);
        values.size += width;
        break;
      case BOOL:
        values.add((byte) ((BitVector) v).get(i));
        break;
      case VARIABLE_PACKED_STRUCT:
      case PACKED_STRUCT: {
        StructVector st = (StructVector) v;
        for (int c = 0; c < packedWidths.length; c++) {
          ValueVector child = st.getChildByOrdinal(c);
          if (child.isNull(i)) {
            throw new io.sparklance.core.InvalidArgumentException("Cannot write packed struct '" + childNames[childNames.length - 1]
                + "': its child '" + child.getName() + "' has a null, and packed structs store no child nulls (pylance "
                + "refuses them too). Fill the nulls, or write the struct without lance-encoding:packed.");
          }
          int w = packedWidths[c];
          if (w > 0) {
            values.ensure(w);
            ((BaseFixedWidthVector) child).getDataBuffer().getBytes((long) i * w, values.data, values.size, w);
            values.size += w;
          } else {
            int n = locate(child, i);
            values.uint(n, -w / 8);
            values.ensure(n);
            at.getBytes(atStart, values.data, values.size, n);
            values.size += n;
          }
        }
        if (valueKind == VARIABLE_PACKED_STRUCT) {
          ends.add(values.size);
          long len = ends.data[ends.size - 1] - (ends.size > 1 ? ends.data[ends.size - 2] : 0);
          if (len > maxValueBytes) maxValueBytes = len;
        }
        break;
      }
      case VARIABLE: {
        int n = locate(v, i);
        ArrowBuf data = at;
        long s = atStart;
        if (json) {
          byte[] text = new byte[n];
          data.getBytes(s, text, 0, n);
          byte[] jsonb;
          try {
            jsonb = JsonbWriter.encode(text, 0, n);
          } catch (JsonbWriter.InvalidJsonException ex) {
            throw new io.sparklance.core.InvalidArgumentException("Cannot write json column '" + childNames[childNames.length - 1]
                + "': a value is not JSON (" + ex.getMessage() + "). Fix or drop the value.");
          }
          n = jsonb.length;
          values.add(jsonb, 0, n);
        } else {
          values.ensure(n);
          data.getBytes(s, values.data, values.size, n);
          values.size += n;
        }
        ends.add(values.size);
        if (n > maxValueBytes) maxValueBytes = n;
        break;
      }
      case FIXED_SIZE_LIST: {
        ValueVector layer = v;
        for (int j = 0; j < dims.length; j++) {
          ValueVector child = ((FixedSizeListVector) layer).getDataVector();
          long first = (long) i * cumDims[j];
          Growable.Bytes valid = itemValidity[j];
          valid.ensure(cumDims[j]);
          if (!itemNulls[j]) valid.fill((byte) 1, cumDims[j]);
          else for (int t = 0; t < cumDims[j]; t++) valid.add((byte) (child.isNull((int) (first + t)) ? 0 : 1));
          layer = child;
        }
        int n = cumDims[cumDims.length - 1] * width;
        values.ensure(n);
        ((BaseFixedWidthVector) layer).getDataBuffer().getBytes((long) i * n, values.data, values.size, n);
        values.size += n;
        break;
      }
      default: break;
    }
  }
}
