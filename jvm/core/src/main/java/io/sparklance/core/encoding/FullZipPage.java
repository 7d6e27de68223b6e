package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.BufferCompression;
import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;
import io.sparklance.proto.Encodings21Protos.FullZipLayout;


/**
 * Decodes a whole full-zip page (file versions 2.1+): levels and values of each item zipped into buffer 0.
 *
 * Each of `num_items` levels is a control word (0, 1, 2 or 4 bytes by `bits_rep + bits_def`; value
 * `rep << bits_def | def`). A visible item of a fixed-width page then carries `bits_per_value / 8` bytes (null
 * items too); a visible, non-null item of a variable-width page carries a length of `bits_per_offset` bits and
 * that many bytes. Buffer 1, when present, is a repetition index used only for seeking.
 */
public final class FullZipPage {
  private FullZipPage() {}

  public static MiniBlockPage.Decoded decode(FullZipLayout layout, Slice[] buffers, LeafShape shape, long maxBytes) {
    if (buffers.length < 1) throw new EncodingException("a full-zip page without buffers");
    int[] layers = RepDef.layers(layout.getLayersList());
    int bitsRep = layout.getBitsRep(), bitsDef = layout.getBitsDef();
    if (bitsRep > 16 || bitsDef > 16) throw new EncodingException("control words of " + bitsRep + " + " + bitsDef + " bits");
    int cw = bitsRep + bitsDef == 0 ? 0 : bitsRep + bitsDef <= 8 ? 1 : bitsRep + bitsDef <= 16 ? 2 : 4;
    long numItems = layout.getNumItems() & 0xFFFFFFFFL;
    if (numItems > Integer.MAX_VALUE - 16) throw new EncodingException("a page of " + numItems + " items");
    int n = (int) numItems;
    // Every item takes at least one byte (a control word, a value or a length): more items than bytes is damage,
    // caught before the per-item arrays are allocated.
    if (n > buffers[0].length) throw new EncodingException("a full-zip page of " + n + " items in " + buffers[0].length + " bytes");
    short[] rep = bitsRep > 0 ? new short[n] : null;
    short[] def = bitsDef > 0 ? new short[n] : null;
    int defMask = (1 << bitsDef) - 1;
    RepDef.Unraveler probe = new RepDef.Unraveler(null, null, 0, layers, 0);
    int maxVisible = probe.maxVisibleDef();
    Slice data = buffers[0];
    int pos = 0;
    boolean fixed = layout.getDetailsCase() == FullZipLayout.DetailsCase.BITS_PER_VALUE;
    PerValue perValue = perValue(layout.getValueCompression(), fixed, maxBytes);
    int valueBytes = fixed ? checkedBytes(layout.getBitsPerValue()) : 0;
    int lengthBytes = fixed ? 0 : checkedBytes(layout.getBitsPerOffset());
    if (!fixed && lengthBytes != 4 && lengthBytes != 8) throw new EncodingException(lengthBytes * 8 + "-bit full-zip lengths");
    if (cw == 0 && fixed) {
      // No levels: the page is the values back to back; take them in one copy instead of one per value.
      DataBlock direct = contiguousFixed(layout.getValueCompression(), data, n, valueBytes);
      if (direct != null) return new MiniBlockPage.Decoded(new RepDef.Unraveler(null, null, n, layers, n), direct);
    }
    int visible = 0;
    int[] starts = new int[n + 1];
    int[] ends = new int[n + 1];
    for (int i = 0; i < n; i++) {
      int word = 0;
      if (cw > 0) {
        data.require(pos, cw, "a control word");
        word = (int) LittleEndian.getUnsigned(data.array, data.offset + pos, cw);
        pos += cw;
      }
      int d = word & defMask;
      if (def != null) def[i] = (short) d;
      if (rep != null) rep[i] = (short) (word >>> bitsDef);
      boolean isVisible = def == null || d <= maxVisible;
      if (!isVisible) continue;
      if (fixed) {
        data.require(pos, valueBytes, "a fixed-width value");
        starts[visible] = pos;
        pos += valueBytes;
        ends[visible] = pos;
      } else if (def == null || d == 0) {
        data.require(pos, lengthBytes, "a value length");
        long len = lengthBytes == 4 ? data.u32(pos) : data.i64(pos);
        pos += lengthBytes;
        data.require(pos, len, "a variable-width value");
        starts[visible] = pos;
        pos += (int) len;
        ends[visible] = pos;
      } else {
        starts[visible] = pos;
        ends[visible] = pos;
      }
      visible++;
    }
    if (pos != data.length) throw new EncodingException("full-zip items end at " + pos + " of " + data.length + " bytes");
    DataBlock values = perValue.decode(data, starts, ends, visible, shape);
    RepDef.Unraveler u = new RepDef.Unraveler(rep, def, n, layers, visible);
    return new MiniBlockPage.Decoded(u, values);
  }

