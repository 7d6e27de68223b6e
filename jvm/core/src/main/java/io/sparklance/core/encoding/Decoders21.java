package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.BufferCompression;
import io.sparklance.proto.Encodings21Protos.CompressionScheme;
import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;

/**
 * Decoders for the compressive encodings of file versions 2.1 and 2.2 (`lance.encodings21.CompressiveEncoding`).
 *
 * Two shapes exist. A mini-block decoder reads the buffers of one mini-block chunk (at most a few thousand
 * values); a block decoder reads one whole buffer (repetition and definition levels, dictionaries). Every length
 * read from the data is checked against the bytes at hand, and no allocation exceeds `maxBytes`.
 */
public final class Decoders21 {
  private Decoders21() {}

  /** Decodes the buffers of one mini-block chunk into `numValues` values. */
  public interface MiniBlockDecoder {
    int numBuffers();

    DataBlock decode(Slice[] buffers, int numValues);

    /**
     * The width in bits (a multiple of 8) of the values `decodeInto` writes, or 0 when this decoder has no such
     * path: decoders of fixed-width values write a chunk straight into the array of a run of chunks, which then
     * needs no copy to join the chunks' values.
     */
    default int directBits() { return 0; }

    /**
     * Decodes `numValues` values into `out` from byte `outOffset` on, as `decode` would return them; only where
     * `directBits()` is not 0. `out` must hold `numValues` values from `outOffset`.
     */
    default void decodeInto(Slice[] buffers, int numValues, byte[] out, int outOffset) {
      throw new UnsupportedOperationException("this decoder returns blocks of its own");
    }
  }

  /** Decodes one buffer into `numValues` values. */
  public interface BlockDecoder {
    DataBlock decode(Slice buffer, int numValues);
  }

  /** A short description of an encoding tree, for error messages ("inline_bitpacking(32)", "general(zstd, flat64)"). */
  public static String describe(CompressiveEncoding e) {
    switch (e.getCompressionCase()) {
      case FLAT: return "flat" + e.getFlat().getBitsPerValue();
      case VARIABLE: return "variable(" + describe(e.getVariable().getOffsets()) + ")";
      case CONSTANT: return "constant";
      case OUT_OF_LINE_BITPACKING: return "out_of_line_bitpacking" + e.getOutOfLineBitpacking().getUncompressedBitsPerValue()
          + "(" + describe(e.getOutOfLineBitpacking().getValues()) + ")";
      case INLINE_BITPACKING: return "inline_bitpacking" + e.getInlineBitpacking().getUncompressedBitsPerValue();
      case FSST: return "fsst(" + describe(e.getFsst().getValues()) + ")";
      case DICTIONARY: return "dictionary";
      case RLE: return "rle(" + describe(e.getRle().getValues()) + ", " + describe(e.getRle().getRunLengths()) + ")";
      case BYTE_STREAM_SPLIT: return "byte_stream_split(" + describe(e.getByteStreamSplit().getValues()) + ")";
      case GENERAL: return "general(" + e.getGeneral().getCompression().getScheme().name().replace("COMPRESSION_ALGORITHM_", "").toLowerCase()
          + ", " + describe(e.getGeneral().getValues()) + ")";
      case FIXED_SIZE_LIST: return "fixed_size_list" + e.getFixedSizeList().getItemsPerValue() + "(" + describe(e.getFixedSizeList().getValues()) + ")";
      case PACKED_STRUCT: return "packed_struct";
      case VARIABLE_PACKED_STRUCT: return "variable_packed_struct";
      default: return "unknown encoding #" + e.getCompressionCase().getNumber();
    }
  }

  static UnsupportedEncodingException unsupported(CompressiveEncoding e, String where) {
    return new UnsupportedEncodingException(describe(e), where);
  }

  // ---------------------------------------------------------------------------------------------------- mini-block

