package io.sparklance.core.index;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a map from byte strings to unsigned 64-bit values as a finite state transducer in the format of the Rust
 * {@code fst} crate, file version 3 ({@link FstReader} documents the layout): the token dictionary of an INVERTED
 * index. The transducer is a trie, correct but not minimal (no suffixes are shared), and every node is written in
 * the general "any number of transitions" form; a key's value is the final output of the node it ends at.
 *
 * <p>Keys must be added in strictly increasing unsigned byte order. Each node is written once all keys below it are
 * known, children before parents, so every transition points back to a lower address.
 */
public final class FstWriter {
  private static final int VERSION = 3;
  private static final int EMPTY_ADDRESS = 0;
  private static final int INDEX_THRESHOLD = 32;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final List<Pending> stack = new ArrayList<>();
  private byte[] last;
  private long count;

  /** One node of the current key's path, not yet written. */
  private static final class Pending {
    boolean isFinal;
    long finalOutput;
    final List<Integer> inputs = new ArrayList<>();
    final List<Integer> targets = new ArrayList<>();
  }

  public FstWriter() {
    writeU64(VERSION);
    writeU64(0);
    stack.add(new Pending());
  }

  /** Adds {@code key} with {@code value}; keys come in strictly increasing unsigned byte order. */
  public void add(byte[] key, long value) {
    int common = 0;
    if (last != null) {
      int cmp = compare(last, key);
      if (cmp >= 0) throw new IllegalArgumentException("FST keys must be added in strictly increasing order");
      while (common < last.length && common < key.length && last[common] == key[common]) common++;
    }
    finish(common);
    for (int i = common; i < key.length; i++) {
      stack.get(i).inputs.add(key[i] & 0xFF);
      stack.get(i).targets.add(-1);
      stack.add(new Pending());
    }
    Pending end = stack.get(key.length);
    end.isFinal = true;
    end.finalOutput = value;
    last = key.clone();
    count++;
  }

  /** The transducer's bytes: header, nodes, then the number of keys, the root address and a CRC32C. */
  public byte[] finish() {
    finish(0);
    int root = compile(stack.get(0));
    writeU64(count);
    writeU64(root);
    byte[] body = out.toByteArray();
    int crc = Crc32c.of(body, 0, body.length);
    byte[] all = java.util.Arrays.copyOf(body, body.length + 4);
    for (int k = 0; k < 4; k++) all[body.length + k] = (byte) (crc >>> (8 * k));
    return all;
  }

  /** Writes the nodes of the path below depth {@code depth}, deepest first, linking each into its parent. */
  private void finish(int depth) {
    while (stack.size() - 1 > depth) {
      Pending node = stack.remove(stack.size() - 1);
      Pending parent = stack.get(stack.size() - 1);
      parent.targets.set(parent.targets.size() - 1, compile(node));
    }
  }

  /** Writes one node; its address (the index of its state byte). */
  private int compile(Pending node) {
    int n = node.inputs.size();
    if (n == 0 && node.isFinal && node.finalOutput == 0) return EMPTY_ADDRESS;
    int start = out.size();
    // A target's delta is taken from the node's lowest byte, which is where it starts.
    long maxDelta = 0;
    for (int t : node.targets) if (t != EMPTY_ADDRESS) maxDelta = Math.max(maxDelta, start - t);
    int tsize = bytesFor(maxDelta);
    int osize = node.isFinal && node.finalOutput != 0 ? bytesFor(node.finalOutput) : 0;
    if (node.isFinal) writeUint(node.finalOutput, osize);
    for (int i = 0; i < n * osize; i++) out.write(0);
    for (int i = n - 1; i >= 0; i--) {
      int t = node.targets.get(i);
      writeUint(t == EMPTY_ADDRESS ? 0 : start - t, tsize);
    }
    for (int i = n - 1; i >= 0; i--) out.write(node.inputs.get(i));
    if (n > INDEX_THRESHOLD) {
      byte[] index = new byte[256];
      java.util.Arrays.fill(index, (byte) 255);
      for (int i = 0; i < n; i++) index[node.inputs.get(i)] = (byte) i;
      out.write(index, 0, 256);
    }
    out.write((tsize << 4) | osize);
    boolean inState = n >= 1 && n <= 63;
    if (!inState) out.write(n == 256 ? 1 : n);
    out.write((node.isFinal ? 0x40 : 0) | (inState ? n : 0));
    return out.size() - 1;
  }

  private static int bytesFor(long v) {
    int b = 1;
    while (b < 8 && (v >>> (8 * b)) != 0) b++;
    return b;
  }

  private void writeUint(long v, int size) {
    for (int k = 0; k < size; k++) out.write((int) (v >>> (8 * k)) & 0xFF);
  }

  private void writeU64(long v) {
    writeUint(v, 8);
  }

  private static int compare(byte[] a, byte[] b) {
    int n = Math.min(a.length, b.length);
    for (int i = 0; i < n; i++) {
      int c = (a[i] & 0xFF) - (b[i] & 0xFF);
      if (c != 0) return c;
    }
    return a.length - b.length;
  }

  /** CRC-32C (Castagnoli), as the fst crate checksums its files (java.util.zip.CRC32C needs Java 9). */
  static final class Crc32c {
    private static final int[] TABLE = new int[256];

    static {
      for (int i = 0; i < 256; i++) {
        int c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? (c >>> 1) ^ 0x82F63B78 : c >>> 1;
        TABLE[i] = c;
      }
    }

    static int of(byte[] b, int from, int to) {
      int c = 0xFFFFFFFF;
      for (int i = from; i < to; i++) c = TABLE[(c ^ b[i]) & 0xFF] ^ (c >>> 8);
      return ~c;
    }

    private Crc32c() {}
  }
}
