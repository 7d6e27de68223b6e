package io.sparklance.core.index;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.sparklance.core.CorruptFileException;

/**
 * The token dictionary of an INVERTED index ({@code _token_fst_bytes} of {@code part_N_tokens.lance}): a finite state
 * transducer in the format of the Rust {@code fst} crate 0.4 (format version 3), mapping each token's UTF-8 bytes to
 * its token id. This reader lists every key with its value, in key order.
 *
 * <p>Layout (read from the crate's {@code raw/mod.rs} and {@code raw/node.rs}): a header of two little-endian u64
 * (format version 1-3, FST type); the nodes, each written before the nodes pointing to it and addressed by its last
 * byte, the state byte; a footer of the key count and the root node's address (u64 each) and, from version 3, a
 * CRC32C checksum (u32). Address 0 is the empty final node. The state byte's top two bits give the node's kind:
 * {@code 11} one transition to the node written just before, no output; {@code 10} one transition with an output;
 * otherwise any number of transitions ({@code 01}: final). The low six bits hold the transition byte as an index
 * into a table of common bytes (0: the byte precedes the state) or, for the last kind, the number of transitions
 * (0: it precedes the state, 1 there meaning 256). Below that come a byte of pack sizes (transition address deltas
 * in the high nibble, outputs in the low), the inputs, deltas and outputs, each packed little-endian, in reverse
 * transition order, and for more than 32 transitions a 256-byte index. A key's value is the sum of the outputs
 * along its path plus the final node's output.
 */
public final class TokenFst {
  /** Bytes 1 to 63 of the crate's table of common input bytes (a six-bit index {@code i} means entry {@code i}). */
  private static final byte[] COMMON_INPUTS = (
      "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHGWUV").getBytes(StandardCharsets.US_ASCII);

  /** The keys of a dictionary, in byte order, and the value of each. */
  public static final class Entries {
    public final String[] keys;
    public final long[] values;

    Entries(String[] keys, long[] values) {
      this.keys = keys;
      this.values = values;
    }

    public int size() {
      return keys.length;
    }
  }

  private final byte[] data;
  private final String path;
  private final long version;

  private TokenFst(byte[] data, String path) {
    this.data = data;
    this.path = path;
    if (data.length < 36) throw corrupt("it is " + data.length + " bytes long, shorter than the 36 of an empty FST");
    this.version = u64(0, 8);
    if (version < 1 || version > 3) throw corrupt("its format version is " + version + " (expected 1 to 3)");
  }

  /** Every key of the FST in {@code fst} with its value; {@code path} names the file in errors. */
  public static Entries read(byte[] fst, String path) {
    return new TokenFst(fst, path).entries();
  }

  private Entries entries() {
    int end = version >= 3 ? data.length - 4 : data.length;
    long root = u64(end - 8, 8);
    long count = u64(end - 16, 8);
    if (root < 0 || root >= end - 16) throw corrupt("its root address " + root + " lies outside its nodes");
    if (count < 0 || count > data.length) throw corrupt("it claims " + count + " keys in " + data.length + " bytes");
    walk((int) root, new byte[64], 0, 0L);
    if (keys.size() != count) throw corrupt("it holds " + keys.size() + " keys where its footer says " + count);
    return new Entries(keys.toArray(new String[0]), Arrays.copyOf(values, keys.size()));
  }

  private final List<String> keys = new ArrayList<>();
  private long[] values = new long[16];

  /**
   * Depth-first over the node at {@code addr}, reached by {@code key[0, depth)} with summed output {@code out}.
   * Every transition points to a lower address (a node is written before the nodes pointing to it), which bounds
   * the walk on damaged input too.
   */
  private void walk(int addr, byte[] key, int depth, long out) {
    Node node = new Node(addr);
    if (node.isFinal) {
      if (keys.size() == values.length) values = Arrays.copyOf(values, values.length * 2);
      values[keys.size()] = out + node.finalOutput;
      keys.add(new String(key, 0, depth, StandardCharsets.UTF_8));
    }
    for (int i = 0; i < node.ntrans; i++) {
      int target = node.target(i);
      if (target >= addr) throw corrupt("node " + addr + " points forward to " + target);
      if (depth == key.length) key = Arrays.copyOf(key, key.length * 2);
      key[depth] = node.input(i);
      walk(target, key, depth + 1, out + node.output(i));
    }
  }

