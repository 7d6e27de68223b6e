package io.sparklance.core.index;

import io.sparklance.core.CorruptFileException;

/**
 * One token's posting list in a partition of a Lance INVERTED index, decoded: the ids of the documents holding the
 * token, in increasing order, and how often each holds it (docs/dev/fts-index-format.md §1).
 *
 * <p>pylance 14 ({@code format_version 2}, {@code posting_tail_codec varint_delta_v1}) stores the list as blocks of
 * {@code posting_block_size} (128) documents, one binary each in {@code _posting}, every block opening with its
 * highest score (a little-endian f32, not read here):
 * <ul>
 *   <li>a full block: the first document id (u32), then the 128 differences of each id to the one before (the first
 *       difference 0) and the 128 frequencies, each as one byte giving a bit width w followed by 16·w bytes packed
 *       in the layout of the Rust {@code bitpacking} crate's {@code BitPacker4x}: four interleaved lanes of 32-bit
 *       little-endian words, value i in lane i mod 4 at bit w·(i / 4) of that lane's stream;</li>
 *   <li>the last block, when it holds fewer than 128 documents: the ids as unsigned LEB128 varints, the first as is
 *       and each next as the difference to the one before, then the frequencies as varints.</li>
 * </ul>
 * Lengths are checked against the blocks: a damaged list fails with a {@link CorruptFileException}.
 */
public final class PostingList {
  public static final int BLOCK_SIZE = 128;

  public final int[] docs;
  public final int[] frequencies;

  private PostingList(int[] docs, int[] frequencies) {
    this.docs = docs;
    this.frequencies = frequencies;
  }

  public int size() {
    return docs.length;
  }

  /** The list of {@code length} documents stored in {@code blocks}; {@code path} names the file in errors. */
  public static PostingList decode(byte[][] blocks, int length, String path) {
    if (length < 0) throw new CorruptFileException(path, "a posting list has length " + length, null);
    int full = length / BLOCK_SIZE;
    int tail = length % BLOCK_SIZE;
    int expected = full + (tail > 0 ? 1 : 0);
    if (blocks.length != expected) {
      throw new CorruptFileException(path, "a posting list of " + length + " documents has " + blocks.length +
          " blocks, not " + expected, null);
    }
    int[] docs = new int[length];
    int[] freqs = new int[length];
    int[] lane = new int[BLOCK_SIZE];
    for (int b = 0; b < full; b++) {
      byte[] block = blocks[b];
      int at = 4;
      long first = u32(block, at, path);
      at += 4;
      at = unpack(block, at, lane, path);
      int base = b * BLOCK_SIZE;
      long doc = first;
      for (int i = 0; i < BLOCK_SIZE; i++) {
        doc += lane[i] & 0xFFFFFFFFL;
        docs[base + i] = checkedDoc(doc, path);
      }
      at = unpack(block, at, lane, path);
      System.arraycopy(lane, 0, freqs, base, BLOCK_SIZE);
    }
    if (tail > 0) {
      byte[] block = blocks[full];
      int[] pos = {4};
      long doc = 0;
      int base = full * BLOCK_SIZE;
      for (int i = 0; i < tail; i++) {
        long v = varint(block, pos, path);
        doc = i == 0 ? v : doc + v;
        docs[base + i] = checkedDoc(doc, path);
      }
      for (int i = 0; i < tail; i++) freqs[base + i] = (int) Math.min(Integer.MAX_VALUE, varint(block, pos, path));
    }
    for (int i = 1; i < length; i++) {
      if (docs[i] <= docs[i - 1]) {
        throw new CorruptFileException(path, "a posting list's document ids do not increase (" + docs[i - 1] +
            " then " + docs[i] + ")", null);
      }
    }
    return new PostingList(docs, freqs);
  }

  /** Unpacks one bit width and 128 values at {@code at}; returns the offset after them. */
  private static int unpack(byte[] block, int at, int[] out, String path) {
    if (at >= block.length) throw new CorruptFileException(path, "a posting block ends at byte " + at, null);
    int bits = block[at] & 0xFF;
    at++;
    if (bits > 32) throw new CorruptFileException(path, "a posting block packs values in " + bits + " bits", null);
    int bytes = bits * 16;
    if (at + bytes > block.length) {
      throw new CorruptFileException(path, "a posting block of " + block.length + " bytes ends inside its packed values", null);
    }
    if (bits == 0) {
      java.util.Arrays.fill(out, 0);
      return at;
    }
    long mask = bits == 32 ? 0xFFFFFFFFL : (1L << bits) - 1;
    for (int i = 0; i < BLOCK_SIZE; i++) {
      int laneIndex = i & 3;
      int bit = (i >>> 2) * bits;
      int word = bit >>> 5;
      int shift = bit & 31;
      long v = u32(block, at + (word * 4 + laneIndex) * 4, path) >>> shift;
      if (shift + bits > 32) v |= u32(block, at + ((word + 1) * 4 + laneIndex) * 4, path) << (32 - shift);
      out[i] = (int) (v & mask);
    }
    return at + bytes;
  }

  private static long u32(byte[] b, int at, String path) {
    if (at < 0 || at + 4 > b.length) throw new CorruptFileException(path, "a posting block ends at byte " + b.length, null);
    return (b[at] & 0xFFL) | (b[at + 1] & 0xFFL) << 8 | (b[at + 2] & 0xFFL) << 16 | (b[at + 3] & 0xFFL) << 24;
  }

  private static long varint(byte[] b, int[] pos, String path) {
    long v = 0;
    int shift = 0;
    while (true) {
      if (pos[0] >= b.length) throw new CorruptFileException(path, "a posting block ends inside a varint", null);
      int x = b[pos[0]++] & 0xFF;
      v |= (long) (x & 0x7F) << shift;
      if ((x & 0x80) == 0) return v;
      shift += 7;
      if (shift > 35) throw new CorruptFileException(path, "a posting block holds a varint over 32 bits", null);
    }
  }

  private static int checkedDoc(long doc, String path) {
    if (doc > Integer.MAX_VALUE) throw new CorruptFileException(path, "a posting list holds document id " + doc, null);
    return (int) doc;
  }
}