  public static MiniBlockDecoder miniBlock(CompressiveEncoding e, long maxBytes) {
    switch (e.getCompressionCase()) {
      case FLAT: {
        int bits = checkedBits(e.getFlat().getBitsPerValue());
        BufferCompression data = e.getFlat().hasData() ? e.getFlat().getData() : null;
        if (data == null && bits % 8 == 0) return direct(bits, (buf, n) -> flat(bits, buf, n), (buf, n, out, at) -> flatInto(bits, buf, n, out, at));
        return single((buf, n) -> flat(bits, data == null ? buf : decompress(data, buf, maxBytes), n));
      }
      case INLINE_BITPACKING: {
        int bits = checkedBits(e.getInlineBitpacking().getUncompressedBitsPerValue());
        if (!fastLanesType(bits)) throw unsupported(e, "with " + bits + "-bit values");
        return direct(bits, (buf, n) -> inlineBitpacked(bits, buf, n), (buf, n, out, at) -> inlineBitpackedInto(bits, buf, n, out, at));
      }
      case VARIABLE: {
        CompressiveEncoding off = e.getVariable().getOffsets();
        if (off.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) throw unsupported(e, "with non-flat offsets");
        int offsetBits = checkedBits(off.getFlat().getBitsPerValue());
        if (offsetBits != 32 && offsetBits != 64) throw unsupported(e, "with " + offsetBits + "-bit offsets");
        return single((buf, n) -> variableWithInlineOffsets(offsetBits, buf, n));
      }
      case GENERAL: {
        MiniBlockDecoder inner = miniBlock(e.getGeneral().getValues(), maxBytes);
        BufferCompression compression = e.getGeneral().getCompression();
        return new MiniBlockDecoder() {
          public int numBuffers() { return inner.numBuffers(); }

          public DataBlock decode(Slice[] buffers, int n) {
            Slice[] copy = buffers.clone();
            copy[0] = decompress(compression, buffers[0], maxBytes);
            return inner.decode(copy, n);
          }
        };
      }
      case RLE: {
        CompressiveEncoding values = e.getRle().getValues();
        if (values.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) throw unsupported(e, "with non-flat values");
        int bits = checkedBits(values.getFlat().getBitsPerValue());
        return new MiniBlockDecoder() {
          public int numBuffers() { return 2; }

          public DataBlock decode(Slice[] buffers, int n) { return rle(bits, buffers[0], buffers[1], n); }

          public int directBits() { return bits % 8 == 0 ? bits : 0; }

          public void decodeInto(Slice[] buffers, int n, byte[] out, int at) { rleInto(bits, buffers[0], buffers[1], n, out, at); }
        };
      }
      case BYTE_STREAM_SPLIT: {
        CompressiveEncoding values = e.getByteStreamSplit().getValues();
        if (values.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) throw unsupported(e, "with non-flat values");
        int bits = checkedBits(values.getFlat().getBitsPerValue());
        return single((buf, n) -> byteStreamSplit(bits, buf, n));
      }
      case FSST: {
        MiniBlockDecoder inner = miniBlock(e.getFsst().getValues(), maxBytes);
        Fsst.SymbolTable table = Fsst.SymbolTable.parse(e.getFsst().getSymbolTable().toByteArray());
        return new MiniBlockDecoder() {
          public int numBuffers() { return inner.numBuffers(); }

          public DataBlock decode(Slice[] buffers, int n) {
            DataBlock compressed = inner.decode(buffers, n);
            if (!(compressed instanceof DataBlock.VariableWidth)) throw new EncodingException("fsst over non-variable data");
            return Fsst.decompress(table, (DataBlock.VariableWidth) compressed, maxBytes);
          }
        };
      }
      case FIXED_SIZE_LIST:
        return FixedSizeLists.miniBlock(e, maxBytes);
      case PACKED_STRUCT:
        return PackedStructs.miniBlock(e, maxBytes);
      default:
        throw unsupported(e, "in a mini-block page");
    }
  }

  private interface SingleBufferDecoder {
    DataBlock decode(Slice buffer, int numValues);
  }

  private static MiniBlockDecoder single(SingleBufferDecoder d) {
    return new MiniBlockDecoder() {
      public int numBuffers() { return 1; }

      public DataBlock decode(Slice[] buffers, int n) { return d.decode(buffers[0], n); }
    };
  }

  private interface SingleBufferDecoderInto {
    void decodeInto(Slice buffer, int numValues, byte[] out, int outOffset);
  }

