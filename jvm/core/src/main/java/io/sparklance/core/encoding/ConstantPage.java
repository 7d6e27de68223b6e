package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.ConstantLayout;

/**
 * Decodes all-null pages (2.1 `AllNullLayout`) and constant pages (2.2 `ConstantLayout`, the same slot).
 *
 * 2.1: no buffers for a plain nullable item; otherwise buffer 0 holds raw u16 repetition levels and buffer 1 raw
 * u16 definition levels (an empty buffer: no such levels). 2.2: by buffer count, none; the value; repetition and
 * definition levels; or the value, repetition and definition levels. Levels are raw u16 unless the layout names
 * a block encoding for them. The value is `inline_value` (fixed width) or buffer 0
 * (`u32 2 | u32 offsets bytes | u32 data bytes | offsets | data`). Visible items whose definition level is 0 hold
 * the value; other visible items are null.
 */
public final class ConstantPage {
  private ConstantPage() {}

  public static MiniBlockPage.Decoded decode(ConstantLayout layout, Slice[] buffers, long rows, LeafShape shape, long maxBytes) {
    int[] layers = RepDef.layers(layout.getLayersList());
    if (rows > Integer.MAX_VALUE - 16) throw new EncodingException("a page of " + rows + " rows");
    Slice value = null, repBuf = null, defBuf = null;
    switch (buffers.length) {
      case 0: break;
      case 1: value = buffers[0]; break;
      case 2: repBuf = buffers[0]; defBuf = buffers[1]; break;
      case 3: value = buffers[0]; repBuf = buffers[1]; defBuf = buffers[2]; break;
      default: throw new EncodingException("a constant page with " + buffers.length + " buffers");
    }
    short[] rep = levels(repBuf, layout.hasRepCompression() ? layout.getRepCompression() : null, layout.getNumRepValues(), maxBytes);
    short[] def = levels(defBuf, layout.hasDefCompression() ? layout.getDefCompression() : null, layout.getNumDefValues(), maxBytes);
    int numLevels = rep != null ? rep.length : def != null ? def.length : 0;
    if (rep != null && def != null && rep.length != def.length) {
      throw new EncodingException(rep.length + " repetition levels and " + def.length + " definition levels");
    }
    boolean simpleAllNull = layers.length == 1 && layers[0] == RepDef.NULLABLE_ITEM && rep == null && def == null
        && value == null && !layout.hasInlineValue();
    if (simpleAllNull) {
      def = new short[(int) rows];
      java.util.Arrays.fill(def, (short) 1);
      numLevels = (int) rows;
    }
    RepDef.Unraveler u = new RepDef.Unraveler(rep, def, numLevels, layers, 0);
    int visible = u.countItems((int) rows);
    u.numItems = visible;
    DataBlock values;
    if (layout.hasInlineValue()) {
      values = shape.repeat(layout.getInlineValue().toByteArray(), visible, maxBytes);
    } else if (value != null) {
      values = shape.repeat(variableValue(value), visible, maxBytes);
    } else {
      values = shape.zeros(visible);
      if (def == null && numLevels == 0 && visible > 0) {
        throw new EncodingException("a constant page with neither a value nor levels");
      }
    }
    return new MiniBlockPage.Decoded(u, values);
  }

  private static short[] levels(Slice buf, io.sparklance.proto.Encodings21Protos.CompressiveEncoding enc, long count, long maxBytes) {
    if (buf == null || buf.length == 0) return null;
    if (enc == null) {
      if (buf.length % 2 != 0) throw new EncodingException("raw levels of " + buf.length + " bytes");
      short[] out = new short[buf.length / 2];
      for (int i = 0; i < out.length; i++) out[i] = (short) buf.u16(2 * i);
      return out;
    }
    if (count < 0 || count > Integer.MAX_VALUE - 16 || 2 * count > maxBytes) throw new EncodingException(count + " levels");
    short[] out = new short[(int) count];
    MiniBlockPage.copyLevels(Decoders21.block(enc, maxBytes).decode(buf, (int) count), out, 0, (int) count);
    return out;
  }

  private static byte[] variableValue(Slice buf) {
    buf.require(0, 12, "a constant value header");
    long kind = buf.u32(0);
    long offsetBytes = buf.u32(4);
    long dataBytes = buf.u32(8);
    if (kind != 2 || (offsetBytes != 8 && offsetBytes != 16) || 12 + offsetBytes + dataBytes > buf.length) {
      throw new EncodingException("a constant value header (" + kind + ", " + offsetBytes + ", " + dataBytes + ") in " + buf.length + " bytes");
    }
    return buf.slice(12 + (int) offsetBytes, (int) dataBytes).copy();
  }
}
