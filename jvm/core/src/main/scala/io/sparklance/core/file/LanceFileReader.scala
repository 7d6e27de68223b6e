package io.sparklance.core.file

import java.io.Closeable

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{Field, FieldType}

import io.sparklance.core.{CorruptFileException, FileVersion, UnsupportedFeatureException}
import io.sparklance.core.encoding.{EncodingException, UnsupportedEncodingException}
import io.sparklance.core.schema.{ArrowSchemas, LanceField}
import io.sparklance.core.storage.{InputFile, Storage}

/**
 * Reads a Lance data file into Arrow vectors, one column at a time and only the pages a row range needs.
 *
 * The file level lives here: the footer and metadata ([[FileMetadata]]), row ranges, takes, blobs. Columns and
 * their pages are read by the [[FieldReader]] of the file's version, which reaches the file's bytes only through
 * [[ColumnPages]]. A read decodes each needed page whole, so memory is bounded by the pages of the columns asked
 * for, not by the file. Not thread safe; open one reader per task.
 */
final class LanceFileReader private (storage: Storage, in: InputFile, val metadata: FileMetadata) extends Closeable {

  private val pages = new ColumnPages(in, metadata)

  private val fieldReader: FieldReader = FieldReaders.create(pages)

  def path: String = metadata.path

  def version: FileVersion = metadata.version

  def numRows: Long = metadata.numRows

