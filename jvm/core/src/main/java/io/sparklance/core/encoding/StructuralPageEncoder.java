package io.sparklance.core.encoding;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.sparklance.proto.Encodings21Protos.BufferCompression;
import io.sparklance.proto.Encodings21Protos.CompressionScheme;
import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;
import io.sparklance.proto.Encodings21Protos.General;
import io.sparklance.proto.Encodings21Protos.ConstantLayout;
import io.sparklance.proto.Encodings21Protos.Flat;
import io.sparklance.proto.Encodings21Protos.FullZipLayout;
import io.sparklance.proto.Encodings21Protos.InlineBitpacking;
import io.sparklance.proto.Encodings21Protos.MiniBlockLayout;
import io.sparklance.proto.Encodings21Protos.OutOfLineBitpacking;
import io.sparklance.proto.Encodings21Protos.PageLayout;
import io.sparklance.proto.Encodings21Protos.RepDefLayer;
import io.sparklance.proto.Encodings21Protos.Variable;

/**
 * Encodes the levels and values a {@link LeafShredder} collected into one page of file version 2.1 or 2.2
 * (docs/dev/file-format-2.1.md): a mini-block page for small values, a full-zip page for wide ones (vectors, long
 * strings), and an all-null (2.1) / constant (2.2) page when no value is valid.
 *
 * Encodings chosen: values flat, or inline-bitpacked when an integer column's chunks need fewer bits; variable-width
 * values with 32/64-bit offsets; mini-block chunks of variable-width values wrapped in general zstd, of 128-bit or
 * wider fixed-width values (decimals) in general LZ4, when a sample chunk shrinks by a fifth; levels out-of-line
 * bitpacked. A page of few distinct values becomes a mini-block page of 32-bit indices (bitpacked, or runs) into a page dictionary, as pylance writes it (see
 * {@link #dictionaryCandidate}); pages of strings of at most one byte too, where pylance leaves them plain, when that
 * is smaller (see {@link #smallerOfDictionaryAndPlain}).
 */
public final class StructuralPageEncoder {

  /** A page ready for the file: its buffers and its layout. */
  public static final class Page {
    public final ByteBuffer[] buffers;
    public final PageLayout layout;

    public Page(ByteBuffer[] buffers, PageLayout layout) {
      this.buffers = buffers;
      this.layout = layout;
    }
  }

  /** Values of at least this many bytes go to a full-zip page (upstream: 256). */
  static final int MINIBLOCK_MAX_VALUE_BYTES = 256;
  /** Chunks aim at this many bytes of values; a chunk never exceeds 32 KiB. */
  static final int CHUNK_TARGET_BYTES = 8 * 1024;
  static final int CHUNK_MAX_BYTES = 32 * 1024;
  static final int CHUNK_MAX_VALUES = 4096;
  static final byte CHUNK_PAD = (byte) 0xFE;
  static final byte VALUE_PAD = (byte) 0x48;
  /** zstd level of compressed chunks and values: fast, and most of the ratio of higher levels on column data. */
  static final int ZSTD_LEVEL = 3;
  /**
   * Fixed-width values of at least this many bytes may be LZ4-compressed in mini-block chunks: narrower ones are
   * integers that bitpacking covers, these (decimal128: 16 bytes, of which a DECIMAL(7,2) uses 4) nothing else does.
   */
  static final int GENERAL_MIN_FIXED_BYTES = 16;
  /** Full-zip values of at least this many bytes are compressed one by one when a sample shows that it pays. */
  static final int PER_VALUE_ZSTD_MIN_BYTES = 128;
  /** Pages of fewer values are never dictionary-encoded (upstream `LANCE_ENCODING_DICT_TOO_SMALL`, 100). */
  static final int DICTIONARY_MIN_VALUES = 100;
  /**
   * A page dictionary holds at most the page's values divided by this (upstream `dict-divisor`, 2), and at most
   * {@link #DICTIONARY_MAX_ITEMS} items.
   */
  static final int DICTIONARY_DIVISOR = 2;
  /** A page dictionary holds at most this many items (upstream `DEFAULT_DICT_MAX_CARDINALITY`, 100,000). */
  static final int DICTIONARY_MAX_ITEMS = 100_000;
  /** A page dictionary holds at most this many bytes, so that it stays one LZ4 block well below 2 GiB. */
  static final long DICTIONARY_MAX_BYTES = 64L << 20;
  /** A dictionary page's estimate must be at most this fraction of the plain values (upstream `dict-size-ratio`). */
  static final double DICTIONARY_SIZE_RATIO = 0.8;
  /** The sample that gates a dictionary: up to this many values (upstream 4096)... */
  static final int DICTIONARY_SAMPLE_VALUES = 4096;
  /** ...taken as the leading values of this many equal blocks of the page (upstream 32)... */
  static final int DICTIONARY_SAMPLE_BLOCKS = 32;
  /** ...and only when it holds at least this many values (upstream 1024); smaller pages go without the gate. */
  static final int DICTIONARY_SAMPLE_MIN_VALUES = 1024;
  /** A sample of at least this fraction of distinct values rules a dictionary out (upstream 0.98). */
  static final double DICTIONARY_SAMPLE_MAX_UNIQUE = 0.98;

  private final LeafShredder s;
  private final boolean v22;
  private final boolean integerLike;
  private boolean bitpackable;
  /** Page definition code of each full code. */
  private final int[] map;
  private final RepDefLayer[] layers;
  private final boolean hasDef;
  private final int maxPageDef;
  private final short[] def;
  /** The values mini-block chunks hold: the shredder's, or dictionary indices. */
  private byte kind;
  private int width;
  private Growable.Bytes values;
  private Growable.Longs ends;
  /** The page's dictionary (dictionary-typed columns): its block and encoding, and its item count. */
  private Growable.Bytes dictionary;
  private CompressiveEncoding dictionaryEncoding;
  private int dictionaryItems;
  /** Whether a page dictionary's indices are written as runs ({@link DictionaryPageEncodings#RLE_INDICES}). */
  private boolean rleIndices;
  /** Whether a page of plain values may become a dictionary page (see {@link #dictionaryCandidate}). */
  private final boolean pageDictionaries;

  /**
   * Whether values may be compressed: a page dictionary's indices bitpacked, variable-width values zstd-compressed,
   * wide fixed-width values LZ4-compressed. Off for fields marked {@code lance-encoding:compression=none}, which pylance 14 stores so
   * (its dictionary of a dictionary page it still LZ4-compresses).
   */
  private final boolean compress;

