package io.sparklance.core.file

import java.io.{BufferedOutputStream, OutputStream}
import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.vector.VectorSchemaRoot

import io.sparklance.core.{FileVersion, InvalidArgumentException, StorageException}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.Storage
import io.sparklance.proto.{File2Protos, FileProtos}

/**
 * Writes one Lance data file (versions 2.0, 2.1, 2.2) from Arrow batches.
 *
 * {{{
 *   [page buffers, each 64-aligned, padded with 0x48][global buffer 0: FileDescriptor, 64-aligned]
 *   [column metadata ...][column metadata offset table][global buffer offset table][40-byte footer]
 * }}}
 * (docs/dev/file-format-2.1.md §1, file-format-2.0.md §1). Pages are written as the field writers fill them, so
 * memory holds about one page per column, whatever the number of rows. The file becomes visible under its final
 * name only as a whole on stores that write objects at close; callers reference it only after [[finish]] returned.
 */
final class LanceFileWriter private (
    val path: String,
    val schema: LanceSchema,
    val version: FileVersion,
    fieldWriters: IndexedSeq[FieldWriter],
    out: OutputStream,
    sidecars: BlobSidecars) extends AutoCloseable {

  private var position = 0L
  private var rows = 0L
  private var finished = false
  private var closed = false
  private val columnBase: IndexedSeq[Int] = fieldWriters.scanLeft(0)(_ + _.columnFieldIds.size)
  private val pages = Array.fill(columnBase.last)(IndexedSeq.newBuilder[File2Protos.ColumnMetadata.Page])

  /** Rows written so far. */
  def numRows: Long = rows

  /** Bytes written so far (the file's size once finished). */
  def bytesWritten: Long = position

  /** (field id, column index) of every column, in column order: what the manifest's `DataFile` lists. */
  def fieldColumns: IndexedSeq[(Int, Int)] =
    fieldWriters.zipWithIndex.flatMap { case (w, i) => w.columnFieldIds.zipWithIndex.map { case (id, c) => id -> (columnBase(i) + c) } }

  private val extraGlobalBuffers = scala.collection.mutable.ArrayBuffer.empty[Array[Byte]]

  /**
   * Adds a global buffer after the file descriptor (global buffer 0), written at [[finish]]; returns its index.
   * Index files keep auxiliary data there (e.g. a zone map's null rows).
   */
  def addGlobalBuffer(bytes: Array[Byte]): Int = {
    require(!finished, s"$path is already finished")
    extraGlobalBuffers += bytes
    extraGlobalBuffers.size
  }

  /** Appends a batch whose vectors are the schema's top-level fields, in order. */
  def write(batch: VectorSchemaRoot): Unit = {
    require(!finished, s"$path is already finished")
    val vectors = batch.getFieldVectors.asScala
    if (vectors.size != fieldWriters.size) {
      throw new InvalidArgumentException(s"Cannot write to $path: the batch has ${vectors.size} columns, the file's " +
        s"schema has ${fieldWriters.size} (${schema.fields.map(_.name).mkString(", ")}).")
    }
    var i = 0
    while (i < vectors.size) {
      val v = vectors(i)
      if (v.getValueCount != batch.getRowCount) v.setValueCount(batch.getRowCount)
      fieldWriters(i).write(v, sinkFor(i))
      i += 1
    }
    rows += batch.getRowCount
  }

  /** Flushes every column, writes the metadata and footer, and closes the file. Returns the file's size. */
  def finish(): Long = {
    require(!finished, s"$path is already finished")
    finished = true
    storing("write") {
      fieldWriters.zipWithIndex.foreach { case (w, i) => w.finish(sinkFor(i)) }
      sidecars.finish()
      pad()
      val descriptor = FileProtos.FileDescriptor.newBuilder()
        .setSchema(FileProtos.Schema.newBuilder().addAllFields(schema.fields.zip(fieldWriters).flatMap { case (f, w) =>
            w.fileFields.getOrElse(f.flatten.map(_.proto))
          }.asJava)
          .putAllMetadata(schema.metadata.map { case (k, v) => k -> com.google.protobuf.ByteString.copyFrom(v) }.asJava))
        .setLength(rows).build().toByteArray
      val globalBuffer = (position, descriptor.length.toLong)
      emit(descriptor)
      val extras = extraGlobalBuffers.toSeq.map { b =>
        pad()
        val at = position
        emit(b)
        (at, b.length.toLong)
      }
      val encodings = fieldWriters.flatMap(_.columnEncodings)
      val columnMetaStart = position
      val columnOffsets = pages.indices.map { c =>
        val meta = File2Protos.ColumnMetadata.newBuilder()
          .setEncoding(direct(encodings(c)))
          .addAllPages(pages(c).result().asJava).build().toByteArray
        val at = position
        emit(meta)
        (at, meta.length.toLong)
      }
      val cmoStart = position
      emit(table(columnOffsets))
      val gboStart = position
      emit(table(globalBuffer +: extras))
      val footer = ByteBuffer.allocate(FileMetadata.FooterSize).order(ByteOrder.LITTLE_ENDIAN)
      footer.putLong(columnMetaStart).putLong(cmoStart).putLong(gboStart).putInt(1 + extras.size).putInt(pages.length)
        .putShort(version.footerMajor.toShort).putShort(version.footerMinor.toShort).put("LANC".getBytes("US-ASCII"))
      emit(footer.array())
      out.close()
      closed = true
    }
    position
  }

  /** Abandons the file: closes the stream and deletes its blob sidecars (the caller deletes the partial file). */
  override def close(): Unit = if (!closed) {
    closed = true
    try out.close() catch { case NonFatal(_) => }
    sidecars.abandon()
  }

  private def sinkFor(field: Int): PageSink = new PageSink {
    override def page(column: Int, buffers: Array[ByteBuffer], length: Long, priority: Long,
        encoding: com.google.protobuf.Any): Unit = storing("write") {
      val p = File2Protos.ColumnMetadata.Page.newBuilder().setLength(length).setPriority(priority).setEncoding(direct(encoding))
      buffers.foreach { b =>
        pad()
        p.addBufferOffsets(position).addBufferSizes(b.remaining().toLong)
        emit(b)
      }
      pages(columnBase(field) + column) += p.build()
    }

    override def raw(bytes: ByteBuffer): Long = storing("write") {
      pad()
      val at = position
      emit(bytes)
      at
    }
  }

  private def direct(any: com.google.protobuf.Any): File2Protos.Encoding =
    File2Protos.Encoding.newBuilder().setDirect(File2Protos.DirectEncoding.newBuilder().setEncoding(any.toByteString)).build()

  private def table(entries: Seq[(Long, Long)]): Array[Byte] = {
    val b = ByteBuffer.allocate(entries.size * 16).order(ByteOrder.LITTLE_ENDIAN)
    entries.foreach { case (p, s) => b.putLong(p).putLong(s) }
    b.array()
  }

  private def pad(): Unit = {
    val n = ((LanceFileWriter.Alignment - position % LanceFileWriter.Alignment) % LanceFileWriter.Alignment).toInt
    if (n > 0) emit(LanceFileWriter.Padding, n)
  }

  private def emit(bytes: Array[Byte]): Unit = emit(bytes, bytes.length)

  private def emit(bytes: Array[Byte], n: Int): Unit = { out.write(bytes, 0, n); position += n }

  private def emit(b: ByteBuffer): Unit = {
    val buf = b.duplicate()
    if (buf.hasArray) emit0(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining())
    else {
      val chunk = new Array[Byte](math.min(buf.remaining(), 1 << 16))
      while (buf.hasRemaining) {
        val n = math.min(chunk.length, buf.remaining())
        buf.get(chunk, 0, n)
        emit0(chunk, 0, n)
      }
    }
  }

  private def emit0(a: Array[Byte], off: Int, n: Int): Unit = { out.write(a, off, n); position += n }

  private def storing[T](op: String)(body: => T): T =
    try body
    catch {
      case e: java.io.IOException => close(); throw new StorageException(path, op, e)
    }
}

object LanceFileWriter {
  /** Page buffers and global buffers start at multiples of this (upstream `PAGE_BUFFER_ALIGNMENT`). */
  val Alignment = 64
  private val Padding = Array.fill[Byte](Alignment)(0x48)

  /**
   * Options of one file: target page size and the knobs of the encoders. `bitpacking` lets file version 2.1+ pack
   * integer values into fewer bits; off, they are stored flat, which is larger but quicker to write and read: for
   * files written once and read once (an index build's sorted runs). `dictionaries` lets pages of plain values
   * become dictionary pages where that pays; off, they are never tried: for files whose values are all distinct.
   */
  final case class Options(maxPageBytes: Long = 8L << 20, bitpacking: Boolean = true, dictionaries: Boolean = true)

  /** Creates `path` (which must not exist) for a file of the given schema and version. */
  def create(storage: Storage, path: String, schema: LanceSchema, version: FileVersion,
      options: Options = Options()): LanceFileWriter = {
    val sidecars = new BlobSidecars(storage, path)
    val writers = schema.fields.map(f => FieldWriters.create(f, version, options, sidecars))
    val out = new BufferedOutputStream(storage.createStream(path), 1 << 16)
    new LanceFileWriter(path, schema, version, writers, out, sidecars)
  }
}
