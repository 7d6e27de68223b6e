package io.sparklance.core.format;

import com.github.luben.zstd.Zstd;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.AbstractCompressionCodec;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;

/**
 * The buffer codecs of Arrow IPC files (pylance compresses the buffers of `.arrow` deletion files with zstd), on the
 * zstd library every Spark line ships: Spark 3's Arrow has no arrow-compression module, so Arrow's own factory
 * cannot read them there. LZ4 frames are refused as unsupported; no Lance writer uses them.
 */
public final class ArrowIpcCodecs implements CompressionCodec.Factory {
  public static final ArrowIpcCodecs INSTANCE = new ArrowIpcCodecs();

  private ArrowIpcCodecs() {}

  @Override
  public CompressionCodec createCodec(CompressionUtil.CodecType type) {
    switch (type) {
      case NO_COMPRESSION: return NoCompressionCodec.INSTANCE;
      case ZSTD: return new ZstdCodec();
      default: throw new IllegalArgumentException("Arrow IPC buffers compressed with " + type + " are not supported");
    }
  }

  /** Arrow 15 and later ask with a compression level; reading needs none. */
  public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
    return createCodec(type);
  }

  private static final class ZstdCodec extends AbstractCompressionCodec {
    @Override
    protected ArrowBuf doCompress(BufferAllocator allocator, ArrowBuf uncompressed) {
      byte[] in = new byte[(int) uncompressed.writerIndex()];
      uncompressed.getBytes(0, in);
      byte[] packed = Zstd.compress(in, 3);
      ArrowBuf out = allocator.buffer(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + packed.length);
      out.setBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, packed);
      out.writerIndex(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + packed.length);
      return out;
    }

    @Override
    protected ArrowBuf doDecompress(BufferAllocator allocator, ArrowBuf compressed) {
      long length = readUncompressedLength(compressed);
      // The allocator bounds the length a damaged file declares, before any array is made for it.
      ArrowBuf out = allocator.buffer(length);
      try {
        byte[] in = new byte[(int) (compressed.writerIndex() - CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH)];
        compressed.getBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, in);
        byte[] plain = new byte[(int) length];
        long n = Zstd.decompress(plain, in);
        if (Zstd.isError(n) || n != length) {
          throw new IllegalArgumentException("a zstd buffer holds " + (Zstd.isError(n) ? "no valid frame" : n + " bytes")
              + ", not the " + length + " its header declares");
        }
        out.setBytes(0, plain);
        out.writerIndex(length);
        return out;
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return CompressionUtil.CodecType.ZSTD;
    }
  }
}