  private StructuralPageEncoder(LeafShredder s, boolean v22, boolean bitpackable, boolean pageDictionaries,
      boolean compress) {
    this.s = s;
    this.pageDictionaries = pageDictionaries;
    this.compress = compress;
    this.v22 = v22;
    this.kind = s.valueKind;
    this.width = s.width;
    this.values = s.values;
    this.ends = s.ends;
    this.integerLike = bitpackable;
    this.bitpackable = bitpackable || s.dictionaryKeyBits > 0;
    // Layers innermost first; a layer is nullable (or emptyable) only if this page has such a level.
    int n = s.nullCode.length;
    layers = new RepDefLayer[n];
    map = new int[s.maxFullDef + 1];
    // pylance 14 cannot read a struct whose pages disagree on its validity (a page without struct nulls declaring the
    // layer all-valid next to one that declares it nullable: "Incorrect number of nulls for StructArray"), nor can it
    // read such a file of its own. Every page declares struct layers nullable, whatever the page holds, except the
    // struct layers below a list on an all-null (constant) page: pylance misreads those ("expected 0 got 2").
    boolean[] listAbove = new boolean[n];
    for (int k = 1; k < n; k++) listAbove[k] = listAbove[k - 1] || s.emptyCode[k - 1] != 0;
    boolean[] nullableStruct = new boolean[n];
    for (int k = 0; k < n - 1; k++) nullableStruct[k] = s.emptyCode[k] == 0 && (s.numValid > 0 || !listAbove[k]);
    // Arrow nulls the children of a null struct too, and pylance's reader expects the layers under a struct with nulls
    // to be nullable (down to the first list, whose null slots have no items), as its writer declares them: so even
    // when none of their own null levels occur. A list right under a struct declared nullable is declared nullable as
    // well: pylance misreads a nullable struct over an all-valid list when a list above has empty or null levels
    // ("Incorrect number of nulls for StructArray", fuzz seed 11).
    // Below that first list, every list right under it is declared nullable too: pylance misreads a nullable struct
    // over a list of all-valid lists when a list above the struct has empty or null levels, also in files of its own
    // ("Incorrect number of nulls for StructArray", `list<struct<list<list<string>>>>` with an empty outer list; fuzz
    // seed 20261129), and reads them when every list down to the items is declared nullable.
    boolean[] nullAbove = new boolean[n];
    for (int k = 1; k < n; k++) {
      boolean isList = s.emptyCode[k] != 0;
      boolean parentIsList = s.emptyCode[k - 1] != 0;
      nullAbove[k] = parentIsList
          ? isList && nullAbove[k - 1]
          : nullAbove[k - 1] || s.seen[s.nullCode[k - 1]] || (isList && nullableStruct[k - 1]);
    }
    int code = 0;
    for (int k = n - 1, l = 0; k >= 0; k--, l++) {
      boolean isList = s.emptyCode[k] != 0;
      // An all-null (constant) page declares its lists and its leaf nullable, as pylance's writer does: pages whose
      // lists below a null struct are declared all-valid are misread (fuzz seed 11, 2.2 case 375).
      boolean allNullPage = s.numValid == 0 && (isList || k == n - 1);
      boolean nulls = s.seen[s.nullCode[k]] || nullAbove[k] || nullableStruct[k] || allNullPage;
      if (!isList) {
        layers[l] = nulls ? RepDefLayer.REPDEF_NULLABLE_ITEM : RepDefLayer.REPDEF_ALL_VALID_ITEM;
        if (nulls) map[s.nullCode[k]] = ++code;
      } else {
        boolean empties = s.seen[s.emptyCode[k]];
        layers[l] = nulls && empties ? RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST
            : nulls ? RepDefLayer.REPDEF_NULLABLE_LIST : empties ? RepDefLayer.REPDEF_EMPTYABLE_LIST
            : RepDefLayer.REPDEF_ALL_VALID_LIST;
        if (nulls) map[s.nullCode[k]] = ++code;
        if (empties) map[s.emptyCode[k]] = ++code;
      }
    }
    maxPageDef = code;
    hasDef = code > 0;
    def = new short[s.def.size];
    if (hasDef) for (int i = 0; i < def.length; i++) def[i] = (short) map[s.def.data[i]];
  }

  /**
   * Encodes the shredder's page. `bitpackable` allows inline bitpacking of the values (integer-like columns);
   * `v22` selects the 2.2 forms (32-bit chunk words, constant layout).
   */
  public static Page encode(LeafShredder s, boolean v22, boolean bitpackable) {
    return new StructuralPageEncoder(s, v22, bitpackable, true, true).encode();
  }

  /**
   * Encodes the shredder's page as {@link #encode} does for a field marked {@code lance-encoding:compression=none}:
   * no value is bitpacked (not even a page dictionary's indices) or zstd-compressed, as pylance 14 stores them.
   */
  public static Page encodeUncompressed(LeafShredder s, boolean v22) {
    return new StructuralPageEncoder(s, v22, false, true, false).encode();
  }

  /**
   * Encodes the shredder's page as {@link #encode} does, but never tries a page dictionary for plain values (a
   * dictionary-typed column still gets its own): for columns whose values are known to be distinct, where the try
   * costs time and never pays.
   */
  public static Page encodeWithoutPageDictionary(LeafShredder s, boolean v22, boolean bitpackable) {
    return new StructuralPageEncoder(s, v22, bitpackable, false, true).encode();
  }

  private Page encode() {
    if (s.numValid == 0) return allNull();
    if (s.dictionaryKeyBits > 0) {
      buildDictionary();
      Page p = miniBlock();
      if (p == null) {
        throw new IllegalStateException("a dictionary page whose chunks exceed the mini-block limits (over 65535 levels)");
      }
      return p;
    }
    if (dictionaryCandidate()) {
      if (dictionaryEncode()) {
        Page p = dictionaryPage();
        if (p != null) return p;
        undoDictionary();
      } else if (oneByteValues()) {
        return smallerOfDictionaryAndPlain();
      }
    }
    return plain();
  }

  /** The page of the shredder's own values: a mini-block page, or full-zip for wide values or chunks past the limits. */
  private Page plain() {
    boolean wide = s.valueKind == LeafShredder.FIXED_SIZE_LIST || s.valueKind == LeafShredder.VARIABLE_PACKED_STRUCT
        || (s.valueKind == LeafShredder.VARIABLE && s.maxValueBytes >= MINIBLOCK_MAX_VALUE_BYTES);
    if (!wide) {
      Page p = miniBlock();
      if (p != null) return p;
    }
    return fullZip();
  }

