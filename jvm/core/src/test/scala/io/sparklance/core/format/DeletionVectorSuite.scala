package io.sparklance.core.format

import java.io.ByteArrayOutputStream
import java.nio.channels.Channels

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{UInt4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.compression.CompressionUtil
import org.apache.arrow.vector.ipc.ArrowFileWriter
import org.apache.arrow.vector.ipc.message.IpcOption
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.TableProtos.DeletionFile.DeletionFileType

class DeletionVectorSuite extends AnyFunSuite {

  private val arrow = DeletionFileType.ARROW_ARRAY
  private val bitmap = DeletionFileType.BITMAP

  test("Arrow IPC deletion files round trip, whatever the order of the offsets") {
    val dv = DeletionVector.of(11111, 3, 88888, 7)
    val read = DeletionVector.decode("x.arrow", arrow, DeletionVector.encodeArrow(dv), 100000)
    assert(read == dv && read.toSortedArray.toSeq == Seq(3, 7, 11111, 88888))
    assert(read.contains(7) && !read.contains(8) && read.cardinality == 4)
  }

  test("Roaring deletion files round trip, with array, bitmap and run containers") {
    val b = new RoaringBitmap()
    b.add(0L, 70000L)            // runs
    (100000 until 200000 by 3).foreach(b.add)   // bitmap containers
    b.add(300001); b.add(300007) // array container
    val dv = DeletionVector.fromBitmap(b)
    val read = DeletionVector.decode("x.bin", bitmap, DeletionVector.encodeRoaring(dv), 400000)
    assert(read == dv && read.cardinality == b.getLongCardinality)
  }

  test("offsets at or past the fragment's row count are corruption") {
    val e = intercept[CorruptFileException](
      DeletionVector.decode("_deletions/0-1-2.arrow", arrow, DeletionVector.encodeArrow(DeletionVector.of(5, 10)), 10))
    assert(e.getMessage.contains("_deletions/0-1-2.arrow") && e.getMessage.contains("row offset 10") &&
      e.getMessage.contains("only 10 rows"))
  }

  test("damaged Roaring files are refused before anything large is allocated") {
    val good = DeletionVector.encodeRoaring(DeletionVector.of((0 until 5000).map(_ * 7): _*))
    def msg(bytes: Array[Byte]) = intercept[CorruptFileException](DeletionVector.decode("d.bin", bitmap, bytes, 1L << 31)).getMessage
    assert(msg(Array[Byte](1, 2)).contains("truncated"))
    assert(msg(good.take(good.length - 3)).contains("truncated"))
    assert(msg(Array[Byte](0x3a, 0x30, 0, 0, 0xff.toByte, 0xff.toByte, 0xff.toByte, 0x7f)).contains("claims"))
    assert(msg(Array[Byte](1, 2, 3, 4, 5, 6, 7, 8)).contains("Roaring cookie"))
  }

  test("damaged Arrow files are corruption") {
    val good = DeletionVector.encodeArrow(DeletionVector.of(1, 2, 3))
    val e = intercept[CorruptFileException](DeletionVector.decode("d.arrow", arrow, good.take(good.length / 2), 10))
    assert(e.getMessage.contains("d.arrow") && e.getMessage.contains("not a valid Arrow IPC file"))
  }

  /** An Arrow deletion file of `offsets` whose buffers Arrow compresses with `codec`. */
  private def compressedArrow(codec: CompressionUtil.CodecType, offsets: Seq[Int]): Array[Byte] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(DeletionVector.ArrowSchema, allocator)
      try {
        val v = root.getVector(0).asInstanceOf[UInt4Vector]
        v.allocateNew(offsets.size)
        offsets.zipWithIndex.foreach { case (o, i) => v.set(i, o) }
        v.setValueCount(offsets.size)
        root.setRowCount(offsets.size)
        val out = new ByteArrayOutputStream()
        val writer = new ArrowFileWriter(root, null, Channels.newChannel(out), java.util.Collections.emptyMap[String, String](),
          IpcOption.DEFAULT, ArrowIpcCodecs.INSTANCE, codec)
        writer.start(); writer.writeBatch(); writer.end(); writer.close()
        out.toByteArray
      } finally root.close()
    } finally allocator.close()
  }

  test("Arrow deletion files with LZ4_FRAME or ZSTD buffers are read; a damaged LZ4 frame is corruption") {
    val offsets = (0 until 3000).map(_ * 5)
    Seq(CompressionUtil.CodecType.LZ4_FRAME, CompressionUtil.CodecType.ZSTD).foreach { codec =>
      val bytes = compressedArrow(codec, offsets)
      assert(DeletionVector.decode("c.arrow", arrow, bytes, 20000).toSortedArray.toSeq == offsets, codec)
    }
    val lz4 = compressedArrow(CompressionUtil.CodecType.LZ4_FRAME, offsets)
    // The LZ4 frame magic (04 22 4D 18) of the values buffer: its block size byte made invalid.
    val frame = lz4.indices.filter(i => lz4(i) == 0x04 && lz4(i + 1) == 0x22 && lz4(i + 2) == 0x4D && lz4(i + 3) == 0x18).last
    val damaged = lz4.clone()
    damaged(frame + 5) = 0x0F
    val e = intercept[CorruptFileException](DeletionVector.decode("c.arrow", arrow, damaged, 20000))
    assert(e.getMessage.contains("c.arrow") && e.getMessage.contains("not valid LZ4 frame data"), e.getMessage)
  }

  test("random corruption of either kind decodes or fails with CorruptFileException only") {
    val rnd = new Random(7)
    val files = Seq(
      arrow -> DeletionVector.encodeArrow(DeletionVector.of((0 until 300).map(_ * 13): _*)),
      bitmap -> DeletionVector.encodeRoaring(DeletionVector.of((0 until 6000).map(_ * 3): _*)))
    files.foreach { case (kind, original) =>
      (1 to 1500).foreach { _ =>
        val b = original.clone()
        (0 to rnd.nextInt(3)).foreach(_ => b(rnd.nextInt(b.length)) = rnd.nextInt(256).toByte)
        val cut = if (rnd.nextInt(4) == 0) b.take(rnd.nextInt(b.length)) else b
        try DeletionVector.decode("d", kind, cut, 1L << 20)
        catch { case _: CorruptFileException => () }
      }
    }
  }
}
