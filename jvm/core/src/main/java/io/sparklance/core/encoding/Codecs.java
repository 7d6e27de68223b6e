package io.sparklance.core.encoding;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdInputStream;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * General-purpose compression of whole buffers, as Lance frames it.
 *
 * zstd: a u64 little-endian uncompressed length, then a zstd frame (older writers wrote a bare frame, recognised by
 * the zstd magic number). lz4: a u32 little-endian uncompressed length, then one raw LZ4 block.
 * The declared length is checked against `maxBytes` before anything is allocated.
 */
public final class Codecs {
  private Codecs() {}

  private static final int ZSTD_MAGIC = 0xFD2FB528;
  private static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();
  private static final LZ4Compressor LZ4_COMPRESSOR = LZ4Factory.fastestInstance().fastCompressor();

  // One zstd context per thread, reused: creating one costs about 150 us, decompressing a 300-byte value about
  // 2 us, and full-zip pages compress and decompress their values one by one. A context is never shared between
  // threads; it lives as long as its thread.
  private static final ThreadLocal<ZstdDecompressCtx> DECOMPRESS = ThreadLocal.withInitial(ZstdDecompressCtx::new);
  private static final ThreadLocal<ZstdCompressCtx> COMPRESS = ThreadLocal.withInitial(ZstdCompressCtx::new);

  public enum Scheme { ZSTD, LZ4 }

  public static byte[] decompress(Scheme scheme, byte[] in, int off, int len, long maxBytes) {
    switch (scheme) {
      case ZSTD: return zstd(in, off, len, maxBytes);
      case LZ4: return lz4(in, off, len, maxBytes);
      default: throw new IllegalArgumentException("scheme " + scheme);
    }
  }

  private static byte[] zstd(byte[] in, int off, int len, long maxBytes) {
    if (len == 0) return new byte[0];
    boolean bareFrame = len < 8 || (LittleEndian.getInt(in, off) == ZSTD_MAGIC && (in[off + 4] & 0x10) == 0);
    if (bareFrame) {
      try (ZstdInputStream z = new ZstdInputStream(new ByteArrayInputStream(in, off, len))) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        int n;
        while ((n = z.read(buf)) > 0) {
          out.write(buf, 0, n);
          if (out.size() > maxBytes) throw new EncodingException("zstd data inflates past " + maxBytes + " bytes");
        }
        return out.toByteArray();
      } catch (IOException e) {
        throw new EncodingException("invalid zstd data: " + e.getMessage());
      }
    }
    long size = LittleEndian.getLong(in, off);
    checkSize(size, maxBytes, "zstd");
    byte[] out = new byte[(int) size];
    int n;
    try {
      n = DECOMPRESS.get().decompressByteArray(out, 0, out.length, in, off + 8, len - 8);
    } catch (RuntimeException e) {
      throw new EncodingException("invalid zstd data: " + e.getMessage());
    }
    if (n != size) throw new EncodingException("zstd data holds " + n + " bytes, its header says " + size);
    return out;
  }

  private static byte[] lz4(byte[] in, int off, int len, long maxBytes) {
    if (len < 4) throw new EncodingException("lz4 data of " + len + " bytes has no length header");
    long size = LittleEndian.getUnsignedInt(in, off);
    checkSize(size, maxBytes, "lz4");
    byte[] out = new byte[(int) size];
    int n;
    try {
      n = LZ4.decompress(in, off + 4, len - 4, out, 0, out.length);
    } catch (RuntimeException e) {
      throw new EncodingException("invalid lz4 data: " + e.getMessage());
    }
    if (n != size) throw new EncodingException("lz4 data holds " + n + " bytes, its header says " + size);
    return out;
  }

  /** Compresses bytes [off, off + len) into `out` in Lance's zstd framing (u64 uncompressed length, zstd frame). */
  public static void zstdCompress(byte[] in, int off, int len, int level, Growable.Bytes out) {
    int bound = (int) Zstd.compressBound(len);
    out.ensure(8 + bound);
    out.u64(len);
    int n;
    try {
      n = COMPRESS.get().setLevel(level).compressByteArray(out.data, out.size, bound, in, off, len);
    } catch (RuntimeException e) {
      throw new IllegalStateException("zstd compression failed: " + e.getMessage(), e);
    }
    out.size += n;
  }

  /** Compresses bytes [off, off + len) into `out` in Lance's lz4 framing (u32 uncompressed length, one raw LZ4 block). */
  public static void lz4Compress(byte[] in, int off, int len, Growable.Bytes out) {
    int bound = LZ4_COMPRESSOR.maxCompressedLength(len);
    out.ensure(4 + bound);
    out.u32(len);
    out.size += LZ4_COMPRESSOR.compress(in, off, len, out.data, out.size, bound);
  }

  private static void checkSize(long size, long maxBytes, String what) {
    if (size < 0 || size > maxBytes || size > Integer.MAX_VALUE - 16) {
      throw new EncodingException(what + " data claims " + size + " uncompressed bytes, more than the " + maxBytes + " allowed");
    }
  }
}
