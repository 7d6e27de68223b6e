package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings20Protos.ArrayEncoding;
import io.sparklance.proto.Encodings20Protos.Buffer;
import io.sparklance.proto.Encodings20Protos.Nullable;

/**
 * Decoders for the array encodings of file version 2.0 (`lance.encodings.ArrayEncoding`): a page decodes to
 * values plus a validity bitmap. See docs/dev/file-format-2.0.md.
 *
 * Strings (`binary`) store u64 end offsets with no leading zero; an end at or above `null_adjustment` marks a
 * null whose real end is the value minus the adjustment. Dictionaries of plain string fields use 1-based u8
 * indices (0 is null); dictionaries of Arrow dictionary fields use 0-based indices.
 */
public final class Decoders20 {
  private Decoders20() {}

  /** Values and their validity (null bits: all valid). */
  public static final class Values {
    public final DataBlock block;
    public final byte[] validity;

    public Values(DataBlock block, byte[] validity) {
      this.block = block;
      this.validity = validity;
    }
  }

  /** What the decoder must know of the field: its value shape and whether it is an Arrow dictionary type. */
  public static final class Target {
    public final LeafShape shape;
    final int offsetBits;
    final boolean arrowDictionary;

    public Target(LeafShape shape, int offsetBits, boolean arrowDictionary) {
      this.shape = shape;
      this.offsetBits = offsetBits;
      this.arrowDictionary = arrowDictionary;
    }
  }

  public static String describe(ArrayEncoding e) {
    switch (e.getArrayEncodingCase()) {
      case FLAT: return "flat" + e.getFlat().getBitsPerValue() + (e.getFlat().hasCompression() ? "+" + e.getFlat().getCompression().getScheme() : "");
      case NULLABLE: {
        Nullable n = e.getNullable();
        switch (n.getNullabilityCase()) {
          case NO_NULLS: return "nullable.no_nulls(" + describe(n.getNoNulls().getValues()) + ")";
          case SOME_NULLS: return "nullable.some_nulls(" + describe(n.getSomeNulls().getValues()) + ")";
          default: return "nullable.all_nulls";
        }
      }
      case FIXED_SIZE_LIST: return "fixed_size_list" + e.getFixedSizeList().getDimension() + "(" + describe(e.getFixedSizeList().getItems()) + ")";
      case LIST: return "list";
      case STRUCT: return "struct";
      case BINARY: return "binary";
      case DICTIONARY: return "dictionary";
      case FSST: return "fsst";
      case PACKED_STRUCT: return "packed_struct";
      default: return e.getArrayEncodingCase().name().toLowerCase();
    }
  }

  /** `b` as fixed-width values; a damaged encoding tree can describe another kind of block where these must be. */
  private static DataBlock.FixedWidth fixedWidth(DataBlock b, String what) {
    if (!(b instanceof DataBlock.FixedWidth)) throw new EncodingException(what + " decoded to " + b.getClass().getSimpleName() + " values");
    return (DataBlock.FixedWidth) b;
  }

  public static Values decode(ArrayEncoding e, Slice[] page, int n, Target t, long maxBytes) {
    switch (e.getArrayEncodingCase()) {
      case FLAT:
        return new Values(flat(e.getFlat(), page, n, maxBytes), null);
      case NULLABLE: {
        Nullable nl = e.getNullable();
        switch (nl.getNullabilityCase()) {
          case NO_NULLS: {
            Values v = decode(nl.getNoNulls().getValues(), page, n, t, maxBytes);
            return new Values(v.block, v.validity);
          }
          case SOME_NULLS: {
            Values validity = decode(nl.getSomeNulls().getValidity(), page, n, t, maxBytes);
            Values v = decode(nl.getSomeNulls().getValues(), page, n, t, maxBytes);
            if (!(validity.block instanceof DataBlock.FixedWidth) || ((DataBlock.FixedWidth) validity.block).bitsPerValue != 1) {
              throw new EncodingException("a validity that is not a bitmap");
            }
            return new Values(v.block, and(((DataBlock.FixedWidth) validity.block).data, v.validity, n));
          }
          default:
            return new Values(t.shape.zeros(n), new byte[(n + 7) / 8]);
        }
      }
      case FIXED_SIZE_LIST: {
        int dim = e.getFixedSizeList().getDimension();
        if (dim <= 0) throw new EncodingException("a fixed-size list of dimension " + dim);
        if ((long) n * dim > maxBytes) throw new EncodingException("a page of " + ((long) n * dim) + " list items");
        Values items = decode(e.getFixedSizeList().getItems(), page, n * dim, new Target(t.shape.item(), t.offsetBits, false), maxBytes);
        return new Values(new DataBlock.FixedSizeList(dim, items.block, items.validity, n), null);
      }
      case BINARY:
        return binary(e, page, n, t, maxBytes);
      case FSST: {
        Values inner = binary(e.getFsst().getBinary(), page, n, new Target(t.shape, 32, false), maxBytes);
        Fsst.SymbolTable table = Fsst.SymbolTable.parse(e.getFsst().getSymbolTable().toByteArray());
        if (!(inner.block instanceof DataBlock.VariableWidth)) throw new EncodingException("fsst strings decoded to " + inner.block.getClass().getSimpleName() + " values");
        DataBlock.VariableWidth out = Fsst.decompress(table, (DataBlock.VariableWidth) inner.block, maxBytes);
        return new Values(widen(out, t.offsetBits), inner.validity);
      }
      case DICTIONARY:
        return dictionary(e, page, n, t, maxBytes);
      case PACKED_STRUCT:
        return packedStruct(e, page, n);
      case ARRAYENCODING_NOT_SET:
        // Writers always choose an encoding: an empty one is a damaged encoding tree, not a newer encoding.
        throw new EncodingException("an encoding that names no array encoding");
      default:
        throw new UnsupportedEncodingException(describe(e), "in a 2.0 page");
    }
  }