  private boolean visible(int i) { return s.def.data[i] <= s.maxVisibleDef; }

  /**
   * Whether the mini-block values are fixed-width values of {@link #GENERAL_MIN_FIXED_BYTES} or more bytes (decimal128,
   * decimal256, wide fixed-size binaries): those a page may wrap in general LZ4, as pylance 14 writes a decimal column
   * marked {@code lance-encoding:compression=lz4} ({@code General(lz4, Flat(128))}).
   */
  private boolean wideFixed() { return kind == LeafShredder.FIXED && width >= GENERAL_MIN_FIXED_BYTES; }

  // ---------------------------------------------------------------------------------------------- all null

  private Page allNull() {
    ConstantLayout.Builder c = ConstantLayout.newBuilder();
    for (RepDefLayer l : layers) c.addLayers(l);
    ByteBuffer[] buffers;
    if (layers.length == 1) {
      buffers = new ByteBuffer[0];
    } else if (v22) {
      // 2.2 block-encodes the levels of a constant page; 2.1 stores them as raw 16-bit words.
      buffers = new ByteBuffer[] {ByteBuffer.allocate(0), ByteBuffer.allocate(0)};
      if (s.maxRep > 0) {
        Growable.Bytes b = new Growable.Bytes(s.rep.size);
        levels(s.rep.data, 0, s.rep.size, s.maxRep, b);
        buffers[0] = b.view();
        c.setRepCompression(levelEncoding(s.maxRep)).setNumRepValues(s.rep.size);
      }
      if (hasDef) {
        Growable.Bytes b = new Growable.Bytes(def.length);
        levels(def, 0, def.length, maxPageDef, b);
        buffers[1] = b.view();
        c.setDefCompression(levelEncoding(maxPageDef)).setNumDefValues(def.length);
      }
    } else {
      buffers = new ByteBuffer[] {raw16(s.maxRep > 0 ? s.rep.data : null, s.rep.size), raw16(hasDef ? def : null, def.length)};
    }
    return new Page(buffers, PageLayout.newBuilder().setConstantLayout(c).build());
  }

  private static ByteBuffer raw16(short[] levels, int n) {
    if (levels == null) return ByteBuffer.allocate(0);
    byte[] b = new byte[2 * n];
    for (int i = 0; i < n; i++) LittleEndian.putShort(b, 2 * i, levels[i]);
    return ByteBuffer.wrap(b);
  }

  // ---------------------------------------------------------------------------------------------- mini-block

  /** The mini-block page, or null when some chunk cannot fit the format's limits (then full-zip is used). */
  private Page miniBlock() {
    int numValues = s.numVisible;
    int numLevels = s.def.size;
    boolean hasRep = s.maxRep > 0;
    boolean levelsPerValue = !hasRep;   // without lists, levels and values are one to one
    int fixedBytes = kind == LeafShredder.FIXED || kind == LeafShredder.PACKED_STRUCT ? width : 0;
    int typeBits = fixedBytes * 8;
    boolean rle = rleIndices;
    boolean pack = !rle && bitpackable && kind == LeafShredder.FIXED && (typeBits == 8 || typeBits == 16 || typeBits == 32 || typeBits == 64);
    boolean anyNarrow = false;

    Growable.Bytes chunks = new Growable.Bytes(values.size + numLevels + 1024);
    Growable.Bytes words = new Growable.Bytes(256);
    Growable.Longs repIndex = new Growable.Longs(64);
    Growable.Bytes valueBuf = new Growable.Bytes(CHUNK_MAX_BYTES);
    Growable.Bytes runBuf = rle ? new Growable.Bytes(DictionaryPageEncodings.RLE_CHUNK_VALUES) : null;
    Growable.Bytes repBuf = new Growable.Bytes(1024);
    Growable.Bytes defBuf = new Growable.Bytes(1024);
    int[] widths = pack ? blockWidths(values, numValues, fixedBytes) : null;
    if (pack) {
      for (int w : widths) if (w < typeBits) anyNarrow = true;
      pack = anyNarrow;
    }

    // General compression around the value buffers of chunks, when a sample chunk shows that it pays: zstd for
    // variable-width values; LZ4 for wide fixed-width ones (decimal128 and wider, which bitpacking does not cover),
    // whose zstd chunks the reader decodes at about half the speed of flat ones, LZ4's at the same speed
    // (file_read_bench.py), for about 1.5 times zstd's bytes.
    boolean lz4 = compress && !pack && !rle && wideFixed();
    boolean general = false;
    if (lz4 || (compress && !pack && !rle && kind == LeafShredder.VARIABLE)) {
      Growable.Bytes sample = new Growable.Bytes(CHUNK_MAX_BYTES);
      values(0, chunkValues(0, numValues), sample);
      Growable.Bytes compressed = new Growable.Bytes(sample.size + 64);
      compressChunk(lz4, sample, compressed);
      general = compressed.size < sample.size * 0.8;
    }
    Growable.Bytes plain = general ? new Growable.Bytes(CHUNK_MAX_BYTES) : null;
    byte[] block = pack ? new byte[FastLanes.BLOCK * fixedBytes] : null;   // one chunk's values, zero-padded

    int v = 0, level = 0, chunkIndex = 0;
    while (v < numValues) {
      int n = pack ? Math.min(FastLanes.BLOCK, numValues - v)
          : rle ? Math.min(DictionaryPageEncodings.RLE_CHUNK_VALUES, numValues - v) : chunkValues(v, numValues);
      int levelEnd;
      if (levelsPerValue) levelEnd = level + n;
      else {
        int taken = 0, l = level;
        while (taken < n) { if (visible(l)) taken++; l++; }
        levelEnd = l;
      }
      boolean last = v + n == numValues;
      if (last) levelEnd = numLevels;
      int chunkLevels = levelEnd - level;
      if (chunkLevels > 0xFFFF) return null;

      valueBuf.clear();
      if (rle) {
        runBuf.clear();
        DictionaryPageEncodings.rle(values.data, v, n, valueBuf, runBuf);
      } else if (pack) {
        int w = widths[chunkIndex];
        System.arraycopy(values.data, v * fixedBytes, block, 0, n * fixedBytes);
        if (n < FastLanes.BLOCK) Arrays.fill(block, n * fixedBytes, block.length, (byte) 0);
        valueBuf.uint(w, fixedBytes);
        int packed = FastLanes.packedBytes(w);
        valueBuf.ensure(packed);
        FastLanes.pack(typeBits, w, block, 0, valueBuf.data, valueBuf.size);
        valueBuf.size += packed;
      } else if (general) {
        plain.clear();
        values(v, n, plain);
        compressChunk(lz4, plain, valueBuf);
      } else {
        values(v, n, valueBuf);
      }
      repBuf.clear();
      defBuf.clear();
      if (hasRep) levels(s.rep.data, level, chunkLevels, s.maxRep, repBuf);
      if (hasDef) levels(def, level, chunkLevels, maxPageDef, defBuf);

      int start = chunks.size;
      chunks.u16(hasRep || hasDef ? chunkLevels : 0);
      if (hasRep) chunks.u16(repBuf.size);
      if (hasDef) chunks.u16(defBuf.size);
      if (v22) chunks.u32(valueBuf.size); else chunks.u16(valueBuf.size);
      if (rle && v22) chunks.u32(runBuf.size); else if (rle) chunks.u16(runBuf.size);
      chunks.pad(8, CHUNK_PAD);
      if (hasRep) { chunks.add(repBuf.data, 0, repBuf.size); chunks.pad(8, CHUNK_PAD); }
      if (hasDef) { chunks.add(defBuf.data, 0, defBuf.size); chunks.pad(8, CHUNK_PAD); }
      chunks.add(valueBuf.data, 0, valueBuf.size);
      chunks.pad(8, CHUNK_PAD);
      if (rle) { chunks.add(runBuf.data, 0, runBuf.size); chunks.pad(8, CHUNK_PAD); }
      int bytes = chunks.size - start;
      if (bytes > CHUNK_MAX_BYTES || (!v22 && valueBuf.size > 0xFFFF)) return null;
      int log = last ? 0 : Integer.numberOfTrailingZeros(n);
      long word = ((long) (bytes / 8 - 1) << 4) | log;
      if (v22) words.u32(word); else words.u16((int) word);

      if (hasRep) addRepIndex(repIndex, level, levelEnd, chunkIndex, last);
      v += n;
      level = levelEnd;
      chunkIndex++;
    }

    MiniBlockLayout.Builder m = MiniBlockLayout.newBuilder()
        .setValueCompression(rle ? DictionaryPageEncodings.RLE_INDICES : pack ? inlineBitpacking(typeBits)
            : general ? general(lz4 ? CompressionScheme.COMPRESSION_ALGORITHM_LZ4 : CompressionScheme.COMPRESSION_ALGORITHM_ZSTD,
                valueEncoding()) : valueEncoding())
        .setNumBuffers(rle ? 2 : 1)
        .setNumItems(numValues);
    if (hasRep) m.setRepCompression(levelEncoding(s.maxRep)).setRepetitionIndexDepth(1);
    if (hasDef) m.setDefCompression(levelEncoding(maxPageDef));
    if (v22) m.setHasLargeChunk(true);
    for (RepDefLayer l : layers) m.addLayers(l);
    java.util.List<ByteBuffer> buffers = new java.util.ArrayList<>();
    buffers.add(ByteBuffer.wrap(words.toArray()));
    buffers.add(chunks.view());
    if (dictionary != null) {
      m.setDictionary(dictionaryEncoding).setNumDictionaryItems(dictionaryItems);
      buffers.add(dictionary.view());
    }
    if (hasRep) {
      byte[] idx = new byte[8 * repIndex.size];
      for (int i = 0; i < repIndex.size; i++) LittleEndian.putLong(idx, 8 * i, repIndex.data[i]);
      buffers.add(ByteBuffer.wrap(idx));
    }
    return new Page(buffers.toArray(new ByteBuffer[0]), PageLayout.newBuilder().setMiniBlockLayout(m).build());
  }

