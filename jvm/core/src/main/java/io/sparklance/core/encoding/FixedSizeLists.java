package io.sparklance.core.encoding;

import io.sparklance.proto.Encodings21Protos.CompressiveEncoding;

/**
 * Fixed-size lists of fixed-width items in a mini-block chunk (`fixed_size_list(...flat)`): the buffers are one
 * LSB-first validity bitmap per nested list level that has validity (outermost first), then the items.
 */
final class FixedSizeLists {
  private FixedSizeLists() {}

  /** The nested list layers of a fixed-size list encoding, outermost first, and its flat item width. */
  static final class Layers {
    final java.util.List<int[]> layers = new java.util.ArrayList<>();  // {dimension, hasValidity}
    final int itemBits;
    /** Items that are all one value (`constant`): pylance's full-zip pages of all-null items store no item bytes. */
    final boolean constantItems;
    /** The constant item's bytes, or null for zeros (constant items only). */
    final byte[] constantValue;

    Layers(CompressiveEncoding e, String where) {
      CompressiveEncoding cur = e;
      long perValue = 1;
      while (cur.getCompressionCase() == CompressiveEncoding.CompressionCase.FIXED_SIZE_LIST) {
        long dim = cur.getFixedSizeList().getItemsPerValue();
        if (dim <= 0 || dim > 1 << 20) throw new EncodingException("a fixed-size list of dimension " + dim);
        // Bounded so that items per value times a page's values cannot overflow a long.
        perValue *= dim;
        if (perValue > 1 << 30) throw new EncodingException("nested fixed-size lists of " + perValue + " items per value");
        layers.add(new int[] {(int) dim, cur.getFixedSizeList().getHasValidity() ? 1 : 0});
        cur = cur.getFixedSizeList().getValues();
      }
      if (cur.getCompressionCase() == CompressiveEncoding.CompressionCase.CONSTANT) {
        constantItems = true;
        constantValue = cur.getConstant().hasValue() ? cur.getConstant().getValue().toByteArray() : null;
        itemBits = 0;
        return;
      }
      if (cur.getCompressionCase() != CompressiveEncoding.CompressionCase.FLAT) {
        throw Decoders21.unsupported(e, where + " (fixed-size list items must be flat or constant)");
      }
      constantItems = false;
      constantValue = null;
      itemBits = Decoders21.checkedBits(cur.getFlat().getBitsPerValue());
    }
  }

  static Decoders21.MiniBlockDecoder miniBlock(CompressiveEncoding e, long maxBytes) {
    Layers parsed = new Layers(e, "in a mini-block page");
    if (parsed.constantItems) throw Decoders21.unsupported(e, "in a mini-block page (constant fixed-size list items)");
    java.util.List<int[]> layers = parsed.layers;
    int bits = parsed.itemBits;
    int validityBuffers = 0;
    for (int[] l : layers) validityBuffers += l[1];
    final int nBuffers = validityBuffers + 1;
    return new Decoders21.MiniBlockDecoder() {
      public int numBuffers() { return nBuffers; }

      public DataBlock decode(Slice[] buffers, int n) {
        long items = n;
        for (int[] l : layers) items *= l[0];
        if (items > maxBytes) throw new EncodingException("a fixed-size list chunk of " + items + " items");
        DataBlock block = Decoders21.flat(bits, buffers[nBuffers - 1], (int) items);
        int b = nBuffers - 2;
        long count = items;
        for (int li = layers.size() - 1; li >= 0; li--) {
          int[] l = layers.get(li);
          byte[] validity = null;
          if (l[1] == 1) validity = Decoders21.flat(1, buffers[b--], (int) count).data;
          count /= l[0];
          block = new DataBlock.FixedSizeList(l[0], block, validity, (int) count);
        }
        return block;
      }
    };
  }
}
