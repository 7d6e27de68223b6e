package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.FieldVector

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.Encodings21Protos

/**
 * Reads fields of a file of version 2.1 or 2.2 (docs/dev/file-format-2.1.md): one column per leaf, a packed struct
 * being one leaf, whose pages hold whole rows (`priority` is the first row, `length` the number of rows). Each page
 * decodes into repetition/definition levels and the visible values; [[ArrowAssembler]] rebuilds the field from its
 * leaves.
 */
private[file] final class StructuralFieldReader(pages: ColumnPages) extends FieldReader {
  private def path = pages.path

  override lazy val columns: Map[Int, Int] = {
    val out = Map.newBuilder[Int, Int]
    var next = 0
    def visit(f: LanceField): Unit = f.logicalType match {
      case LogicalType.Struct if !f.isPacked => f.children.foreach(visit)
      case _: LogicalType.List | LogicalType.Map => f.children.foreach(visit)
      case _ => out += f.id -> next; next += 1
    }
    pages.metadata.schema.fields.foreach(visit)
    out.result()
  }

  override def plansPages: Boolean = true

  override def pageSpans(fields: Seq[LanceField], from: Long, to: Long): Seq[(Long, Long)] =
    for {
      f <- fields
      leaf <- f.flatten
      column <- columns.get(leaf.id).toSeq if column < pages.size
      (page, pi) <- pages(column).getPagesList.asScala.iterator.zipWithIndex
      if page.getPriority < to && page.getPriority + page.getLength > from && !pages.isDecoded(column, pi)
      span <- ColumnPages.bufferSpan(page)
    } yield span

  override def fill(vector: FieldVector, field: LanceField, from: Long, to: Long): Unit = {
    val leaves = ColumnLayout.leavesOf(field).iterator.map(leaf => readLeaf(leaf, from, to))
    ArrowAssembler.fill(vector, leaves.asJava, f => ColumnLayout.isPackedArrow(f))
  }

  override def dictionaryCodes(field: LanceField, from: Long, to: Long): Option[DictionaryCodes] =
    if (ColumnLayout.leavesOf(field) != Seq(field) || field.logicalType == LogicalType.Json || !columns.contains(field.id)) None
    else {
      val (levels, pieces) = leafPieces(field, from, to)
      val n = (to - from).toInt
      val dictionaries = pieces.map(_._1).collect { case d: DataBlock.Dictionary => d }
      if (pieces.isEmpty || dictionaries.size != pieces.size || pieces.map(p => p._3 - p._2).sum != n) None
      else {
        // Pages have dictionaries of their own: ids into the items of them all, in page order.
        val distinct = dictionaries.map(_.items).distinct
        val items = if (distinct.size == 1) distinct.head else guard(field, -1, -1, "")(Blocks.concat(distinct.asJava))
        val bases = distinct.scanLeft(0)(_ + _.numValues)
        val ids = new Array[Int](n)
        var at = 0
        pieces.foreach { case (d: DataBlock.Dictionary, lo, hi) =>
          val base = bases(distinct.indexWhere(_ eq d.items))
          val positions = guard(field, -1, -1, "")(Blocks.itemPositions(d, lo, hi - lo))
          var i = 0
          while (i < positions.length) { val p = positions(i); ids(at + i) = if (p < 0) -1 else base + p; i += 1 }
          at += positions.length
        case _ => ()
        }
        val validity = guard(field, -1, -1, "")(levels.unravelValidity(n))
        if (validity.bits != null) {
          var i = 0
          while (i < n) { if (!validity.isValid(i)) ids(i) = -1; i += 1 }
        }
        Some(new DictionaryCodes(items, ids, if (distinct.size == 1) items else new AnyRef))
      }
    }

  /** Rows [from, to) of a leaf column: its levels across the pages overlapping the rows, and their values. */
  private def readLeaf(field: LanceField, from: Long, to: Long): ArrowAssembler.Leaf = {
    val (levels, pieces) = leafPieces(field, from, to)
    val column = columns(field.id)
    if (field.logicalType == LogicalType.Json) {
      // Lance stores json values in the binary JSONB encoding; a read returns them as JSON text.
      val parts = pieces.toSeq.map { case (b, lo, hi) => guard(field, column, -1, "")(Blocks.materialize(b, lo, hi)) }
      val joined = if (parts.isEmpty) emptyBlock(field) else if (parts.size == 1) parts.head
        else guard(field, column, -1, "")(Blocks.concat(parts.asJava))
      new ArrowAssembler.Leaf(levels, guard(field, column, -1, "json")(FieldReader.jsonText(joined)))
    } else {
      pieces.toSeq match {
        case Seq() => new ArrowAssembler.Leaf(levels, emptyBlock(field))
        // One page: hand over the decoded page and the range, and let the assembler copy just that range.
        case Seq((block, lo, hi)) => new ArrowAssembler.Leaf(levels, block, lo, hi)
        case many =>
          // Each page has its own dictionary: decode it before pages are joined.
          val parts = many.map { case (b, lo, hi) => guard(field, column, -1, "")(Blocks.materialize(b, lo, hi)) }
          new ArrowAssembler.Leaf(levels, guard(field, column, -1, "")(Blocks.concat(parts.asJava)))
      }
    }
  }

  /**
   * Rows [from, to) of a leaf column as the pages overlapping them decode: the levels across those pages, and per
   * page its decoded values with the range [lo, hi) of them the rows hold.
   */
  private def leafPieces(field: LanceField, from: Long, to: Long): (RepDef.Composite, Seq[(DataBlock, Int, Int)]) = {
    val column = columns.getOrElse(field.id, throw new CorruptFileException(path,
      s"field '${field.name}' (id ${field.id}) has no column in the file"))
    if (column >= pages.size) {
      throw new CorruptFileException(path, s"field '${field.name}' maps to column $column, the file has ${pages.size}")
    }
    val columnPages = pages(column).getPagesList.asScala.toIndexedSeq
    val unravelers = new java.util.ArrayList[RepDef.Unraveler]()
    val pieces = scala.collection.mutable.ArrayBuffer.empty[(DataBlock, Int, Int)]
    var pageStart = 0L
    columnPages.zipWithIndex.foreach { case (page, pi) =>
      val start = page.getPriority
      val end = start + page.getLength
      if (start != pageStart) {
        throw new CorruptFileException(path, s"page $pi of column $column (field '${field.name}') starts at row $start, " +
          s"expected $pageStart")
      }
      pageStart = end
      if (end > from && start < to) {
        val lo = (math.max(from, start) - start).toInt
        val hi = (math.min(to, end) - start).toInt
        // The decoded rows: a run of parts holding [lo, hi), or the whole page; `first` is their first row.
        val (decoded, first) = pageParts(field, column, pi, page) match {
          case Some(parts) =>
            val (run, d) = pages.decodedParts(column, pi, parts.holding(lo), parts.holding(hi - 1) + 1) { (a, b) =>
              val (start, end) = parts.span(a, b)
              val d = guard(field, column, pi, "")(parts.decode(pages.bufferRange(page, parts.buffer, start, end - start), a, b))
              checkRows(field, column, pi, d, parts.firstRow(b) - parts.firstRow(a))
            }
            (d, parts.firstRow(run))
          case None =>
            (pages.decoded(column, pi)(checkRows(field, column, pi, decodePage(field, column, pi, page), page.getLength)), 0)
        }
        val sliced = guard(field, column, pi, "")(decoded.levels.slice(lo - first, hi - first))
        val levels = sliced(0).asInstanceOf[RepDef.Unraveler]
        val items = sliced(1).asInstanceOf[Array[Int]]
        unravelers.add(levels)
        pieces += ((decoded.values, items(0), items(1)))
      }
    }
    if (pageStart != pages.numRows) {
      throw new CorruptFileException(path, s"column $column (field '${field.name}') has pages for $pageStart rows, " +
        s"the file has ${pages.numRows}")
    }
    (new RepDef.Composite(unravelers), pieces.toSeq)
  }

  /** `d`, checked to describe `rows` rows. */
  private def checkRows(field: LanceField, column: Int, pi: Int, d: MiniBlockPage.Decoded, rows: Long): MiniBlockPage.Decoded = {
    val described = guard(field, column, pi, "")(d.levels.numRows())
    if (described != rows) {
      throw new CorruptFileException(path, s"page $pi of column $column (field '${field.name}'): its levels " +
        s"describe $described rows, its metadata says $rows")
    }
    d
  }

  /**
   * The parts of a page on storage that does not coalesce requests, when a row is found without decoding the rows
   * before it: a mini-block page without repetition (its chunks), or a full-zip page whose items all take the same
   * bytes (each row). Such a page is read and decoded by runs of parts, only those holding the rows asked for, so
   * that a read of a few rows costs a few parts rather than the page. None for other pages, decoded whole and kept.
   */
  private def pageParts(field: LanceField, column: Int, pi: Int, page: io.sparklance.proto.File2Protos.ColumnMetadata.Page)
      : Option[StructuralFieldReader.Parts] =
    if (pages.coalesces) None
    else pages.parts(column, pi) {
      val layout = StructuralPages.layout(path, field, column, pi, page)
      def corrupt(what: String) = new CorruptFileException(path, s"page $pi of column $column (field '${field.name}'): $what")
      def buffer(i: Int) = pages.bufferRange(page, i, 0, page.getBufferSizes(i))
      val parts: Option[StructuralFieldReader.Parts] = guard(field, column, pi, StructuralPages.describe(layout)) {
        if (layout.hasMiniBlockLayout && !layout.getMiniBlockLayout.hasRepCompression) {
          val m = layout.getMiniBlockLayout
          val needed = 2 + (if (m.hasDictionary) 1 else 0)
          if (page.getBufferOffsetsCount < needed) throw corrupt(s"a mini-block page needs $needed buffers, it has ${page.getBufferOffsetsCount}")
          Some(new StructuralFieldReader.MiniBlockParts(new MiniBlockPage.Reader(m, buffer(0), page.getBufferSizes(1),
            if (m.hasDictionary) buffer(2) else null, maxBytes(page))))
        } else if (layout.hasFullZipLayout && FullZipPage.fixedStride(layout.getFullZipLayout) > 0) {
          if (page.getBufferOffsetsCount < 1) throw corrupt("a full-zip page without buffers")
          val z = layout.getFullZipLayout
          val stride = FullZipPage.fixedStride(z)
          val items = z.getNumItems & 0xFFFFFFFFL
          if (items > Int.MaxValue - 16 || items * stride != page.getBufferSizes(0)) {
            throw corrupt(s"a full-zip page of $items items of $stride bytes holds ${page.getBufferSizes(0)} bytes")
          }
          Some(new StructuralFieldReader.FullZipParts(z, items.toInt, stride, ColumnLayout.shapeOf(field), maxBytes(page)))
        } else None
      }
      parts.foreach { p =>
        if (p.firstRow(p.count) != page.getLength) {
          throw corrupt(s"its layout holds ${p.firstRow(p.count)} items (num_items), but the page's length is " +
            s"${page.getLength} rows; without repetition an item is a row")
        }
      }
      parts
    }

  private def maxBytes(page: io.sparklance.proto.File2Protos.ColumnMetadata.Page): Long =
    math.min(Int.MaxValue.toLong - 64, math.max(256L << 20, 64L * page.getBufferSizesList.asScala.map(_.longValue).sum))

  private def emptyBlock(field: LanceField): DataBlock = ColumnLayout.shapeOf(field).zeros(0)

  private def decodePage(field: LanceField, column: Int, pi: Int, page: io.sparklance.proto.File2Protos.ColumnMetadata.Page)
      : MiniBlockPage.Decoded = {
    val layout = StructuralPages.layout(path, field, column, pi, page)
    val buffers = pages.buffers(page)
    guard(field, column, pi, StructuralPages.describe(layout)) {
      StructuralPages.decode(layout, buffers, page.getLength, ColumnLayout.shapeOf(field), maxBytes(page), pages)
    }
  }

  private def guard[T](field: LanceField, column: Int, page: Int, encoding: String)(body: => T): T =
    try body
    catch {
      case e: EncodingException =>
        val where = if (page >= 0) s"page $page of column $column" else s"column $column"
        val enc = if (encoding.nonEmpty) s" (encoding $encoding)" else ""
        throw new CorruptFileException(path, s"$where, field '${field.name}'$enc: ${e.getMessage}", e)
      case e: UnsupportedEncodingException =>
        val where = if (page >= 0) s"page $page of column $column" else s"column $column"
        throw new UnsupportedFeatureException(s"Cannot read data file $path: $where (field '${field.name}') uses " +
          s"${e.getMessage}, which this reader does not support yet. Rewrite the table with pylance using default " +
          "encodings, or upgrade sparklance.")
    }
}

