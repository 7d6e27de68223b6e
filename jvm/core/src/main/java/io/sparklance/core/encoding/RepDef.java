package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.RepDefLayer;

import java.util.Arrays;
import java.util.List;

/**
 * Turns repetition and definition levels back into Arrow validity bitmaps and list offsets (file versions 2.1+).
 *
 * Levels follow Lance's convention (not Parquet's): definition level 0 is a valid innermost item, and each layer,
 * listed innermost first, claims the next levels: a nullable item or nullable list one (null), an emptyable list one
 * (empty), a nullable-and-emptyable list two (null, then empty). A non-zero repetition level starts a new list at
 * that depth, counting from the innermost list; entries for null or empty lists have no item. Decoding runs from the
 * innermost layer outwards: the item's validity, then per enclosing layer either a validity (struct) or offsets and
 * validity (list), each list layer compacting the levels to one entry per list.
 */
public final class RepDef {
  private RepDef() {}

  public static final int ALL_VALID_ITEM = 1, ALL_VALID_LIST = 2, NULLABLE_ITEM = 3, NULLABLE_LIST = 4,
      EMPTYABLE_LIST = 5, NULL_AND_EMPTY_LIST = 6;

  public static int[] layers(List<RepDefLayer> protoLayers) {
    int[] out = new int[protoLayers.size()];
    for (int i = 0; i < out.length; i++) {
      int v = protoLayers.get(i).getNumber();
      if (v < 1 || v > 6) throw new EncodingException("unknown rep/def layer " + protoLayers.get(i));
      out[i] = v;
    }
    return out;
  }

  static boolean isList(int layer) {
    return layer == ALL_VALID_LIST || layer == NULLABLE_LIST || layer == EMPTYABLE_LIST || layer == NULL_AND_EMPTY_LIST;
  }

  static boolean isAllValid(int layer) {
    return layer == ALL_VALID_ITEM || layer == ALL_VALID_LIST || layer == EMPTYABLE_LIST;
  }

  /** Validity bits (LSB first) and a count; `bits == null` means all valid. */
  public static final class Validity {
    public final byte[] bits;
    public final int count;

    public Validity(byte[] bits, int count) {
      this.bits = bits;
      this.count = count;
    }

    public boolean isValid(int i) {
      return bits == null || (bits[i >>> 3] & (1 << (i & 7))) != 0;
    }
  }

  /** List offsets (count + 1 entries, starting at 0) and the lists' validity. */
  public static final class Offsets {
    public final long[] offsets;
    public final int count;
    public final Validity validity;

    public Offsets(long[] offsets, int count, Validity validity) {
      this.offsets = offsets;
      this.count = count;
      this.validity = validity;
    }
  }

  /** The levels of one page (or one run of a page); levels are null when the page has none. */
  public static final class Unraveler {
    short[] rep;
    short[] def;
    int length;            // live entries in rep/def
    final int[] layers;    // innermost first
    final int[] levelToRep;
    int defCmp = 0;
    int repCmp = 0;
    int layer = 0;
    public int numItems;   // values at the current layer

    public Unraveler(short[] rep, short[] def, int numLevels, int[] layers, int numItems) {
      this.rep = rep;
      this.def = def;
      this.length = (rep != null || def != null) ? numLevels : 0;
      this.layers = layers;
      this.numItems = numItems;
      int[] l2r = new int[1 + 2 * layers.length];
      int n = 1, repCounter = 0;
      for (int m : layers) {
        switch (m) {
          case NULLABLE_ITEM: l2r[n++] = repCounter; break;
          case NULLABLE_LIST: case EMPTYABLE_LIST: l2r[n++] = ++repCounter; break;
          case NULL_AND_EMPTY_LIST: ++repCounter; l2r[n++] = repCounter; l2r[n++] = repCounter; break;
          // An all-valid list has no definition level of its own, but it is still a list: null structs above it
          // are above one more repetition level.
          case ALL_VALID_LIST: ++repCounter; break;
          default: break;
        }
      }
      this.levelToRep = Arrays.copyOf(l2r, n);
      if (def != null) {
        for (int i = 0; i < length; i++) {
          if (def[i] < 0 || def[i] >= n) throw new EncodingException("definition level " + def[i] + " where at most " + (n - 1) + " exist");
        }
      }
      if (rep != null) {
        int maxRep = maxRep();
        for (int i = 0; i < length; i++) {
          if (rep[i] < 0 || rep[i] > maxRep) throw new EncodingException("repetition level " + rep[i] + " where at most " + maxRep + " exist");
        }
      }
    }

    private int[] entryOfRow;  // lazily: first level entry of each row, and the end
    private int[] itemOfRow;   // lazily: items before each row's first entry, and the total

