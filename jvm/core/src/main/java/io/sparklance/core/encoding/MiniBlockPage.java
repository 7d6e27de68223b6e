package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;
import io.sparklance.proto.Encodings21Protos.MiniBlockLayout;

import java.util.ArrayList;
import java.util.List;

/**
 * Decodes a whole mini-block page (file versions 2.1+).
 *
 * Page buffers: 0 chunk metadata, 1 the chunks back to back, 2 the dictionary (when the layout has one), and last
 * the repetition index (when `repetition_index_depth > 0`). A chunk metadata word, u16 (2.1) or u32 (when
 * `has_large_chunk`, written by 2.2), holds `(size / 8 - 1) << 4 | log2(values)`; the last chunk's value count is
 * what remains of `num_items`. A chunk starts with a header: u16 level count, u16 repetition bytes (if the page has
 * repetition), u16 definition bytes (if it has definition), then the size of each value buffer (u16, or u32 with
 * large chunks); then, each padded to 8 bytes, the header, repetition levels, definition levels and value buffers.
 */
public final class MiniBlockPage {
  private MiniBlockPage() {}

  /** What a page decodes to: the unraveler over its levels and its visible values. */
  public static final class Decoded {
    public final RepDef.Unraveler levels;
    public final DataBlock values;

    public Decoded(RepDef.Unraveler levels, DataBlock values) {
      this.levels = levels;
      this.values = values;
    }
  }

  private static final int ALIGN = 8;

  public static Decoded decode(MiniBlockLayout layout, Slice[] buffers, long maxBytes) {
    checkBuffers(layout, buffers);
    Reader reader = new Reader(layout, buffers, maxBytes);
    return reader.decode(buffers[1], 0, reader.chunks.count());
  }

  private static void checkBuffers(MiniBlockLayout layout, Slice[] buffers) {
    int expected = 2 + (layout.hasDictionary() ? 1 : 0) + (layout.getRepetitionIndexDepth() > 0 ? 1 : 0);
    if (buffers.length < expected) {
      throw new EncodingException("a mini-block page needs " + expected + " buffers, it has " + buffers.length);
    }
  }

  /**
   * Where each chunk of a page lies in its chunk buffer and which items it holds, from the chunk metadata buffer;
   * every chunk is checked to lie inside a chunk buffer of `dataLength` bytes.
   */
  public static final class Chunks {
    private final long[] starts;     // byte offset of each chunk in the chunk buffer, and the buffer's used length
    private final int[] firstItems;  // first item of each chunk, and the page's item count

    public Chunks(MiniBlockLayout layout, Slice meta, long dataLength) {
      boolean large = layout.getHasLargeChunk();
      if (layout.getNumItems() > Integer.MAX_VALUE - 16) throw new EncodingException("a page of " + layout.getNumItems() + " items");
      int numItems = (int) layout.getNumItems();
      int wordBytes = large ? 4 : 2;
      if (meta.length % wordBytes != 0) throw new EncodingException("chunk metadata of " + meta.length + " bytes");
      int numChunks = meta.length / wordBytes;
      starts = new long[numChunks + 1];
      firstItems = new int[numChunks + 1];
      long pos = 0;
      int itemsSoFar = 0;
      for (int c = 0; c < numChunks; c++) {
        long word = large ? meta.u32(c * 4) : meta.u16(c * 2);
        int log = (int) (word & 0xF);
        long size = ((word >>> 4) + 1) * ALIGN;
        int chunkItems;
        if (c < numChunks - 1) {
          if (log == 0) throw new EncodingException("chunk " + c + " of " + numChunks + " claims no values");
          chunkItems = 1 << log;
        } else {
          chunkItems = numItems - itemsSoFar;
        }
        if (chunkItems < 0 || itemsSoFar + (long) chunkItems > numItems) {
          throw new EncodingException("chunks hold more than the page's " + numItems + " items");
        }
        if (size > dataLength - pos) {
          throw new EncodingException("chunk " + c + " needs " + size + " bytes at offset " + pos + ", but the buffer has " + dataLength);
        }
        starts[c] = pos;
        firstItems[c] = itemsSoFar;
        pos += size;
        itemsSoFar += chunkItems;
      }
      if (itemsSoFar != numItems) throw new EncodingException("chunks hold " + itemsSoFar + " items, the page says " + numItems);
      starts[numChunks] = pos;
      firstItems[numChunks] = itemsSoFar;
    }

    public int count() { return starts.length - 1; }

    /** The offset of chunk `c` in the chunk buffer; `count()` gives the end of the last chunk. */
    public long start(int c) { return starts[c]; }

    /** The first item of chunk `c`; `count()` gives the page's item count. */
    public int firstItem(int c) { return firstItems[c]; }

    /** The chunk holding item `item` (0 <= item < the page's item count). */
    public int holding(long item) {
      int i = java.util.Arrays.binarySearch(firstItems, 0, count(), (int) item);
      return i >= 0 ? i : -i - 2;
    }
  }

