package io.sparklance.core.encoding

import scala.util.Random
import scala.util.control.NonFatal

import com.github.luben.zstd.Zstd
import net.jpountz.lz4.LZ4Factory
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.Encodings21Protos.CompressionScheme

/** zstd and lz4 in Lance's framing: round trips, the older bare zstd frame, and damaged frames. */
class CodecsSuite extends AnyFunSuite {
  import EncodingTesting._

  private val maxBytes = 16L << 20
  private val sizes = Seq(0, 1, 7, 8, 9, 1000, 65536, 200000)

  /** Compressible input: runs of a few random bytes. */
  private def input(r: Random, n: Int): Array[Byte] = {
    val a = new Array[Byte](n)
    var i = 0
    while (i < n) {
      val end = math.min(n, i + 1 + r.nextInt(20))
      val b = r.nextInt(4).toByte
      while (i < end) { a(i) = b; i += 1 }
    }
    a
  }

  private def zstd(in: Array[Byte], off: Int = 0, len: Int = -1): Array[Byte] = {
    val out = new Growable.Bytes(64)
    Codecs.zstdCompress(in, off, if (len < 0) in.length - off else len, 3, out)
    out.toArray
  }

  private def lz4(in: Array[Byte]): Array[Byte] = {
    val c = LZ4Factory.fastestInstance().fastCompressor()
    val body = c.compress(in)
    val out = new Array[Byte](4 + body.length)
    LittleEndian.putInt(out, 0, in.length)
    System.arraycopy(body, 0, out, 4, body.length)
    out
  }

  test("zstd round trips at many sizes, also from an offset into a larger array") {
    for (seed <- Seeds; n <- sizes) {
      val in = if (seed % 2 == 0) input(new Random(seed), n) else bytes(new Random(seed), n)
      val framed = zstd(in)
      assert(LittleEndian.getLong(framed, 0) == n)
      assert(Codecs.decompress(Codecs.Scheme.ZSTD, framed, 0, framed.length, maxBytes).sameElements(in), s"n $n")
      val padded = Array[Byte](9, 9, 9) ++ framed ++ Array[Byte](7)
      assert(Codecs.decompress(Codecs.Scheme.ZSTD, padded, 3, framed.length, maxBytes).sameElements(in))
    }
  }

  test("a bare zstd frame (older writers) decompresses too") {
    for (n <- sizes) {
      val in = input(new Random(n), n)
      val bare = Zstd.compress(in)
      assert(Codecs.decompress(Codecs.Scheme.ZSTD, bare, 0, bare.length, maxBytes).sameElements(in), s"n $n")
    }
    assert(Codecs.decompress(Codecs.Scheme.ZSTD, new Array[Byte](4), 0, 0, maxBytes).isEmpty)
  }

  test("lz4 round trips at many sizes") {
    for (seed <- Seeds; n <- sizes) {
      val in = if (seed % 2 == 0) input(new Random(seed), n) else bytes(new Random(seed), n)
      val framed = lz4(in)
      assert(Codecs.decompress(Codecs.Scheme.LZ4, framed, 0, framed.length, maxBytes).sameElements(in), s"n $n")
    }
  }

  test("a declared size past the limit is refused before anything is allocated") {
    val framed = zstd(input(new Random(1), 5000))
    assert(damaged("zstd limit")(Codecs.decompress(Codecs.Scheme.ZSTD, framed, 0, framed.length, 4999)).getMessage ==
      "zstd data claims 5000 uncompressed bytes, more than the 4999 allowed")
    val huge = framed.clone(); LittleEndian.putLong(huge, 0, Long.MaxValue)
    damaged("zstd huge")(Codecs.decompress(Codecs.Scheme.ZSTD, huge, 0, huge.length, Long.MaxValue))
    val negative = framed.clone(); LittleEndian.putLong(negative, 0, -5L)
    damaged("zstd negative")(Codecs.decompress(Codecs.Scheme.ZSTD, negative, 0, negative.length, maxBytes))
    val l = lz4(input(new Random(1), 5000))
    assert(damaged("lz4 limit")(Codecs.decompress(Codecs.Scheme.LZ4, l, 0, l.length, 100)).getMessage ==
      "lz4 data claims 5000 uncompressed bytes, more than the 100 allowed")
    val lh = l.clone(); LittleEndian.putInt(lh, 0, -1)
    damaged("lz4 4 GiB")(Codecs.decompress(Codecs.Scheme.LZ4, lh, 0, lh.length, Long.MaxValue))
    val bomb = Zstd.compress(new Array[Byte](1 << 20))
    assert(damaged("bare frame bomb")(Codecs.decompress(Codecs.Scheme.ZSTD, bomb, 0, bomb.length, 1000)).getMessage ==
      "zstd data inflates past 1000 bytes")
  }

