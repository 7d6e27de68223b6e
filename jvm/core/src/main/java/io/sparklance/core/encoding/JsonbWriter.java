package io.sparklance.core.encoding;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * Encodes JSON text into the binary JSON encoding Lance stores `json` columns in (databend's JSONB; the layout is
 * described on {@link Jsonb}, which decodes it). Object keys are sorted by their UTF-8 bytes, as pylance stores them;
 * integers that fit 64 bits are signed (or unsigned past Long.MAX_VALUE) 8-byte integers, other numbers float64.
 */
public final class JsonbWriter {
  private JsonbWriter() {}

  private static final JsonFactory FACTORY = new JsonFactory();
  private static final int MAX_DEPTH = 1000;

  /** Thrown for text that is not one JSON value; the message says where. */
  public static final class InvalidJsonException extends RuntimeException {
    InvalidJsonException(String message) { super(message); }
  }

  /** The JSONB bytes of a JSON text (UTF-8). */
  public static byte[] encode(byte[] text, int offset, int length) {
    try (JsonParser p = FACTORY.createParser(text, offset, length)) {
      JsonToken t = p.nextToken();
      if (t == null) throw new InvalidJsonException("it is empty");
      Value v = value(p, t, 0);
      if (p.nextToken() != null) throw new InvalidJsonException("it has more than one JSON value");
      if (v.type == 5) return v.payload;   // a container is its own top-level value
      ByteArrayOutputStream out = new ByteArrayOutputStream(8 + v.payload.length);
      int32(out, 0x20000000 | 1);
      int32(out, (v.type << 28) | v.payload.length);
      out.write(v.payload, 0, v.payload.length);
      return out.toByteArray();
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new InvalidJsonException(e.getOriginalMessage());
    } catch (IOException e) {
      throw new InvalidJsonException(e.getMessage());
    }
  }

  public static byte[] encode(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return encode(b, 0, b.length);
  }

  /** A value as its JEntry type and payload. */
  private static final class Value {
    final int type;
    final byte[] payload;
    Value(int type, byte[] payload) { this.type = type; this.payload = payload; }
  }

  private static final byte[] EMPTY = new byte[0];

  private static Value value(JsonParser p, JsonToken t, int depth) throws IOException {
    if (depth > MAX_DEPTH) throw new InvalidJsonException("it nests deeper than " + MAX_DEPTH + " levels");
    switch (t) {
      case VALUE_NULL: return new Value(0, EMPTY);
      case VALUE_TRUE: return new Value(4, EMPTY);
      case VALUE_FALSE: return new Value(3, EMPTY);
      case VALUE_STRING: return new Value(1, p.getText().getBytes(StandardCharsets.UTF_8));
      case VALUE_NUMBER_INT: {
        ByteArrayOutputStream out = new ByteArrayOutputStream(9);
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
          BigInteger big = p.getBigIntegerValue();
          if (big.signum() > 0 && big.bitLength() <= 64) {
            out.write(0x50);
            int64(out, big.longValue());
          } else {
            out.write(0x60);
            int64(out, Double.doubleToRawLongBits(big.doubleValue()));
          }
        } else {
          out.write(0x40);
          int64(out, p.getLongValue());
        }
        return new Value(2, out.toByteArray());
      }
      case VALUE_NUMBER_FLOAT: {
        ByteArrayOutputStream out = new ByteArrayOutputStream(9);
        out.write(0x60);
        int64(out, Double.doubleToRawLongBits(p.getDoubleValue()));
        return new Value(2, out.toByteArray());
      }
      case START_ARRAY: {
        java.util.ArrayList<Value> items = new java.util.ArrayList<>();
        for (JsonToken n = p.nextToken(); n != JsonToken.END_ARRAY; n = p.nextToken()) {
          if (n == null) throw new InvalidJsonException("an array is not closed");
          items.add(value(p, n, depth + 1));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int32(out, 0x80000000 | items.size());
        for (Value v : items) int32(out, (v.type << 28) | v.payload.length);
        for (Value v : items) out.write(v.payload, 0, v.payload.length);
        return new Value(5, out.toByteArray());
      }
      case START_OBJECT: {
        java.util.ArrayList<byte[]> keys = new java.util.ArrayList<>();
        java.util.ArrayList<Value> values = new java.util.ArrayList<>();
        for (JsonToken n = p.nextToken(); n != JsonToken.END_OBJECT; n = p.nextToken()) {
          if (n != JsonToken.FIELD_NAME) throw new InvalidJsonException("an object is not closed");
          keys.add(p.currentName().getBytes(StandardCharsets.UTF_8));
          values.add(value(p, p.nextToken(), depth + 1));
        }
        Integer[] order = new Integer[keys.size()];
        for (int i = 0; i < order.length; i++) order[i] = i;
        java.util.Arrays.sort(order, (a, b) -> java.util.Arrays.compareUnsigned(keys.get(a), keys.get(b)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int32(out, 0x40000000 | order.length);
        for (int i : order) int32(out, (1 << 28) | keys.get(i).length);
        for (int i : order) int32(out, (values.get(i).type << 28) | values.get(i).payload.length);
        for (int i : order) out.write(keys.get(i), 0, keys.get(i).length);
        for (int i : order) out.write(values.get(i).payload, 0, values.get(i).payload.length);
        return new Value(5, out.toByteArray());
      }
      default: throw new InvalidJsonException("unexpected " + t);
    }
  }

  private static void int32(ByteArrayOutputStream out, int v) {
    out.write(v >>> 24); out.write(v >>> 16); out.write(v >>> 8); out.write(v);
  }

  private static void int64(ByteArrayOutputStream out, long v) {
    int32(out, (int) (v >>> 32));
    int32(out, (int) v);
  }
}