  /**
   * Decodes chunks of one page: the decoders of its layout, its chunks and its dictionary, made once per page.
   * Without repetition an item is a row, so a read of some rows decodes just the chunks that hold them.
   */
  public static final class Reader {
    public final Chunks chunks;
    private final MiniBlockLayout layout;
    private final Decoders21.MiniBlockDecoder values;
    private final Decoders21.BlockDecoder repDecoder;
    private final Decoders21.BlockDecoder defDecoder;
    private final DataBlock dictionary;
    private final int[] layers;
    private final long maxBytes;

    /** The reader of a page whose buffers are given; only the metadata and dictionary buffers are read here. */
    public Reader(MiniBlockLayout layout, Slice[] buffers, long maxBytes) {
      this(layout, buffers[0], buffers[1].length, layout.hasDictionary() ? buffers[2] : null, maxBytes);
    }

    /**
     * The reader of a page from its chunk metadata buffer, the length of its chunk buffer and its dictionary buffer
     * (null when the layout has none).
     */
    public Reader(MiniBlockLayout layout, Slice meta, long dataLength, Slice dictionaryBuffer, long maxBytes) {
      this.layout = layout;
      this.maxBytes = maxBytes;
      layers = RepDef.layers(layout.getLayersList());
      values = Decoders21.miniBlock(layout.getValueCompression(), maxBytes);
      if (values.numBuffers() != layout.getNumBuffers()) {
        throw new EncodingException("the layout lists " + layout.getNumBuffers() + " value buffers per chunk, its encoding "
            + Decoders21.describe(layout.getValueCompression()) + " uses " + values.numBuffers());
      }
      repDecoder = layout.hasRepCompression() ? Decoders21.block(layout.getRepCompression(), maxBytes) : null;
      defDecoder = layout.hasDefCompression() ? Decoders21.block(layout.getDefCompression(), maxBytes) : null;
      chunks = new Chunks(layout, meta, dataLength);
      if (layout.hasDictionary()) {
        if (dictionaryBuffer == null) throw new EncodingException("a dictionary page without its dictionary buffer");
        if (layout.getNumDictionaryItems() > Integer.MAX_VALUE - 16) throw new EncodingException("a dictionary of " + layout.getNumDictionaryItems() + " items");
        dictionary = Decoders21.block(layout.getDictionary(), maxBytes).decode(dictionaryBuffer, (int) layout.getNumDictionaryItems());
      } else {
        dictionary = null;
      }
    }

    /** Whether an item of this page is a row: the page has no repetition levels. */
    public boolean itemsAreRows() { return repDecoder == null; }

