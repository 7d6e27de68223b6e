package io.sparklance.core.file

import com.google.protobuf.{Any => ProtoAny, InvalidProtocolBufferException}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.LanceField
import io.sparklance.core.util.Printable
import io.sparklance.proto.{Encodings21Protos, File2Protos}

/**
 * Decodes one page of a file of version 2.1 or later: its `lance.encodings21.PageLayout` (docs/dev/file-format-2.1.md)
 * says how, and the decoders of core.encoding do it, into levels and the visible values.
 */
private[file] object StructuralPages {

  /** The type URL of a Lance encoding message (`/lance.encodings21.PageLayout`), of any version. */
  private val LanceEncodingTypeUrl = "([a-z0-9.]+)?/lance\\.encodings[0-9]*\\.[A-Z][A-Za-z0-9]*".r

  /** The layout of page `pi` of `column`, which holds (a leaf of) `field`. */
  def layout(path: String, field: LanceField, column: Int, pi: Int, page: File2Protos.ColumnMetadata.Page)
      : Encodings21Protos.PageLayout = {
    val enc = page.getEncoding
    if (!enc.hasDirect) {
      throw new UnsupportedFeatureException(s"Cannot read data file $path: column $column (field '${field.name}') page " +
        s"$pi stores its encoding out of line, which this reader does not support.")
    }
    try {
      val any = ProtoAny.parseFrom(enc.getDirect.getEncoding)
      if (!any.getTypeUrl.endsWith("lance.encodings21.PageLayout")) {
        // A newer Lance encoding message is named like one; any other type URL is a damaged one.
        if (!LanceEncodingTypeUrl.pattern.matcher(any.getTypeUrl).matches()) {
          throw new CorruptFileException(path, s"column $column (field '${field.name}') page $pi has encoding type " +
            s"'${Printable.of(any.getTypeUrl)}', which is not the name of a Lance encoding")
        }
        throw new UnsupportedFeatureException(s"Cannot read data file $path: column $column (field '${field.name}') " +
          s"page $pi has encoding ${any.getTypeUrl}, which this reader does not support.")
      }
      Encodings21Protos.PageLayout.parseFrom(any.getValue)
    } catch {
      case e: InvalidProtocolBufferException =>
        throw new CorruptFileException(path, s"the encoding of column $column page $pi is invalid (${e.getMessage})", e)
    }
  }

  /** A page layout as error messages name it. */
  def describe(layout: Encodings21Protos.PageLayout): String = layout.getLayoutCase match {
    case Encodings21Protos.PageLayout.LayoutCase.MINI_BLOCK_LAYOUT =>
      s"mini-block(${Decoders21.describe(layout.getMiniBlockLayout.getValueCompression)})"
    case Encodings21Protos.PageLayout.LayoutCase.FULL_ZIP_LAYOUT =>
      s"full-zip(${Decoders21.describe(layout.getFullZipLayout.getValueCompression)})"
    case Encodings21Protos.PageLayout.LayoutCase.CONSTANT_LAYOUT => "constant"
    case Encodings21Protos.PageLayout.LayoutCase.BLOB_LAYOUT => "blob"
    case other => s"unknown page layout #${other.getNumber}"
  }

  /**
   * Decodes a page of `rows` rows of a leaf of the given shape from its buffers, allocating at most about `maxBytes`.
   * Blob pages read their values' bytes from the file through `pages`. Throws [[EncodingException]] for damage and
   * [[UnsupportedEncodingException]] for encodings this reader does not know.
   */
  def decode(layout: Encodings21Protos.PageLayout, buffers: Array[Slice], rows: Long, shape: => LeafShape,
      maxBytes: Long, pages: ColumnPages): MiniBlockPage.Decoded =
    layout.getLayoutCase match {
      case Encodings21Protos.PageLayout.LayoutCase.MINI_BLOCK_LAYOUT =>
        MiniBlockPage.decode(layout.getMiniBlockLayout, buffers, maxBytes)
      case Encodings21Protos.PageLayout.LayoutCase.FULL_ZIP_LAYOUT =>
        FullZipPage.decode(layout.getFullZipLayout, buffers, shape, maxBytes)
      case Encodings21Protos.PageLayout.LayoutCase.CONSTANT_LAYOUT =>
        ConstantPage.decode(layout.getConstantLayout, buffers, rows, shape, maxBytes)
      case Encodings21Protos.PageLayout.LayoutCase.BLOB_LAYOUT =>
        blobPage(layout.getBlobLayout, buffers, maxBytes, pages)
      case _ =>
        throw new UnsupportedEncodingException(describe(layout), "")
    }

  /**
   * A 2.1 blob page: the inner mini-block page holds one (position u64, size u64) descriptor per level; the bytes
   * live elsewhere in this file. A descriptor with size 0 and position p != 0 is a null, with repetition level
   * `p & 0xFFFF` and definition level `(p >> 16) & 0xFFFF`; size 0 and position 0 is an empty value.
   */
  private def blobPage(layout: Encodings21Protos.BlobLayout, buffers: Array[Slice], maxBytes: Long, pages: ColumnPages)
      : MiniBlockPage.Decoded = {
    if (!layout.getInnerLayout.hasMiniBlockLayout) throw new UnsupportedEncodingException("blob layout over a non-mini-block page", "")
    val inner = MiniBlockPage.decode(layout.getInnerLayout.getMiniBlockLayout, buffers, maxBytes)
    val d = inner.values match {
      case s: DataBlock.Struct if s.children.length == 2 => s
      case _ => throw new EncodingException("blob descriptors that are not (position, size) pairs")
    }
    val n = d.numValues
    val pos = d.children(0).asInstanceOf[DataBlock.FixedWidth].data
    val size = d.children(1).asInstanceOf[DataBlock.FixedWidth].data
    val layers = RepDef.layers(layout.getLayersList)
    val rep = new Array[Short](n)
    val defs = new Array[Short](n)
    var anyRep = false
    var anyDef = false
    var i = 0
    while (i < n) {
      val p = LittleEndian.getLong(pos, 8 * i)
      val sz = LittleEndian.getLong(size, 8 * i)
      if (sz == 0 && p != 0) {
        rep(i) = (p & 0xFFFF).toShort; defs(i) = ((p >>> 16) & 0xFFFF).toShort
        anyRep |= rep(i) != 0; anyDef |= defs(i) != 0
      }
      i += 1
    }
    val levels = new RepDef.Unraveler(if (anyRep) rep else null, if (anyDef || anyRep) defs else null, n, layers, 0)
    val maxVisible = levels.maxVisibleDef()
    val chunks = new java.util.ArrayList[Array[Byte]]()
    i = 0
    while (i < n) {
      val visible = defs(i) <= maxVisible
      if (visible) {
        val p = LittleEndian.getLong(pos, 8 * i)
        val sz = LittleEndian.getLong(size, 8 * i)
        val bytes =
          if (sz > 0 && defs(i) == 0) {
            if (p < 0 || sz > pages.fileSize - p) throw new EncodingException(s"blob $i at $p (+$sz bytes) lies outside the file")
            if (sz > maxBytes) throw new EncodingException(s"blob $i of $sz bytes")
            pages.read(p, sz.toInt)
          } else Array.emptyByteArray
        chunks.add(bytes)
      }
      i += 1
    }
    levels.numItems = chunks.size
    new MiniBlockPage.Decoded(levels, Blocks.ofValues(chunks, 64))
  }
}
