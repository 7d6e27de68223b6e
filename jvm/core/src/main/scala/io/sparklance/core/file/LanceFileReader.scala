package io.sparklance.core.file

import java.io.Closeable

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.google.protobuf.{Any => ProtoAny, InvalidProtocolBufferException}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType}

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.encoding._
import io.sparklance.core.schema.{ArrowSchemas, LanceField, LogicalType}
import io.sparklance.core.storage.{InputFile, Storage}
import io.sparklance.core.util.Printable
import io.sparklance.proto.{Encodings21Protos, File2Protos}

/**
 * Reads a Lance data file into Arrow vectors, one column at a time and only the pages a row range needs.
 *
 * A read decodes each needed page whole, so memory is bounded by the pages of the columns asked for, not by the
 * file. Not thread safe; open one reader per task.
 */
final class LanceFileReader private (storage: Storage, in: InputFile, val metadata: FileMetadata) extends Closeable {

  def path: String = metadata.path

  def version: FileVersion = metadata.version

  def numRows: Long = metadata.numRows

  /** The column index of each leaf field (by id), in the layout of the file's version. */
  lazy val leafColumns: Map[Int, Int] = {
    val out = Map.newBuilder[Int, Int]
    var next = 0
    def visit(f: LanceField): Unit = f.logicalType match {
      case LogicalType.Struct if !LanceFileReader.isPacked(f) => f.children.foreach(visit)
      case _: LogicalType.List | LogicalType.Map => f.children.foreach(visit)
      case _ => out += f.id -> next; next += 1
    }
    if (version.isStructural) metadata.schema.fields.foreach(visit)
    out.result()
  }

  /** (field id, column index) for every field stored in a column, in column order: what a manifest's DataFile lists. */
  def fieldColumns: Seq[(Int, Int)] =
    (if (version.isStructural) leafColumns else reader20.columns).toSeq.sortBy(_._2)