    /**
     * Chunks [from, to) of the page, from `data`: the chunk buffer's bytes from the start of chunk `from` to the end
     * of chunk `to - 1`. The levels and items are those of the chunks' items alone.
     */
    public Decoded decode(Slice data, int from, int to) {
      boolean hasRep = repDecoder != null;
      boolean hasDef = defDecoder != null;
      int nb = values.numBuffers();
      int wordBytes = layout.getHasLargeChunk() ? 4 : 2;
      long base = chunks.start(from);
      data.require(0, chunks.start(to) - base, "chunks", from);
      int numItems = chunks.firstItem(to) - chunks.firstItem(from);
      // Fixed-width values of several chunks are decoded straight into one array, not joined after.
      int directBytes = to - from > 1 ? values.directBits() / 8 : 0;
      if ((long) numItems * directBytes > Math.min(maxBytes, Integer.MAX_VALUE - 16)) {
        throw new EncodingException(numItems + " values of " + directBytes + " bytes in one read, more than the limit of " + maxBytes + " bytes");
      }
      byte[] direct = directBytes > 0 ? new byte[numItems * directBytes] : null;
      List<DataBlock> parts = new ArrayList<>(direct == null ? to - from : 0);
      short[] rep = null, def = null;
      int levelCount = 0;
      int levelCap = 0;
      for (int c = from; c < to; c++) {
        int chunkItems = chunks.firstItem(c + 1) - chunks.firstItem(c);
        Slice chunk = data.slice((int) (chunks.start(c) - base), (int) (chunks.start(c + 1) - chunks.start(c)));

        int h = 0;
        chunk.require(0, 2, "the header of chunk", c);
        int numLevels = chunk.u16(h); h += 2;
        int repSize = 0, defSize = 0;
        if (hasRep) { chunk.require(h, 2, "the header of chunk", c); repSize = chunk.u16(h); h += 2; }
        if (hasDef) { chunk.require(h, 2, "the header of chunk", c); defSize = chunk.u16(h); h += 2; }
        long[] sizes = new long[nb];
        for (int b = 0; b < nb; b++) {
          chunk.require(h, wordBytes, "the header of chunk", c);
          sizes[b] = wordBytes == 4 ? chunk.u32(h) : chunk.u16(h);
          h += wordBytes;
        }
        h = pad(h);
        Slice repBuf = null, defBuf = null;
        if (hasRep) { chunk.require(h, repSize, "the repetition levels of chunk", c); repBuf = chunk.slice(h, repSize); h = pad(h + repSize); }
        if (hasDef) { chunk.require(h, defSize, "the definition levels of chunk", c); defBuf = chunk.slice(h, defSize); h = pad(h + defSize); }
        numLevels = provenLevels(hasRep ? inferLevels(layout.getRepCompression(), repBuf) : -1,
            hasDef ? inferLevels(layout.getDefCompression(), defBuf) : -1, numLevels, c);
        // Without repetition every item has exactly one definition level.
        if (hasDef && !hasRep && numLevels != chunkItems) {
          throw new EncodingException("chunk " + c + " holds " + chunkItems + " items but " + numLevels + " definition levels");
        }
        Slice[] vb = new Slice[nb];
        for (int b = 0; b < nb; b++) {
          if (sizes[b] > chunk.length - h) chunk.require(h, sizes[b], "value buffer " + b + " of chunk " + c);
          vb[b] = chunk.slice(h, (int) sizes[b]);
          h = pad(h + (int) sizes[b]);
        }
        if (direct == null) parts.add(values.decode(vb, chunkItems));
        else values.decodeInto(vb, chunkItems, direct, (chunks.firstItem(c) - chunks.firstItem(from)) * directBytes);

        if (hasRep || hasDef) {
          if ((long) levelCount + numLevels > Integer.MAX_VALUE - 16) {
            throw new EncodingException("chunks hold more than " + (Integer.MAX_VALUE - 16) + " levels");
          }
          if (levelCount + numLevels > levelCap) {
            levelCap = Math.max(levelCap * 2, levelCount + numLevels);
            if (hasRep) rep = rep == null ? new short[levelCap] : java.util.Arrays.copyOf(rep, levelCap);
            if (hasDef) def = def == null ? new short[levelCap] : java.util.Arrays.copyOf(def, levelCap);
          }
          if (hasRep) copyLevels(repDecoder.decode(repBuf, numLevels), rep, levelCount, numLevels);
          if (hasDef) copyLevels(defDecoder.decode(defBuf, numLevels), def, levelCount, numLevels);
          levelCount += numLevels;
        }
      }
      DataBlock block = direct != null ? new DataBlock.FixedWidth(values.directBits(), direct, numItems)
          : parts.isEmpty() ? Decoders21.flat(8, Slice.of(new byte[0]), 0)
          : Blocks.concat(parts);
      if (dictionary != null) {
        if (!(block instanceof DataBlock.FixedWidth)) throw new EncodingException("dictionary indices that are not integers");
        block = new DataBlock.Dictionary((DataBlock.FixedWidth) block, dictionary);
      }
      return new Decoded(new RepDef.Unraveler(rep, def, levelCount, layers, numItems), block);
    }
  }

  /**
   * The level count a chunk's levels prove (-1 if their encoding does not tell): the byte count of flat levels,
   * the sum of the run lengths of run-length encoded ones.
   */
  private static long inferLevels(CompressiveEncoding e, Slice levels) {
    switch (e.getCompressionCase()) {
      case FLAT: {
        long bits = e.getFlat().getBitsPerValue();
        return e.getFlat().hasData() || bits % 8 != 0 || bits == 0 ? -1 : levels.length / (bits / 8);
      }
      case RLE: return Rle.inferCount(e, levels);
      default: return -1;
    }
  }

  /**
   * The level count of a chunk: the count its levels prove, when they do. The header's u16 count wraps in chunks
   * of more than 65535 levels, so the proven count must equal it or exceed it by a multiple of 65536; anything else,
   * or repetition and definition levels that disagree, is damage (pylance refuses it too).
   */
  private static int provenLevels(long rep, long def, int declared, int chunk) {
    if (rep >= 0 && def >= 0 && rep != def) {
      throw new EncodingException("chunk " + chunk + " has " + rep + " repetition levels but " + def + " definition levels");
    }
    long proven = Math.max(rep, def);
    if (proven < 0 || proven == declared) return declared;
    if (proven < declared || proven % 65536 != declared || proven > Integer.MAX_VALUE - 16) {
      throw new EncodingException("chunk " + chunk + "'s levels hold " + proven + " levels, its header declares " + declared);
    }
    return (int) proven;
  }

  private static int pad(int n) {
    return (n + ALIGN - 1) / ALIGN * ALIGN;
  }

  static void copyLevels(DataBlock levels, short[] out, int at, int n) {
    if (!(levels instanceof DataBlock.FixedWidth)) throw new EncodingException("levels that are not integers");
    DataBlock.FixedWidth f = (DataBlock.FixedWidth) levels;
    if (f.numValues < n) throw new EncodingException(f.numValues + " levels where " + n + " were expected");
    switch (f.bitsPerValue) {
      case 8: for (int i = 0; i < n; i++) out[at + i] = (short) (f.data[i] & 0xFF); break;
      case 16: for (int i = 0; i < n; i++) out[at + i] = LittleEndian.getShort(f.data, 2 * i); break;
      default: throw new EncodingException(f.bitsPerValue + "-bit levels");
    }
  }
}
