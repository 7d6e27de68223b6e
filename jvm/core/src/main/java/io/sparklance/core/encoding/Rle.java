package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;

/**
 * Run-length encoded values in a whole buffer (2.2 writes these for some repetition and definition levels):
 * `u64 values_bytes | run values (values_bytes, little endian) | u8 run lengths, one per run`.
 */
final class Rle {
  private Rle() {}

  /**
   * The number of values an rle block holds (the sum of its run lengths), or -1 if its layout is not the one
   * `block` reads; `block` reports what is wrong with such a block.
   */
  static long inferCount(CompressiveEncoding e, Slice buf) {
    CompressiveEncoding values = e.getRle().getValues();
    if (values.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT || buf.length < 8) return -1;
    long vb = values.getFlat().getBitsPerValue() / 8;
    long valuesBytes = buf.i64(0);
    if (vb <= 0 || valuesBytes < 0 || valuesBytes % vb != 0 || valuesBytes > buf.length - 8) return -1;
    int runs = (int) (valuesBytes / vb);
    if (buf.length - 8 - valuesBytes < runs) return -1;
    long total = 0;
    for (int i = 0; i < runs; i++) total += buf.u8(8 + (int) valuesBytes + i);
    return total;
  }

  static Decoders21.BlockDecoder block(CompressiveEncoding e, long maxBytes) {
    CompressiveEncoding values = e.getRle().getValues();
    if (values.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) throw Decoders21.unsupported(e, "with non-flat values");
    int bits = Decoders21.checkedBits(values.getFlat().getBitsPerValue());
    int vb = bits / 8;
    if (vb == 0) throw Decoders21.unsupported(e, "with " + bits + "-bit values");
    return (buf, n) -> {
      buf.require(0, 8, "an rle block header");
      long valuesBytes = buf.i64(0);
      if (valuesBytes < 0 || valuesBytes % vb != 0 || valuesBytes > buf.length - 8) {
        throw new EncodingException("an rle block claims " + valuesBytes + " bytes of run values in " + buf.length);
      }
      int runs = (int) (valuesBytes / vb);
      Slice runValues = buf.slice(8, (int) valuesBytes);
      Slice lengths = buf.slice(8 + (int) valuesBytes, buf.length - 8 - (int) valuesBytes);
      if (lengths.length < runs) throw new EncodingException("an rle block with " + runs + " runs but " + lengths.length + " lengths");
      return Decoders21.rle(bits, runValues, lengths.slice(0, runs), n);
    };
  }
}
