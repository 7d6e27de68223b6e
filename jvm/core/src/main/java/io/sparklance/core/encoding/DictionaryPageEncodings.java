package io.sparklance.core.encoding;

import java.util.Arrays;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;
import io.sparklance.proto.Encodings21Protos.Flat;
import io.sparklance.proto.Encodings21Protos.InlineBitpacking;
import io.sparklance.proto.Encodings21Protos.OutOfLineBitpacking;
import io.sparklance.proto.Encodings21Protos.Rle;

/**
 * The encodings of a dictionary page's two parts that pylance 14 chooses by size, and their sizes, so that the page
 * encoder can take the smaller one as pylance does (file-format-2.1.md §3.5; seen in pylance 14.0.2's files):
 * <ul>
 *   <li>the 32-bit indices as runs, `Rle(Flat(32), Flat(8))`: two value buffers per mini-block chunk of
 *   {@link #RLE_CHUNK_VALUES} indices, the runs' values and their lengths (a run broken at {@link #MAX_RUN}), where
 *   that is smaller than inline bitpacking per 1024 indices;</li>
 *   <li>a dictionary of 64-bit values (2.2) bitpacked as a block: up to 1024 items `InlineBitpacking(64)` (a width
 *   word, then one FastLanes block), more `OutOfLineBitpacking(64, Flat(w))` at the widest item's `w` bits, where
 *   that is smaller than the dictionary LZ4-compressed.</li>
 * </ul>
 * Sizes are those of the value buffers with each chunk's header and padding (levels, the same either way, left out).
 */
final class DictionaryPageEncodings {
  private DictionaryPageEncodings() {}

  /** Indices an rle chunk holds (all chunks but the last), as pylance's (upstream `MAX_MINIBLOCK_VALUES`). */
  static final int RLE_CHUNK_VALUES = 4096;
  /** The longest run one 8-bit run length holds. */
  static final int MAX_RUN = 255;

  /** The mini-block encoding of rle indices: 32-bit run values, 8-bit run lengths. */
  static final CompressiveEncoding RLE_INDICES = CompressiveEncoding.newBuilder().setRle(Rle.newBuilder()
      .setValues(flat(32)).setRunLengths(flat(8))).build();

  /** A dictionary block and its encoding. */
  static final class Block {
    final Growable.Bytes bytes;
    final CompressiveEncoding encoding;

    Block(Growable.Bytes bytes, CompressiveEncoding encoding) {
      this.bytes = bytes;
      this.encoding = encoding;
    }
  }

  /** Runs of equal 4-byte values among values [from, from + n) of `data`, a run broken at {@link #MAX_RUN}. */
  static int runs(byte[] data, int from, int n) {
    return rle(data, from, n, null, null);
  }

  /**
   * The runs of 4-byte values [from, from + n) of `data`, a run broken at {@link #MAX_RUN}: appends their values to
   * `values` and lengths to `lengths` (when not null, else only counts them); their number.
   */
  static int rle(byte[] data, int from, int n, Growable.Bytes values, Growable.Bytes lengths) {
    int runs = 0;
    int prev = 0;
    int len = 0;
    for (int i = from; i <= from + n; i++) {
      int x = i < from + n ? LittleEndian.getInt(data, 4 * i) : 0;
      if (i < from + n && len > 0 && x == prev && len < MAX_RUN) {
        len++;
      } else {
        if (len > 0) {
          runs++;
          if (values != null) {
            values.u32(prev);
            lengths.add((byte) len);
          }
        }
        prev = x;
        len = 1;
      }
    }
    return runs;
  }

  /**
   * Bytes of the `n` 4-byte indices of `data` as rle chunks: per chunk a header of `headerBytes` plus two buffer
   * sizes of `sizeBytes`, the run values and the run lengths, each padded to 8.
   */
  static long rleBytes(byte[] data, int n, int headerBytes, int sizeBytes) {
    long total = 0;
    for (int from = 0; from < n; from += RLE_CHUNK_VALUES) {
      int runs = runs(data, from, Math.min(RLE_CHUNK_VALUES, n - from));
      total += align8(headerBytes + 2L * sizeBytes) + align8(4L * runs) + align8(runs);
    }
    return total;
  }