    private void indexRows() {
      if (entryOfRow != null) return;
      int rows = numRows();
      int[] e = new int[rows + 1];
      int[] it = new int[rows + 1];
      if (rep == null && def == null) {
        for (int r = 0; r <= rows; r++) { e[r] = r; it[r] = r; }
      } else {
        int maxRep = rep == null ? -1 : maxRep();
        int row = 0, items = 0;
        for (int i = 0; i < length; i++) {
          if (rep == null || rep[i] == maxRep) { e[row] = i; it[row] = items; row++; }
          if (isItem(i)) items++;
        }
        e[rows] = length;
        it[rows] = items;
      }
      entryOfRow = e;
      itemOfRow = it;
    }

    /**
     * A new unraveler over rows [from, to) of this one, which is left unchanged (a decoded page is cached and
     * sliced once per batch). Returns the unraveler and the matching item range {itemFrom, itemTo}.
     */
    public Object[] slice(int from, int to) {
      if (rep == null && def == null) {
        // No levels: a row is an item.
        if (from < 0 || to > numItems || from > to) throw new EncodingException("rows [" + from + ", " + to + ") of " + numItems);
        return new Object[] {new Unraveler(null, null, 0, layers, to - from), new int[] {from, to}};
      }
      indexRows();
      int rows = entryOfRow.length - 1;
      if (from < 0 || to > rows || from > to) throw new EncodingException("rows [" + from + ", " + to + ") of " + rows);
      int a = entryOfRow[from], b = entryOfRow[to];
      Unraveler u = new Unraveler(null, null, 0, layers, itemOfRow[to] - itemOfRow[from]);
      if (rep != null || def != null) {
        u.rep = rep == null ? null : java.util.Arrays.copyOfRange(rep, a, b);
        u.def = def == null ? null : java.util.Arrays.copyOfRange(def, a, b);
        u.length = b - a;
      }
      return new Object[] {u, new int[] {itemOfRow[from], itemOfRow[to]}};
    }

    /** An independent copy, for reusing a decoded page: slicing and unravelling change an unraveler. */
    public Unraveler copy() {
      Unraveler u = new Unraveler(null, null, 0, layers, numItems);
      u.rep = rep == null ? null : java.util.Arrays.copyOf(rep, length);
      u.def = def == null ? null : java.util.Arrays.copyOf(def, length);
      u.length = length;
      u.defCmp = defCmp;
      u.repCmp = repCmp;
      u.layer = layer;
      return u;
    }

    /** The highest definition level that still has an item slot (nulls of items and structs below any list). */
    public int maxVisibleDef() {
      int m = 0;
      for (int l : layers) {
        if (isList(l)) break;
        if (l == NULLABLE_ITEM) m++;
      }
      return m;
    }

    /** Rows described by these levels (top-level entries). */
    public int numRows() {
      if (rep != null) {
        int maxRep = maxRep();
        int rows = 0;
        for (int i = 0; i < length; i++) if (rep[i] == maxRep) rows++;
        return rows;
      }
      return def != null ? length : numItems;
    }

    private int maxRep() {
      int m = 0;
      for (int l : layers) if (isList(l)) m++;
      return m;
    }

    /** Entries that carry an item (visible at the innermost layer); `rows` when the page has no levels. */
    public int countItems(int rows) {
      if (rep == null && def == null) return rows;
      int c = 0;
      for (int i = 0; i < length; i++) if (isItem(i)) c++;
      return c;
    }

    private boolean isItem(int i) {
      return def == null || levelToRep[def[i]] == 0;
    }

    boolean currentAllValid() {
      checkLayer();
      return isAllValid(layers[layer]);
    }

    private void checkLayer() {
      if (layer >= layers.length) throw new EncodingException("the column's levels have " + layers.length + " layers, more are needed");
    }

    void skipValidity() {
      checkLayer();
      layer++;
    }

    void unravelValidity(BitWriter out) {
      checkLayer();
      int m = layers[layer++];
      if (m == ALL_VALID_ITEM) {
        out.appendN(numItems, true);
        return;
      }
      if (m != NULLABLE_ITEM) throw new EncodingException("a struct or item level where the column has a list level");
      int cmp = defCmp++;
      if (def == null) {
        out.appendN(numItems, true);
        return;
      }
      for (int i = 0; i < length; i++) {
        int level = def[i];
        if (levelToRep[level] <= repCmp) out.append(level <= cmp);
      }
    }

    int maxLists() {
      return rep == null ? 0 : length;
    }

