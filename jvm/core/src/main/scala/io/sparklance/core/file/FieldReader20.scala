package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.FieldVector
import org.apache.arrow.vector.complex.{LargeListVector, ListVector, StructVector}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.{Encodings20Protos, File2Protos}

/**
 * The read path of file version 2.0 (docs/dev/file-format-2.0.md): one column per field in depth-first order,
 * parents included (a struct has a header column, a list an offsets column); a packed struct, blob, string or
 * fixed-size list is one column. Each column's pages hold items at that column's level, so a list's items are paged
 * apart from its rows.
 */
private[file] final class FieldReader20(pages: ColumnPages) extends FieldReader {
  private def path = pages.path

  override lazy val columns: Map[Int, Int] = {
    val out = Map.newBuilder[Int, Int]
    var next = 0
    def visit(f: LanceField): Unit = {
      out += f.id -> next
      next += 1
      f.logicalType match {
        case LogicalType.Struct if !f.isPacked => f.children.foreach(visit)
        case _: LogicalType.List => f.children.foreach(visit)
        case LogicalType.Map =>
          throw new UnsupportedFeatureException(s"Cannot read $path: field '${f.name}' is a map, which file format 2.0 cannot hold.")
        case _ =>
      }
    }
    pages.metadata.schema.fields.foreach(visit)
    out.result()
  }

  // Which pages of a list's items a read needs is known only once its offsets are decoded.
  override def plansPages: Boolean = false

  override def pageSpans(fields: Seq[LanceField], from: Long, to: Long): Seq[(Long, Long)] = Seq.empty

  private def column(f: LanceField): File2Protos.ColumnMetadata = {
    val c = columns.getOrElse(f.id, throw new CorruptFileException(path, s"field '${f.name}' (id ${f.id}) has no column"))
    if (c >= pages.size) {
      throw new CorruptFileException(path, s"field '${f.name}' maps to column $c, the file has ${pages.size}")
    }
    pages(c)
  }

  /** Fills `v` with items [from, to) of field `f` (rows, for a top-level field). */
  override def fill(v: FieldVector, f: LanceField, from: Long, to: Long): Unit = f.logicalType match {
    case LogicalType.Struct if !f.isPacked =>
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
    case _ if f.isBlob =>
      val descriptors = readRange(f, from, to, blobDescriptors = true)
      ArrowAssembler.fillLeafValues(v, blobBytes(f, descriptors.block.asInstanceOf[DataBlock.Struct]), nullBlobs(descriptors))
    case _ =>
      val values = readRange(f, from, to)
      val n = values.block.numValues
      if (f.isPacked) {
        val s = values.block.asInstanceOf[DataBlock.Struct]
        val sv = v.asInstanceOf[StructVector]
        sv.getChildrenFromFields.asScala.zip(s.children).foreach { case (cv, b) => ArrowAssembler.fillLeafValues(cv, b, null) }
        ArrowAssembler.setStructValidity(sv, null, n)
      } else {
        val block = Blocks.materialize(values.block)
        val filled = if (f.logicalType == LogicalType.Json) FieldReader.jsonText(block) else block
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
        val enc = Pages20.encoding(path, f, pi, page)
        if (enc.getArrayEncodingCase != Encodings20Protos.ArrayEncoding.ArrayEncodingCase.LIST) {
          throw new CorruptFileException(path, s"page $pi of list field '${f.name}' is not a list page")
        }
        val l = enc.getList
        if (row + len > from && row < to) {
          val a = l.getNullOffsetAdjustment
          val ends = pages.decoded(columns(f.id), pi) {
            guard(f, pi, enc) {
              Decoders20.decode(l.getOffsets, pages.buffers(page), len.toInt, new Decoders20.Target(LeafShape.fixed(64), 32, false), 1L << 30)
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
  private def nullBlobs(d: Decoders20.Values): RepDef.Validity = {
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
      if (sz == 0) Array.emptyByteArray else pages.bytes(p, sz)
    }
    Blocks.ofValues(parts.asJava, 64)
  }

  /** Items [from, to) of a single-column field, concatenated across pages. */
  private def readRange(f: LanceField, from: Long, to: Long, blobDescriptors: Boolean = false): Decoders20.Values = {
    val shape = if (blobDescriptors) LeafShape.struct(Array(LeafShape.fixed(64), LeafShape.fixed(64))) else ColumnLayout.shapeOf(f)
    val target = new Decoders20.Target(shape, offsetBits(f), f.logicalType.isInstanceOf[LogicalType.Dictionary])
    val blocks = new java.util.ArrayList[DataBlock]()
    var anyNull = false
    var start = 0L
    val n = (to - from).toInt
    val bits = new RepDef.BitWriter(n)
    column(f).getPagesList.asScala.zipWithIndex.foreach { case (page, pi) =>
      val len = page.getLength
      val end = start + len
      if (len > 0 && end > from && start < to) {
        val enc = Pages20.encoding(path, f, pi, page)
        val values = pages.decoded(columns(f.id), pi) {
          guard(f, pi, enc)(Decoders20.decode(enc, pages.buffers(page), len.toInt, target, Pages20.maxBytes(page)))
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
    new Decoders20.Values(block, if (anyNull) bits.bits() else null)
  }

  private def offsetBits(f: LanceField): Int = f.logicalType match {
    case LogicalType.Utf8(true) | LogicalType.Binary(true) | LogicalType.Json => 64
    case LogicalType.Dictionary(LogicalType.Utf8(true) | LogicalType.Binary(true), _, _) => 64
    case _ => 32
  }

  private def guard[T](f: LanceField, pi: Int, enc: Encodings20Protos.ArrayEncoding)(body: => T): T =
    try body
    catch {
      case e: EncodingException =>
        throw new CorruptFileException(path, s"page $pi of field '${f.name}' (encoding ${Decoders20.describe(enc)}): ${e.getMessage}", e)
      case e: UnsupportedEncodingException =>
        throw new UnsupportedFeatureException(s"Cannot read data file $path: page $pi of field '${f.name}' uses " +
          s"${e.getMessage}, which this reader does not support yet.")
    }
}