  /**
   * The bytes every item of a page takes, when that is one number: fixed-width values without repetition and
   * without list layers (every item visible, so each is a control word and a value); -1 otherwise. Items [a, b)
   * of such a page are bytes [a * stride, b * stride) of buffer 0, and decode as a page of `b - a` items.
   */
  public static long fixedStride(FullZipLayout layout) {
    if (layout.getDetailsCase() != FullZipLayout.DetailsCase.BITS_PER_VALUE || layout.getBitsRep() != 0) return -1;
    int bitsDef = layout.getBitsDef();
    if (bitsDef > 16) return -1;
    for (int l : RepDef.layers(layout.getLayersList())) if (RepDef.isList(l)) return -1;
    int cw = bitsDef == 0 ? 0 : bitsDef <= 8 ? 1 : 2;
    return cw + checkedBytes(layout.getBitsPerValue());
  }

  /** Flat values or plain fixed-size lists of flat values, stored contiguously; null for anything else. */
  private static DataBlock contiguousFixed(CompressiveEncoding e, Slice data, int n, int valueBytes) {
    if ((long) n * valueBytes != data.length) throw new EncodingException("a full-zip page of " + n + " values of "
        + valueBytes + " bytes holds " + data.length + " bytes");
    if (e.getCompressionCase() == CompressiveEncoding.CompressionCase.FLAT) {
      int bits = Decoders21.checkedBits(e.getFlat().getBitsPerValue());
      if (bits != valueBytes * 8 || e.getFlat().hasData()) return null;
      return new DataBlock.FixedWidth(bits, data.copy(), n);
    }
    if (e.getCompressionCase() == CompressiveEncoding.CompressionCase.FIXED_SIZE_LIST) {
      FixedSizeLists.Layers parsed = new FixedSizeLists.Layers(e, "in a full-zip page");
      if (parsed.constantItems) return null;
      long items = n;
      for (int[] l : parsed.layers) {
        if (l[1] == 1) return null;  // validity bytes are interleaved with the items
        items *= l[0];
      }
      if (parsed.itemBits % 8 != 0 || items * (parsed.itemBits / 8) != data.length) return null;
      DataBlock block = new DataBlock.FixedWidth(parsed.itemBits, data.copy(), (int) items);
      long count = items;
      for (int li = parsed.layers.size() - 1; li >= 0; li--) {
        int dim = parsed.layers.get(li)[0];
        count /= dim;
        block = new DataBlock.FixedSizeList(dim, block, null, (int) count);
      }
      return block;
    }
    return null;
  }

  private static int checkedBytes(long bits) {
    if (bits <= 0 || bits % 8 != 0 || bits > (1L << 30)) throw new EncodingException("a full-zip width of " + bits + " bits");
    return (int) (bits / 8);
  }

  /** Decodes the zipped values of visible items, given as byte ranges of the page. */
  interface PerValue {
    DataBlock decode(Slice data, int[] starts, int[] ends, int count, LeafShape shape);
  }

  static PerValue perValue(CompressiveEncoding e, boolean fixed, long maxBytes) {
    switch (e.getCompressionCase()) {
      case FLAT: {
        int bits = Decoders21.checkedBits(e.getFlat().getBitsPerValue());
        return (data, s, t, n, shape) -> {
          int vb = bits / 8;
          byte[] out = new byte[n * vb];
          for (int i = 0; i < n; i++) {
            if (t[i] - s[i] != vb) throw new EncodingException("a " + (t[i] - s[i]) + "-byte value for " + bits + "-bit values");
            System.arraycopy(data.array, data.offset + s[i], out, i * vb, vb);
          }
          return new DataBlock.FixedWidth(bits, out, n);
        };
      }
      case FIXED_SIZE_LIST:
        return fixedSizeList(e, maxBytes);
      case VARIABLE:
        return (data, s, t, n, shape) -> gather(data, s, t, n, maxBytes);
      case FSST: {
        Fsst.SymbolTable table = Fsst.SymbolTable.parse(e.getFsst().getSymbolTable().toByteArray());
        return (data, s, t, n, shape) -> Fsst.decompress(table, gather(data, s, t, n, maxBytes), maxBytes);
      }
      case GENERAL: {
        BufferCompression c = e.getGeneral().getCompression();
        return (data, s, t, n, shape) -> {
          java.util.List<byte[]> parts = new java.util.ArrayList<>(n);
          long total = 0;
          for (int i = 0; i < n; i++) {
            if (t[i] == s[i]) { parts.add(new byte[0]); continue; }
            Slice one = Decoders21.decompress(c, data.slice(s[i], t[i] - s[i]), maxBytes);
            parts.add(one.array);
            total += one.length;
            if (total > maxBytes) throw new EncodingException("values inflate past " + maxBytes + " bytes");
          }
          return Blocks.ofValues(parts, 32);
        };
      }
      case VARIABLE_PACKED_STRUCT:
        return VariablePackedStructs.perValue(e, maxBytes);
      default:
        throw Decoders21.unsupported(e, "in a full-zip page");
    }
  }