    void unravelOffsets(Growable.Longs offsets, BitWriter validity) {
      checkLayer();
      int m = layers[layer];
      if (!isList(m)) throw new EncodingException("a list level where the column has a struct or item level");
      if (rep == null) throw new EncodingException("a list column page without repetition levels");
      int valid = defCmp;
      int nullLevel, emptyLevel;
      switch (m) {
        case NULLABLE_LIST: defCmp += 1; nullLevel = valid + 1; emptyLevel = 0; break;
        case EMPTYABLE_LIST: defCmp += 1; nullLevel = 0; emptyLevel = valid + 1; break;
        case NULL_AND_EMPTY_LIST: defCmp += 2; nullLevel = valid + 1; emptyLevel = valid + 2; break;
        default: nullLevel = 0; emptyLevel = 0; break;
      }
      layer++;
      // Levels up to `valid` belong to the items inside this list; above `upperNull` a null struct masks it; above
      // `maxLevel` the entry belongs to an enclosing list and is invisible here.
      int maxLevel = Math.max(valid, Math.max(nullLevel, emptyLevel));
      int upperNull = maxLevel;
      for (int l = layer; l < layers.length; l++) {
        if (layers[l] == NULLABLE_ITEM) maxLevel++;
        else if (layers[l] != ALL_VALID_ITEM) break;
      }
      long cur = offsets.size == 0 ? 0 : offsets.removeLast();
      int before = offsets.size;
      repCmp++;
      int w = 0;
      if (def != null) {
        for (int r = 0; r < length; r++) {
          int rv = rep[r];
          if (rv != 0) {
            int dv = def[r];
            rep[w] = (short) (rv - 1);
            def[w] = (short) dv;
            w++;
            if (dv <= valid) { offsets.add(cur); cur++; validity.append(true); }
            else if (dv > maxLevel) { /* not visible at this depth */ }
            else if (dv == nullLevel || dv > upperNull) { offsets.add(cur); validity.append(false); }
            else if (dv == emptyLevel) { offsets.add(cur); validity.append(true); }
            else throw new EncodingException("definition level " + dv + " has no meaning for this list");
          } else {
            cur++;
          }
        }
      } else {
        for (int r = 0; r < length; r++) {
          int rv = rep[r];
          if (rv != 0) {
            offsets.add(cur);
            rep[w++] = (short) (rv - 1);
            validity.append(true);
          }
          cur++;
        }
      }
      offsets.add(cur);
      length = w;
      numItems = offsets.size - 1 - before;
    }
  }

  /** Unravels across the pages that make up one read of a column. */
  public static final class Composite {
    private final List<Unraveler> parts;

    public Composite(List<Unraveler> parts) {
      this.parts = parts;
    }

    /** The validity of the current layer for `count` values, or all-valid. */
    public Validity unravelValidity(int count) {
      boolean allValid = true;
      for (Unraveler u : parts) allValid &= u.currentAllValid();
      if (allValid) {
        for (Unraveler u : parts) u.skipValidity();
        return new Validity(null, count);
      }
      BitWriter w = new BitWriter(count);
      for (Unraveler u : parts) u.unravelValidity(w);
      if (w.size() != count) throw new EncodingException("levels describe " + w.size() + " values, " + count + " expected");
      return new Validity(w.bits(), count);
    }

    public Offsets unravelOffsets() {
      int max = 0;
      for (Unraveler u : parts) max += u.maxLists();
      Growable.Longs offsets = new Growable.Longs(max + 1);
      BitWriter validity = new BitWriter(max);
      for (Unraveler u : parts) u.unravelOffsets(offsets, validity);
      if (offsets.size == 0) offsets.add(0);
      int count = offsets.size - 1;
      boolean anyNull = validity.size() != count || validity.anyFalse();
      return new Offsets(offsets.toArray(), count, new Validity(anyNull ? validity.bits() : null, count));
    }
  }

  /** A growable LSB-first bitmap. */
  public static final class BitWriter {
    private byte[] bits;
    private int size;
    private boolean anyFalse;

    public BitWriter(int capacity) {
      bits = new byte[Math.max(8, (capacity + 7) / 8)];
    }

    void ensure(int n) {
      if ((n + 7) / 8 > bits.length) bits = Arrays.copyOf(bits, Math.max(bits.length * 2, (n + 7) / 8));
    }

    public void append(boolean v) {
      ensure(size + 1);
      if (v) bits[size >>> 3] |= (byte) (1 << (size & 7));
      else anyFalse = true;
      size++;
    }

    public void appendN(int n, boolean v) {
      ensure(size + n);
      if (v) for (int i = 0; i < n; i++) { bits[(size + i) >>> 3] |= (byte) (1 << ((size + i) & 7)); }
      else if (n > 0) anyFalse = true;
      size += n;
    }

    public int size() { return size; }

    public boolean anyFalse() { return anyFalse; }

    public byte[] bits() { return Arrays.copyOf(bits, (size + 7) / 8); }
  }
}
