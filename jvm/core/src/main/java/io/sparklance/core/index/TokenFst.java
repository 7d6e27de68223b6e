package io.sparklance.core.index;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.sparklance.core.CorruptFileException;

/**
 * Every token of an INVERTED index's token dictionary with its id, read with {@link FstReader} (the Rust
 * {@code fst} crate's format): for tests that compare pylance's tokens with the JVM's analysis. The number of keys
 * found must be the number the FST's footer records.
 */
public final class TokenFst {

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

  private TokenFst() {}

  /** Every key of the FST in {@code fst} (UTF-8) with its value; {@code path} names the file in errors. */
  public static Entries read(byte[] fst, String path) {
    FstReader reader = new FstReader(fst, path);
    List<String> keys = new ArrayList<>();
    List<Long> values = new ArrayList<>();
    reader.forEach((key, length, value) -> {
      keys.add(new String(key, 0, length, StandardCharsets.UTF_8));
      values.add(value);
    });
    if (keys.size() != reader.size()) {
      throw new CorruptFileException(path, "the token dictionary holds " + keys.size() + " keys where its footer says "
          + reader.size(), null);
    }
    long[] out = new long[values.size()];
    for (int i = 0; i < out.length; i++) out[i] = values.get(i);
    return new Entries(keys.toArray(new String[0]), out);
  }
}