  /** A decoder of one buffer of `bits`-bit values that can also write them into a caller's array. */
  private static MiniBlockDecoder direct(int bits, SingleBufferDecoder d, SingleBufferDecoderInto into) {
    return new MiniBlockDecoder() {
      public int numBuffers() { return 1; }

      public DataBlock decode(Slice[] buffers, int n) { return d.decode(buffers[0], n); }

      public int directBits() { return bits; }

      public void decodeInto(Slice[] buffers, int n, byte[] out, int at) { into.decodeInto(buffers[0], n, out, at); }
    };
  }

  // --------------------------------------------------------------------------------------------------------- block

  public static BlockDecoder block(CompressiveEncoding e, long maxBytes) {
    switch (e.getCompressionCase()) {
      case FLAT: {
        int bits = checkedBits(e.getFlat().getBitsPerValue());
        BufferCompression data = e.getFlat().hasData() ? e.getFlat().getData() : null;
        return (buf, n) -> flat(bits, data == null ? buf : decompress(data, buf, maxBytes), n);
      }
      case INLINE_BITPACKING: {
        int bits = checkedBits(e.getInlineBitpacking().getUncompressedBitsPerValue());
        if (!fastLanesType(bits)) throw unsupported(e, "with " + bits + "-bit values");
        return (buf, n) -> {
          if ((long) n * (bits / 8) > maxBytes) throw new EncodingException(n + " inline-bitpacked " + bits + "-bit values");
          return inlineBitpackedBlocks(bits, buf, n);
        };
      }
      case OUT_OF_LINE_BITPACKING: {
        int bits = checkedBits(e.getOutOfLineBitpacking().getUncompressedBitsPerValue());
        if (!fastLanesType(bits)) throw unsupported(e, "with " + bits + "-bit values");
        CompressiveEncoding values = e.getOutOfLineBitpacking().getValues();
        if (values.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) throw unsupported(e, "with non-flat values");
        long width = values.getFlat().getBitsPerValue();
        if (width < 0 || width > bits) throw unsupported(e, "packing " + bits + "-bit values to " + width + " bits");
        return (buf, n) -> outOfLineBitpacked(bits, (int) width, buf, n);
      }
      case CONSTANT: {
        byte[] value = e.getConstant().hasValue() ? e.getConstant().getValue().toByteArray() : new byte[0];
        return (buf, n) -> constant(value, n, maxBytes);
      }
      case VARIABLE:
        return (buf, n) -> variableBlock(buf, n);
      case GENERAL: {
        BlockDecoder inner = block(e.getGeneral().getValues(), maxBytes);
        BufferCompression compression = e.getGeneral().getCompression();
        return (buf, n) -> inner.decode(decompress(compression, buf, maxBytes), n);
      }
      case RLE:
        return Rle.block(e, maxBytes);
      case FIXED_SIZE_LIST: {
        MiniBlockDecoder mb = FixedSizeLists.miniBlock(e, maxBytes);
        if (mb.numBuffers() != 1) throw unsupported(e, "with validity, as a block");
        return (buf, n) -> mb.decode(new Slice[] {buf}, n);
      }
      default:
        throw unsupported(e, "as a block (levels or dictionary)");
    }
  }

  // ------------------------------------------------------------------------------------------------------ kernels

  /** The integer widths FastLanes packs. */
  private static boolean fastLanesType(int bits) {
    return bits == 8 || bits == 16 || bits == 32 || bits == 64;
  }

  static int checkedBits(long bits) {
    if (bits < 0 || bits > 1 << 20 || (bits != 1 && bits % 8 != 0)) throw new EncodingException("a width of " + bits + " bits");
    return (int) bits;
  }

  static Slice decompress(BufferCompression c, Slice buf, long maxBytes) {
    Codecs.Scheme scheme;
    if (c.getScheme() == CompressionScheme.COMPRESSION_ALGORITHM_ZSTD) scheme = Codecs.Scheme.ZSTD;
    else if (c.getScheme() == CompressionScheme.COMPRESSION_ALGORITHM_LZ4) scheme = Codecs.Scheme.LZ4;
    else throw new UnsupportedEncodingException("general compression scheme " + c.getScheme(), "");
    return Slice.of(Codecs.decompress(scheme, buf.array, buf.offset, buf.length, maxBytes));
  }

