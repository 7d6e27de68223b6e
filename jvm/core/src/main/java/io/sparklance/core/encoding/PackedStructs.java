package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;

/**
 * Packed structs of fixed-width fields (`packed_struct[w1, w2, ...](flat)`): each value is the concatenation of
 * its fields' bytes, row after row; decoding splits them back into one block per field.
 */
final class PackedStructs {
  private PackedStructs() {}

  static Decoders21.MiniBlockDecoder miniBlock(CompressiveEncoding e, long maxBytes) {
    java.util.List<Long> widthsList = e.getPackedStruct().getBitsPerValueList();
    int[] widths = new int[widthsList.size()];
    int rowBytes = 0;
    for (int i = 0; i < widths.length; i++) {
      widths[i] = Decoders21.checkedBits(widthsList.get(i));
      if (widths[i] % 8 != 0) throw Decoders21.unsupported(e, "with a " + widths[i] + "-bit field");
      rowBytes += widths[i] / 8;
    }
    Decoders21.MiniBlockDecoder inner = Decoders21.miniBlock(e.getPackedStruct().getValues(), maxBytes);
    final int rb = rowBytes;
    return new Decoders21.MiniBlockDecoder() {
      public int numBuffers() { return inner.numBuffers(); }

      public DataBlock decode(Slice[] buffers, int n) {
        DataBlock packed = inner.decode(buffers, n);
        if (!(packed instanceof DataBlock.FixedWidth) || ((DataBlock.FixedWidth) packed).bitsPerValue != rb * 8) {
          throw new EncodingException("a packed struct of " + rb + "-byte rows over " + packed.getClass().getSimpleName());
        }
        byte[] src = ((DataBlock.FixedWidth) packed).data;
        DataBlock[] children = new DataBlock[widths.length];
        int fieldOff = 0;
        for (int f = 0; f < widths.length; f++) {
          int fb = widths[f] / 8;
          byte[] out = new byte[n * fb];
          for (int i = 0; i < n; i++) System.arraycopy(src, i * rb + fieldOff, out, i * fb, fb);
          children[f] = new DataBlock.FixedWidth(widths[f], out, n);
          fieldOff += fb;
        }
        return new DataBlock.Struct(children, n);
      }
    };
  }
}
