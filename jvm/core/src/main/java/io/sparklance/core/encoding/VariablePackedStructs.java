package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;
import io.sparklance.proto.Encodings21Protos.VariablePackedStruct;

/**
 * Variable packed structs (2.2, full-zip): each row's bytes are its fields in order, a fixed-width field as its
 * bytes and a variable-width field as a little-endian length of `bits_per_length` bits followed by its bytes
 * (decoded with that field's per-value encoding).
 */
final class VariablePackedStructs {
  private VariablePackedStructs() {}

  static FullZipPage.PerValue perValue(CompressiveEncoding e, long maxBytes) {
    java.util.List<VariablePackedStruct.FieldEncoding> fields = e.getVariablePackedStruct().getFieldsList();
    int k = fields.size();
    boolean[] isFixed = new boolean[k];
    int[] widths = new int[k];
    FullZipPage.PerValue[] decoders = new FullZipPage.PerValue[k];
    for (int f = 0; f < k; f++) {
      VariablePackedStruct.FieldEncoding fe = fields.get(f);
      if (fe.getLayoutCase() == VariablePackedStruct.FieldEncoding.LayoutCase.BITS_PER_VALUE) {
        isFixed[f] = true;
        widths[f] = Decoders21.checkedBits(fe.getBitsPerValue()) / 8;
        decoders[f] = FullZipPage.perValue(fe.getValue(), true, maxBytes);
      } else {
        widths[f] = Decoders21.checkedBits(fe.getBitsPerLength()) / 8;
        if (widths[f] != 4 && widths[f] != 8) throw Decoders21.unsupported(e, "with " + widths[f] * 8 + "-bit lengths");
        decoders[f] = FullZipPage.perValue(fe.getValue(), false, maxBytes);
      }
    }
    return (data, s, t, n, shape) -> {
      int[][] fs = new int[k][n];
      int[][] ft = new int[k][n];
      for (int i = 0; i < n; i++) {
        int p = s[i];
        if (t[i] == s[i]) {  // a null row carries no bytes
          for (int f = 0; f < k; f++) { fs[f][i] = p; ft[f][i] = p + (isFixed[f] ? -1 : 0); }
          continue;
        }
        for (int f = 0; f < k; f++) {
          if (isFixed[f]) {
            data.require(p, widths[f], "a packed struct field");
            fs[f][i] = p; p += widths[f]; ft[f][i] = p;
          } else {
            data.require(p, widths[f], "a packed struct field length");
            long len = widths[f] == 4 ? data.u32(p) : data.i64(p);
            p += widths[f];
            data.require(p, len, "a packed struct field");
            fs[f][i] = p; p += (int) len; ft[f][i] = p;
          }
        }
        if (p != t[i]) throw new EncodingException("a packed struct row of " + (t[i] - s[i]) + " bytes has " + (p - s[i]) + " bytes of fields");
      }
      DataBlock[] children = new DataBlock[k];
      for (int f = 0; f < k; f++) {
        if (isFixed[f]) {
          // Null rows: give them zero bytes of the field's width.
          boolean anyNull = false;
          for (int i = 0; i < n; i++) anyNull |= ft[f][i] < fs[f][i];
          if (anyNull) {
            byte[] out = new byte[n * widths[f]];
            for (int i = 0; i < n; i++) if (ft[f][i] >= fs[f][i]) System.arraycopy(data.array, data.offset + fs[f][i], out, i * widths[f], widths[f]);
            children[f] = new DataBlock.FixedWidth(widths[f] * 8, out, n);
            continue;
          }
        }
        children[f] = decoders[f].decode(data, fs[f], ft[f], n, shape);
      }
      return new DataBlock.Struct(children, n);
    };
  }
}