  /**
   * Reads rows [from, to) of the given fields (top-level fields of the file's schema, possibly with some children
   * pruned) into a new root owned by the caller.
   */
  def read(fields: Seq[LanceField], from: Long, to: Long, allocator: BufferAllocator): VectorSchemaRoot = {
    if (from < 0 || to < from || to > numRows) {
      throw new IllegalArgumentException(s"rows [$from, $to) of a file of $numRows rows ($path)")
    }
    val vectors = scala.collection.mutable.ArrayBuffer.empty[FieldVector]
    try {
      if (prefetched.isEmpty) prefetch(fields, from, to)
      fields.foreach { f =>
        val vector = LanceFileReader.readField(f).createVector(allocator)
        vectors += vector
        assembling(f) {
          if (version.isStructural) {
            val leaves = LanceFileReader.leavesOf(f).iterator.map(leaf => readLeaf(leaf, from, to))
            ArrowAssembler.fill(vector, leaves.asJava, field => LanceFileReader.isPackedArrow(field))
          } else {
            reader20.fill(vector, f, from, to)
          }
        }
      }
    } catch {
      case NonFatal(e) => vectors.foreach(_.close()); throw e
    }
    val root = new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.map(v => v: FieldVector).asJava, (to - from).toInt)
    root
  }

  /** Whether `prefetch` fetches anything: files of an object store, of version 2.1 or later. */
  def coalesces: Boolean = in.coalesceGap >= 0 && version.isStructural

  // Page bytes fetched ahead by `prefetch`, by the byte range of the page's buffers; consumed by `readBuffers`,
  // dropped by the next prefetch: memory stays bounded by the pages of one read.
  private val prefetched = scala.collection.mutable.HashMap.empty[(Long, Long), Slice]

  /**
   * Fetches the pages that reads of rows [from, to) of these fields will decode (every leaf column, the pages
   * overlapping the rows, except a page already decoded) with few requests: ranges closer than the file's
   * coalescing gap are read as one. On object stores a request costs far more than the bytes between two pages.
   * `read` does this for its own fields; a caller that reads fields one at a time calls it first for all of them.
   * Files of version 2.0 (whose list columns are not paged by rows) are read page by page.
   */
  def prefetch(fields: Seq[LanceField], from: Long, to: Long): Unit = {
    prefetched.clear()
    if (!coalesces) return
    val spans = for {
      f <- fields
      leaf <- f.flatten
      column <- leafColumns.get(leaf.id).toSeq if column < metadata.columns.size
      (page, pi) <- metadata.columns(column).getPagesList.asScala.iterator.zipWithIndex
      if page.getPriority < to && page.getPriority + page.getLength > from && !lastPage.get(column).exists(_._1 == pi)
      span <- LanceFileReader.bufferSpan(page)
    } yield span
    LanceFileReader.coalesce(spans.distinct, in.coalesceGap, LanceFileReader.MaxCoalescedBytes).foreach { case (start, end, members) =>
      if (members.size > 1) {
        val bytes = in.read(start, (end - start).toInt)
        val array = new Array[Byte](bytes.remaining())
        bytes.get(array)
        members.foreach { case (s, e) => prefetched((s, e)) = new Slice(array, (s - start).toInt, (e - s).toInt) }
      }
    }
  }

  /**
   * Reads the rows at the given offsets (any order, repeats allowed) of the given fields. Rows close together are
   * read as one range, so a page is decoded once per cluster of requested rows, not once per row.
   */
  def take(fields: Seq[LanceField], rows: Array[Long], allocator: BufferAllocator): VectorSchemaRoot = {
    rows.foreach { r =>
      if (r < 0 || r >= numRows) throw new IllegalArgumentException(s"row $r of a file of $numRows rows ($path)")
    }
    val sorted = rows.distinct.sorted
    val ranges = scala.collection.mutable.ArrayBuffer.empty[(Long, Long)]
    sorted.foreach { r =>
      if (ranges.nonEmpty && r - ranges.last._2 < LanceFileReader.TakeGap) ranges(ranges.size - 1) = (ranges.last._1, r + 1)
      else ranges += ((r, r + 1))
    }
    val out = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
      fields.map(LanceFileReader.readField).asJava), allocator)
    try {
      out.getFieldVectors.asScala.foreach(_.setInitialCapacity(rows.length))
      out.allocateNew()
      // Variable-width vectors must be written in order, so read every range first, then copy row by row.
      val parts = scala.collection.mutable.ArrayBuffer.empty[VectorSchemaRoot]
      try {
        ranges.foreach { case (from, to) => parts += read(fields, from, to, allocator) }
        val starts = ranges.map(_._1).toArray
        var dst = 0
        while (dst < rows.length) {
          val r = rows(dst)
          var p = java.util.Arrays.binarySearch(starts, r)
          if (p < 0) p = -p - 2
          val src = (r - starts(p)).toInt
          var i = 0
          while (i < fields.size) { RowCopier.copy(parts(p).getVector(i), src, out.getVector(i), dst); i += 1 }
          dst += 1
        }
      } finally parts.foreach(_.close())
      out.setRowCount(rows.length)
      out
    } catch {
      case NonFatal(e) => out.close(); throw e
    }
  }

  /**
   * Turns failures while building a field's vectors into errors naming the file and field: decoding errors and
   * the runtime exceptions that inconsistent lengths in a damaged file can cause.
   */
  private def assembling[T](f: LanceField)(body: => T): T =
    try body
    catch {
      case e: EncodingException =>
        throw new CorruptFileException(path, s"field '${f.name}': ${e.getMessage}", e)
      case e: UnsupportedEncodingException =>
        throw new UnsupportedFeatureException(s"Cannot read data file $path: field '${f.name}' uses ${e.getMessage}, " +
          "which this reader does not support yet.")
      case e @ (_: IndexOutOfBoundsException | _: IllegalArgumentException | _: ArithmeticException |
                _: NegativeArraySizeException | _: org.apache.arrow.memory.OutOfMemoryException |
                _: org.apache.arrow.vector.util.OversizedAllocationException) =>
        throw new CorruptFileException(path, s"field '${f.name}' could not be decoded " +
          s"(${e.getClass.getSimpleName}: ${e.getMessage})", e)
    }

  private def readLeaf(field: LanceField, from: Long, to: Long): ArrowAssembler.Leaf = {
    val column = leafColumns.getOrElse(field.id, throw new CorruptFileException(path,
      s"field '${field.name}' (id ${field.id}) has no column in the file"))
    if (column >= metadata.columns.size) {
      throw new CorruptFileException(path, s"field '${field.name}' maps to column $column, the file has ${metadata.columns.size}")
    }
    val pages = metadata.columns(column).getPagesList.asScala.toIndexedSeq
    val unravelers = new java.util.ArrayList[RepDef.Unraveler]()
    val pieces = scala.collection.mutable.ArrayBuffer.empty[(DataBlock, Int, Int)]
    var pageStart = 0L
    pages.zipWithIndex.foreach { case (page, pi) =>
      val start = page.getPriority
      val end = start + page.getLength
      if (start != pageStart) {
        throw new CorruptFileException(path, s"page $pi of column $column (field '${field.name}') starts at row $start, " +
          s"expected $pageStart")
      }
      pageStart = end
      if (end > from && start < to) {
        val decoded = cachedPage(column, pi) {
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
    if (pageStart != numRows) {
      throw new CorruptFileException(path, s"column $column (field '${field.name}') has pages for $pageStart rows, the file has $numRows")
    }
    val levels = new RepDef.Composite(unravelers)
    if (field.logicalType == LogicalType.Json) {
      // Lance stores json values in the binary JSONB encoding; a read returns them as JSON text.
      val parts = pieces.toSeq.map { case (b, lo, hi) => guard(field, column, -1, "")(Blocks.materialize(Blocks.slice(b, lo, hi))) }
      val joined = if (parts.isEmpty) emptyBlock(field) else if (parts.size == 1) parts.head
        else guard(field, column, -1, "")(Blocks.concat(parts.asJava))
      return new ArrowAssembler.Leaf(levels, guard(field, column, -1, "json")(LanceFileReader.jsonText(joined)))
    }
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

  // The last decoded page of each column: a scan reads a column in batches smaller than its pages, and must
  // decode each page once, not once per batch. Memory stays bounded by one page per column read.
  private val lastPage = scala.collection.mutable.HashMap.empty[Int, (Int, AnyRef)]

  private[file] def cachedPage[T <: AnyRef](column: Int, page: Int)(decode: => T): T =
    lastPage.get(column) match {
      case Some((p, value)) if p == page => value.asInstanceOf[T]
      case _ =>
        val value = decode
        lastPage(column) = (page, value)
        value
    }

  private def emptyBlock(field: LanceField): DataBlock = LanceFileReader.shapeOf(field).zeros(0)

  private def decodePage(field: LanceField, column: Int, pi: Int, page: File2Protos.ColumnMetadata.Page)
      : MiniBlockPage.Decoded = {
    val layout = pageLayout(field, column, pi, page)
    val buffers = readBuffers(page)
    val maxBytes = math.min(Int.MaxValue.toLong - 64, math.max(256L << 20, 64L * buffers.map(_.length.toLong).sum))
    guard(field, column, pi, describe(layout)) {
      layout.getLayoutCase match {
        case Encodings21Protos.PageLayout.LayoutCase.MINI_BLOCK_LAYOUT =>
          MiniBlockPage.decode(layout.getMiniBlockLayout, buffers, maxBytes)
        case Encodings21Protos.PageLayout.LayoutCase.FULL_ZIP_LAYOUT =>
          FullZipPage.decode(layout.getFullZipLayout, buffers, LanceFileReader.shapeOf(field), maxBytes)
        case Encodings21Protos.PageLayout.LayoutCase.CONSTANT_LAYOUT =>
          ConstantPage.decode(layout.getConstantLayout, buffers, page.getLength, LanceFileReader.shapeOf(field), maxBytes)
        case Encodings21Protos.PageLayout.LayoutCase.BLOB_LAYOUT =>
          blobPage(layout.getBlobLayout, buffers, maxBytes)
        case _ =>
          throw new UnsupportedEncodingException(describe(layout), "")
      }
    }
  }

  /**
   * A 2.1 blob page: the inner mini-block page holds one (position u64, size u64) descriptor per level; the bytes
   * live elsewhere in this file. A descriptor with size 0 and position p != 0 is a null, with repetition level
   * `p & 0xFFFF` and definition level `(p >> 16) & 0xFFFF`; size 0 and position 0 is an empty value.
   */
  private def blobPage(layout: Encodings21Protos.BlobLayout, buffers: Array[Slice], maxBytes: Long): MiniBlockPage.Decoded = {
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
            if (p < 0 || sz > metadata.fileSize - p) throw new EncodingException(s"blob $i at $p (+$sz bytes) lies outside the file")
            if (sz > maxBytes) throw new EncodingException(s"blob $i of $sz bytes")
            val b = in.read(p, sz.toInt)
            val a = new Array[Byte](b.remaining()); b.get(a); a
          } else Array.emptyByteArray
        chunks.add(bytes)
      }
      i += 1
    }
    levels.numItems = chunks.size
    new MiniBlockPage.Decoded(levels, Blocks.ofValues(chunks, 64))
  }

  /**
   * The bytes of a blob v2 value (2.2) from its descriptor: kind 0 lives in this file; kind 1 in a shared
   * sidecar file `<data file stem>/<blob_id as 32 binary digits, least significant first>.blob` beside this file,
   * at [position, position + size); kind 2 is a whole sidecar file of that name.
   */
  def blobBytes(kind: Int, position: Long, size: Long, blobId: Long, uri: String): Array[Byte] = {
    if (uri != null && uri.nonEmpty) {
      throw new UnsupportedFeatureException(s"Cannot read a blob of $path: it lives at the external URI $uri, which " +
        "this version of sparklance does not fetch.")
    }
    kind match {
      case 0 => readBytes(position, size)
      case 1 | 2 =>
        val name = (0 until 32).map(i => if (((blobId >>> i) & 1) == 1) '1' else '0').mkString
        val dir = path.stripSuffix(".lance")
        val sidecar = Storage.join(dir, s"$name.blob")
        val file = storage.open(sidecar)
        try {
          val (from, len) = if (kind == 2) (0L, file.length) else (position, size)
          if (from < 0 || len < 0 || len > file.length - from || len > Int.MaxValue - 64) {
            throw new CorruptFileException(sidecar, s"a blob at $from (+$len bytes) lies outside the file of ${file.length} bytes")
          }
          val b = file.read(from, len.toInt)
          val a = new Array[Byte](b.remaining()); b.get(a); a
        } finally file.close()
      case other =>
        throw new UnsupportedFeatureException(s"Cannot read a blob of $path: blob kind $other is not supported by this " +
          "version of sparklance.")
    }
  }

  /** Bytes [position, position + size) of this file. */
  private[file] def readBytes(position: Long, size: Long): Array[Byte] = {
    if (position < 0 || size < 0 || size > metadata.fileSize - position || size > Int.MaxValue - 64) {
      throw new CorruptFileException(path, s"a blob at $position (+$size bytes) lies outside the file of ${metadata.fileSize} bytes")
    }
    val b = in.read(position, size.toInt)
    val a = new Array[Byte](b.remaining()); b.get(a); a
  }

  private def describe(layout: Encodings21Protos.PageLayout): String = layout.getLayoutCase match {
    case Encodings21Protos.PageLayout.LayoutCase.MINI_BLOCK_LAYOUT =>
      val m = layout.getMiniBlockLayout
      s"mini-block(${Encodings21.describe(m.getValueCompression)})"
    case Encodings21Protos.PageLayout.LayoutCase.FULL_ZIP_LAYOUT =>
      s"full-zip(${Encodings21.describe(layout.getFullZipLayout.getValueCompression)})"
    case Encodings21Protos.PageLayout.LayoutCase.CONSTANT_LAYOUT => "constant"
    case Encodings21Protos.PageLayout.LayoutCase.BLOB_LAYOUT => "blob"
    case other => s"unknown page layout #${other.getNumber}"
  }

  private def pageLayout(field: LanceField, column: Int, pi: Int, page: File2Protos.ColumnMetadata.Page)
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
        if (!LanceFileReader.LanceEncodingTypeUrl.matches(any.getTypeUrl)) {
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

  private lazy val reader20 = new Reader20(this)

  /** Reads a page's buffers with one ranged read over their span. */
  private[file] def readBuffers(page: File2Protos.ColumnMetadata.Page): Array[Slice] = {
    val n = page.getBufferOffsetsCount
    if (n == 0) return Array.empty
    val offsets = (0 until n).map(page.getBufferOffsets)
    val sizes = (0 until n).map(page.getBufferSizes)
    val start = offsets.min
    val end = offsets.zip(sizes).map { case (o, s) => o + s }.max
    if (end - start > Int.MaxValue - 64) throw new CorruptFileException(path, s"a page spans ${end - start} bytes")
    val (array, base) = prefetched.remove((start, end)) match {
      case Some(slice) => (slice.array, slice.offset)
      case None =>
        val bytes = in.read(start, (end - start).toInt)
        val a = new Array[Byte](bytes.remaining())
        bytes.get(a)
        (a, 0)
    }
    offsets.zip(sizes).map { case (o, s) => new Slice(array, base + (o - start).toInt, s.toInt) }.toArray
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

  override def close(): Unit = {
    prefetched.clear()
    in.close()
  }
}

object LanceFileReader {

  /** The largest range that coalescing builds from several pages. */
  private[file] val MaxCoalescedBytes = 64L << 20

  /** The byte range [start, end) of a page's buffers, if it has any. */
  private[file] def bufferSpan(page: File2Protos.ColumnMetadata.Page): Option[(Long, Long)] = {
    val n = page.getBufferOffsetsCount
    if (n == 0) None
    else {
      val starts = (0 until n).map(page.getBufferOffsets)
      val ends = (0 until n).map(i => page.getBufferOffsets(i) + page.getBufferSizes(i))
      Some((starts.min, ends.max))
    }
  }

  /**
   * Groups byte ranges into reads: sorted by start, a range joins the current read when it begins at most `gap`
   * bytes after the read's end and the read stays within `maxBytes`. Returns (start, end, the ranges it serves).
   */
  private[file] def coalesce(ranges: Seq[(Long, Long)], gap: Long, maxBytes: Long): Seq[(Long, Long, Seq[(Long, Long)])] = {
    val out = Seq.newBuilder[(Long, Long, Seq[(Long, Long)])]
    var current: Option[(Long, Long, List[(Long, Long)])] = None
    ranges.sortBy(_._1).foreach { case r @ (s, e) =>
      current match {
        case Some((cs, ce, members)) if s <= ce + gap && math.max(ce, e) - cs <= maxBytes =>
          current = Some((cs, math.max(ce, e), r :: members))
        case other =>
          other.foreach { case (cs, ce, members) => out += ((cs, ce, members.reverse)) }
          current = Some((s, e, List(r)))
      }
    }
    current.foreach { case (cs, ce, members) => out += ((cs, ce, members.reverse)) }
    out.result()
  }

  /** Requested rows closer than this are read as one range by `take`. */
  private val TakeGap = 512L

  /** Opens a data file; `knownLength` (the size a manifest records, or -1) spares object stores a status request. */
  def open(storage: Storage, path: String, knownLength: Long = -1L): LanceFileReader = {
    val in = storage.open(path, knownLength)
    try new LanceFileReader(storage, in, FileMetadata.read(in))
    catch { case NonFatal(e) => in.close(); throw e }
  }

  private val PackedKeys = Seq("lance-encoding:packed", "packed")

  /** The value shape of a leaf column of this field. */
  def shapeOf(f: LanceField): LeafShape = {
    import LogicalType._
    def scalar(t: LogicalType): LeafShape = t match {
      case Bool => LeafShape.fixed(1)
      case Int(bits, _) => LeafShape.fixed(bits)
      case HalfFloat | BFloat16 => LeafShape.fixed(16)
      case Float | Date32 => LeafShape.fixed(32)
      case Double | Date64 | Timestamp(_, _) | Duration(_) => LeafShape.fixed(64)
      case t: Time => LeafShape.fixed(t.bitWidth)
      case Decimal(bits, _, _) => LeafShape.fixed(bits)
      case FixedSizeBinary(w) => LeafShape.fixed(8 * w)
      case Null => LeafShape.fixed(8)
      case Utf8(large) => LeafShape.variable(if (large) 64 else 32)
      case Binary(large) => LeafShape.variable(if (large) 64 else 32)
      case Json => LeafShape.variable(64)
      case Dictionary(value, _, _) => scalar(value)
      case FixedSizeList(elem, dim) => LeafShape.fixedSizeList(dim, scalar(elem))
      case other => throw new UnsupportedFeatureException(s"Field '${f.name}' of type $other is not a leaf column")
    }
    if (isPacked(f)) LeafShape.struct(f.children.map(shapeOf).toArray) else scalar(f.logicalType)
  }

  /** The fields of a field's subtree stored as columns (2.1+): leaves, and packed structs as one. */
  def leavesOf(f: LanceField): Seq[LanceField] = f.logicalType match {
    case LogicalType.Struct if !isPacked(f) => f.children.flatMap(leavesOf)
    case _: LogicalType.List | LogicalType.Map => f.children.flatMap(leavesOf)
    case _ => Seq(f)
  }

  /** A large binary column stored as blobs (`lance-encoding:blob=true`): descriptors in the column, bytes elsewhere. */
  def isBlob(f: LanceField): Boolean =
    f.metadataStrings.get("lance-encoding:blob").exists(_.equalsIgnoreCase("true"))

  def isPacked(f: LanceField): Boolean =
    f.logicalType == LogicalType.Struct && PackedKeys.exists(k => f.metadataStrings.get(k).exists(_.equalsIgnoreCase("true")))

  private def isPackedArrow(f: Field): Boolean =
    f.getType.isInstanceOf[ArrowType.Struct] && PackedKeys.exists(k => Option(f.getMetadata.get(k)).exists(_.equalsIgnoreCase("true")))

  /**
   * The Arrow field a read produces: the schema mapping, with dictionary-encoded fields decoded to their values.
   * `json` columns are UTF-8 JSON text (`arrow.json`), as pylance returns them; the reader decodes Lance's binary
   * JSONB encoding.
   */
  /** The type URL of a Lance encoding message (`/lance.encodings21.PageLayout`), of any version. */
  private val LanceEncodingTypeUrl = "([a-z0-9.]+)?/lance\\.encodings[0-9]*\\.[A-Z][A-Za-z0-9]*".r

  def readField(f: LanceField): Field = stripDictionaries(ArrowSchemas.toArrow(f))

  /** A decoded block of JSONB values as a block of their JSON text. */
  private[file] def jsonText(block: DataBlock): DataBlock = block match {
    case w: DataBlock.VariableWidth => Jsonb.toJsonBlock(w)
    case other => throw new EncodingException(s"json values decoded as ${other.getClass.getSimpleName}, not variable-width bytes")
  }

  private def stripDictionaries(f: Field): Field = {
    val ft = new FieldType(f.isNullable, f.getType, null, f.getMetadata)
    new Field(f.getName, ft, f.getChildren.asScala.map(stripDictionaries).asJava)
  }
}
