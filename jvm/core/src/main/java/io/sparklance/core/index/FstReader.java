package io.sparklance.core.index;

import java.nio.charset.StandardCharsets;

import io.sparklance.core.CorruptFileException;

/**
 * A map from byte strings to unsigned 64-bit values stored as a finite state transducer in the format of the Rust
 * {@code fst} crate (file versions 1 to 3; 0.4 writes 3): the token dictionary of a Lance INVERTED index
 * ({@code _token_fst_bytes} of {@code part_N_tokens.lance}, docs/dev/fts-index-format.md §1).
 *
 * <p>Layout. The file opens with its version and type (two little-endian u64) and ends with the number of keys and
 * the address of the root node (two little-endian u64), followed in version 3 by a CRC32C checksum (u32, not
 * verified here). Nodes are written back to front: a node's address is the index of its last byte, its state byte,
 * and the node is read backwards from there. The state byte's top two bits name the node's kind:
 * <ul>
 *   <li>{@code 11} one transition to the node written just before it, with output 0; the low six bits are the
 *       input's index in the common-input table, or 0 when the input byte precedes the state byte;</li>
 *   <li>{@code 10} one transition; the input as above, then a sizes byte (high nibble: bytes of the address delta,
 *       low nibble: bytes of the output), the delta, the output;</li>
 *   <li>{@code 0f} any number of transitions: bit 6 {@code f} says the node is final; the low six bits are the
 *       number of transitions, or 0 when it is in the byte before (where 1 means 256); then the sizes byte, a
 *       256-byte index from input byte to transition when there are more than 32 transitions (version 2 on), the
 *       inputs, the address deltas, the outputs, and the final output of a final node.</li>
 * </ul>
 * Every transition's inputs, deltas and outputs are stored in reverse order, so the last written is the smallest.
 * A target address is the node's lowest byte minus the delta; delta 0 is the empty final node (address 0).
 * Multi-byte numbers are little-endian. A key's value is the sum of the outputs along its path plus the final
 * output of the node it ends at.
 *
 * <p>Every index read from the bytes is checked against their length: a damaged dictionary fails with a
 * {@link CorruptFileException} naming {@code path}, never with an index error or a loop.
 */
public final class FstReader {
  /** The fst crate's table of common inputs: a one-transition node's six bits name byte {@code COMMON[k - 1]}. */
  private static final byte[] COMMON =
      "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHGWUV,".getBytes(StandardCharsets.US_ASCII);
  private static final int TRANS_INDEX_THRESHOLD = 32;
  private static final int EMPTY_ADDRESS = 0;

  private final byte[] data;
  private final String path;
  private final long version;
  private final int root;
  private final long numKeys;

  /** Reads the header and footer of {@code data}, the whole FST; {@code path} names its file in errors. */
  public FstReader(byte[] data, String path) {
    this.data = data;
    this.path = path;
    if (data.length < 32) throw corrupt("the token dictionary (an FST) has " + data.length + " bytes, fewer than 32");
    version = u64(0);
    if (version < 1 || version > 3) {
      throw corrupt("the token dictionary is an FST of version " + version + "; this reader knows versions 1 to 3");
    }
    int end = version <= 2 ? data.length : data.length - 4;
    long rootAddr = u64(end - 8);
    numKeys = u64(end - 16);
    if (rootAddr < 0 || rootAddr >= end - 16) throw corrupt("the FST's root address " + rootAddr + " is outside it");
    root = (int) rootAddr;
  }

  /** The number of keys. */
  public long size() {
    return numKeys;
  }

  /** The value of {@code key}, or -1 when the FST does not hold it. */
  public long get(byte[] key) {
    Node node = node(root);
    long out = 0;
    for (byte b : key) {
      int i = node.find(b);
      if (i < 0) return -1;
      out += node.output(i);
      node = node(node.target(i));
    }
    return node.isFinal ? out + node.finalOutput : -1;
  }

  /** The value of {@code key} (UTF-8), or -1 when the FST does not hold it. */
  public long get(String key) {
    return get(key.getBytes(StandardCharsets.UTF_8));
  }

  /** Receives the keys of an FST in order; {@code key[0, length)} is valid during the call only. */
  public interface Visitor {
    void visit(byte[] key, int length, long value);
  }

  /**
   * Calls {@code visitor} with every key, in lexicographic byte order. A path longer than the number of bytes of
   * the FST (only possible through a cycle in damaged bytes) is an error.
   */
  public void forEach(Visitor visitor) {
    Node[] nodes = new Node[16];
    int[] next = new int[16];
    long[] outs = new long[16];
    byte[] key = new byte[16];
    int depth = 0;
    nodes[0] = node(root);
    next[0] = 0;
    outs[0] = 0;
    if (nodes[0].isFinal) visitor.visit(key, 0, nodes[0].finalOutput);
    while (depth >= 0) {
      Node n = nodes[depth];
      int i = next[depth];
      if (i >= n.ntrans) {
        depth--;
        continue;
      }
      next[depth] = i + 1;
      if (depth + 1 >= nodes.length) {
        if (nodes.length > data.length) throw corrupt("the token dictionary holds a path longer than itself");
        nodes = java.util.Arrays.copyOf(nodes, nodes.length * 2);
        next = java.util.Arrays.copyOf(next, next.length * 2);
        outs = java.util.Arrays.copyOf(outs, outs.length * 2);
        key = java.util.Arrays.copyOf(key, key.length * 2);
      }
      key[depth] = n.input(i);
      long out = outs[depth] + n.output(i);
      Node child = node(n.target(i));
      depth++;
      nodes[depth] = child;
      next[depth] = 0;
      outs[depth] = out;
      if (child.isFinal) visitor.visit(key, depth, out + child.finalOutput);
    }
  }