  static DataBlock.VariableWidth gather(Slice data, int[] s, int[] t, int n, long maxBytes) {
    long total = 0;
    for (int i = 0; i < n; i++) total += t[i] - s[i];
    if (total > maxBytes) throw new EncodingException("values of " + total + " bytes");
    boolean wide = total > Integer.MAX_VALUE - 16;
    if (wide) throw new EncodingException("values of " + total + " bytes in one page");
    byte[] offsets = new byte[(n + 1) * 4];
    byte[] out = new byte[(int) total];
    int at = 0;
    for (int i = 0; i < n; i++) {
      int len = t[i] - s[i];
      System.arraycopy(data.array, data.offset + s[i], out, at, len);
      at += len;
      LittleEndian.putInt(offsets, 4 * (i + 1), at);
    }
    return new DataBlock.VariableWidth(32, offsets, out, n);
  }

  /** Per-row fixed-size lists: per layer with validity (outermost first) ceil(cumdim/8) bytes, then the items. */
  private static PerValue fixedSizeList(CompressiveEncoding e, long maxBytes) {
    FixedSizeLists.Layers parsed = new FixedSizeLists.Layers(e, "in a full-zip page");
    java.util.List<int[]> layers = parsed.layers;
    int bits = parsed.itemBits;
    if (bits == 1) throw Decoders21.unsupported(e, "of booleans in a full-zip page");
    // Constant items take no bytes in a value: each holds only its validity bitmaps.
    int vb = parsed.constantItems ? 0 : bits / 8;
    return (data, s, t, n, shape) -> {
      int cum = 1;
      int[] cumDims = new int[layers.size()];
      for (int l = 0; l < layers.size(); l++) { cum *= layers.get(l)[0]; cumDims[l] = cum; }
      final int items = cum;
      if ((long) n * items * Math.max(vb, 1) > maxBytes) {
        throw new EncodingException(n + " fixed-size lists of " + items + " items exceed the " + maxBytes + " bytes allowed");
      }
      byte[][] validity = new byte[layers.size()][];
      for (int l = 0; l < layers.size(); l++) if (layers.get(l)[1] == 1) validity[l] = new byte[(int) (((long) n * cumDims[l] + 7) / 8)];
      byte[] out = new byte[n * items * vb];
      for (int i = 0; i < n; i++) {
        int p = s[i];
        for (int l = 0; l < layers.size(); l++) {
          if (layers.get(l)[1] == 1) {
            int bytes = (cumDims[l] + 7) / 8;
            data.require(p, bytes, "fixed-size list validity");
            Bits.copy(data.array, 8L * (data.offset + p), validity[l], (long) i * cumDims[l], cumDims[l]);
            p += bytes;
          }
        }
        if (t[i] - p != items * vb) throw new EncodingException("a fixed-size list value of " + (t[i] - p) + " bytes, " + (items * vb) + " expected");
        System.arraycopy(data.array, data.offset + p, out, i * items * vb, items * vb);
      }
      DataBlock block;
      if (parsed.constantItems) {
        LeafShape itemShape = shape;
        for (int l = 0; l < layers.size(); l++) itemShape = itemShape.item();
        block = parsed.constantValue == null ? itemShape.zeros(n * items) : itemShape.repeat(parsed.constantValue, n * items, maxBytes);
      } else {
        block = new DataBlock.FixedWidth(bits, out, n * items);
      }
      int count = n * items;
      for (int l = layers.size() - 1; l >= 0; l--) {
        count /= layers.get(l)[0];
        block = new DataBlock.FixedSizeList(layers.get(l)[0], block, validity[l], count);
      }
      return block;
    };
  }

}