  static DataBlock.FixedWidth flat(int bits, Slice buf, int n) {
    long need = bits == 1 ? (n + 7L) / 8 : (long) n * (bits / 8);
    if (need > buf.length) buf.require(0, need, "flat values (" + n + " x " + bits + " bits)");
    return new DataBlock.FixedWidth(bits, java.util.Arrays.copyOfRange(buf.array, buf.offset, buf.offset + (int) need), n);
  }

  /** `flat` of whole-byte values, written to `out` from byte `at`. */
  static void flatInto(int bits, Slice buf, int n, byte[] out, int at) {
    long need = (long) n * (bits / 8);
    if (need > buf.length) buf.require(0, need, "flat values (" + n + " x " + bits + " bits)");
    System.arraycopy(buf.array, buf.offset, out, at, (int) need);
  }

  /** One mini-block chunk of inline bitpacking: a T-bit width word, then one FastLanes block. */
  static DataBlock.FixedWidth inlineBitpacked(int bits, Slice buf, int n) {
    int width = inlineWidth(bits, buf, n);
    int wordBytes = bits / 8;
    byte[] out = new byte[FastLanes.BLOCK * wordBytes];
    FastLanes.unpack(bits, width, buf.array, buf.offset + wordBytes, out, 0);
    return new DataBlock.FixedWidth(bits, n == FastLanes.BLOCK ? out : java.util.Arrays.copyOf(out, n * wordBytes), n);
  }

  /**
   * `inlineBitpacked` written to `out` from byte `at`: a full block is unpacked in place, a shorter one (a page's
   * last chunk) through a block of its own, since unpacking always writes 1024 values.
   */
  static void inlineBitpackedInto(int bits, Slice buf, int n, byte[] out, int at) {
    int width = inlineWidth(bits, buf, n);
    int wordBytes = bits / 8;
    if (n == FastLanes.BLOCK) FastLanes.unpack(bits, width, buf.array, buf.offset + wordBytes, out, at);
    else {
      byte[] block = new byte[FastLanes.BLOCK * wordBytes];
      FastLanes.unpack(bits, width, buf.array, buf.offset + wordBytes, block, 0);
      System.arraycopy(block, 0, out, at, n * wordBytes);
    }
  }

  /** The bit width of an inline-bitpacked chunk of `n` values, checked against its bytes. */
  private static int inlineWidth(int bits, Slice buf, int n) {
    if (n > FastLanes.BLOCK) throw new EncodingException(n + " values in one inline-bitpacked chunk (at most 1024)");
    int wordBytes = bits / 8;
    buf.require(0, wordBytes, "the bit width of an inline-bitpacked chunk");
    long width = LittleEndian.getUnsigned(buf.array, buf.offset, wordBytes);
    if (width > bits) throw new EncodingException("an inline-bitpacked chunk of " + bits + "-bit values claims width " + width);
    buf.require(wordBytes, FastLanes.packedBytes((int) width), "an inline-bitpacked chunk of width", (int) width);
    return (int) width;
  }

  /** A whole buffer of inline-bitpacked chunks, one after another (used for levels). */
  static DataBlock.FixedWidth inlineBitpackedBlocks(int bits, Slice buf, int n) {
    int wordBytes = bits / 8;
    byte[] out = new byte[n * wordBytes];
    byte[] block = new byte[FastLanes.BLOCK * wordBytes];
    int pos = 0;
    for (int done = 0; done < n; done += FastLanes.BLOCK) {
      buf.require(pos, wordBytes, "the bit width of an inline-bitpacked chunk");
      long width = LittleEndian.getUnsigned(buf.array, buf.offset + pos, wordBytes);
      if (width > bits) throw new EncodingException("an inline-bitpacked chunk of " + bits + "-bit values claims width " + width);
      buf.require(pos + wordBytes, FastLanes.packedBytes((int) width), "an inline-bitpacked chunk");
      FastLanes.unpack(bits, (int) width, buf.array, buf.offset + pos + wordBytes, block, 0);
      int take = Math.min(FastLanes.BLOCK, n - done);
      System.arraycopy(block, 0, out, done * wordBytes, take * wordBytes);
      pos += wordBytes + FastLanes.packedBytes((int) width);
    }
    return new DataBlock.FixedWidth(bits, out, n);
  }

