package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import com.google.protobuf.{Any => ProtoAny, InvalidProtocolBufferException, Message}
import org.apache.arrow.vector.FieldVector
import org.apache.arrow.vector.complex.{LargeListVector, ListVector, StructVector}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.{Encodings20Protos, File2Protos}

/**
 * The read path of file version 2.0 (docs/dev/file-format-2.0.md): one column per field in depth-first order,
 * parents included (a struct has a header column, a list an offsets column); a packed struct, blob, string or
 * fixed-size list is one column. Each column's pages hold items at that column's level.
 */
private[file] final class Reader20(reader: LanceFileReader) {
  private def path = reader.path

  lazy val columns: Map[Int, Int] = {
    val out = Map.newBuilder[Int, Int]
    var next = 0
    def visit(f: LanceField): Unit = {
      out += f.id -> next
      next += 1
      f.logicalType match {
        case LogicalType.Struct if !LanceFileReader.isPacked(f) => f.children.foreach(visit)
        case _: LogicalType.List => f.children.foreach(visit)
        case LogicalType.Map =>
          throw new UnsupportedFeatureException(s"Cannot read $path: field '${f.name}' is a map, which file format 2.0 cannot hold.")
        case _ =>
      }
    }
    reader.metadata.schema.fields.foreach(visit)
    out.result()
  }

  private def column(f: LanceField): File2Protos.ColumnMetadata = {
    val c = columns.getOrElse(f.id, throw new CorruptFileException(path, s"field '${f.name}' (id ${f.id}) has no column"))
    if (c >= reader.metadata.columns.size) {
      throw new CorruptFileException(path, s"field '${f.name}' maps to column $c, the file has ${reader.metadata.columns.size}")
    }
    reader.metadata.columns(c)
  }

  /** Fills `v` with items [from, to) of field `f`. */
  def fill(v: FieldVector, f: LanceField, from: Long, to: Long): Unit = f.logicalType match {
    case LogicalType.Struct if !LanceFileReader.isPacked(f) =>
      val sv = v.asInstanceOf[StructVector]
      sv.getChildrenFromFields.asScala.zip(f.children).foreach { case (cv, cf) => fill(cv, cf, from, to) }
      ArrowAssembler.setStructValidity(sv, null, (to - from).toInt)
    case _: LogicalType.List =>
      val (offsets, itemFrom, itemTo) = listRange(f, from, to)
      val child = v match {
        case l: ListVector => l.getDataVector
        case l: LargeListVector => l.getDataVector
        case other => throw new IllegalStateException(s"list column ${f.name} assembled into ${other.getClass.getSimpleName}")
      }
      fill(child, f.children.head, itemFrom, itemTo)
      ArrowAssembler.setListBuffers(v, offsets)
    case _ if LanceFileReader.isBlob(f) =>
      val descriptors = readRange(f, from, to, blobDescriptors = true)
      ArrowAssembler.fillLeafValues(v, blobBytes(f, descriptors.block.asInstanceOf[DataBlock.Struct]), nullBlobs(descriptors))
    case _ =>
      val values = readRange(f, from, to)
      val n = values.block.numValues
      if (LanceFileReader.isPacked(f)) {
        val s = values.block.asInstanceOf[DataBlock.Struct]
        val sv = v.asInstanceOf[StructVector]
        sv.getChildrenFromFields.asScala.zip(s.children).foreach { case (cv, b) => ArrowAssembler.fillLeafValues(cv, b, null) }
        ArrowAssembler.setStructValidity(sv, null, n)
      } else {
        val block = Blocks.materialize(values.block)
        val filled = if (f.logicalType == LogicalType.Json) LanceFileReader.jsonText(block) else block
        ArrowAssembler.fillLeafValues(v, filled, new RepDef.Validity(values.validity, n))
      }
  }

  /** Offsets (rebased to 0) and validity of lists [from, to), and the item range they cover. */
  private def listRange(f: LanceField, from: Long, to: Long): (RepDef.Offsets, Long, Long) = {
    val n = (to - from).toInt
    val offsets = new Array[Long](n + 1)
    val validity = new RepDef.BitWriter(n)
    var base = 0L
    var row = 0L
    var first = -1L
    var out = 0
    column(f).getPagesList.asScala.zipWithIndex.foreach { case (page, pi) =>
      val len = page.getLength
      if (len > 0) {
        val enc = arrayEncoding(f, pi, page)
        if (enc.getArrayEncodingCase != Encodings20Protos.ArrayEncoding.ArrayEncodingCase.LIST) {
          throw new CorruptFileException(path, s"page $pi of list field '${f.name}' is not a list page")
        }
        val l = enc.getList
        if (row + len > from && row < to) {
          val a = l.getNullOffsetAdjustment
          val ends = reader.cachedPage(columns(f.id), pi) {
            guard(f, pi, enc) {
              Encodings20.decode(l.getOffsets, buffers(page), len.toInt, new Encodings20.Target(LeafShape.fixed(64), 32, false), 1L << 30)
            }
          }.block match {
            case w: DataBlock.FixedWidth => w.data
            case other => throw new CorruptFileException(path, s"page $pi of list field '${f.name}': its offsets " +
              s"decoded to ${other.getClass.getSimpleName} values")
          }
          val items = l.getNumItems
          var prevEnd = 0L
          var i = 0
          while (i < len) {
            val v = LittleEndian.getLong(ends, 8 * i)
            val valid = a == 0 || java.lang.Long.compareUnsigned(v, a) < 0
            val end = if (valid) v else v - a
            // A list ends where it starts or after, and within the page's items (a null list is empty).
            if (end < prevEnd || end > items) {
              throw new CorruptFileException(path, s"page $pi of list field '${f.name}': list ${row + i} ends at item " +
                s"$end, outside [$prevEnd, $items] (offsets go backwards or past the page's items)")
            }
            val r = row + i
            if (r >= from && r < to) {
              if (first < 0) { first = base + prevEnd; offsets(0) = 0 }
              out += 1
              offsets(out) = base + end - first
              validity.append(valid)
            }
            prevEnd = end
            i += 1
          }
        }
        base += l.getNumItems
        row += len
      }
    }
    if (out != n) throw new CorruptFileException(path, s"list field '${f.name}' has $row rows, rows [$from, $to) were asked for")
    if (first < 0) first = 0
    val o = new RepDef.Offsets(offsets, n, new RepDef.Validity(if (validity.anyFalse()) validity.bits() else null, n))
    (o, first, first + offsets(n))
  }

  // 2.0 blob descriptors: (1, 0) is null, (0, 0) empty, otherwise the bytes [position, position + size) of the file.
  private def nullBlobs(d: Encodings20.Values): RepDef.Validity = {
    val s = d.block.asInstanceOf[DataBlock.Struct]
    val n = s.numValues
    val pos = s.children(0).asInstanceOf[DataBlock.FixedWidth].data
    val size = s.children(1).asInstanceOf[DataBlock.FixedWidth].data
    val bits = new RepDef.BitWriter(n)
    (0 until n).foreach(i => bits.append(!(LittleEndian.getLong(pos, 8 * i) == 1 && LittleEndian.getLong(size, 8 * i) == 0)))
    new RepDef.Validity(if (bits.anyFalse()) bits.bits() else null, n)
  }

  private def blobBytes(f: LanceField, s: DataBlock.Struct): DataBlock = {
    val n = s.numValues
    val pos = s.children(0).asInstanceOf[DataBlock.FixedWidth].data
    val size = s.children(1).asInstanceOf[DataBlock.FixedWidth].data
    val parts = (0 until n).map { i =>
      val p = LittleEndian.getLong(pos, 8 * i)
      val sz = LittleEndian.getLong(size, 8 * i)
      if (sz == 0) Array.emptyByteArray else reader.readBytes(p, sz)
    }
    Blocks.ofValues(parts.asJava, 64)
  }

  /** Items [from, to) of a single-column field, concatenated across pages. */
  private def readRange(f: LanceField, from: Long, to: Long, blobDescriptors: Boolean = false): Encodings20.Values = {
    val shape = if (blobDescriptors) LeafShape.struct(Array(LeafShape.fixed(64), LeafShape.fixed(64))) else LanceFileReader.shapeOf(f)
    val target = new Encodings20.Target(shape, offsetBits(f), f.logicalType.isInstanceOf[LogicalType.Dictionary])
    val blocks = new java.util.ArrayList[DataBlock]()
    var anyNull = false
    var start = 0L
    val n = (to - from).toInt
    val bits = new RepDef.BitWriter(n)
    column(f).getPagesList.asScala.zipWithIndex.foreach { case (page, pi) =>
      val len = page.getLength
      val end = start + len
      if (len > 0 && end > from && start < to) {
        val enc = arrayEncoding(f, pi, page)
        val values = reader.cachedPage(columns(f.id), pi) {
          guard(f, pi, enc)(Encodings20.decode(enc, buffers(page), len.toInt, target, maxBytes(page)))
        }
        val lo = (math.max(from, start) - start).toInt
        val hi = (math.min(to, end) - start).toInt
        blocks.add(guard(f, pi, enc)(Blocks.slice(values.block, lo, hi)))
        var i = lo
        while (i < hi) {
          val valid = values.validity == null || Bits.get(values.validity, i)
          bits.append(valid)
          anyNull |= !valid
          i += 1
        }
      }
      start = end
    }
    if (bits.size() != n) throw new CorruptFileException(path, s"field '${f.name}' has $start items, [$from, $to) were asked for")
    val block = if (blocks.isEmpty) target.shape.zeros(0) else Blocks.concat(blocks)
    new Encodings20.Values(block, if (anyNull) bits.bits() else null)
  }

  private def offsetBits(f: LanceField): Int = f.logicalType match {
    case LogicalType.Utf8(true) | LogicalType.Binary(true) | LogicalType.Json => 64
    case LogicalType.Dictionary(LogicalType.Utf8(true) | LogicalType.Binary(true), _, _) => 64
    case _ => 32
  }

  private def maxBytes(page: File2Protos.ColumnMetadata.Page): Long = {
    val total = page.getBufferSizesList.asScala.map(_.longValue).sum
    math.min(Int.MaxValue.toLong - 64, math.max(256L << 20, 64L * total))
  }

  private def buffers(page: File2Protos.ColumnMetadata.Page): Array[Slice] = reader.readBuffers(page)

  private def arrayEncoding(f: LanceField, pi: Int, page: File2Protos.ColumnMetadata.Page): Encodings20Protos.ArrayEncoding = {
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

  private def hasUnknownFields(m: Message): Boolean =
    !m.getUnknownFields.asMap.isEmpty || m.getAllFields.values.asScala.exists {
      case sub: Message => hasUnknownFields(sub)
      case list: java.util.List[_] => list.asScala.exists { case sub: Message => hasUnknownFields(sub); case _ => false }
      case _ => false
    }

  private def guard[T](f: LanceField, pi: Int, enc: Encodings20Protos.ArrayEncoding)(body: => T): T =
    try body
    catch {
      case e: EncodingException =>
        throw new CorruptFileException(path, s"page $pi of field '${f.name}' (encoding ${Encodings20.describe(enc)}): ${e.getMessage}", e)
      case e: UnsupportedEncodingException =>
        throw new UnsupportedFeatureException(s"Cannot read data file $path: page $pi of field '${f.name}' uses " +
          s"${e.getMessage}, which this reader does not support yet.")
    }
}