  /**
   * Replaces the page's values by indices of the key's width into a dictionary of its distinct values (a
   * dictionary-typed column: every page gets one, whatever its cardinality).
   */
  private void buildDictionary() {
    int keyBytes = s.dictionaryKeyBits / 8;
    DictionaryBuilder d = collectDictionary();
    if (keyBytes < 8 && d.items() - 1 > (1L << (8 * keyBytes - 1)) - 1) {
      throw new IllegalStateException(d.items() + " distinct values overflow a " + (8 * keyBytes) + "-bit dictionary key");
    }
    useDictionary(d, keyBytes);
  }

  /**
   * The page's distinct values in order of first appearance and each visible slot's item (-1 for a null slot), for
   * a dictionary-typed column's own dictionary.
   */
  private DictionaryBuilder collectDictionary() {
    boolean variable = s.valueKind == LeafShredder.VARIABLE;
    DictionaryBuilder d = new DictionaryBuilder();
    byte[] data = s.values.data;
    long[] valueEnds = s.ends.data;
    short[] defs = s.def.data;
    int v = 0;
    for (int i = 0; i < s.def.size; i++) {
      if (defs[i] > s.maxVisibleDef) continue;
      if (defs[i] == 0) {
        int start = variable ? (v == 0 ? 0 : (int) valueEnds[v - 1]) : v * s.width;
        int end = variable ? (int) valueEnds[v] : start + s.width;
        d.add(data, start, end - start);
      } else {
        d.addNull();
      }
      v++;
    }
    return d;
  }

  /** Adds the page's visible value `v` (a null slot's placeholder: empty, or zeros) to `d`. */
  private void addValue(DictionaryBuilder d, int v) {
    if (s.valueKind == LeafShredder.VARIABLE) {
      int start = v == 0 ? 0 : (int) s.ends.data[v - 1];
      d.add(s.values.data, start, (int) s.ends.data[v] - start);
    } else {
      d.add(s.values.data, v * s.width, s.width);
    }
  }

  /**
   * Makes the page's values the indices of `d` (`keyBytes` each; null slots get index 0) and its dictionary the
   * dictionary block of `d` (file-format-2.1.md §3.5, §8.12), LZ4-compressed in 2.2 as pylance 14 writes it
   * (`General(LZ4, ...)`), plain in 2.1 as pylance does.
   */
  private void useDictionary(DictionaryBuilder d, int keyBytes) {
    int n = d.rows();
    Growable.Bytes indices = new Growable.Bytes(n * keyBytes);
    int[] rows = d.rowItems();
    for (int k = 0; k < n; k++) indices.uint(Math.max(rows[k], 0), keyBytes);
    dictionaryItems = d.items();
    Growable.Bytes block = dictionaryBlock(d.itemBytes(), d.itemEnds(), dictionaryItems);
    if (v22) {
      dictionary = new Growable.Bytes(block.size / 2 + 64);
      Codecs.lz4Compress(block.data, 0, block.size, dictionary);
      dictionaryEncoding = general(CompressionScheme.COMPRESSION_ALGORITHM_LZ4, dictionaryBlockEncoding());
    } else {
      dictionary = block;
      dictionaryEncoding = dictionaryBlockEncoding();
    }
    kind = LeafShredder.FIXED;
    width = keyBytes;
    values = indices;
    ends = null;
  }

