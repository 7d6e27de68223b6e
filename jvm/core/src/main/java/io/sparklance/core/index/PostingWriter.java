package io.sparklance.core.index;

import java.io.ByteArrayOutputStream;

/**
 * Encodes one token's posting list of one INVERTED index partition as pylance 14 writes it (the row of
 * {@code part_N_invert.lance}, docs/dev/fts-index-format.md §1): the blocks of 128 documents, each opening with its
 * highest BM25 part; the list's highest score; the impact entries; and, with positions, the shared position
 * stream and the offset of each block's positions in it. {@link PostingList} reads the blocks back.
 *
 * <p>Scores are computed in 32-bit floats in the order pylance computes them, so they equal its bytes: with the
 * partition's N documents, n of them holding the token, avgdl = total tokens / N, the token's scale is
 * ln((N - n + 0.5) / (n + 0.5) + 1) · (k1 + 1) (ln rounded as glibc's logf rounds it, {@link GlibcLogf}) and a
 * document's part f / (f + k1 (1 - b + b len / avgdl)).
 */
public final class PostingWriter {
  public static final int BLOCK = PostingList.BLOCK_SIZE;
  /** Level-0 impact entries (one per block) grouped into one level-1 entry. */
  private static final int LEVEL1_BLOCKS = 32;

  /** The encoded row. */
  public byte[][] blocks;
  public float maxScore;
  public byte[][] impacts;
  /** With positions: the stream, and where each block's positions start in it. */
  public byte[] positions;
  public int[] positionBlockOffsets;

  private PostingWriter() {}

  /**
   * Encodes the list of documents {@code docs} (ascending) with frequencies {@code freqs}; {@code positions}, when
   * not null, holds every document's positions in turn (ascending within one). {@code docLengths} gives each
   * document's tokens; {@code numDocs} and {@code avgdl} are the partition's.
   */
  public static PostingWriter encode(int[] docs, int[] freqs, int count, int[] positions, int[] docLengths,
      int numDocs, float avgdl) {
    PostingWriter w = new PostingWriter();
    float idf = InvertedIndex.idf(numDocs, count);
    float scale = idf * (1.2f + 1.0f);
    int nblocks = (count + BLOCK - 1) / BLOCK;
    w.blocks = new byte[nblocks][];
    int nlevel1 = (nblocks + LEVEL1_BLOCKS - 1) / LEVEL1_BLOCKS;
    w.impacts = new byte[nblocks + nlevel1][];
    w.maxScore = -Float.MAX_VALUE;
    ByteArrayOutputStream stream = positions == null ? null : new ByteArrayOutputStream();
    if (positions != null) w.positionBlockOffsets = new int[nblocks];
    int[] packBuf = new int[BLOCK];
    int positionAt = 0;
    for (int b = 0; b < nblocks; b++) {
      int from = b * BLOCK;
      int to = Math.min(count, from + BLOCK);
      float best = 0;
      for (int i = from; i < to; i++) {
        float f = freqs[i];
        float norm = 1.2f * (0.25f + 0.75f * (float) docLengths[docs[i]] / avgdl);
        float s = f / (f + norm);
        if (i == from || s > best) best = s;
      }
      float score = best * scale;
      w.maxScore = Math.max(w.maxScore, score);
      ByteArrayOutputStream block = new ByteArrayOutputStream();
      writeU32(block, Float.floatToRawIntBits(score));
      if (to - from == BLOCK) {
        writeU32(block, docs[from]);
        int prev = docs[from];
        for (int i = 0; i < BLOCK; i++) {
          packBuf[i] = docs[from + i] - prev;
          prev = docs[from + i];
        }
        pack(packBuf, block);
        System.arraycopy(freqs, from, packBuf, 0, BLOCK);
        pack(packBuf, block);
      } else {
        int prev = 0;
        for (int i = from; i < to; i++) {
          writeVarint(block, i == from ? docs[i] : docs[i] - prev);
          prev = docs[i];
        }
        for (int i = from; i < to; i++) writeVarint(block, freqs[i]);
      }
      w.blocks[b] = block.toByteArray();
      w.impacts[b] = impactEntry(docs, freqs, docLengths, from, to);
      if (stream != null) {
        w.positionBlockOffsets[b] = stream.size();
        int pending = 0;
        for (int i = from; i < to; i++) {
          int last = 0;
          for (int k = 0; k < freqs[i]; k++) {
            int p = positions[positionAt++];
            packBuf[pending++] = k == 0 ? p : p - last;
            last = p;
            if (pending == BLOCK) {
              pack(packBuf, stream);
              pending = 0;
            }
          }
        }
        for (int i = 0; i < pending; i++) writeVarint(stream, packBuf[i]);
      }
    }
    for (int g = 0; g < nlevel1; g++) {
      w.impacts[nblocks + g] = impactEntry(docs, freqs, docLengths, g * LEVEL1_BLOCKS * BLOCK,
          Math.min(count, (g + 1) * LEVEL1_BLOCKS * BLOCK));
    }
    if (stream != null) w.positions = stream.toByteArray();
    return w;
  }