  test("damaged zstd and lz4 frames are EncodingExceptions, not crashes") {
    val in = input(new Random(2), 20000)
    val z = zstd(in)
    assert(damaged("zstd size off by one")({
      val c = z.clone(); LittleEndian.putLong(c, 0, in.length + 1L); Codecs.decompress(Codecs.Scheme.ZSTD, c, 0, c.length, maxBytes)
    }).getMessage == "zstd data holds 20000 bytes, its header says 20001")
    damaged("zstd truncated")(Codecs.decompress(Codecs.Scheme.ZSTD, z, 0, z.length - 3, maxBytes))
    damaged("zstd garbage")(Codecs.decompress(Codecs.Scheme.ZSTD, Array.fill[Byte](40)(0x5A), 0, 40, maxBytes))
    val l = lz4(in)
    assert(damaged("lz4 header only")(Codecs.decompress(Codecs.Scheme.LZ4, l, 0, 3, maxBytes)).getMessage ==
      "lz4 data of 3 bytes has no length header")
    damaged("lz4 truncated")(Codecs.decompress(Codecs.Scheme.LZ4, l, 0, l.length - 3, maxBytes))
    damaged("lz4 size off by one")({
      val c = l.clone(); LittleEndian.putInt(c, 0, in.length - 1); Codecs.decompress(Codecs.Scheme.LZ4, c, 0, c.length, maxBytes)
    })
    for (seed <- Seeds) {
      val r = new Random(seed)
      for (m <- mutants(z, r, flips = 20)) survives("zstd mutant")(Codecs.decompress(Codecs.Scheme.ZSTD, m, 0, m.length, maxBytes))
      for (m <- mutants(l, r, flips = 20)) survives("lz4 mutant")(Codecs.decompress(Codecs.Scheme.LZ4, m, 0, m.length, maxBytes))
    }
    // The thread's reused zstd context still decodes good data after all those failures.
    assert(Codecs.decompress(Codecs.Scheme.ZSTD, z, 0, z.length, maxBytes).sameElements(in))
  }

  test("zstd from several threads at once, each with its own context") {
    val inputs = (0 until 4).map(t => input(new Random(t), 50000 + t))
    val failures = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val threads = inputs.map { in =>
      val t = new Thread(() =>
        try for (_ <- 0 until 50) {
          val z = zstd(in)
          if (!Codecs.decompress(Codecs.Scheme.ZSTD, z, 0, z.length, maxBytes).sameElements(in)) failures.add(s"${in.length} bytes differ")
        } catch { case NonFatal(e) => failures.add(e.toString) })
      t.start()
      t
    }
    threads.foreach(_.join())
    assert(failures.isEmpty, failures)
  }

  test("general compression around flat values, in a mini-block chunk and as a block") {
    for (scheme <- Seq(CompressionScheme.COMPRESSION_ALGORITHM_ZSTD, CompressionScheme.COMPRESSION_ALGORITHM_LZ4); n <- Seq(0, 1, 1025)) {
      val vals = values(new Random(n), n, 4, 20)
      val framed = if (scheme == CompressionScheme.COMPRESSION_ALGORITHM_ZSTD) zstd(vals) else lz4(vals)
      val mb = Decoders21.miniBlock(general(scheme, flat(32)), maxBytes).decode(Array(slice(framed)), n)
      assert(fixedBytes(mb) == vals.toSeq)
      val block = Decoders21.block(general(scheme, flat(32)), maxBytes).decode(slice(framed), n)
      assert(fixedBytes(block) == vals.toSeq)
      val inFlat = Decoders21.block(flatCompressed(32, scheme), maxBytes).decode(slice(framed), n)
      assert(fixedBytes(inFlat) == vals.toSeq)
      if (n > 0) damaged("too few values inside")(Decoders21.block(general(scheme, flat(32)), maxBytes).decode(slice(framed), n + 1))
    }
    damaged("unknown scheme")(Decoders21.block(general(CompressionScheme.COMPRESSION_ALGORITHM_UNSPECIFIED, flat(8)), maxBytes)
      .decode(slice(new Array[Byte](8)), 1))
  }
}