  /**
   * Whether the page's values may become indices into a page dictionary. The candidates are those pylance 14
   * dictionary-encodes (lance-encoding `PrimitiveStructuralEncoder::should_dictionary_encode`, `dict.rs`): pages of at
   * least {@link #DICTIONARY_MIN_VALUES} values of strings and binaries, of 128-bit values (decimal128,
   * fixed_size_binary(16)) and, in 2.2 only, of 64-bit values (int64, double, timestamps). Not JSON (its values are
   * JSONB), nor 32-bit or narrower values, which pylance leaves to bitpacking.
   */
  private boolean dictionaryCandidate() {
    if (!pageDictionaries || s.json || s.numVisible < DICTIONARY_MIN_VALUES) return false;
    if (s.valueKind == LeafShredder.VARIABLE) return true;
    return s.valueKind == LeafShredder.FIXED && (s.width == 16 || (v22 && s.width == 8));
  }

  /**
   * Replaces the page's values by 32-bit indices into a dictionary of its distinct values (in order of first
   * appearance) when pylance 14 would (lance-encoding `PrimitiveStructuralEncoder::should_dictionary_encode` and its
   * budgeted `dictionary_encode`, checked against pylance 14's files by tests/test_file_writer_dictionary.py). Its
   * evidence is the page's values as one block, a null slot counting as its placeholder (an empty value, or zeros):
   * <ol>
   *   <li>a sample: the leading values of {@link #DICTIONARY_SAMPLE_BLOCKS} equal blocks of the page, up to
   *   {@link #DICTIONARY_SAMPLE_VALUES} in all; with at least {@link #DICTIONARY_SAMPLE_MIN_VALUES} of them, the page
   *   gets no dictionary when the sample's fraction of distinct values is {@link #DICTIONARY_SAMPLE_MAX_UNIQUE} or
   *   more, or projected to the page exceeds the item limit (the page's values / {@link #DICTIONARY_DIVISOR}, at
   *   most {@link #DICTIONARY_MAX_ITEMS});</li>
   *   <li>the dictionary itself, given up as soon as it exceeds the item limit or its estimate (the distinct values
   *   and their offsets, plus 4 bytes an index) exceeds {@link #DICTIONARY_SIZE_RATIO} of the plain values (their
   *   bytes and offsets, or their fixed width).</li>
   * </ol>
   * The index width pylance prices (32 bits) is not what either writer stores: the indices are bitpacked or runs
   * ({@link #smallerEncodings}). Null slots get the placeholder's item, as in pylance's files. In 2.2 the dictionary
   * is LZ4-compressed, as pylance 14 writes it (`General(LZ4, ...)`), or bitpacked (64-bit values); 2.1 keeps it
   * plain, as pylance does.
   */
  private boolean dictionaryEncode() {
    int n = s.numVisible;
    int ob = s.valueKind == LeafShredder.VARIABLE ? s.width / 8 : 0;
    int maxItems = Math.min(n / DICTIONARY_DIVISOR, DICTIONARY_MAX_ITEMS);
    if (maxItems == 0) return false;
    long plain = ob > 0 ? s.values.size + (long) (n + 1) * ob : (long) n * s.width;
    long budget = (long) (plain * DICTIONARY_SIZE_RATIO);
    if (sampledOut(n, maxItems)) return false;
    long indexBytes = 4L * n;
    DictionaryBuilder d = new DictionaryBuilder();
    for (int v = 0; v < n; v++) {
      addValue(d, v);
      int items = d.items();
      long estimate = d.itemBytes().size + (ob > 0 ? (long) (items + 1) * ob : 0) + indexBytes;
      if (items > maxItems || estimate > budget || dictionaryBytes(d, ob) > DICTIONARY_MAX_BYTES) return false;
    }
    useDictionary(d, 4);
    bitpackable = compress;
    smallerEncodings(d);
    return true;
  }

  /**
   * Gives the dictionary page's parts the smaller of pylance 14's encodings ({@link DictionaryPageEncodings}), as
   * pylance chooses them: the indices runs when they take fewer bytes than bitpacked, a 64-bit dictionary (2.2)
   * bitpacked when that is smaller than LZ4-compressed. Not for fields stored uncompressed.
   */
  private void smallerEncodings(DictionaryBuilder d) {
    if (!compress) return;
    int n = s.numVisible;
    int header = 2 + (s.maxRep > 0 ? 2 : 0) + (hasDef ? 2 : 0);
    int sizeBytes = v22 ? 4 : 2;
    rleIndices = DictionaryPageEncodings.rleBytes(values.data, n, header, sizeBytes)
        < DictionaryPageEncodings.bitpackedBytes(values.data, n, header, sizeBytes);
    if (v22 && s.valueKind == LeafShredder.FIXED && s.width == 8) {
      DictionaryPageEncodings.Block b = DictionaryPageEncodings.bitpacked64(d.itemBytes().data, d.items());
      if (b != null && b.bytes.size < dictionary.size) {
        dictionary = b.bytes;
        dictionaryEncoding = b.encoding;
      }
    }
  }

  /**
   * The mini-block page of a page dictionary's indices; runs given up for bitpacking when their chunks do not fit the
   * mini-block limits, null when neither does.
   */
  private Page dictionaryPage() {
    Page p = miniBlock();
    if (p == null && rleIndices) {
      rleIndices = false;
      p = miniBlock();
    }
    return p;
  }

  /**
   * Whether the page's values are strings or binaries of at most one byte (flags such as TPC-H's `l_returnflag`):
   * pylance 14 never gives them a dictionary with 32-bit offsets (its estimate prices an index at 4 bytes, more than
   * such a value and its offset save; large strings' 8-byte offsets pass it), where this writer deviates (see
   * {@link #smallerOfDictionaryAndPlain}). Not for fields stored uncompressed.
   */
  private boolean oneByteValues() {
    return compress && s.valueKind == LeafShredder.VARIABLE && s.maxValueBytes <= 1;
  }

