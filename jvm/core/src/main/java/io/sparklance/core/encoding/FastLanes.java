package io.sparklance.core.encoding;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The FastLanes bit-packing layout that Lance's inline bitpacking uses: blocks of 1024 values of a T-bit unsigned
 * type (T = 8, 16, 32, 64), each packed to W bits (0 <= W <= T) into W * 1024 / 8 bytes.
 *
 * A block is viewed as 1024 / T lanes. Lane `l` packs T values, row 0 first, into consecutive bits of its own
 * sequence of T-bit words; the k-th word of lane `l` is word `k * lanes + l` of the block (little endian), and bits
 * fill each word from the least significant end, a value spilling into the lane's next word when it does not fit.
 * The value packed at (row, lane) is element `ORDER[row / 8] * 16 + (row % 8) * 128 + lane` of the block, a
 * transposition that lets SIMD code work on many lanes at once.
 */
public final class FastLanes {
  private FastLanes() {}

  public static final int BLOCK = 1024;
  private static final int[] ORDER = {0, 4, 2, 6, 1, 5, 3, 7};

  /** Element index of (row, lane). */
  static int index(int row, int lane) {
    return ORDER[row >>> 3] * 16 + (row & 7) * 128 + lane;
  }

  /** Bytes of one block of 1024 values packed at `width` bits. */
  public static int packedBytes(int width) {
    return width * (BLOCK / 8);
  }

  /**
   * Unpacks one block: reads `packedBytes(width)` bytes at `in[inOff]` and writes 1024 little-endian values of
   * `typeBits` bits to `out[outOff]` (1024 * typeBits / 8 bytes).
   */
  public static void unpack(int typeBits, int width, byte[] in, int inOff, byte[] out, int outOff) {
    if (width < 0 || width > typeBits) {
      throw new IllegalArgumentException("bit width " + width + " for a " + typeBits + "-bit type");
    }
    switch (typeBits) {
      case 8: unpack8(width, in, inOff, out, outOff); break;
      case 16: unpack16(width, in, inOff, out, outOff); break;
      case 32: unpack32(width, in, inOff, out, outOff); break;
      case 64: unpack64(width, in, inOff, out, outOff); break;
      default: throw new IllegalArgumentException("FastLanes type width " + typeBits);
    }
  }

  /**
   * Scratch arrays of the unpacking loops (one set per thread): the packed words and the unpacked values as arrays
   * of the type's width, so that the loops below run over plain arrays, one row of all lanes at a time, which the
   * JIT turns into vector instructions.
   */
  private static final class Scratch {
    final short[] shortWords = new short[16 * 64];
    final short[] shorts = new short[BLOCK];
    final int[] intWords = new int[32 * 32];
    final int[] ints = new int[BLOCK];
    final long[] longWords = new long[64 * 16];
    final long[] longs = new long[BLOCK];
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  // Each row r of a block packs its value of every lane at the same bit offset r * w of the lanes' word sequences:
  // in word k = (r * w) / T from bit (r * w) % T, spilling into word k + 1. The values of one row are consecutive
  // elements of the block (index(row, 0) + lane), so a row is one loop over lanes on both sides.

  private static void unpack8(int w, byte[] in, int inOff, byte[] out, int outOff) {
    final int lanes = 128;
    if (w == 0) { Arrays.fill(out, outOff, outOff + BLOCK, (byte) 0); return; }
    final int mask = w == 8 ? 0xFF : (1 << w) - 1;
    int bit = 0;
    for (int row = 0; row < 8; row++) {
      int k = bit >>> 3, shift = bit & 7;
      int lo = inOff + k * lanes, to = outOff + index(row, 0);
      if (shift + w <= 8) {
        for (int lane = 0; lane < lanes; lane++) out[to + lane] = (byte) (((in[lo + lane] & 0xFF) >>> shift) & mask);
      } else {
        int hi = lo + lanes, back = 8 - shift;
        for (int lane = 0; lane < lanes; lane++) {
          out[to + lane] = (byte) ((((in[lo + lane] & 0xFF) >>> shift) | ((in[hi + lane] & 0xFF) << back)) & mask);
        }
      }
      bit += w;
    }
  }

