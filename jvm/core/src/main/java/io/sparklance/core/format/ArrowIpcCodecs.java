package io.sparklance.core.format;

import com.github.luben.zstd.Zstd;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.lz4.LZ4FrameOutputStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.AbstractCompressionCodec;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * The buffer codecs of Arrow IPC files, on the zstd and lz4 libraries every Spark line ships: Spark 3's Arrow has no
 * arrow-compression module, so Arrow's own factory cannot read them there. pylance compresses the buffers of `.arrow`
 * deletion files with zstd; it reads LZ4_FRAME buffers too (arrow-rs decodes both codecs of the Arrow format), so
 * both are read here.
 */
public final class ArrowIpcCodecs implements CompressionCodec.Factory {
  public static final ArrowIpcCodecs INSTANCE = new ArrowIpcCodecs();

  private ArrowIpcCodecs() {}

  @Override
  public CompressionCodec createCodec(CompressionUtil.CodecType type) {
    switch (type) {
      case NO_COMPRESSION: return NoCompressionCodec.INSTANCE;
      case ZSTD: return new ZstdCodec();
      case LZ4_FRAME: return new Lz4FrameCodec();
      default: throw new IllegalArgumentException("Arrow IPC buffers compressed with " + type + " are not supported");
    }
  }

  /** Arrow 15 and later ask with a compression level; reading needs none. */
  public CompressionCodec createCodec(CompressionUtil.CodecType type, int level) {
    return createCodec(type);
  }

  /**
   * A codec over byte arrays: each buffer is its u64 uncompressed length, then the compressed bytes. The allocator
   * bounds the length a damaged file declares before any array is made for it.
   */
  private abstract static class ByteArrayCodec extends AbstractCompressionCodec {
    protected abstract byte[] compress(byte[] plain);

    /** Fills `plain` (its length the declared one) from `packed`, or throws if they do not hold exactly that. */
    protected abstract void decompress(byte[] packed, byte[] plain);

    @Override
    protected ArrowBuf doCompress(BufferAllocator allocator, ArrowBuf uncompressed) {
      byte[] in = new byte[(int) uncompressed.writerIndex()];
      uncompressed.getBytes(0, in);
      byte[] packed = compress(in);
      ArrowBuf out = allocator.buffer(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + packed.length);
      out.setBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, packed);
      out.writerIndex(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH + packed.length);
      return out;
    }

    @Override
    protected ArrowBuf doDecompress(BufferAllocator allocator, ArrowBuf compressed) {
      long length = readUncompressedLength(compressed);
      ArrowBuf out = allocator.buffer(length);
      try {
        byte[] in = new byte[(int) (compressed.writerIndex() - CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH)];
        compressed.getBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, in);
        byte[] plain = new byte[(int) length];
        decompress(in, plain);
        out.setBytes(0, plain);
        out.writerIndex(length);
        return out;
      } catch (RuntimeException e) {
        out.close();
        throw e;
      }
    }
  }

  private static final class ZstdCodec extends ByteArrayCodec {
    @Override
    protected byte[] compress(byte[] plain) {
      return Zstd.compress(plain, 3);
    }

    @Override
    protected void decompress(byte[] packed, byte[] plain) {
      long n = Zstd.decompress(plain, packed);
      if (Zstd.isError(n) || n != plain.length) {
        throw new IllegalArgumentException("a zstd buffer holds " + (Zstd.isError(n) ? "no valid frame" : n + " bytes")
            + ", not the " + plain.length + " its header declares");
      }
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return CompressionUtil.CodecType.ZSTD;
    }
  }

  /** LZ4_FRAME: each buffer is its u64 uncompressed length, then LZ4 frames (lz4 frame format 1.6) holding it. */
  private static final class Lz4FrameCodec extends ByteArrayCodec {
    @Override
    protected byte[] compress(byte[] plain) {
      ByteArrayOutputStream packed = new ByteArrayOutputStream();
      try (LZ4FrameOutputStream frame = new LZ4FrameOutputStream(packed)) {
        frame.write(plain);
      } catch (IOException e) {
        throw new IllegalStateException("LZ4 frame compression failed: " + e.getMessage(), e);
      }
      return packed.toByteArray();
    }

    /** The frames are read no further than one byte past the declared length. */
    @Override
    protected void decompress(byte[] packed, byte[] plain) {
      int n = 0;
      boolean more;
      try (LZ4FrameInputStream frames = new LZ4FrameInputStream(new ByteArrayInputStream(packed))) {
        while (n < plain.length) {
          int r = frames.read(plain, n, plain.length - n);
          if (r < 0) break;
          n += r;
        }
        more = n == plain.length && frames.read() >= 0;
      } catch (IOException | RuntimeException e) {  // lz4-java reports bad headers with either
        throw new IllegalArgumentException("an LZ4 frame buffer is not valid LZ4 frame data (" + e.getMessage() + ")", e);
      }
      if (n != plain.length || more) {
        throw new IllegalArgumentException("an LZ4 frame buffer holds " + (more ? "more than " : "") + n
            + " bytes, not the " + plain.length + " its header declares");
      }
    }

    @Override
    public CompressionUtil.CodecType getCodecType() {
      return CompressionUtil.CodecType.LZ4_FRAME;
    }
  }
}