  /**
   * Out-of-line bitpacking: FastLanes blocks of `width`-bit packed `bits`-bit values back to back; a final partial
   * block is either packed (padded to 1024 values) or stored raw, which the buffer's length tells apart.
   */
  static DataBlock.FixedWidth outOfLineBitpacked(int bits, int width, Slice buf, int n) {
    int wordBytes = bits / 8;
    int blockBytes = FastLanes.packedBytes(width);
    int whole = n / FastLanes.BLOCK;
    int tail = n % FastLanes.BLOCK;
    // The payload is the packed blocks and a tail either raw or packed as one more block, nothing else (pylance
    // refuses any other length).
    long packed = (long) whole * blockBytes;
    if (buf.length != packed + (long) tail * wordBytes && buf.length != packed + (tail > 0 ? blockBytes : 0)) {
      throw new EncodingException("out-of-line bitpacked payload of " + buf.length + " bytes for " + n + " " + width
          + "-bit values");
    }
    byte[] out = new byte[n * wordBytes];
    buf.require(0, packed, "out-of-line bitpacked values");
    for (int b = 0; b < whole; b++) {
      FastLanes.unpack(bits, width, buf.array, buf.offset + b * blockBytes, out, b * FastLanes.BLOCK * wordBytes);
    }
    if (tail > 0) {
      int pos = whole * blockBytes;
      if (buf.length - pos == tail * wordBytes) {
        System.arraycopy(buf.array, buf.offset + pos, out, whole * FastLanes.BLOCK * wordBytes, tail * wordBytes);
      } else {
        buf.require(pos, blockBytes, "the last out-of-line bitpacked block");
        byte[] block = new byte[FastLanes.BLOCK * wordBytes];
        FastLanes.unpack(bits, width, buf.array, buf.offset + pos, block, 0);
        System.arraycopy(block, 0, out, whole * FastLanes.BLOCK * wordBytes, tail * wordBytes);
      }
    }
    return new DataBlock.FixedWidth(bits, out, n);
  }

  /**
   * Variable-width values whose buffer holds `n + 1` offsets (relative to the buffer start) followed by the
   * bytes; the result's offsets are rebased to start at 0.
   */
  static DataBlock.VariableWidth variableWithInlineOffsets(int offsetBits, Slice buf, int n) {
    int ob = offsetBits / 8;
    if ((long) (n + 1) * ob > buf.length) buf.require(0, (long) (n + 1) * ob, n + " variable-width offsets");
    long first = offsetBits == 64 ? buf.i64(0) : buf.u32(0);
    long last = offsetBits == 64 ? buf.i64(n * ob) : buf.u32(n * ob);
    if (first < 0 || last < first || last > buf.length) {
      throw new EncodingException("variable-width offsets run from " + first + " to " + last + " in a buffer of " + buf.length + " bytes");
    }
    byte[] offsets = new byte[(n + 1) * ob];
    long prev = first;
    for (int i = 0; i <= n; i++) {
      long o = offsetBits == 64 ? buf.i64(i * ob) : buf.u32(i * ob);
      if (o < prev || o > last) throw new EncodingException("variable-width offset " + i + " (" + o + ") is out of order");
      prev = o;
      if (offsetBits == 64) LittleEndian.putLong(offsets, i * 8, o - first);
      else LittleEndian.putInt(offsets, i * 4, (int) (o - first));
    }
    byte[] data = java.util.Arrays.copyOfRange(buf.array, buf.offset + (int) first, buf.offset + (int) last);
    return new DataBlock.VariableWidth(offsetBits, offsets, data, n);
  }

