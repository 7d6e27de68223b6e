package io.sparklance.core.format

import java.nio.{ByteBuffer, ByteOrder}

import scala.util.Random

import com.google.protobuf.UnknownFieldSet
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.TableProtos

class ManifestFileSuite extends AnyFunSuite {
  import TestManifests._

  private val path = "mem://t/_versions/1.manifest"

  test("encode then decode gives the same manifest, with the tail pylance writes") {
    val m = manifest(1, t0)
    val bytes = ManifestFile.encode(m, None)
    assert(ManifestFile.decode(path, bytes) == m)
    val tail = ByteBuffer.wrap(bytes, bytes.length - 16, 16).order(ByteOrder.LITTLE_ENDIAN)
    assert(tail.getLong == 0L)
    assert(tail.getShort == 0 && tail.getShort == 2)
    assert(new String(bytes.takeRight(4), "US-ASCII") == "LANC")
  }

  test("fields unknown to this reader survive a read/modify/write") {
    val unknown = UnknownFieldSet.newBuilder()
      .addField(23, UnknownFieldSet.Field.newBuilder().addVarint(0).build())
      .addField(999, UnknownFieldSet.Field.newBuilder().addLengthDelimited(com.google.protobuf.ByteString.copyFromUtf8("future")).build())
      .build()
    val m = manifest(1, t0).toBuilder.setUnknownFields(unknown).build()
    val read = ManifestFile.decode(path, ManifestFile.encode(m, None))
    val modified = read.toBuilder.setVersion(2).build()
    val again = ManifestFile.decode(path, ManifestFile.encode(modified, None))
    assert(again.getVersion == 2)
    assert(again.getUnknownFields.getField(999).getLengthDelimitedList.get(0).toStringUtf8 == "future")
    assert(again.getUnknownFields.hasField(23))
  }

  test("an index section is written before the manifest and found through index_section") {
    val section = TableProtos.IndexSection.newBuilder()
      .addIndices(TableProtos.IndexMetadata.newBuilder().setName("idx").setDatasetVersion(1).addFields(0)).build()
    val bytes = ManifestFile.encode(manifest(1, t0), Some(section))
    val m = ManifestFile.decode(path, bytes)
    assert(m.hasIndexSection && m.getIndexSection == 0L)
    assert(ManifestFile.decodeIndexSection(path, bytes, m).contains(section))
  }

  private def corruptMessage(bytes: Array[Byte]): String =
    intercept[CorruptFileException](ManifestFile.decode(path, bytes)).getMessage

  test("a truncated manifest names the file and says what is wrong") {
    val bytes = ManifestFile.encode(manifest(1, t0), None)
    assert(corruptMessage(bytes.take(10)).contains("needs at least 20 bytes"))
    val msg = corruptMessage(bytes.take(bytes.length / 2))
    assert(msg.startsWith(s"Cannot read $path:") && msg.contains("LANC"))
    assert(corruptMessage(Array.emptyByteArray).contains(path))
  }

  test("a tail that points outside the file, or a length past the tail, is corruption") {
    val bytes = ManifestFile.encode(manifest(1, t0), None)
    val badPos = bytes.clone()
    ByteBuffer.wrap(badPos).order(ByteOrder.LITTLE_ENDIAN).putLong(badPos.length - 16, 1L << 40)
    assert(corruptMessage(badPos).contains("manifest position"))
    val badLen = bytes.clone()
    ByteBuffer.wrap(badLen).order(ByteOrder.LITTLE_ENDIAN).putInt(0, Int.MaxValue)
    assert(corruptMessage(badLen).contains("claims 2147483647 bytes"))
  }

  test("garbage in the protobuf is corruption, not a crash") {
    val bytes = ManifestFile.encode(manifest(1, t0), None)
    val garbled = bytes.clone()
    (4 until 12).foreach(i => garbled(i) = 0xFF.toByte)
    assert(corruptMessage(garbled).contains("protobuf is invalid"))
  }

  test("random corruption either decodes or fails with CorruptFileException, never anything else") {
    val original = ManifestFile.encode(manifest(3, t0, (0 until 5).map(fragment(_, 100))), None)
    val rnd = new Random(42)
    (1 to 3000).foreach { _ =>
      val b = original.clone()
      (0 to rnd.nextInt(4)).foreach(_ => b(rnd.nextInt(b.length)) = rnd.nextInt(256).toByte)
      val cut = if (rnd.nextInt(5) == 0) b.take(rnd.nextInt(b.length)) else b
      try ManifestFile.decode(path, cut)
      catch { case _: CorruptFileException => () }
    }
  }
}