  /** (field id, column index) for every field stored in a column, in column order: what a manifest's DataFile lists. */
  def fieldColumns: Seq[(Int, Int)] = fieldReader.columns.toSeq.sortBy(_._2)

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
      if (!pages.hasFetched) prefetch(fields, from, to)
      fields.foreach { f =>
        val vector = LanceFileReader.readField(f).createVector(allocator)
        vectors += vector
        assembling(f)(fieldReader.fill(vector, f, from, to))
      }
    } catch {
      case NonFatal(e) => vectors.foreach(_.close()); throw e
    }
    new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.map(v => v: FieldVector).asJava, (to - from).toInt)
  }

  /**
   * Rows [from, to) of a field of the file's schema as dictionary indices ([[DictionaryCodes]]), when it is one
   * leaf column whose pages there are all dictionary-encoded; None otherwise. A later `read` of the same rows
   * decodes no page again.
   */
  def dictionaryCodes(field: LanceField, from: Long, to: Long): Option[DictionaryCodes] = {
    if (from < 0 || to < from || to > numRows) {
      throw new IllegalArgumentException(s"rows [$from, $to) of a file of $numRows rows ($path)")
    }
    if (from == to) None
    else {
      if (!pages.hasFetched) prefetch(Seq(field), from, to)
      assembling(field)(fieldReader.dictionaryCodes(field, from, to))
    }
  }

  /**
   * The bytes of global buffer `i` (0 is the file descriptor; index files keep auxiliary data in later ones, such as
   * a zone map's null rows), checked against the file's size.
   */
  def globalBuffer(i: Int): java.nio.ByteBuffer = {
    val buffers = metadata.globalBuffers
    if (i < 0 || i >= buffers.size) {
      throw new CorruptFileException(path, s"it has ${buffers.size} global buffers, no global buffer $i")
    }
    val (position, size) = buffers(i)
    if (position < 0 || size < 0 || size > Int.MaxValue || position + size > metadata.fileSize) {
      throw new CorruptFileException(path, s"its global buffer $i spans bytes [$position, ${position + size}), past its " +
        s"${metadata.fileSize} bytes")
    }
    in.read(position, size.toInt)
  }

  /** Whether `prefetch` fetches anything: files of an object store, of version 2.1 or later. */
  def coalesces: Boolean = pages.coalesces && fieldReader.plansPages

  /**
   * Fetches the pages that reads of rows [from, to) of these fields will decode (every leaf column, the pages
   * overlapping the rows, except a page already decoded) with few requests: ranges closer than the file's
   * coalescing gap are read as one. On object stores a request costs far more than the bytes between two pages.
   * `read` does this for its own fields; a caller that reads fields one at a time calls it first for all of them.
   * Files of version 2.0 (whose list columns are not paged by rows) are read page by page.
   */
  def prefetch(fields: Seq[LanceField], from: Long, to: Long): Unit = {
    pages.dropFetched()
    if (coalesces) pages.fetchAhead(fieldReader.pageSpans(fields, from, to))
  }

  /**
   * Reads the rows at the given offsets (any order, repeats allowed) of the given fields. Rows close together are
   * read as one range, so a page is decoded once per cluster of requested rows, not once per row.
   */
  def take(fields: Seq[LanceField], rows: Array[Long], allocator: BufferAllocator): VectorSchemaRoot = {
    var k = 0
    var ascending = true
    while (k < rows.length) {
      val r = rows(k)
      if (r < 0 || r >= numRows) throw new IllegalArgumentException(s"row $r of a file of $numRows rows ($path)")
      ascending &&= k == 0 || r > rows(k - 1)
      k += 1
    }
    val sorted = if (ascending) rows else rows.distinct.sorted
    // Ranges [starts(i), ends(i)) of rows closer than TakeGap.
    val starts = new Array[Long](sorted.length)
    val ends = new Array[Long](sorted.length)
    var ranges = 0
    k = 0
    while (k < sorted.length) {
      val r = sorted(k)
      if (ranges > 0 && r - ends(ranges - 1) < LanceFileReader.TakeGap) ends(ranges - 1) = r + 1
      else { starts(ranges) = r; ends(ranges) = r + 1; ranges += 1 }
      k += 1
    }
    val out = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(
      fields.map(LanceFileReader.readField).asJava), allocator)
    try {
      out.getFieldVectors.asScala.foreach(_.setInitialCapacity(rows.length))
      out.allocateNew()
      // Variable-width vectors must be written in order, so read every range first, then copy row by row.
      val parts = new Array[VectorSchemaRoot](ranges)
      try {
        var p = 0
        while (p < ranges) { parts(p) = read(fields, starts(p), ends(p), allocator); p += 1 }
        val sources = parts.map(_.getFieldVectors.asScala.toArray)
        val targets = out.getFieldVectors.asScala.toArray
        var dst = 0
        p = 0
        while (dst < rows.length) {
          val r = rows(dst)
          // Ascending rows move through the ranges in order; others are looked up.
          if (!(r >= starts(p) && r < ends(p))) {
            p = java.util.Arrays.binarySearch(starts, 0, ranges, r)
            if (p < 0) p = -p - 2
          }
          val src = (r - starts(p)).toInt
          var i = 0
          while (i < targets.length) { RowCopier.copy(sources(p)(i), src, targets(i), dst); i += 1 }
          dst += 1
        }
      } finally parts.foreach(r => if (r != null) r.close())
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

  /**
   * The bytes of a blob v2 value (2.2) from its descriptor: kind 0 lives in this file; kind 1 in a shared
   * sidecar file ([[BlobSidecars]]) at [position, position + size); kind 2 is a whole sidecar file.
   */
  def blobBytes(kind: Int, position: Long, size: Long, blobId: Long, uri: String): Array[Byte] = {
    if (uri != null && uri.nonEmpty) {
      throw new UnsupportedFeatureException(s"Cannot read a blob of $path: it lives at the external URI $uri, which " +
        "this version of sparklance does not fetch. Leave the column out of the query, or read it with pylance.")
    }
    kind match {
      case 0 => pages.bytes(position, size)
      case 1 | 2 =>
        val sidecar = Storage.join(BlobSidecars.directory(path), BlobSidecars.fileName(blobId))
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

  override def close(): Unit = pages.close()
}

object LanceFileReader {

  /**
   * Requested rows closer than this are read as one range by `take`. Reads decode pages by parts (mini-block
   * chunks of 32 to 4096 rows in pylance's files), so a range should not span much more than the rows it needs;
   * each range is one read of every field, so ranges should not be many.
   */
  private[core] val TakeGap = 128L

  /** Opens a data file; `knownLength` (the size a manifest records, or -1) spares object stores a status request. */
  def open(storage: Storage, path: String, knownLength: Long = -1L): LanceFileReader = {
    val in = storage.open(path, knownLength)
    try new LanceFileReader(storage, in, FileMetadata.read(in))
    catch { case NonFatal(e) => in.close(); throw e }
  }

  /**
   * Opens a file that is never rewritten in place: a data file a manifest names (`data/<uuid>.lance`) or a file of
   * an index (under `_indices/<uuid>/`). Its metadata may come from [[FileMetadataCache.Shared]], which spares
   * reading and parsing it again for each query that reads a few rows of it.
   */
  def openImmutable(storage: Storage, path: String, knownLength: Long = -1L): LanceFileReader = {
    val in = storage.open(path, knownLength)
    try new LanceFileReader(storage, in, FileMetadataCache.Shared(in)(FileMetadata.read(in)))
    catch { case NonFatal(e) => in.close(); throw e }
  }

  /** The fields of a field's subtree stored as columns in 2.1+ ([[ColumnLayout.leavesOf]]). */
  def leavesOf(f: LanceField): Seq[LanceField] = ColumnLayout.leavesOf(f)

  /**
   * The Arrow field a read produces: the schema mapping, with dictionary-encoded fields decoded to their values.
   * `json` columns are UTF-8 JSON text (`arrow.json`), as pylance returns them; the reader decodes Lance's binary
   * JSONB encoding.
   */
  def readField(f: LanceField): Field = stripDictionaries(ArrowSchemas.toArrow(f))

  private def stripDictionaries(f: Field): Field = {
    val ft = new FieldType(f.isNullable, f.getType, null, f.getMetadata)
    new Field(f.getName, ft, f.getChildren.asScala.map(stripDictionaries).asJava)
  }
}
