package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;

/** Run-length encoded levels in a whole buffer (2.2 writes these for some repetition and definition levels). */
final class Rle {
  private Rle() {}

  static Encodings21.BlockDecoder block(CompressiveEncoding e, long maxBytes) {
    throw Encodings21.unsupported(e, "as a block (levels)");
  }
}
