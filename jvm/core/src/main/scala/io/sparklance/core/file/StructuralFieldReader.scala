package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.FieldVector

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.{LanceField, LogicalType}

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

  /** Rows [from, to) of a leaf column: its levels across the pages overlapping the rows, and their values. */
  private def readLeaf(field: LanceField, from: Long, to: Long): ArrowAssembler.Leaf = {
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
        val decoded = pages.decoded(column, pi) {
          val d = decodePage(field, column, pi, page)
          val rows = guard(field, column, pi, "")(d.levels.numRows())
          if (rows != page.getLength) {
            throw new CorruptFileException(path, s"page $pi of column $column (field '${field.name}'): its levels " +
              s"describe $rows rows, its metadata says ${page.getLength}")
          }
          d
        }
        val lo = (math.max(from, start) - start).toInt
        val hi = (math.min(to, end) - start).toInt
        val sliced = guard(field, column, pi, "")(decoded.levels.slice(lo, hi))
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
    val levels = new RepDef.Composite(unravelers)
    if (field.logicalType == LogicalType.Json) {
      // Lance stores json values in the binary JSONB encoding; a read returns them as JSON text.
      val parts = pieces.toSeq.map { case (b, lo, hi) => guard(field, column, -1, "")(Blocks.materialize(Blocks.slice(b, lo, hi))) }
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
          val parts = many.map { case (b, lo, hi) => guard(field, column, -1, "")(Blocks.materialize(Blocks.slice(b, lo, hi))) }
          new ArrowAssembler.Leaf(levels, guard(field, column, -1, "")(Blocks.concat(parts.asJava)))
      }
    }
  }

  private def emptyBlock(field: LanceField): DataBlock = ColumnLayout.shapeOf(field).zeros(0)

  private def decodePage(field: LanceField, column: Int, pi: Int, page: io.sparklance.proto.File2Protos.ColumnMetadata.Page)
      : MiniBlockPage.Decoded = {
    val layout = StructuralPages.layout(path, field, column, pi, page)
    val buffers = pages.buffers(page)
    val maxBytes = math.min(Int.MaxValue.toLong - 64, math.max(256L << 20, 64L * buffers.map(_.length.toLong).sum))
    guard(field, column, pi, StructuralPages.describe(layout)) {
      StructuralPages.decode(layout, buffers, page.getLength, ColumnLayout.shapeOf(field), maxBytes, pages)
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