  /**
   * Bytes of the `n` 4-byte indices of `data` inline-bitpacked per 1024: per chunk a header of `headerBytes` plus a
   * buffer size of `sizeBytes`, and a 4-byte width word and the packed block, padded to 8.
   */
  static long bitpackedBytes(byte[] data, int n, int headerBytes, int sizeBytes) {
    long total = 0;
    for (int from = 0; from < n; from += FastLanes.BLOCK) {
      int w = bitWidth(data, from, Math.min(n, from + FastLanes.BLOCK));
      total += align8(headerBytes + (long) sizeBytes) + align8(4L + FastLanes.packedBytes(w));
    }
    return total;
  }

  /**
   * The `n` 64-bit values of `data` bitpacked as pylance 14 packs a dictionary block: up to 1024 inline (a 64-bit
   * width word, then the values zero-padded to one block), more out of line at the widest value's bits, the last
   * partial block packed when its padding costs fewer bits than packing saves, else raw. Null when the widest value
   * needs all 64 bits, or none needs any.
   */
  static Block bitpacked64(byte[] data, int n) {
    long or = 0;
    for (int i = 0; i < n; i++) or |= LittleEndian.getLong(data, 8 * i);
    int w = 64 - Long.numberOfLeadingZeros(or);
    if (w == 0 || w == 64 || n == 0) return null;
    byte[] block = new byte[FastLanes.BLOCK * 8];
    if (n <= FastLanes.BLOCK) {
      Growable.Bytes out = new Growable.Bytes(8 + FastLanes.packedBytes(w));
      out.u64(w);
      pack64(data, 0, n, w, block, out);
      return new Block(out, CompressiveEncoding.newBuilder().setInlineBitpacking(
          InlineBitpacking.newBuilder().setUncompressedBitsPerValue(64)).build());
    }
    int whole = n / FastLanes.BLOCK;
    int tail = n % FastLanes.BLOCK;
    boolean packTail = tail > 0 && (long) w * (FastLanes.BLOCK - tail) < (long) (64 - w) * tail;
    Growable.Bytes out = new Growable.Bytes(whole * FastLanes.packedBytes(w) + FastLanes.packedBytes(w) + 8 * tail);
    for (int b = 0; b < whole; b++) pack64(data, b * FastLanes.BLOCK, FastLanes.BLOCK, w, block, out);
    if (packTail) pack64(data, whole * FastLanes.BLOCK, tail, w, block, out);
    else out.add(data, 8 * whole * FastLanes.BLOCK, 8 * tail);
    return new Block(out, CompressiveEncoding.newBuilder().setOutOfLineBitpacking(OutOfLineBitpacking.newBuilder()
        .setUncompressedBitsPerValue(64).setValues(flat(w))).build());
  }

  /** Appends values [from, from + n) of `data` (n <= 1024), zero-padded to a block, packed to `w` bits. */
  private static void pack64(byte[] data, int from, int n, int w, byte[] block, Growable.Bytes out) {
    System.arraycopy(data, 8 * from, block, 0, 8 * n);
    if (n < FastLanes.BLOCK) Arrays.fill(block, 8 * n, block.length, (byte) 0);
    int bytes = FastLanes.packedBytes(w);
    out.ensure(bytes);
    FastLanes.pack(64, w, block, 0, out.data, out.size);
    out.size += bytes;
  }

  /** Bits needed by the widest of the 4-byte values [from, to) of `data`. */
  private static int bitWidth(byte[] data, int from, int to) {
    int or = 0;
    for (int i = from; i < to; i++) or |= LittleEndian.getInt(data, 4 * i);
    return 32 - Integer.numberOfLeadingZeros(or);
  }

  private static long align8(long n) {
    return (n + 7) & ~7L;
  }

  private static CompressiveEncoding flat(long bits) {
    return CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits)).build();
  }
}