  /** One decoded node. */
  private final class Node {
    final boolean isFinal;
    /** Whether the node has one transition, held in the fields {@code one*}. */
    private final boolean one;
    final int ntrans;
    final long finalOutput;
    /** For one-transition nodes: the input, the target and the output. */
    private final int oneInput;
    private final int oneTarget;
    private final long oneOutput;
    /** For any-transition nodes: where the inputs end, the pack sizes, the size of the transition index. */
    private final int top;
    private final int tsize;
    private final int osize;
    private final int indexSize;
    private final int end;

    Node(int addr) {
      if (addr == 0) {
        one = false;
        isFinal = true;
        ntrans = 0;
        finalOutput = 0;
        oneInput = oneTarget = top = tsize = osize = indexSize = end = 0;
        oneOutput = 0;
        return;
      }
      int state = byteAt(addr);
      int kind = state >>> 6;
      if (kind >= 2) {
        int common = state & 0x3f;
        int inputLen = common == 0 ? 1 : 0;
        one = true;
        oneInput = common == 0 ? byteAt(addr - 1) : COMMON_INPUTS[common - 1] & 0xff;
        isFinal = false;
        ntrans = 1;
        finalOutput = 0;
        top = tsize = osize = indexSize = 0;
        if (kind == 3) {
          end = addr - inputLen;
          oneTarget = end - 1;
          oneOutput = 0;
        } else {
          int sizes = byteAt(addr - inputLen - 1);
          int ts = sizes >>> 4;
          int os = sizes & 0x0f;
          end = addr - inputLen - 1 - ts - os;
          oneTarget = delta(addr - inputLen - 1 - ts, ts, end);
          oneOutput = os == 0 ? 0 : uint(end, os);
        }
        return;
      }
      one = false;
      isFinal = (state & 0x40) != 0;
      int n = state & 0x3f;
      int ntransLen = n == 0 ? 1 : 0;
      if (n == 0) {
        n = byteAt(addr - 1);
        if (n == 1) n = 256;
      }
      ntrans = n;
      int sizes = byteAt(addr - ntransLen - 1);
      tsize = sizes >>> 4;
      osize = sizes & 0x0f;
      indexSize = version >= 2 && n > 32 ? 256 : 0;
      top = addr - ntransLen - 1 - indexSize;
      int outputsTop = top - n - n * tsize;
      end = outputsTop - n * osize - (isFinal ? osize : 0);
      finalOutput = isFinal && osize > 0 ? uint(end, osize) : 0;
      oneInput = oneTarget = 0;
      oneOutput = 0;
      if (end < 16) throw corrupt("node " + addr + " reaches below the header");
    }

    byte input(int i) {
      return (byte) (one ? oneInput : byteAt(top - i - 1));
    }

    int target(int i) {
      if (one) return oneTarget;
      return delta(top - ntrans - (i + 1) * tsize, tsize, end);
    }

    long output(int i) {
      if (one) return oneOutput;
      return osize == 0 ? 0 : uint(top - ntrans - ntrans * tsize - (i + 1) * osize, osize);
    }
  }

  /** The address a transition points to, from its delta packed in {@code n} bytes at {@code at}. */
  private int delta(int at, int n, int nodeEnd) {
    long d = uint(at, n);
    if (d == 0) return 0;
    if (d > nodeEnd) throw corrupt("a transition at " + at + " points before the start of the FST");
    return (int) (nodeEnd - d);
  }

  private long uint(int at, int n) {
    if (n < 1 || n > 8) throw corrupt("a value at " + at + " is packed in " + n + " bytes (1 to 8 allowed)");
    return u64(at, n);
  }

  private long u64(int at, int n) {
    if (at < 0 || at + n > data.length) throw corrupt("a value at " + at + " lies outside its " + data.length + " bytes");
    long v = 0;
    for (int i = 0; i < n; i++) v |= (data[at + i] & 0xffL) << (8 * i);
    return v;
  }

  private int byteAt(int at) {
    if (at < 0 || at >= data.length) throw corrupt("a node byte at " + at + " lies outside its " + data.length + " bytes");
    return data[at] & 0xff;
  }

  private CorruptFileException corrupt(String detail) {
    return new CorruptFileException(path, "its token dictionary (FST) is damaged: " + detail, null);
  }
}
