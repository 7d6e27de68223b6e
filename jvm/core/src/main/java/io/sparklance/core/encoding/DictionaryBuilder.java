package io.sparklance.core.encoding;

import java.util.Arrays;

import org.apache.arrow.memory.ArrowBuf;

/**
 * The dictionary of one page while it fills: distinct values (byte strings) in order of first appearance, and for
 * each row the index of its value, or -1 for a null row. An open-addressing hash table over the stored bytes finds
 * repeats without allocating per value.
 */
public final class DictionaryBuilder {
  private final Growable.Bytes bytes = new Growable.Bytes(256);
  private final Growable.Longs ends = new Growable.Longs(64);
  private int[] hashes = new int[64];
  private int[] slots = emptySlots(256);
  private int[] rows = new int[256];
  private int numRows;
  private byte[] scratch = new byte[64];
  private boolean anyNull;

  private static int[] emptySlots(int n) {
    int[] s = new int[n];
    Arrays.fill(s, -1);
    return s;
  }

  /** Distinct non-null values so far. */
  public int items() {
    return ends.size;
  }

  public int rows() {
    return numRows;
  }

  public boolean anyNull() {
    return anyNull;
  }

  /** The concatenated bytes of the distinct values. */
  public Growable.Bytes itemBytes() {
    return bytes;
  }

  /** The end offset of each distinct value in [[itemBytes]]. */
  public Growable.Longs itemEnds() {
    return ends;
  }

  /** Each row's item index (-1: null); valid up to [[rows]]. */
  public int[] rowItems() {
    return rows;
  }

  private void addRow(int item) {
    if (numRows == rows.length) rows = Arrays.copyOf(rows, 2 * numRows);
    rows[numRows++] = item;
  }

  public void addNull() {
    anyNull = true;
    addRow(-1);
  }

  /** Adds a row whose value is bytes [offset, offset + length) of `buf`. */
  public void add(ArrowBuf buf, long offset, int length) {
    if (scratch.length < length) scratch = new byte[Math.max(length, 2 * scratch.length)];
    buf.getBytes(offset, scratch, 0, length);
    add(scratch, 0, length);
  }

  /** Adds a row whose value is bytes [offset, offset + length) of `src`. */
  public void add(byte[] src, int offset, int length) {
    int h = 0x811C9DC5;
    for (int k = 0; k < length; k++) h = (h ^ (src[offset + k] & 0xFF)) * 0x01000193;
    h ^= h >>> 16;
    int mask = slots.length - 1;
    int s = h & mask;
    while (true) {
      int item = slots[s];
      if (item < 0) break;
      if (hashes[item] == h && same(item, src, offset, length)) {
        addRow(item);
        return;
      }
      s = (s + 1) & mask;
    }
    int item = ends.size;
    bytes.add(src, offset, length);
    ends.add(bytes.size);
    if (item == hashes.length) hashes = Arrays.copyOf(hashes, 2 * item);
    hashes[item] = h;
    slots[s] = item;
    if (2 * (item + 1) > slots.length) rehash();
    addRow(item);
  }

  private boolean same(int item, byte[] src, int offset, int length) {
    long start = item == 0 ? 0 : ends.data[item - 1];
    if (ends.data[item] - start != length) return false;
    return Arrays.equals(bytes.data, (int) start, (int) start + length, src, offset, offset + length);
  }

  private void rehash() {
    slots = emptySlots(slots.length * 2);
    int mask = slots.length - 1;
    for (int item = 0; item < ends.size; item++) {
      int s = hashes[item] & mask;
      while (slots[s] >= 0) s = (s + 1) & mask;
      slots[s] = item;
    }
  }

  public void clear() {
    bytes.clearAndShrink();
    ends.clearAndShrink();
    if (slots.length > 256) {
      slots = emptySlots(256);
      hashes = new int[64];
    } else {
      Arrays.fill(slots, -1);
    }
    if (rows.length > (1 << 16)) rows = new int[256];
    numRows = 0;
    anyNull = false;
  }
}