  private static byte[] and(byte[] a, byte[] b, int n) {
    if (b == null) return a;
    byte[] out = new byte[(n + 7) / 8];
    for (int i = 0; i < out.length; i++) out[i] = (byte) (a[i] & b[i]);
    return out;
  }

  static Slice buffer(Buffer b, Slice[] page) {
    if (b.getBufferType() != Buffer.BufferType.page) {
      throw new UnsupportedEncodingException("buffer of type " + b.getBufferType(), "(only page buffers are supported)");
    }
    int i = b.getBufferIndex();
    if (i < 0 || i >= page.length) throw new EncodingException("buffer index " + i + " of a page with " + page.length + " buffers");
    return page[i];
  }

  private static DataBlock.FixedWidth flat(io.sparklance.proto.Encodings20Protos.Flat f, Slice[] page, int n, long maxBytes) {
    int bits = Decoders21.checkedBits(f.getBitsPerValue());
    Slice buf = buffer(f.getBuffer(), page);
    if (f.hasCompression() && !f.getCompression().getScheme().isEmpty() && !f.getCompression().getScheme().equals("none")) {
      buf = Slice.of(Codecs.decompress(scheme(f.getCompression().getScheme()), buf.array, buf.offset, buf.length, maxBytes));
    }
    return Decoders21.flat(bits, buf, n);
  }

  private static Codecs.Scheme scheme(String s) {
    switch (s) {
      case "zstd": return Codecs.Scheme.ZSTD;
      case "lz4": return Codecs.Scheme.LZ4;
      default: throw new UnsupportedEncodingException("compression " + s, "");
    }
  }

  private static Values binary(ArrayEncoding e, Slice[] page, int n, Target t, long maxBytes) {
    io.sparklance.proto.Encodings20Protos.Binary b = e.getBinary();
    Values idx = decode(b.getIndices(), page, n, new Target(LeafShape.fixed(64), 32, false), maxBytes);
    if (!(idx.block instanceof DataBlock.FixedWidth) || ((DataBlock.FixedWidth) idx.block).bitsPerValue != 64) {
      throw new EncodingException("string indices that are not u64");
    }
    byte[] ends = fixedWidth(idx.block, "string offsets").data;
    long adj = b.getNullAdjustment();
    long total = 0;
    for (int i = 0; i < n; i++) {
      long v = LittleEndian.getLong(ends, 8 * i);
      long end = (adj > 0 && Long.compareUnsigned(v, adj) >= 0) ? v - adj : v;
      // Ends never go back; an end past 2^63 (negative here) is damage too, not a value to skip.
      if (end < total) throw new EncodingException("string end " + end + " before " + total);
      total = Math.max(total, end);
    }
    if (total > maxBytes) throw new EncodingException("strings of " + total + " bytes");
    Values bytesV = decode(b.getBytes(), page, (int) total, new Target(LeafShape.fixed(8), 32, false), maxBytes);
    byte[] data = fixedWidth(bytesV.block, "string bytes").data;
    int ob = t.offsetBits / 8;
    byte[] offsets = new byte[(n + 1) * ob];
    byte[] validity = null;
    for (int i = 0; i < n; i++) {
      long v = LittleEndian.getLong(ends, 8 * i);
      boolean isNull = adj > 0 && Long.compareUnsigned(v, adj) >= 0;
      long end = isNull ? v - adj : v;
      if (isNull) {
        if (validity == null) { validity = new byte[(n + 7) / 8]; Bits.set(validity, 0, n); }
        validity[i >>> 3] &= (byte) ~(1 << (i & 7));
      }
      if (ob == 8) LittleEndian.putLong(offsets, 8 * (i + 1), end); else LittleEndian.putInt(offsets, 4 * (i + 1), (int) end);
    }
    return new Values(new DataBlock.VariableWidth(t.offsetBits, offsets, java.util.Arrays.copyOf(data, (int) total), n), validity);
  }