  private static void unpack16(int w, byte[] in, int inOff, byte[] out, int outOff) {
    final int lanes = 64;
    if (w == 0) { Arrays.fill(out, outOff, outOff + 2 * BLOCK, (byte) 0); return; }
    Scratch s = SCRATCH.get();
    short[] words = s.shortWords, vals = s.shorts;
    ByteBuffer.wrap(in, inOff, 2 * lanes * w).order(ByteOrder.LITTLE_ENDIAN).asShortBuffer().get(words, 0, lanes * w);
    final int mask = w == 16 ? 0xFFFF : (1 << w) - 1;
    int bit = 0;
    for (int row = 0; row < 16; row++) {
      int k = bit >>> 4, shift = bit & 15;
      int lo = k * lanes, to = index(row, 0);
      if (shift + w <= 16) {
        for (int lane = 0; lane < lanes; lane++) vals[to + lane] = (short) (((words[lo + lane] & 0xFFFF) >>> shift) & mask);
      } else {
        int hi = lo + lanes, back = 16 - shift;
        for (int lane = 0; lane < lanes; lane++) {
          vals[to + lane] = (short) ((((words[lo + lane] & 0xFFFF) >>> shift) | ((words[hi + lane] & 0xFFFF) << back)) & mask);
        }
      }
      bit += w;
    }
    ByteBuffer.wrap(out, outOff, 2 * BLOCK).order(ByteOrder.LITTLE_ENDIAN).asShortBuffer().put(vals);
  }

  private static void unpack32(int w, byte[] in, int inOff, byte[] out, int outOff) {
    final int lanes = 32;
    if (w == 0) { Arrays.fill(out, outOff, outOff + 4 * BLOCK, (byte) 0); return; }
    Scratch s = SCRATCH.get();
    int[] words = s.intWords, vals = s.ints;
    ByteBuffer.wrap(in, inOff, 4 * lanes * w).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words, 0, lanes * w);
    final int mask = w == 32 ? -1 : (1 << w) - 1;
    int bit = 0;
    for (int row = 0; row < 32; row++) {
      int k = bit >>> 5, shift = bit & 31;
      int lo = k * lanes, to = index(row, 0);
      if (shift + w <= 32) {
        for (int lane = 0; lane < lanes; lane++) vals[to + lane] = (words[lo + lane] >>> shift) & mask;
      } else {
        int hi = lo + lanes, back = 32 - shift;
        for (int lane = 0; lane < lanes; lane++) vals[to + lane] = ((words[lo + lane] >>> shift) | (words[hi + lane] << back)) & mask;
      }
      bit += w;
    }
    ByteBuffer.wrap(out, outOff, 4 * BLOCK).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(vals);
  }