  /**
   * A whole-buffer variable-width block: u32 offset width (32 or 64), the data start (u32 at 4, or u64 at 8 for
   * 64-bit offsets), `n + 1` offsets relative to the data start, then the data.
   */
  static DataBlock.VariableWidth variableBlock(Slice buf, int n) {
    buf.require(0, 8, "a variable-width block header");
    long bits = buf.u32(0);
    int headerEnd;
    long dataStart;
    if (bits == 32) { dataStart = buf.u32(4); headerEnd = 8; }
    else if (bits == 64) { buf.require(8, 8, "a variable-width block header"); dataStart = buf.i64(8); headerEnd = 16; }
    else throw new EncodingException("a variable-width block with " + bits + "-bit offsets");
    int ob = (int) bits / 8;
    if (dataStart < headerEnd + (long) (n + 1) * ob || dataStart > buf.length) {
      throw new EncodingException("a variable-width block's data starts at " + dataStart + " in " + buf.length + " bytes");
    }
    Slice offs = buf.slice(headerEnd, (int) dataStart - headerEnd);
    Slice data = buf.slice((int) dataStart, buf.length - (int) dataStart);
    byte[] offsets = new byte[(n + 1) * ob];
    long first = ob == 8 ? offs.i64(0) : offs.u32(0);
    if (first < 0) throw new EncodingException("a variable-width block's first offset is " + first);
    long prev = 0;
    for (int i = 0; i <= n; i++) {
      long o = (ob == 8 ? offs.i64(i * ob) : offs.u32(i * ob)) - first;
      if (o < prev || first + o > data.length) throw new EncodingException("variable-width offset " + i + " is out of range");
      prev = o;
      if (ob == 8) LittleEndian.putLong(offsets, 8 * i, o); else LittleEndian.putInt(offsets, 4 * i, (int) o);
    }
    byte[] bytes = java.util.Arrays.copyOfRange(data.array, data.offset + (int) first, data.offset + (int) (first + prev));
    return new DataBlock.VariableWidth((int) bits, offsets, bytes, n);
  }

  /** Mini-block RLE: `values` holds one value per run, `lengths` one u8 run length per run. */
  static DataBlock.FixedWidth rle(int bits, Slice values, Slice lengths, int n) {
    int vb = checkRuns(bits, values, lengths, n);
    if ((long) n * vb > Integer.MAX_VALUE - 16) throw new EncodingException("rle runs of " + n + " " + bits + "-bit values");
    byte[] out = new byte[n * vb];
    fillRuns(vb, values, lengths, n, out, 0);
    return new DataBlock.FixedWidth(bits, out, n);
  }

  /** The bytes of one value of `bits` bits, after checking that the runs have their values and can cover `n` values. */
  private static int checkRuns(int bits, Slice values, Slice lengths, int n) {
    int vb = bits / 8;
    if (bits % 8 != 0 || vb == 0) throw new EncodingException("rle of " + bits + "-bit values");
    int runs = lengths.length;
    if ((long) runs * vb > values.length) values.require(0, (long) runs * vb, runs + " run values");
    if ((long) runs * 255 < n) throw new EncodingException(runs + " rle runs cannot cover " + n + " values");
    return vb;
  }

  /**
   * Mini-block RLE decoded into `out` from byte `at` on (`n` values of `bits` bits, a multiple of 8), so a run of
   * chunks needs no array per chunk nor a copy to join them. The buffers' sizes are checked before anything is
   * written; runs are filled by one loop per value width with the width's switch outside the loop over runs:
   * pylance encodes sorted keys such as TPC-H's `l_orderkey` this way, with runs of 1 to 7, so the cost per run counts.
   */
  static void rleInto(int bits, Slice values, Slice lengths, int n, byte[] out, int at) {
    int vb = checkRuns(bits, values, lengths, n);
    if (at < 0 || (long) at + (long) n * vb > out.length) {
      throw new EncodingException("rle runs of " + n + " " + bits + "-bit values at byte " + at + " of " + out.length);
    }
    fillRuns(vb, values, lengths, n, out, at);
  }