  /**
   * A page of values of at most one byte as a dictionary page (its indices and dictionary encoded as by
   * {@link #smallerEncodings}) when that takes fewer bytes than the page's plain layout, and plain otherwise. A
   * deviation from pylance 14, which stores such values plain (about 5 bytes a value with their offsets, where a
   * dictionary of two or three flags takes a quarter of a byte); pylance reads these pages as dictionary pages of its
   * own. At most 257 distinct values (each byte and the empty value), so the dictionary is built whole.
   */
  private Page smallerOfDictionaryAndPlain() {
    DictionaryBuilder d = new DictionaryBuilder();
    for (int v = 0; v < s.numVisible; v++) addValue(d, v);
    useDictionary(d, 4);
    bitpackable = true;
    smallerEncodings(d);
    Page withDictionary = dictionaryPage();
    undoDictionary();
    Page plain = plain();
    return withDictionary != null && bytes(withDictionary) < bytes(plain) ? withDictionary : plain;
  }

  private static long bytes(Page p) {
    long total = 0;
    for (ByteBuffer b : p.buffers) total += b.remaining();
    return total;
  }

  /**
   * Whether the page's sample (see {@link #dictionaryEncode}) rules a dictionary of at most `maxItems` items out: too
   * many distinct values in the sample, or projected to the page's `n` values.
   */
  private boolean sampledOut(int n, int maxItems) {
    int count = Math.min(n, DICTIONARY_SAMPLE_VALUES);
    if (count < DICTIONARY_SAMPLE_MIN_VALUES) return false;
    int blocks = Math.min(DICTIONARY_SAMPLE_BLOCKS, count);
    int perBlock = count / blocks;
    DictionaryBuilder sample = new DictionaryBuilder();
    int sampled = 0;
    for (int b = 0; b < blocks; b++) {
      int start = (int) ((long) b * n / blocks);
      int end = (int) ((long) (b + 1) * n / blocks);
      int take = Math.min(perBlock, end - start);
      for (int v = start; v < start + take; v++) addValue(sample, v);
      sampled += take;
    }
    if (sampled < DICTIONARY_SAMPLE_MIN_VALUES) return false;
    double unique = (double) sample.items() / sampled;
    return unique >= DICTIONARY_SAMPLE_MAX_UNIQUE || Math.ceil(unique * n) > maxItems;
  }

  /** Puts back the page's own values after a dictionary page (did not fit the mini-block limits, or was not taken). */
  private void undoDictionary() {
    kind = s.valueKind;
    width = s.width;
    values = s.values;
    ends = s.ends;
    dictionary = null;
    dictionaryEncoding = null;
    dictionaryItems = 0;
    rleIndices = false;
    bitpackable = integerLike;
  }

  /** The bits each block of 1024 of the first `n` values in `data` needs ({@link #bitWidth}), `bytes` bytes each. */
  private int[] blockWidths(Growable.Bytes data, int n, int bytes) {
    int[] widths = new int[(n + FastLanes.BLOCK - 1) / FastLanes.BLOCK];
    for (int c = 0; c < widths.length; c++) {
      int from = c * FastLanes.BLOCK;
      widths[c] = bitWidth(data.data, from, Math.min(n, from + FastLanes.BLOCK), bytes);
    }
    return widths;
  }

  /** Bytes the dictionary block of `d` takes: its values and, for variable-width values, its offsets and header. */
  private static long dictionaryBytes(DictionaryBuilder d, int offsetBytes) {
    return d.itemBytes().size + (offsetBytes == 0 ? 0 : (long) offsetBytes * (d.items() + 3));
  }

  /**
   * The plain dictionary block of `count` items (file-format-2.1.md §8.12): for variable-width values upstream's
   * variable block (the offset width, the start of the bytes, `count + 1` offsets, the bytes), each field as wide as
   * an offset; for fixed-width values the values back to back.
   */
  private Growable.Bytes dictionaryBlock(Growable.Bytes items, Growable.Longs itemEnds, int count) {
    Growable.Bytes block = new Growable.Bytes(items.size + 8 * (count + 3));
    if (s.valueKind == LeafShredder.VARIABLE) {
      int ob = s.width / 8;
      block.uint(s.width, ob);
      block.uint((long) ob * (count + 3), ob);
      block.uint(0, ob);
      for (int k = 0; k < count; k++) block.uint(itemEnds.data[k], ob);
    }
    block.add(items.data, 0, items.size);
    return block;
  }

  private CompressiveEncoding dictionaryBlockEncoding() {
    if (s.valueKind == LeafShredder.VARIABLE) {
      return CompressiveEncoding.newBuilder().setVariable(Variable.newBuilder().setOffsets(flat(s.width))).build();
    }
    return flat(8L * s.width);
  }

  /** Values in the chunk starting at value `v`: a power of two (except in the last chunk) within the byte target. */
  private int chunkValues(int v, int numValues) {
    int left = numValues - v;
    int n = CHUNK_MAX_VALUES;
    while (n > 1 && valueBytes(v, Math.min(n, left)) > CHUNK_TARGET_BYTES) n >>= 1;
    if (kind == LeafShredder.BOOL && n < 8) n = 8;
    return Math.min(n, left);
  }

  private long valueBytes(int v, int n) {
    switch (kind) {
      case LeafShredder.BOOL: return (n + 7) / 8;
      case LeafShredder.VARIABLE: {
        long start = v == 0 ? 0 : ends.data[v - 1];
        return (long) (n + 1) * (width / 8) + ends.data[v + n - 1] - start;
      }
      default: return (long) n * width;
    }
  }

  /** Appends the mini-block value buffer of values [v, v + n). */
  private void values(int v, int n, Growable.Bytes out) {
    switch (kind) {
      case LeafShredder.BOOL: {
        int bytes = (n + 7) / 8;
        out.zeros(bytes);
        int base = out.size - bytes;
        for (int i = 0; i < n; i++) if (values.data[v + i] != 0) out.data[base + (i >>> 3)] |= (byte) (1 << (i & 7));
        break;
      }
      case LeafShredder.VARIABLE: {
        int ob = width / 8;
        long start = v == 0 ? 0 : ends.data[v - 1];
        long end = ends.data[v + n - 1];
        long first = (long) (n + 1) * ob;
        out.uint(first, ob);
        for (int i = 0; i < n; i++) out.uint(first + ends.data[v + i] - start, ob);
        out.add(values.data, (int) start, (int) (end - start));
        out.pad(ob, VALUE_PAD);
        break;
      }
      default:
        out.add(values.data, v * width, n * width);
    }
  }