  /** The root node, for walks that follow transitions themselves (e.g. an automaton over the dictionary). */
  public Node rootNode() {
    return node(root);
  }

  /** The node at {@code addr}. */
  public Node node(int addr) {
    return new Node(addr);
  }

  /** One state of the transducer, decoded from its bytes. */
  public final class Node {
    private final int addr;
    private final int kind; // 3 one transition to the next node, 2 one transition, 0 any number
    private final int ntrans;
    private final int tsize;
    private final int osize;
    private final int inputLen;
    private final int indexSize;
    final boolean isFinal;
    final long finalOutput;
    private final int end;

    private Node(int addr) {
      this.addr = addr;
      if (addr == EMPTY_ADDRESS) {
        kind = -1; ntrans = 0; tsize = 0; osize = 0; inputLen = 0; indexSize = 0;
        isFinal = true; finalOutput = 0; end = 0;
        return;
      }
      int state = at(addr);
      kind = state >>> 6;
      if (kind == 3) {
        ntrans = 1; tsize = 0; osize = 0; indexSize = 0;
        inputLen = (state & 0x3F) == 0 ? 1 : 0;
        isFinal = false; finalOutput = 0;
        end = addr - inputLen;
      } else if (kind == 2) {
        ntrans = 1; indexSize = 0;
        inputLen = (state & 0x3F) == 0 ? 1 : 0;
        int sizes = at(addr - inputLen - 1);
        tsize = sizes >>> 4;
        osize = sizes & 0x0F;
        isFinal = false; finalOutput = 0;
        end = addr - inputLen - 1 - tsize - osize;
      } else {
        inputLen = (state & 0x3F) == 0 ? 1 : 0;
        int n = state & 0x3F;
        if (n == 0) {
          n = at(addr - 1);
          if (n == 1) n = 256;
        }
        ntrans = n;
        int sizes = at(addr - inputLen - 1);
        tsize = sizes >>> 4;
        osize = sizes & 0x0F;
        indexSize = version >= 2 && ntrans > TRANS_INDEX_THRESHOLD ? 256 : 0;
        isFinal = (state & 0x40) != 0;
        int outputs = addr - inputLen - 1 - indexSize - ntrans - ntrans * tsize;
        finalOutput = isFinal && osize > 0 ? uint(outputs - ntrans * osize - osize, osize) : 0;
        end = outputs - ntrans * osize - (isFinal ? osize : 0);
      }
      if (tsize > 8 || osize > 8) throw corrupt("an FST node at " + addr + " packs numbers in more than 8 bytes");
      if (end < 0) throw corrupt("an FST node at " + addr + " starts before the dictionary");
    }

    /** The number of transitions. */
    public int size() {
      return ntrans;
    }

    /** Whether a key may end here. */
    public boolean isFinal() {
      return isFinal;
    }

    /** The output added when a key ends here. */
    public long finalOutput() {
      return finalOutput;
    }

    /** The input byte of transition {@code i} (transitions are in increasing order of input). */
    public byte input(int i) {
      if (kind == 3 || kind == 2) {
        int c = at(addr) & 0x3F;
        return c == 0 ? data[check(addr - 1)] : COMMON[c - 1];
      }
      return data[check(addr - inputLen - 1 - indexSize - i - 1)];
    }

    /** The output of transition {@code i}. */
    public long output(int i) {
      if (kind == 3 || osize == 0) return 0;
      if (kind == 2) return uint(addr - inputLen - 1 - tsize - osize, osize);
      return uint(addr - inputLen - 1 - indexSize - ntrans - ntrans * tsize - i * osize - osize, osize);
    }

    /** The address of the node transition {@code i} leads to. */
    public int target(int i) {
      if (kind == 3) return end - 1;
      int at = kind == 2 ? addr - inputLen - 1 - tsize : addr - inputLen - 1 - indexSize - ntrans - i * tsize - tsize;
      long delta = tsize == 0 ? 0 : uint(at, tsize);
      if (delta == 0) return EMPTY_ADDRESS;
      long target = (long) end - delta;
      if (target < 0 || target >= addr) throw corrupt("an FST node at " + addr + " leads to address " + target);
      return (int) target;
    }

    /** The transition whose input is {@code b}, or -1. */
    public int find(byte b) {
      if (kind == -1) return -1;
      if (kind == 3 || kind == 2) return input(0) == b ? 0 : -1;
      if (indexSize > 0) {
        int i = at(addr - inputLen - 1 - 256 + (b & 0xFF));
        return i < ntrans ? i : -1;
      }
      int start = addr - inputLen - 1 - ntrans;
      for (int k = 0; k < ntrans; k++) {
        if (data[check(start + k)] == b) return ntrans - k - 1;
      }
      return -1;
    }
  }

  private int at(int i) {
    return data[check(i)] & 0xFF;
  }

  private int check(int i) {
    if (i < 0 || i >= data.length) throw corrupt("the token dictionary (an FST) refers to byte " + i + " of " + data.length);
    return i;
  }

  private long uint(int at, int n) {
    check(at);
    check(at + n - 1);
    long v = 0;
    for (int k = 0; k < n; k++) v |= (long) (data[at + k] & 0xFF) << (8 * k);
    return v;
  }

  private long u64(int at) {
    return uint(at, 8);
  }

  private CorruptFileException corrupt(String detail) {
    return new CorruptFileException(path, detail, null);
  }
}