  private static DataBlock.VariableWidth widen(DataBlock.VariableWidth v, int offsetBits) {
    if (v.offsetBits == offsetBits) return v;
    int ob = offsetBits / 8;
    byte[] offsets = new byte[(v.numValues + 1) * ob];
    for (int i = 0; i <= v.numValues; i++) {
      if (ob == 8) LittleEndian.putLong(offsets, 8 * i, v.offset(i)); else LittleEndian.putInt(offsets, 4 * i, (int) v.offset(i));
    }
    return new DataBlock.VariableWidth(offsetBits, offsets, v.data, v.numValues);
  }

  private static Values dictionary(ArrayEncoding e, Slice[] page, int n, Target t, long maxBytes) {
    io.sparklance.proto.Encodings20Protos.Dictionary d = e.getDictionary();
    int size = d.getNumDictionaryItems();
    if (size < 0) throw new EncodingException("a dictionary of " + size + " items");
    Values items = decode(d.getItems(), page, size, new Target(t.shape, t.offsetBits, false), maxBytes);
    Values idx = decode(d.getIndices(), page, n, new Target(LeafShape.fixed(8), 32, false), maxBytes);
    if (!(idx.block instanceof DataBlock.FixedWidth)) throw new EncodingException("dictionary indices that are not integers");
    DataBlock.FixedWidth ix = fixedWidth(idx.block, "dictionary indices");
    int ib = ix.bitsPerValue / 8;
    int base = t.arrowDictionary ? 0 : 1;
    // Map each row to an item (or -1 for null), then gather.
    byte[] validity = new byte[(n + 7) / 8];
    byte[] gatherIdx = new byte[n * 4];
    boolean anyNull = false;
    for (int i = 0; i < n; i++) {
      long k = LittleEndian.getUnsigned(ix.data, i * ib, ib) - base;
      boolean valid = k >= 0 && (items.validity == null || (k < size && Bits.get(items.validity, k)));
      // k = -1 is the null of 1-based indices; anything below it is a u64 index of 2^63 or more.
      if (k >= size || k < -base) throw new EncodingException("dictionary index " + Long.toUnsignedString(k + base) + " of " + size + " items");
      if (valid) { validity[i >>> 3] |= (byte) (1 << (i & 7)); LittleEndian.putInt(gatherIdx, 4 * i, (int) k); }
      else { anyNull = true; LittleEndian.putInt(gatherIdx, 4 * i, size); }
    }
    DataBlock.Dictionary dict = new DataBlock.Dictionary(new DataBlock.FixedWidth(32, gatherIdx, n), items.block);
    return new Values(Blocks.materialize(dict), anyNull ? validity : null);
  }

  private static Values packedStruct(ArrayEncoding e, Slice[] page, int n) {
    io.sparklance.proto.Encodings20Protos.PackedStruct p = e.getPackedStruct();
    int k = p.getInnerCount();
    int[] widths = new int[k];
    int row = 0;
    for (int i = 0; i < k; i++) {
      widths[i] = packedWidth(p.getInner(i));
      row += widths[i];
    }
    Slice buf = buffer(p.getBuffer(), page);
    buf.require(0, (long) row * n, "packed struct rows");
    DataBlock[] children = new DataBlock[k];
    int off = 0;
    for (int c = 0; c < k; c++) {
      byte[] out = new byte[n * widths[c]];
      for (int i = 0; i < n; i++) System.arraycopy(buf.array, buf.offset + i * row + off, out, i * widths[c], widths[c]);
      children[c] = packedBlock(p.getInner(c), out, n);
      off += widths[c];
    }
    return new Values(new DataBlock.Struct(children, n), null);
  }

  /** The block of one packed struct field: fixed-width values, or a fixed-size list of them. */
  private static DataBlock packedBlock(ArrayEncoding e, byte[] values, int n) {
    switch (e.getArrayEncodingCase()) {
      case NULLABLE:
        return packedBlock(e.getNullable().getNoNulls().getValues(), values, n);
      case FIXED_SIZE_LIST: {
        int dim = e.getFixedSizeList().getDimension();
        return new DataBlock.FixedSizeList(dim, packedBlock(e.getFixedSizeList().getItems(), values, n * dim), null, n);
      }
      default:
        return new DataBlock.FixedWidth(packedWidth(e) * 8, values, n);
    }
  }

  private static int packedWidth(ArrayEncoding e) {
    switch (e.getArrayEncodingCase()) {
      case FLAT: {
        long bits = e.getFlat().getBitsPerValue();
        if (bits % 8 != 0 || bits <= 0) throw new UnsupportedEncodingException("packed struct field of " + bits + " bits", "");
        return (int) (bits / 8);
      }
      case NULLABLE:
        if (e.getNullable().getNullabilityCase() != Nullable.NullabilityCase.NO_NULLS) throw new EncodingException("a nullable packed struct field");
        return packedWidth(e.getNullable().getNoNulls().getValues());
      case FIXED_SIZE_LIST:
        return e.getFixedSizeList().getDimension() * packedWidth(e.getFixedSizeList().getItems());
      default:
        throw new UnsupportedEncodingException(describe(e), "in a packed struct");
    }
  }
}
