package io.sparklance.core.file

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import com.google.protobuf.{CodedInputStream, InvalidProtocolBufferException}

import io.sparklance.core.{CorruptFileException, FileVersion}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InputFile
import io.sparklance.proto.{File2Protos, FileProtos}

/**
 * The metadata of a Lance v2 data file: version, row count, schema and the pages of every column.
 *
 * {{{
 *   [data pages and column buffers][column metadata][column metadata offset table][global buffer offset table]
 *   [u64 column metadata start][u64 cmo table start][u64 gbo table start][u32 global buffers][u32 columns]
 *   [u16 major][u16 minor]["LANC"]                                   40-byte footer, little endian
 * }}}
 * Offset tables hold (u64 position, u64 size) per entry. Global buffer 0 is a `lance.file.FileDescriptor`.
 */
final case class FileMetadata(
    path: String,
    fileSize: Long,
    version: FileVersion,
    numRows: Long,
    schema: LanceSchema,
    columns: IndexedSeq[File2Protos.ColumnMetadata],
    globalBuffers: IndexedSeq[(Long, Long)]) {

  /** The bytes of column `column`'s page buffers and column buffers: what reading all of the column fetches. */
  def columnBytes(column: Int): Long = {
    val cm = columns(column)
    var bytes = 0L
    var p = 0
    while (p < cm.getPagesCount) {
      val page = cm.getPages(p)
      var b = 0
      while (b < page.getBufferSizesCount) { bytes += page.getBufferSizes(b); b += 1 }
      p += 1
    }
    var b = 0
    while (b < cm.getBufferSizesCount) { bytes += cm.getBufferSizes(b); b += 1 }
    bytes
  }
}

object FileMetadata {
  val FooterSize = 40
  val LegacyTailSize = 16
  private val Magic = "LANC".getBytes("US-ASCII")
  /** How much of the file's end the first read fetches; the metadata of most files fits. */
  private val InitialTailRead = 64 * 1024

