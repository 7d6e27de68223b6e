package io.sparklance.core.format

import java.io.ByteArrayOutputStream
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import com.google.protobuf.{CodedInputStream, InvalidProtocolBufferException, Message, MessageLite, Parser}

import io.sparklance.core.CorruptFileException
import io.sparklance.core.util.Parse
import io.sparklance.proto.TableProtos

/**
 * The byte layout of a manifest file.
 *
 * {{{
 *   [... optional sections, e.g. an IndexSection, each as u32 length + protobuf ...]
 *   [u32 length][Manifest protobuf]            <- at `position`
 *   [i64 position][u16 major][u16 minor]["LANC"]   16-byte tail
 * }}}
 * Integers are little endian. pylance 14 writes major 0, minor 2 in the tail (shared/research/README.md). Protobuf
 * keeps fields this project does not know as unknown fields, so decode-then-encode preserves them.
 */
object ManifestFile {
  val Magic: Array[Byte] = "LANC".getBytes(StandardCharsets.US_ASCII)
  val TailSize = 16
  val MajorVersion: Short = 0
  val MinorVersion: Short = 2

  /** Decodes the manifest stored in `bytes`, the whole content of the manifest file at `path`. */
  def decode(path: String, bytes: Array[Byte]): TableProtos.Manifest = {
    val position = manifestPosition(path, bytes)
    readMessage(path, bytes, position, bytes.length - TailSize, "manifest", TableProtos.Manifest.parser())
  }

  /** Decodes the IndexSection a manifest points to with `index_section`, if any. */
  def decodeIndexSection(path: String, bytes: Array[Byte], manifest: TableProtos.Manifest)
      : Option[TableProtos.IndexSection] =
    if (!manifest.hasIndexSection) None
    else {
      val pos = manifest.getIndexSection
      val end = manifestPosition(path, bytes)
      if (pos < 0 || pos >= end) {
        throw new CorruptFileException(path, s"the index section position $pos lies outside [0, $end)")
      }
      Some(readMessage(path, bytes, pos, end, "index section", TableProtos.IndexSection.parser()))
    }

  /**
   * Encodes a manifest file. The index section, when given, is written first and the manifest's `index_section`
   * set to its position.
   */
  def encode(manifest: TableProtos.Manifest, indexSection: Option[TableProtos.IndexSection]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val toWrite = indexSection match {
      case Some(section) =>
        writeMessage(out, section)
        manifest.toBuilder.setIndexSection(0L).build()
      case None => manifest.toBuilder.clearIndexSection().build()
    }
    val position = out.size().toLong
    writeMessage(out, toWrite)
    val tail = ByteBuffer.allocate(TailSize).order(ByteOrder.LITTLE_ENDIAN)
    tail.putLong(position).putShort(MajorVersion).putShort(MinorVersion).put(Magic)
    out.write(tail.array())
    out.toByteArray
  }

  private def manifestPosition(path: String, bytes: Array[Byte]): Long = {
    if (bytes.length < TailSize + 4) {
      throw new CorruptFileException(path, s"a manifest file needs at least ${TailSize + 4} bytes, this one has " +
        s"${bytes.length} (truncated?)")
    }
    val magicOk = (0 until 4).forall(i => bytes(bytes.length - 4 + i) == Magic(i))
    if (!magicOk) {
      throw new CorruptFileException(path, "the file does not end with the magic bytes \"LANC\" (truncated or not a " +
        "manifest)")
    }
    val tail = ByteBuffer.wrap(bytes, bytes.length - TailSize, TailSize).order(ByteOrder.LITTLE_ENDIAN)
    val position = tail.getLong()
    if (position < 0 || position + 4 > bytes.length - TailSize) {
      throw new CorruptFileException(path, s"the manifest position $position in the file tail lies outside the " +
        s"file's ${bytes.length - TailSize} content bytes")
    }
    position
  }

  private def readMessage[T <: MessageLite](path: String, bytes: Array[Byte], position: Long, end: Long,
      what: String, parser: Parser[T]): T = {
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val len = buf.getInt(position.toInt).toLong & 0xFFFFFFFFL
    if (position + 4 + len > end) {
      throw new CorruptFileException(path, s"the $what at offset $position claims $len bytes, but only " +
        s"${end - position - 4} remain before the file tail")
    }
    try {
      val in = CodedInputStream.newInstance(bytes, position.toInt + 4, len.toInt)
      in.setRecursionLimit(64)
      val message = parser.parseFrom(in)
      message match {
        case m: Message => misplacedField(m).foreach { name =>
          throw new CorruptFileException(path, s"the $what protobuf holds field $name with the wrong wire type")
        }
        case _ => ()
      }
      message
    } catch {
      case e: InvalidProtocolBufferException =>
        throw new CorruptFileException(path, s"the $what protobuf is invalid (${e.getMessage})", e)
    }
  }

  /**
   * A field of a known number that protobuf could not place (a wire type other than the field's), anywhere in the
   * message tree. Protobuf keeps it with the unknown fields, so the known field silently reads as its default,
   * where pylance refuses the message. Unknown numbers are left alone: newer Lance versions add fields.
   */
  private def misplacedField(m: Message): Option[String] = {
    val descriptor = m.getDescriptorForType
    m.getUnknownFields.asMap.keySet.asScala.map(n => descriptor.findFieldByNumber(n.intValue)).find(_ != null)
      .map(_.getFullName)
      .orElse(Parse.first(m.getAllFields.values.asScala.iterator.flatMap {
        case sub: Message => misplacedField(sub)
        case list: java.util.List[_] => Parse.first(list.asScala.iterator.flatMap {
          case sub: Message => misplacedField(sub)
          case _ => None
        })
        case _ => None
      }))
  }

  private def writeMessage(out: ByteArrayOutputStream, message: MessageLite): Unit = {
    val body = message.toByteArray
    val len = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length)
    out.write(len.array())
    out.write(body)
  }
}