  private static void unpack64(int w, byte[] in, int inOff, byte[] out, int outOff) {
    final int lanes = 16;
    if (w == 0) { Arrays.fill(out, outOff, outOff + 8 * BLOCK, (byte) 0); return; }
    Scratch s = SCRATCH.get();
    long[] words = s.longWords, vals = s.longs;
    ByteBuffer.wrap(in, inOff, 8 * lanes * w).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words, 0, lanes * w);
    final long mask = w == 64 ? -1L : (1L << w) - 1;
    int bit = 0;
    for (int row = 0; row < 64; row++) {
      int k = bit >>> 6, shift = bit & 63;
      int lo = k * lanes, to = index(row, 0);
      if (shift + w <= 64) {
        for (int lane = 0; lane < lanes; lane++) vals[to + lane] = (words[lo + lane] >>> shift) & mask;
      } else {
        int hi = lo + lanes, back = 64 - shift;
        for (int lane = 0; lane < lanes; lane++) vals[to + lane] = ((words[lo + lane] >>> shift) | (words[hi + lane] << back)) & mask;
      }
      bit += w;
    }
    ByteBuffer.wrap(out, outOff, 8 * BLOCK).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().put(vals);
  }

  /**
   * Packs one block: reads 1024 little-endian `typeBits`-bit values at `in[inOff]`, keeps their low `width` bits,
   * and writes `packedBytes(width)` bytes to `out[outOff]`.
   */
  public static void pack(int typeBits, int width, byte[] in, int inOff, byte[] out, int outOff) {
    if (width < 0 || width > typeBits) {
      throw new IllegalArgumentException("bit width " + width + " for a " + typeBits + "-bit type");
    }
    switch (typeBits) {
      case 8: case 16: case 32: packNarrow(typeBits, width, in, inOff, out, outOff); break;
      case 64: pack64(width, in, inOff, out, outOff); break;
      default: throw new IllegalArgumentException("FastLanes type width " + typeBits);
    }
  }

  // Packing mirrors unpacking: row r of every lane goes to the same bit offset r * w of the lanes' word sequences,
  // so a row is one loop over lanes that ORs each value into word k = (r * w) / T (and its spill into word k + 1).

  /** {@link #pack} of 8-, 16- and 32-bit values, computed in ints whose low `t` bits are the words. */
  private static void packNarrow(int t, int w, byte[] in, int inOff, byte[] out, int outOff) {
    if (w == 0) return;
    final int lanes = BLOCK / t;
    Scratch s = SCRATCH.get();
    int[] words = s.intWords, vals = s.ints;
    switch (t) {
      case 8: for (int i = 0; i < BLOCK; i++) vals[i] = in[inOff + i] & 0xFF; break;
      case 16: for (int i = 0; i < BLOCK; i++) vals[i] = LittleEndian.getUnsignedShort(in, inOff + 2 * i); break;
      default: ByteBuffer.wrap(in, inOff, 4 * BLOCK).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(vals);
    }
    final int mask = w == 32 ? -1 : (1 << w) - 1;
    final int nWords = lanes * w;
    Arrays.fill(words, 0, nWords, 0);
    int bit = 0;
    for (int row = 0; row < t; row++) {
      int k = bit / t, shift = bit - k * t;
      int lo = k * lanes, from = index(row, 0);
      if (shift + w <= t) {
        for (int lane = 0; lane < lanes; lane++) words[lo + lane] |= (vals[from + lane] & mask) << shift;
      } else {
        int hi = lo + lanes, back = t - shift;
        for (int lane = 0; lane < lanes; lane++) {
          int v = vals[from + lane] & mask;
          words[lo + lane] |= v << shift;
          words[hi + lane] |= v >>> back;
        }
      }
      bit += w;
    }
    switch (t) {
      case 8: for (int i = 0; i < nWords; i++) out[outOff + i] = (byte) words[i]; break;
      case 16: for (int i = 0; i < nWords; i++) LittleEndian.putShort(out, outOff + 2 * i, (short) words[i]); break;
      default:
        ByteBuffer.wrap(out, outOff, 4 * nWords).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(words, 0, nWords);
    }
  }

  private static void pack64(int w, byte[] in, int inOff, byte[] out, int outOff) {
    if (w == 0) return;
    final int lanes = 16;
    Scratch s = SCRATCH.get();
    long[] words = s.longWords, vals = s.longs;
    ByteBuffer.wrap(in, inOff, 8 * BLOCK).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(vals);
    final long mask = w == 64 ? -1L : (1L << w) - 1;
    final int nWords = lanes * w;
    Arrays.fill(words, 0, nWords, 0L);
    int bit = 0;
    for (int row = 0; row < 64; row++) {
      int k = bit >>> 6, shift = bit & 63;
      int lo = k * lanes, from = index(row, 0);
      if (shift + w <= 64) {
        for (int lane = 0; lane < lanes; lane++) words[lo + lane] |= (vals[from + lane] & mask) << shift;
      } else {
        int hi = lo + lanes, back = 64 - shift;
        for (int lane = 0; lane < lanes; lane++) {
          long v = vals[from + lane] & mask;
          words[lo + lane] |= v << shift;
          words[hi + lane] |= v >>> back;
        }
      }
      bit += w;
    }
    ByteBuffer.wrap(out, outOff, 8 * nWords).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().put(words, 0, nWords);
  }
}