  def read(in: InputFile): FileMetadata = {
    val path = in.path
    val size = in.length
    if (size < LegacyTailSize) throw new CorruptFileException(path, s"it is $size bytes long, too short for a Lance file")
    val tailLen = math.min(size, InitialTailRead.toLong).toInt
    val tailStart = size - tailLen
    val tail = in.read(tailStart, tailLen)
    if (!(0 until 4).forall(i => tail.get(tailLen - 4 + i) == Magic(i))) {
      throw new CorruptFileException(path, "it does not end with the magic bytes \"LANC\" (truncated, or not a Lance " +
        "data file)")
    }
    val major = tail.getShort(tailLen - 8) & 0xFFFF
    val minor = tail.getShort(tailLen - 6) & 0xFFFF
    val version = FileVersion.fromFooter(path, major, minor)
    if (size < FooterSize) throw new CorruptFileException(path, s"it is $size bytes long, shorter than its footer")
    val f = tailLen - FooterSize
    val columnMetaStart = tail.getLong(f)
    val cmoStart = tail.getLong(f + 8)
    val gboStart = tail.getLong(f + 16)
    val numGlobal = tail.getInt(f + 24).toLong & 0xFFFFFFFFL
    val numColumns = tail.getInt(f + 28).toLong & 0xFFFFFFFFL
    val footerPos = size - FooterSize

    def check(cond: Boolean, what: => String): Unit = if (!cond) throw new CorruptFileException(path, what)
    check(columnMetaStart >= 0 && columnMetaStart <= cmoStart, s"its column metadata starts at $columnMetaStart, after " +
      s"the column metadata offset table at $cmoStart")
    check(gboStart >= 0 && cmoStart <= gboStart && numColumns <= (gboStart - cmoStart) / 16,
      s"its $numColumns column offset entries at $cmoStart overlap the global buffer table at $gboStart")
    check(gboStart <= footerPos && numGlobal <= (footerPos - gboStart) / 16,
      s"its $numGlobal global buffer entries at $gboStart run into the footer")
    check(numGlobal >= 1, "it has no global buffers (the schema lives in global buffer 0)")

    // Everything from the column metadata to the footer, read once (usually already in the tail).
    val metaStart = math.min(columnMetaStart, cmoStart)
    val meta: ByteBuffer =
      if (metaStart >= tailStart) tail.duplicate().position((metaStart - tailStart).toInt).slice().order(ByteOrder.LITTLE_ENDIAN)
      else {
        val len = footerPos - metaStart
        check(len <= Int.MaxValue, s"its metadata is $len bytes long")
        in.read(metaStart, len.toInt)
      }
    def entry(tableStart: Long, i: Long): (Long, Long) = {
      val at = (tableStart - metaStart + 16 * i).toInt
      (meta.getLong(at), meta.getLong(at + 8))
    }
    def bytesAt(pos: Long, len: Long, what: String): ByteBuffer = {
      check(pos >= 0 && len >= 0 && pos <= size && len <= size - pos,
        s"$what at $pos (+$len bytes) lies outside the file of $size bytes")
      if (pos >= metaStart && len <= footerPos - pos) {
        meta.duplicate().position((pos - metaStart).toInt).limit((pos - metaStart + len).toInt).slice()
      } else {
        check(len <= Int.MaxValue, s"$what is $len bytes long")
        in.read(pos, len.toInt)
      }
    }

    val globals = (0L until numGlobal).map(entry(gboStart, _))
    val (descPos, descLen) = globals.head
    val descriptor = parse(path, "file descriptor (global buffer 0)",
      FileProtos.FileDescriptor.parser().parseFrom(CodedInputStream.newInstance(bytesAt(descPos, descLen, "global buffer 0"))))
    val schema = LanceSchema.fromProtos(path, adoptBlobDescriptorFields(descriptor.getSchema.getFieldsList.asScala.toSeq),
      descriptor.getSchema.getMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap)
    val columns = (0L until numColumns).map { i =>
      val (pos, len) = entry(cmoStart, i)
      val cm = parse(path, s"metadata of column $i",
        File2Protos.ColumnMetadata.parser().parseFrom(CodedInputStream.newInstance(bytesAt(pos, len, s"column $i metadata"))))
      cm.getPagesList.asScala.zipWithIndex.foreach { case (p, pi) =>
        check(p.getLength >= 0 && p.getLength <= Int.MaxValue && p.getPriority >= 0 && p.getPriority <= (1L << 48),
          s"page $pi of column $i claims ${p.getLength} items starting at ${p.getPriority}")
        check(p.getBufferOffsetsCount == p.getBufferSizesCount,
          s"page $pi of column $i lists ${p.getBufferOffsetsCount} buffer offsets but ${p.getBufferSizesCount} sizes")
        (0 until p.getBufferOffsetsCount).foreach { b =>
          val (o, s) = (p.getBufferOffsets(b), p.getBufferSizes(b))
          check(o >= 0 && s >= 0 && o <= size && s <= size - o,
            s"buffer $b of page $pi of column $i at $o (+$s bytes) lies outside the file of $size bytes")
        }
      }
      (0 until cm.getBufferOffsetsCount).foreach { b =>
        val (o, s) = (cm.getBufferOffsets(b), if (b < cm.getBufferSizesCount) cm.getBufferSizes(b) else -1L)
        check(o >= 0 && s >= 0 && o <= size && s <= size - o, s"column buffer $b of column $i at $o (+$s bytes) lies outside the file")
      }
      cm
    }
    FileMetadata(path, size, version, descriptor.getLength, schema, columns, globals)
  }

  /**
   * Blob v2 (2.2): the file schema lists a blob column as a packed struct followed by its five descriptor fields
   * (kind, position, size, blob_id, blob_uri), each with id -1 and parent -1. They become that struct's children,
   * with distinct negative ids.
   */
  private def adoptBlobDescriptorFields(fields: Seq[FileProtos.Field]): Seq[FileProtos.Field] =
    if (!fields.exists(_.getId == -1)) fields
    else {
      var blobParent: Option[Int] = None
      var next = -1000
      fields.map { f =>
        if (f.getId == -1 && f.getParentId == -1) {
          val parent = blobParent.getOrElse(f.getParentId)
          next -= 1
          f.toBuilder.setId(next).setParentId(parent).build()
        } else {
          val isBlob = f.getLogicalType == "struct" &&
            Option(f.getMetadataMap.get("lance-encoding:blob")).exists(_.toStringUtf8.equalsIgnoreCase("true"))
          if (isBlob) blobParent = Some(f.getId) else if (f.getParentId == -1) blobParent = None
          f
        }
      }
    }

  private def parse[T](path: String, what: String, body: => T): T =
    try body
    catch {
      case e: InvalidProtocolBufferException => throw new CorruptFileException(path, s"its $what is invalid (${e.getMessage})", e)
    }
}
