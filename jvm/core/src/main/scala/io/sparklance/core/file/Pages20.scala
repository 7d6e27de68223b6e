package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import com.google.protobuf.{Any => ProtoAny, InvalidProtocolBufferException, Message}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.schema.LanceField
import io.sparklance.proto.{Encodings20Protos, File2Protos}

/**
 * The pages of a file of version 2.0: each names its `lance.encodings.ArrayEncoding` (docs/dev/file-format-2.0.md),
 * which [[io.sparklance.core.encoding.Decoders20]] decodes.
 */
private[file] object Pages20 {

  /** The encoding of page `pi` of `f`'s column. */
  def encoding(path: String, f: LanceField, pi: Int, page: File2Protos.ColumnMetadata.Page): Encodings20Protos.ArrayEncoding = {
    val enc = page.getEncoding
    if (!enc.hasDirect) {
      throw new UnsupportedFeatureException(s"Cannot read data file $path: page $pi of field '${f.name}' stores its " +
        "encoding out of line, which this reader does not support.")
    }
    try {
      val any = ProtoAny.parseFrom(enc.getDirect.getEncoding)
      if (!any.getTypeUrl.endsWith("lance.encodings.ArrayEncoding")) {
        throw new CorruptFileException(path, s"page $pi of field '${f.name}' has encoding ${any.getTypeUrl} in a 2.0 file")
      }
      val parsed = Encodings20Protos.ArrayEncoding.parseFrom(any.getValue)
      // A 2.0 encoding has no fields this reader does not know: a field protobuf could not place (a damaged tag
      // or wire type) would otherwise be skipped, and the page decoded with a default in its place.
      if (hasUnknownFields(parsed)) {
        throw new CorruptFileException(path, s"the encoding of page $pi of field '${f.name}' has fields with unknown " +
          "numbers or wire types")
      }
      parsed
    } catch {
      case e: InvalidProtocolBufferException =>
        throw new CorruptFileException(path, s"the encoding of page $pi of field '${f.name}' is invalid (${e.getMessage})", e)
    }
  }

  /** The most a page's decoding may allocate: 64 times its bytes, at least 256 MiB, below 2 GiB. */
  def maxBytes(page: File2Protos.ColumnMetadata.Page): Long = {
    val total = page.getBufferSizesList.asScala.map(_.longValue).sum
    math.min(Int.MaxValue.toLong - 64, math.max(256L << 20, 64L * total))
  }

  private def hasUnknownFields(m: Message): Boolean =
    !m.getUnknownFields.asMap.isEmpty || m.getAllFields.values.asScala.exists {
      case sub: Message => hasUnknownFields(sub)
      case list: java.util.List[_] => list.asScala.exists { case sub: Message => hasUnknownFields(sub); case _ => false }
      case _ => false
    }
}