  /**
   * The impact entry of documents [from, to) of the list: the last document id, then the Pareto frontier of (frequency,
   * quantized length) pairs — for each frequency the shortest length, kept when no higher frequency has a length as
   * short — in increasing order, each as varints of its differences to the pair before: ((Δf − 1) · 2 | (Δl ≠ 1)),
   * then Δl when it is not 1 (as found in pylance 14's files).
   */
  static byte[] impactEntry(int[] docs, int[] freqs, int[] docLengths, int from, int to) {
    java.util.TreeMap<Integer, Integer> shortest = new java.util.TreeMap<>();
    for (int i = from; i < to; i++) {
      int code = quantizeLength(docLengths[docs[i]]);
      shortest.merge(freqs[i], code, Math::min);
    }
    int[] fs = new int[shortest.size()];
    int[] ls = new int[shortest.size()];
    int n = 0;
    int bestLen = Integer.MAX_VALUE;
    for (java.util.Map.Entry<Integer, Integer> e : shortest.descendingMap().entrySet()) {
      if (e.getValue() < bestLen) {
        fs[n] = e.getKey();
        ls[n] = e.getValue();
        bestLen = e.getValue();
        n++;
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeVarint(out, docs[to - 1]);
    writeVarint(out, n);
    int pf = 0;
    int pl = 0;
    for (int k = n - 1; k >= 0; k--) {
      int df = fs[k] - pf;
      int dl = ls[k] - pl;
      writeVarint(out, ((df - 1) << 1) | (dl != 1 ? 1 : 0));
      if (dl != 1) writeVarint(out, dl);
      pf = fs[k];
      pl = ls[k];
    }
    return out.toByteArray();
  }

  /** A document length as a byte code: exact below 8, else its top four significant bits and their shift. */
  static int quantizeLength(int value) {
    int bits = 32 - Integer.numberOfLeadingZeros(value);
    if (bits < 4) return value;
    int shift = bits - 4;
    return ((value >>> shift) & 0x07) | ((shift + 1) << 3);
  }

  /**
   * Writes 128 values as a bit width then the Rust {@code bitpacking} crate's {@code BitPacker4x} layout (four
   * interleaved lanes of little-endian 32-bit words; value i in lane i mod 4 at bit w·(i / 4) of that lane).
   */
  static void pack(int[] values, ByteArrayOutputStream out) {
    int or = 0;
    for (int i = 0; i < BLOCK; i++) or |= values[i];
    int bits = 32 - Integer.numberOfLeadingZeros(or);
    out.write(bits);
    int[] words = new int[4 * bits];
    for (int i = 0; i < BLOCK; i++) {
      int lane = i & 3;
      int bit = (i >>> 2) * bits;
      int word = bit >>> 5;
      int shift = bit & 31;
      long v = values[i] & 0xFFFFFFFFL;
      words[word * 4 + lane] |= (int) (v << shift);
      if (shift + bits > 32) words[(word + 1) * 4 + lane] |= (int) (v >>> (32 - shift));
    }
    for (int wv : words) writeU32(out, wv);
  }

  static void writeU32(ByteArrayOutputStream out, int v) {
    out.write(v & 0xFF);
    out.write((v >>> 8) & 0xFF);
    out.write((v >>> 16) & 0xFF);
    out.write((v >>> 24) & 0xFF);
  }

  static void writeVarint(ByteArrayOutputStream out, int value) {
    long v = value & 0xFFFFFFFFL;
    while (v >= 0x80) {
      out.write((int) (v & 0x7F) | 0x80);
      v >>>= 7;
    }
    out.write((int) v);
  }
}