  /** Writes the runs' values from byte `at` of `out` on; the runs' buffers and `out` are checked by the caller. */
  private static void fillRuns(int vb, Slice values, Slice lengths, int n, byte[] out, int at) {
    int runs = lengths.length;
    byte[] in = values.array;
    byte[] len = lengths.array;
    int lenAt = lengths.offset;
    int from = values.offset;
    int pos = 0;
    int r = 0;
    switch (vb) {
      case 1:
        for (; r < runs && pos < n; r++) {
          int end = Math.min(pos + (len[lenAt + r] & 0xFF), n);
          java.util.Arrays.fill(out, at + pos, at + end, in[from + r]);
          pos = end;
        }
        break;
      case 2:
        for (; r < runs && pos < n; r++) {
          int end = Math.min(pos + (len[lenAt + r] & 0xFF), n);
          short v = LittleEndian.getShort(in, from + 2 * r);
          for (int o = at + 2 * pos, stop = at + 2 * end; o < stop; o += 2) LittleEndian.putShort(out, o, v);
          pos = end;
        }
        break;
      case 4:
        // Runs of up to 8 values, while 8 more values fit in this call's range: 8 stores with no branch on the run's
        // length; the stores past the run are overwritten by the runs after it (or the count check fails).
        for (; r < runs && pos + 8 <= n; r++) {
          int l = len[lenAt + r] & 0xFF;
          int v = LittleEndian.getInt(in, from + 4 * r);
          int o = at + 4 * pos;
          if (l <= 8) {
            LittleEndian.putInt(out, o, v); LittleEndian.putInt(out, o + 4, v); LittleEndian.putInt(out, o + 8, v); LittleEndian.putInt(out, o + 12, v);
            LittleEndian.putInt(out, o + 16, v); LittleEndian.putInt(out, o + 20, v); LittleEndian.putInt(out, o + 24, v); LittleEndian.putInt(out, o + 28, v);
            pos += l;
          } else {
            int end = Math.min(pos + l, n);
            for (int stop = at + 4 * end; o < stop; o += 4) LittleEndian.putInt(out, o, v);
            pos = end;
          }
        }
        for (; r < runs && pos < n; r++) {
          int end = Math.min(pos + (len[lenAt + r] & 0xFF), n);
          int v = LittleEndian.getInt(in, from + 4 * r);
          for (int o = at + 4 * pos, stop = at + 4 * end; o < stop; o += 4) LittleEndian.putInt(out, o, v);
          pos = end;
        }
        break;
      case 8:
        // As for 4-byte values.
        for (; r < runs && pos + 8 <= n; r++) {
          int l = len[lenAt + r] & 0xFF;
          long v = LittleEndian.getLong(in, from + 8 * r);
          int o = at + 8 * pos;
          if (l <= 8) {
            LittleEndian.putLong(out, o, v); LittleEndian.putLong(out, o + 8, v); LittleEndian.putLong(out, o + 16, v); LittleEndian.putLong(out, o + 24, v);
            LittleEndian.putLong(out, o + 32, v); LittleEndian.putLong(out, o + 40, v); LittleEndian.putLong(out, o + 48, v); LittleEndian.putLong(out, o + 56, v);
            pos += l;
          } else {
            int end = Math.min(pos + l, n);
            for (int stop = at + 8 * end; o < stop; o += 8) LittleEndian.putLong(out, o, v);
            pos = end;
          }
        }
        for (; r < runs && pos < n; r++) {
          int end = Math.min(pos + (len[lenAt + r] & 0xFF), n);
          long v = LittleEndian.getLong(in, from + 8 * r);
          for (int o = at + 8 * pos, stop = at + 8 * end; o < stop; o += 8) LittleEndian.putLong(out, o, v);
          pos = end;
        }
        break;
      default:
        for (; r < runs && pos < n; r++) {
          int end = Math.min(pos + (len[lenAt + r] & 0xFF), n);
          for (int i = pos; i < end; i++) System.arraycopy(in, from + r * vb, out, at + i * vb, vb);
          pos = end;
        }
    }
    if (pos != n) throw new EncodingException("rle runs cover " + pos + " values, " + n + " expected");
  }

  /** Byte stream split: byte j of value i is at `j * n + i`. */
  static DataBlock.FixedWidth byteStreamSplit(int bits, Slice buf, int n) {
    int vb = bits / 8;
    buf.require(0, (long) n * vb, "byte-stream-split values");
    byte[] out = new byte[n * vb];
    for (int j = 0; j < vb; j++) {
      int base = buf.offset + j * n;
      for (int i = 0; i < n; i++) out[i * vb + j] = buf.array[base + i];
    }
    return new DataBlock.FixedWidth(bits, out, n);
  }

  static DataBlock.FixedWidth constant(byte[] value, int n, long maxBytes) {
    if ((long) value.length * n > maxBytes) throw new EncodingException("a constant of " + n + " values is too large");
    byte[] out = new byte[value.length * n];
    for (int i = 0; i < n; i++) System.arraycopy(value, 0, out, i * value.length, value.length);
    return new DataBlock.FixedWidth(value.length * 8, out, n);
  }
}