private[file] object StructuralFieldReader {

  /** A page read in parts: runs of consecutive parts [a, b), each holding consecutive rows. */
  sealed abstract class Parts {
    def count: Int
    /** The part holding row `row` of the page. */
    def holding(row: Int): Int
    /** The first row of part `p`; `firstRow(count)` is the page's row count. */
    def firstRow(p: Int): Int
    /** The page buffer holding the parts. */
    def buffer: Int
    /** Where parts [a, b) lie in that buffer: [start, end). */
    def span(a: Int, b: Int): (Long, Long)
    /** Parts [a, b) from the bytes of their span. */
    def decode(bytes: Slice, a: Int, b: Int): MiniBlockPage.Decoded
  }

  final class MiniBlockParts(reader: MiniBlockPage.Reader) extends Parts {
    private val chunks = reader.chunks
    override def count: Int = chunks.count
    override def holding(row: Int): Int = chunks.holding(row)
    override def firstRow(p: Int): Int = chunks.firstItem(p)
    override def buffer: Int = 1
    override def span(a: Int, b: Int): (Long, Long) = (chunks.start(a), chunks.start(b))
    override def decode(bytes: Slice, a: Int, b: Int): MiniBlockPage.Decoded = reader.decode(bytes, a, b)
  }

  final class FullZipParts(layout: Encodings21Protos.FullZipLayout, rows: Int, stride: Long, shape: LeafShape,
      maxBytes: Long) extends Parts {
    override def count: Int = rows
    override def holding(row: Int): Int = row
    override def firstRow(p: Int): Int = p
    override def buffer: Int = 0
    override def span(a: Int, b: Int): (Long, Long) = (a * stride, b * stride)
    override def decode(bytes: Slice, a: Int, b: Int): MiniBlockPage.Decoded =
      FullZipPage.decode(layout.toBuilder.setNumItems(b - a).build(), Array(bytes), shape, maxBytes)
  }
}
