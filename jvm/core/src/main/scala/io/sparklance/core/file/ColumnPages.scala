package io.sparklance.core.file

import io.sparklance.core.CorruptFileException
import io.sparklance.core.encoding.Slice
import io.sparklance.core.storage.InputFile
import io.sparklance.proto.File2Protos

/**
 * The pages of a data file's columns, as a [[FieldReader]] sees them: each column's metadata, the bytes of its pages
 * (one request per page, or fetched ahead of a read in coalesced requests, or ranges of a page's buffers), and the
 * last page, or run of a page's parts, decoded in each column.
 *
 * Every page buffer's range was checked against the file's size when the metadata was read ([[FileMetadata.read]]).
 * Not thread safe, like the file reader that owns it.
 */
private[file] final class ColumnPages(in: InputFile, val metadata: FileMetadata) {

  def path: String = metadata.path

  def numRows: Long = metadata.numRows

  def fileSize: Long = metadata.fileSize

  /** The number of columns of the file. */
  def size: Int = metadata.columns.size

  def apply(column: Int): File2Protos.ColumnMetadata = metadata.columns(column)

  /** Whether the file's storage asks for nearby ranges to be read as one (object stores). */
  def coalesces: Boolean = in.coalesceGap >= 0

  // Page bytes fetched ahead by `fetchAhead`, by the byte range of the page's buffers; consumed by `buffers`,
  // dropped by the next `fetchAhead`: memory stays bounded by the pages of one read.
  private val fetched = scala.collection.mutable.HashMap.empty[(Long, Long), Slice]

  // The last decoded page of each column: a scan reads a column in batches smaller than its pages, and must
  // decode each page once, not once per batch. Memory stays bounded by one page per column read.
  private val lastPage = scala.collection.mutable.HashMap.empty[Int, (Int, AnyRef)]

  /** Whether pages were fetched ahead and not read yet. */
  def hasFetched: Boolean = fetched.nonEmpty

  /** Drops the pages fetched ahead. */
  def dropFetched(): Unit = fetched.clear()

  /**
   * Fetches the given byte ranges (of page buffers) with few requests: ranges closer than the storage's coalescing
   * gap are read as one, up to [[ColumnPages.MaxCoalescedBytes]]. A range read alone is left to `buffers`.
   */
  def fetchAhead(spans: Seq[(Long, Long)]): Unit =
    ColumnPages.coalesce(spans.distinct, in.coalesceGap, ColumnPages.MaxCoalescedBytes).foreach { case (start, end, members) =>
      if (members.size > 1) {
        val array = read(start, (end - start).toInt)
        members.foreach { case (s, e) => fetched((s, e)) = new Slice(array, (s - start).toInt, (e - s).toInt) }
      }
    }

  /** Reads a page's buffers: from the bytes fetched ahead, or with one ranged read over their span. */
  def buffers(page: File2Protos.ColumnMetadata.Page): Array[Slice] = {
    val n = page.getBufferOffsetsCount
    if (n == 0) return Array.empty
    val offsets = (0 until n).map(page.getBufferOffsets)
    val sizes = (0 until n).map(page.getBufferSizes)
    val start = offsets.min
    val end = offsets.zip(sizes).map { case (o, s) => o + s }.max
    if (end - start > Int.MaxValue - 64) throw new CorruptFileException(path, s"a page spans ${end - start} bytes")
    val (array, base) = fetched.remove((start, end)) match {
      case Some(slice) => (slice.array, slice.offset)
      case None => (read(start, (end - start).toInt), 0)
    }
    offsets.zip(sizes).map { case (o, s) => new Slice(array, base + (o - start).toInt, s.toInt) }.toArray
  }

  /**
   * Bytes [from, from + length) of buffer `buffer` of `page`, read alone: what a reader that decodes parts of a page
   * reads (on storage that does not coalesce requests; the others fetch whole pages ahead).
   */
  def bufferRange(page: File2Protos.ColumnMetadata.Page, buffer: Int, from: Long, length: Long): Slice = {
    if (buffer < 0 || buffer >= page.getBufferOffsetsCount) {
      throw new CorruptFileException(path, s"a page has ${page.getBufferOffsetsCount} buffers, buffer $buffer was asked for")
    }
    val size = page.getBufferSizes(buffer)
    if (from < 0 || length < 0 || length > size - from || length > Int.MaxValue - 64) {
      throw new CorruptFileException(path, s"bytes [$from, ${from + length}) of a page buffer of $size bytes")
    }
    Slice.of(read(page.getBufferOffsets(buffer) + from, length.toInt))
  }

  /** Bytes [position, position + size) of this file, checked to lie inside it (what blob descriptors point at). */
  def bytes(position: Long, size: Long): Array[Byte] = {
    if (position < 0 || size < 0 || size > fileSize - position || size > Int.MaxValue - 64) {
      throw new CorruptFileException(path, s"a blob at $position (+$size bytes) lies outside the file of $fileSize bytes")
    }
    read(position, size.toInt)
  }

  /** Bytes [position, position + length) of this file; the caller has checked the range. */
  def read(position: Long, length: Int): Array[Byte] = {
    val b = in.read(position, length)
    if (b.hasArray && b.arrayOffset() == 0 && b.position() == 0 && b.remaining() == b.array().length) b.array()
    else {
      val a = new Array[Byte](b.remaining())
      b.get(a)
      a
    }
  }

  /** Whether `page` of `column` is the column's last decoded page. */
  def isDecoded(column: Int, page: Int): Boolean = lastPage.get(column).exists(_._1 == page)

  /** Page `page` of `column` decoded: the column's last decoded page if it is that page, else `decode` (kept). */
  def decoded[T <: AnyRef](column: Int, page: Int)(decode: => T): T =
    lastPage.get(column) match {
      case Some((p, value)) if p == page => value.asInstanceOf[T]
      case _ =>
        val value = decode
        lastPage(column) = (page, value)
        value
    }

  // The parts of the last page of each column read in parts (its chunk index, decoders, dictionary): made once.
  private val pageParts = scala.collection.mutable.HashMap.empty[Int, (Int, AnyRef)]

  // The last run of parts decoded in each column read in parts: (page, first part, end part, decoded). Reads of
  // neighbouring rows (a take, batches not aligned to parts) decode a part once.
  private val lastParts = scala.collection.mutable.HashMap.empty[Int, (Int, Int, Int, AnyRef)]

  /** The parts of `page` of `column`: the column's last ones if they are that page's, else `make` (kept). */
  def parts[T <: AnyRef](column: Int, page: Int)(make: => T): T =
    pageParts.get(column) match {
      case Some((p, value)) if p == page => value.asInstanceOf[T]
      case _ =>
        val value = make
        pageParts(column) = (page, value)
        value
    }

  /**
   * Parts [from, to) of `page` of `column` decoded, as (first part decoded, value): the column's last decoded run
   * if it holds them, else `decode(from, to)` (kept).
   */
  def decodedParts[T <: AnyRef](column: Int, page: Int, from: Int, to: Int)(decode: (Int, Int) => T): (Int, T) =
    lastParts.get(column) match {
      case Some((p, a, b, value)) if p == page && a <= from && to <= b => (a, value.asInstanceOf[T])
      case _ =>
        val value = decode(from, to)
        lastParts(column) = (page, from, to, value)
        (from, value)
    }

  def close(): Unit = {
    fetched.clear()
    in.close()
  }
}

private[file] object ColumnPages {

  /** The largest range that coalescing builds from several pages. */
  val MaxCoalescedBytes: Long = 64L << 20

  /** The byte range [start, end) of a page's buffers, if it has any. */
  def bufferSpan(page: File2Protos.ColumnMetadata.Page): Option[(Long, Long)] = {
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
  def coalesce(ranges: Seq[(Long, Long)], gap: Long, maxBytes: Long): Seq[(Long, Long, Seq[(Long, Long)])] = {
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
}