  private CompressiveEncoding valueEncoding() {
    if (s.valueKind == LeafShredder.PACKED_STRUCT) {
      io.sparklance.proto.Encodings21Protos.PackedStruct.Builder p = io.sparklance.proto.Encodings21Protos.PackedStruct.newBuilder();
      for (int w : s.packedWidths) p.addBitsPerValue(8L * w);
      return CompressiveEncoding.newBuilder().setPackedStruct(p.setValues(flat(8L * s.width))).build();
    }
    switch (kind) {
      case LeafShredder.BOOL: return flat(1);
      case LeafShredder.VARIABLE:
        return CompressiveEncoding.newBuilder().setVariable(Variable.newBuilder().setOffsets(flat(width))).build();
      default: return flat(8L * width);
    }
  }

  /** Appends `chunk` compressed in Lance's framing: LZ4 or zstd. */
  private static void compressChunk(boolean lz4, Growable.Bytes chunk, Growable.Bytes out) {
    if (lz4) Codecs.lz4Compress(chunk.data, 0, chunk.size, out);
    else Codecs.zstdCompress(chunk.data, 0, chunk.size, ZSTD_LEVEL, out);
  }

  private static CompressiveEncoding zstd(CompressiveEncoding inner) {
    return general(CompressionScheme.COMPRESSION_ALGORITHM_ZSTD, inner);
  }

  private static CompressiveEncoding general(CompressionScheme scheme, CompressiveEncoding inner) {
    return CompressiveEncoding.newBuilder().setGeneral(General.newBuilder()
        .setCompression(BufferCompression.newBuilder().setScheme(scheme)).setValues(inner)).build();
  }

  private static CompressiveEncoding flat(long bits) {
    return CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits)).build();
  }

  private static CompressiveEncoding inlineBitpacking(int bits) {
    return CompressiveEncoding.newBuilder().setInlineBitpacking(InlineBitpacking.newBuilder().setUncompressedBitsPerValue(bits)).build();
  }

  /** Bits needed by the widest of values [from, to) read as unsigned `bytes`-byte integers. */
  private static int bitWidth(byte[] data, int from, int to, int bytes) {
    long or = 0;
    switch (bytes) {
      case 8: for (int i = from; i < to; i++) or |= LittleEndian.getLong(data, 8 * i); break;
      case 4: for (int i = from; i < to; i++) or |= LittleEndian.getInt(data, 4 * i); or &= 0xFFFFFFFFL; break;
      case 2: for (int i = from; i < to; i++) or |= LittleEndian.getShort(data, 2 * i); or &= 0xFFFFL; break;
      case 1: for (int i = from; i < to; i++) or |= data[i]; or &= 0xFFL; break;
      default: throw new IllegalArgumentException("integer width " + bytes);
    }
    return 64 - Long.numberOfLeadingZeros(or);
  }

  /**
   * The block encoding of a page's levels, the same for every chunk: out-of-line bitpacking (FastLanes blocks of
   * 1024 levels, the rest as raw 16-bit words) to the bits the page's largest level needs.
   */
  private static CompressiveEncoding levelEncoding(int max) {
    int w = 32 - Integer.numberOfLeadingZeros(max);
    return CompressiveEncoding.newBuilder().setOutOfLineBitpacking(OutOfLineBitpacking.newBuilder()
        .setUncompressedBitsPerValue(16).setValues(flat(w))).build();
  }

  /**
   * Appends levels [from, from + n) in the encoding of {@link #levelEncoding} for `max`: whole blocks packed, and the
   * last partial block packed as a zero-padded block when its padding costs fewer bits than packing saves, raw 16-bit
   * words otherwise, as pylance 14 writes an out-of-line bitpacked block.
   */
  private static void levels(short[] levels, int from, int n, int max, Growable.Bytes out) {
    int w = 32 - Integer.numberOfLeadingZeros(max);
    int blocks = n / FastLanes.BLOCK;
    int tail = n - blocks * FastLanes.BLOCK;
    boolean packTail = tail > 0 && w * (FastLanes.BLOCK - tail) < (16 - w) * tail;
    byte[] block = new byte[2 * FastLanes.BLOCK];
    for (int b = 0; b < blocks + (packTail ? 1 : 0); b++) {
      int at = from + b * FastLanes.BLOCK;
      int count = Math.min(FastLanes.BLOCK, from + n - at);
      for (int i = 0; i < count; i++) LittleEndian.putShort(block, 2 * i, levels[at + i]);
      if (count < FastLanes.BLOCK) Arrays.fill(block, 2 * count, block.length, (byte) 0);
      int bytes = FastLanes.packedBytes(w);
      out.ensure(bytes);
      FastLanes.pack(16, w, block, 0, out.data, out.size);
      out.size += bytes;
    }
    if (!packTail) for (int i = blocks * FastLanes.BLOCK; i < n; i++) out.u16(levels[from + i]);
  }

  /**
   * The repetition index entry of a chunk (file-format-2.1.md §3.6): rows that end in the chunk, and the levels of
   * a row that continues into the next chunk. A chunk that starts a new row closes the previous chunk's trailer.
   */
  private void addRepIndex(Growable.Longs idx, int from, int to, int chunk, boolean last) {
    short[] rep = s.rep.data;
    int maxRep = s.maxRep;
    long ends = 0;
    for (int i = from + 1; i < to; i++) if (rep[i] == maxRep) ends++;
    long leftovers = 0;
    if (!last) {
      int lastStart = -1;
      for (int i = to - 1; i >= from; i--) if (rep[i] == maxRep) { lastStart = i; break; }
      leftovers = lastStart < 0 ? to - from : to - lastStart;
    }
    if (chunk > 0 && to > from && rep[from] == maxRep && idx.data[idx.size - 1] != 0) {
      idx.data[idx.size - 2] += 1;
      idx.data[idx.size - 1] = 0;
    }
    if (last) ends += 1;
    idx.add(ends);
    idx.add(leftovers);
  }

  // ---------------------------------------------------------------------------------------------- full zip

  private Page fullZip() {
    int numLevels = s.def.size;
    boolean hasRep = s.maxRep > 0;
    int bitsRep = hasRep ? 32 - Integer.numberOfLeadingZeros(s.maxRep) : 0;
    int bitsDef = hasDef ? 32 - Integer.numberOfLeadingZeros(maxPageDef) : 0;
    int cw = bitsRep + bitsDef == 0 ? 0 : bitsRep + bitsDef <= 8 ? 1 : bitsRep + bitsDef <= 16 ? 2 : 4;
    boolean packedVariable = s.valueKind == LeafShredder.VARIABLE_PACKED_STRUCT;
    boolean variable = s.valueKind == LeafShredder.VARIABLE || packedVariable;
    int lengthBytes = packedVariable ? 4 : variable ? s.width / 8 : 0;

    // Fixed-size list values: which item layers carry validity on this page.
    boolean[] validity = new boolean[s.dims.length];
    int rowBytes = 0;
    if (!variable) {
      for (int j = 0; j < s.dims.length; j++) {
        Growable.Bytes vb = s.itemValidity[j];
        for (int i = 0; i < vb.size && !validity[j]; i++) if (vb.data[i] == 0) validity[j] = true;
        if (validity[j]) rowBytes += (s.cumDims[j] + 7) / 8;
      }
      rowBytes += s.valueKind == LeafShredder.FIXED_SIZE_LIST ? s.cumDims[s.cumDims.length - 1] * s.width : s.width;
    }

    boolean zstd = compress && variable && !packedVariable && s.maxValueBytes >= PER_VALUE_ZSTD_MIN_BYTES && perValueZstdPays();
    Growable.Bytes unit = zstd ? new Growable.Bytes(1024) : null;
    long estimate = (long) numLevels * cw + (variable ? (long) s.numVisible * lengthBytes + s.values.size : (long) s.numVisible * rowBytes);
    if (estimate > Integer.MAX_VALUE - 64) throw new IllegalStateException("a page over 2 GiB");
    Growable.Bytes zip = new Growable.Bytes((int) estimate);
    boolean index = variable || hasRep;
    Growable.Longs rowStarts = new Growable.Longs(index ? (int) s.rows + 1 : 1);
    int v = 0;
    for (int i = 0; i < numLevels; i++) {
      int r = hasRep ? s.rep.data[i] : 0;
      if (index && (!hasRep || r == s.maxRep)) rowStarts.add(zip.size);
      if (cw > 0) zip.uint(((long) r << bitsDef) | def[i], cw);
      if (visible(i)) {
        if (variable) {
          if (s.def.data[i] == 0) {
            long start = v == 0 ? 0 : s.ends.data[v - 1];
            long len = s.ends.data[v] - start;
            if (zstd) {
              unit.clear();
              Codecs.zstdCompress(s.values.data, (int) start, (int) len, ZSTD_LEVEL, unit);
              zip.uint(unit.size, lengthBytes);
              zip.add(unit.data, 0, unit.size);
            } else {
              zip.uint(len, lengthBytes);
              zip.add(s.values.data, (int) start, (int) len);
            }
          }
        } else {
          for (int j = 0; j < s.dims.length; j++) {
            if (!validity[j]) continue;
            int c = s.cumDims[j];
            int bytes = (c + 7) / 8;
            zip.zeros(bytes);
            int base = zip.size - bytes;
            byte[] src = s.itemValidity[j].data;
            for (int t = 0; t < c; t++) if (src[v * c + t] != 0) zip.data[base + (t >>> 3)] |= (byte) (1 << (t & 7));
          }
          int n = s.valueKind == LeafShredder.FIXED_SIZE_LIST ? s.cumDims[s.cumDims.length - 1] * s.width : s.width;
          zip.add(s.values.data, v * n, n);
        }
        v++;
      }
    }
    FullZipLayout.Builder f = FullZipLayout.newBuilder()
        .setBitsRep(bitsRep).setBitsDef(bitsDef)
        .setNumItems(numLevels).setNumVisibleItems(s.numVisible);
    if (variable) {
      CompressiveEncoding plain = packedVariable ? variablePackedStruct()
          : CompressiveEncoding.newBuilder().setVariable(Variable.newBuilder().setOffsets(flat(8L * lengthBytes))).build();
      f.setBitsPerOffset(8 * lengthBytes).setValueCompression(zstd ? zstd(plain) : plain);
    } else {
      f.setBitsPerValue(8 * rowBytes).setValueCompression(fixedSizeList(0, validity));
    }
    for (RepDefLayer l : layers) f.addLayers(l);
    ByteBuffer data = zip.view();
    ByteBuffer[] buffers;
    if (index) {
      rowStarts.add(zip.size);
      int w = zip.size < (1L << 8) ? 1 : zip.size < (1L << 16) ? 2 : 4;
      Growable.Bytes idx = new Growable.Bytes(rowStarts.size * w);
      for (int i = 0; i < rowStarts.size; i++) idx.uint(rowStarts.data[i], w);
      buffers = new ByteBuffer[] {data, idx.view()};
    } else {
      buffers = new ByteBuffer[] {data};
    }
    return new Page(buffers, PageLayout.newBuilder().setFullZipLayout(f).build());
  }

  /** The variable packed struct encoding of a VARIABLE_PACKED_STRUCT leaf: per child, flat bytes or a length and bytes. */
  private CompressiveEncoding variablePackedStruct() {
    io.sparklance.proto.Encodings21Protos.VariablePackedStruct.Builder b = io.sparklance.proto.Encodings21Protos.VariablePackedStruct.newBuilder();
    for (int w : s.packedWidths) {
      io.sparklance.proto.Encodings21Protos.VariablePackedStruct.FieldEncoding.Builder f =
          io.sparklance.proto.Encodings21Protos.VariablePackedStruct.FieldEncoding.newBuilder();
      if (w > 0) f.setValue(flat(8L * w)).setBitsPerValue(8L * w);
      else f.setValue(CompressiveEncoding.newBuilder().setVariable(Variable.newBuilder().setOffsets(flat(-w)))).setBitsPerLength(-w);
      b.addFields(f);
    }
    return CompressiveEncoding.newBuilder().setVariablePackedStruct(b).build();
  }

  /** Whether compressing the page's first values one by one makes them at least 20% smaller. */
  private boolean perValueZstdPays() {
    long raw = 0, packed = 0;
    Growable.Bytes unit = new Growable.Bytes(1024);
    for (int v = 0; v < s.ends.size && v < 32; v++) {
      long start = v == 0 ? 0 : s.ends.data[v - 1];
      int len = (int) (s.ends.data[v] - start);
      if (len == 0) continue;
      unit.clear();
      Codecs.zstdCompress(s.values.data, (int) start, len, ZSTD_LEVEL, unit);
      raw += len;
      packed += unit.size;
    }
    return raw > 0 && packed < raw * 0.8;
  }

  private CompressiveEncoding fixedSizeList(int j, boolean[] validity) {
    if (j == s.dims.length) return flat(8L * s.width);
    return CompressiveEncoding.newBuilder().setFixedSizeList(
        io.sparklance.proto.Encodings21Protos.FixedSizeList.newBuilder()
            .setItemsPerValue(s.dims[j]).setHasValidity(validity[j]).setValues(fixedSizeList(j + 1, validity))).build();
  }
}
