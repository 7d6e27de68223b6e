package io.sparklance.core.format

import java.io.ByteArrayOutputStream
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.Channels

import scala.util.control.NonFatal

import org.apache.arrow.flatbuf.{Footer, Message, MessageHeader, RecordBatch}
import org.apache.arrow.memory.{ArrowBuf, RootAllocator}
import org.apache.arrow.vector.{IntVector, UInt4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.compression.CompressionUtil
import org.apache.arrow.vector.ipc.{ArrowFileReader, ArrowFileWriter, SeekableReadChannel}
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CorruptFileException
import io.sparklance.proto.TableProtos.DeletionFile.DeletionFileType

/**
 * The set of deleted row offsets of one fragment, whichever file flavour it was read from.
 *
 * Offsets are positions in the fragment's data files (0 until physical rows). Immutable.
 */
final class DeletionVector private (bitmap: RoaringBitmap) {

  def contains(offset: Int): Boolean = bitmap.contains(offset)

  def cardinality: Long = bitmap.getLongCardinality

  def isEmpty: Boolean = bitmap.isEmpty

  /** The deleted offsets in ascending order. */
  def toSortedArray: Array[Int] = bitmap.toArray

  /**
   * The offsets in [from, to) that are not deleted, or None when none in the range is (the common case, answered
   * without building anything).
   */
  def liveOffsets(from: Long, to: Long): Option[Array[Long]] =
    if (bitmap.isEmpty || bitmap.rangeCardinality(from, to) == 0) None
    else {
      val out = new Array[Long]((to - from - bitmap.rangeCardinality(from, to)).toInt)
      var i = 0
      var r = from
      while (r < to) {
        if (!bitmap.contains(r.toInt)) { out(i) = r; i += 1 }
        r += 1
      }
      Some(out)
    }

  /** A copy of the offsets as a Roaring bitmap. */
  def toBitmap: RoaringBitmap = bitmap.clone()

  override def equals(o: Any): Boolean = o match {
    case d: DeletionVector => d.toBitmap.equals(bitmap)
    case _ => false
  }

  override def hashCode(): Int = bitmap.hashCode()

  override def toString: String = s"DeletionVector(${bitmap.getLongCardinality} rows)"
}

object DeletionVector {

  val Empty: DeletionVector = new DeletionVector(new RoaringBitmap())

  def of(offsets: Int*): DeletionVector = new DeletionVector(RoaringBitmap.bitmapOf(offsets: _*))

  def fromBitmap(bitmap: RoaringBitmap): DeletionVector = new DeletionVector(bitmap.clone())

  /** The Arrow IPC schema of `.arrow` deletion files, as pylance writes them. */
  val ArrowSchema: Schema = new Schema(java.util.Collections.singletonList(
    new Field("row_id", new FieldType(false, new ArrowType.Int(32, false), null), null)))

  /**
   * Decodes a deletion file's bytes. `path` names the file in errors; `physicalRows` bounds the offsets.
   *
   * `.arrow` files are Arrow IPC files with one 32-bit integer column (pylance writes uint32, the spec says int32;
   * both are accepted). `.bin` files are portable-format Roaring bitmaps, validated before they are deserialized
   * so a damaged header cannot cause an unbounded allocation.
   */
  def decode(path: String, fileType: DeletionFileType, bytes: Array[Byte], physicalRows: Long): DeletionVector = {
    val bitmap = fileType match {
      case DeletionFileType.BITMAP => decodeRoaring(path, bytes)
      case _ => decodeArrow(path, bytes, physicalRows)
    }
    if (!bitmap.isEmpty && (bitmap.last().toLong & 0xFFFFFFFFL) >= physicalRows) {
      throw new CorruptFileException(path, s"it deletes row offset ${bitmap.last().toLong & 0xFFFFFFFFL}, but the " +
        s"fragment has only $physicalRows rows (physical_rows in the manifest)")
    }
    new DeletionVector(bitmap)
  }

  private def decodeArrow(path: String, bytes: Array[Byte], physicalRows: Long): RoaringBitmap = {
    // An uncompressed IPC file's buffers fit in its own bytes, and a compressed one's in 4 bytes per row of the
    // fragment (plus validity; a fragment has at most 2^32 rows): a damaged length cannot make Arrow allocate more.
    // The decoder's buffers are arrays, so never more than 2 GiB either.
    val rows = math.min(math.max(physicalRows, 0L), 1L << 32)
    val allocator = new RootAllocator(math.min(math.max(4L * bytes.length, 1L << 16) + 5L * rows, Int.MaxValue.toLong))
    val bitmap = try readArrow(path, bytes, allocator) catch {
      case e: CorruptFileException => closeAfterFailure(allocator); throw e
      case NonFatal(e) =>
        closeAfterFailure(allocator)
        throw new CorruptFileException(path, s"it is not a valid Arrow IPC file (${e.getMessage})", e)
    }
    allocator.close()
    bitmap
  }

  private def readArrow(path: String, bytes: Array[Byte], allocator: RootAllocator): RoaringBitmap = {
      checkBatchHeaders(path, bytes)
      val reader = new ArrowFileReader(
        new SeekableReadChannel(new ByteArrayReadableSeekableByteChannel(bytes)), allocator, ArrowIpcCodecs.INSTANCE) {
        override protected def loadRecordBatch(batch: ArrowRecordBatch): Unit = {
          checkBufferSizes(path, batch)
          super.loadRecordBatch(batch)
        }
      }
      try {
        val root = reader.getVectorSchemaRoot
        val fields = root.getSchema.getFields
        val okType = fields.size == 1 && (fields.get(0).getType match {
          case i: ArrowType.Int => i.getBitWidth == 32
          case _ => false
        })
        if (!okType) {
          throw new CorruptFileException(path, s"an Arrow deletion file must have one 32-bit integer column; this " +
            s"one has schema ${root.getSchema}")
        }
        val bitmap = new RoaringBitmap()
        while (reader.loadNextBatch()) {
          val n = root.getRowCount
          root.getVector(0) match {
            case v: UInt4Vector => var i = 0; while (i < n) { checkNotNull(path, v.isNull(i), i); bitmap.add(v.get(i)); i += 1 }
            case v: IntVector =>
              var i = 0
              while (i < n) {
                checkNotNull(path, v.isNull(i), i)
                if (v.get(i) < 0) throw new CorruptFileException(path, s"it deletes a negative row offset ${v.get(i)}")
                bitmap.add(v.get(i)); i += 1
              }
            case other => throw new CorruptFileException(path, s"unexpected vector ${other.getClass.getSimpleName}")
          }
        }
        bitmap
      } finally reader.close()
  }

  /**
   * Checks the record batch messages the footer of an Arrow IPC file lists, before Arrow's reader slices their
   * bodies (it checks none of this, and fails with bare index errors or reads past a damaged vector): each batch
   * has one column node of its own row count with 0 to that many nulls, and exactly two buffers (validity and
   * values of a 32-bit integer column), inside the batch's body; every offset read stays inside the message (Arrow
   * reads it from the metadata's bytes alone, arrow-rs from the metadata and body together). A file whose footer
   * cannot be read is left to Arrow's reader to refuse. (Arrow format: `format/File.fbs`, `format/Message.fbs`.)
   */
  private def checkBatchHeaders(path: String, bytes: Array[Byte]): Unit = {
    val all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val n = bytes.length
    if (n < 18) return
    val footerLength = all.getInt(n - 10)
    if (footerLength <= 0 || footerLength > n - 18) return
    val blocks = try {
      val footer = Footer.getRootAsFooter(slice(bytes, n - 10 - footerLength, footerLength))
      (0 until footer.recordBatchesLength).map { i =>
        val b = footer.recordBatches(i)
        (b.offset, b.metaDataLength.toLong, b.bodyLength)
      }
    } catch { case NonFatal(_) => return }
    var i = 0
    while (i < blocks.size) {
      def damaged(what: String) = new CorruptFileException(path, s"record batch $i of its Arrow IPC data $what")
      try {
        val (offset, metaLength, bodyLength) = blocks(i)
        if (offset < 8 || offset > n || metaLength < 8 || bodyLength < 0 || bodyLength > n - offset - metaLength) {
          throw damaged(s"lies at [$offset, ${offset + metaLength} + $bodyLength), outside the file's $n bytes")
        }
        // The message is the block's metadata after its length prefix (a continuation marker first, in files since
        // Arrow 0.15); readers take its size from the block, not from that prefix, and so does this check.
        val prefix = if (all.getInt(offset.toInt) == -1) 8 else 4
        val message = Message.getRootAsMessage(slice(bytes, offset.toInt + prefix, (metaLength - prefix).toInt))
        if (message.headerType != MessageHeader.RecordBatch) {
          throw damaged(s"is a message of type ${message.headerType}, not a record batch")
        }
        val batch = message.header(new RecordBatch()).asInstanceOf[RecordBatch]
        val compression = batch.compression()
        if (compression != null) compression.codec()
        if (batch.nodesLength != 1 || batch.buffersLength != 2) {
          throw damaged(s"lists ${batch.nodesLength} column(s) and ${batch.buffersLength} buffers; a deletion " +
            "file's one 32-bit integer column has 2 buffers")
        }
        val node = batch.nodes(0)
        if (node.length != batch.length) throw damaged(s"has ${batch.length} rows, but its column has ${node.length}")
        if (node.nullCount < 0 || node.nullCount > node.length) {
          throw damaged(s"has a column of ${node.length} rows with ${node.nullCount} nulls")
        }
        var b = 0
        while (b < 2) {
          val buffer = batch.buffers(b)
          if (buffer.offset < 0 || buffer.length < 0 || buffer.offset + buffer.length > bodyLength) {
            throw damaged(s"has buffer $b at [${buffer.offset}, ${buffer.offset + buffer.length}), outside its " +
              s"body of $bodyLength bytes")
          }
          b += 1
        }
      } catch {
        case e: CorruptFileException => throw e
        case _: IndexOutOfBoundsException => throw damaged("has metadata with an offset that points outside its message")
        case NonFatal(e) => throw damaged(s"has metadata that is not a valid flatbuffer ($e)")
      }
      i += 1
    }
  }

  private def slice(bytes: Array[Byte], offset: Int, length: Int): ByteBuffer =
    ByteBuffer.wrap(bytes, offset, length).slice().order(ByteOrder.LITTLE_ENDIAN)

  /**
   * Arrow's loader does not check that a batch's buffers hold its rows: a vector given a too-short buffer grows it
   * with zeros when the row count is set, so a damaged length read as row 0 deleted. The one column's buffers are
   * checked here, by the sizes they have once decompressed (a compressed buffer starts with that size, or -1 when
   * its bytes follow as they are); their number and the column's counts are checked by [[checkBatchHeaders]].
   */
  private def checkBufferSizes(path: String, batch: ArrowRecordBatch): Unit = {
    val rows = batch.getLength.toLong
    val buffers = batch.getBuffers
    if (batch.getNodes.size != 1 || buffers.size != 2) {
      throw new CorruptFileException(path, s"a batch of its Arrow IPC data has ${batch.getNodes.size} columns and " +
        s"${buffers.size} buffers, not 1 column of 2 buffers")
    }
    val node = batch.getNodes.get(0)
    val compressed = batch.getBodyCompression.getCodec != CompressionUtil.CodecType.NO_COMPRESSION.getType
    def size(buffer: ArrowBuf): Long =
      if (!compressed || buffer.capacity == 0) buffer.capacity
      else if (buffer.capacity < CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH) -1L
      else {
        val declared = buffer.getLong(0)
        if (declared == CompressionUtil.NO_COMPRESSION_LENGTH) buffer.capacity - CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH
        else declared
      }
    def check(what: String, buffer: ArrowBuf, needed: Long): Unit = {
      val held = size(buffer)
      if (held < needed) {
        throw new CorruptFileException(path, s"a batch of its Arrow IPC data has $rows rows, but its $what buffer " +
          (if (held < 0) s"is ${buffer.capacity} bytes, too short for a compressed buffer" else s"holds $held bytes"))
      }
    }
    if (node.getNullCount > 0) check("validity", buffers.get(0), (rows + 7) / 8)
    check("values", buffers.get(1), 4L * rows)
  }

  // On a damaged file Arrow's reader can fail between allocating a buffer and handing it over; the allocator
  // then reports that buffer as leaked. It is a few bytes of a small file and the error at hand matters more.
  private def closeAfterFailure(allocator: RootAllocator): Unit =
    try allocator.close() catch { case NonFatal(_) => () }

  private def checkNotNull(path: String, isNull: Boolean, i: Int): Unit =
    if (isNull) throw new CorruptFileException(path, s"row $i of the deletion file is null")

  // Portable Roaring format (github.com/RoaringBitmap/RoaringFormatSpec).
  private val SerialCookieNoRun = 12346
  private val SerialCookie = 12347
  private val NoOffsetThreshold = 4

  private def decodeRoaring(path: String, bytes: Array[Byte]): RoaringBitmap = {
    validateRoaring(path, bytes)
    try {
      val bitmap = new RoaringBitmap()
      bitmap.deserialize(ByteBuffer.wrap(bytes))
      checkCardinality(path, bitmap)
      bitmap
    } catch {
      case e: CorruptFileException => throw e
      case NonFatal(e) => throw new CorruptFileException(path, s"it is not a valid Roaring bitmap (${e.getMessage})", e)
    }
  }

  /**
   * The cardinality the container headers state must be the number of rows the containers hold: the reader takes
   * the stated one (`getLongCardinality`), pylance counts, and a damaged header or bitmap makes them differ.
   */
  private def checkCardinality(path: String, bitmap: RoaringBitmap): Unit = {
    var held = 0L
    val rows = bitmap.getIntIterator
    while (rows.hasNext) { rows.next(); held += 1 }
    if (held != bitmap.getLongCardinality) {
      throw new CorruptFileException(path, s"its container headers state ${bitmap.getLongCardinality} deleted rows, " +
        s"its containers hold $held")
    }
  }

  /** Walks the portable-format header and containers, checking every size against the bytes available. */
  private def validateRoaring(path: String, bytes: Array[Byte]): Unit = {
    val buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    def need(n: Long, what: String): Unit =
      if (buf.remaining() < n) {
        throw new CorruptFileException(path, s"the Roaring bitmap is truncated: $what needs $n bytes at offset " +
          s"${buf.position()}, ${buf.remaining()} remain")
      }
    need(4, "the cookie")
    val cookie = buf.getInt()
    val (size, runFlags) =
      if ((cookie & 0xFFFF) == SerialCookie) {
        val size = (cookie >>> 16) + 1
        need((size + 7) / 8, "the run-container flags")
        val flags = new Array[Byte]((size + 7) / 8)
        buf.get(flags)
        (size, flags)
      } else if (cookie == SerialCookieNoRun) {
        need(4, "the container count")
        (buf.getInt(), Array.emptyByteArray)
      } else {
        throw new CorruptFileException(path, f"it does not start with a Roaring cookie (found 0x$cookie%08x)")
      }
    if (size < 0 || size > 65536) throw new CorruptFileException(path, s"the Roaring bitmap claims $size containers")
    def isRun(i: Int) = runFlags.nonEmpty && (runFlags(i / 8) & (1 << (i % 8))) != 0
    need(4L * size, "the container keys")
    val cards = Array.tabulate(size) { _ => buf.getShort(); (buf.getShort() & 0xFFFF) + 1 }
    if (runFlags.isEmpty || size >= NoOffsetThreshold) { need(4L * size, "the container offsets"); buf.position(buf.position() + 4 * size) }
    var i = 0
    while (i < size) {
      if (isRun(i)) {
        need(2, s"run container $i")
        val runs = buf.getShort() & 0xFFFF
        need(4L * runs, s"run container $i")
        buf.position(buf.position() + 4 * runs)
      } else {
        val n = if (cards(i) > 4096) 8192 else 2 * cards(i)
        need(n, s"container $i")
        buf.position(buf.position() + n)
      }
      i += 1
    }
  }

  /** Encodes an Arrow IPC deletion file (uint32 `row_id`), as pylance writes for small sets. */
  def encodeArrow(vector: DeletionVector): Array[Byte] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val root = VectorSchemaRoot.create(ArrowSchema, allocator)
      try {
        val offsets = vector.toSortedArray
        val v = root.getVector(0).asInstanceOf[UInt4Vector]
        v.allocateNew(offsets.length)
        var i = 0
        while (i < offsets.length) { v.set(i, offsets(i)); i += 1 }
        v.setValueCount(offsets.length)
        root.setRowCount(offsets.length)
        val out = new ByteArrayOutputStream()
        val writer = new ArrowFileWriter(root, null, Channels.newChannel(out))
        writer.start(); writer.writeBatch(); writer.end(); writer.close()
        out.toByteArray
      } finally root.close()
    } finally allocator.close()
  }

  /** Encodes a portable-format Roaring bitmap deletion file. */
  def encodeRoaring(vector: DeletionVector): Array[Byte] = {
    val bitmap = vector.toBitmap
    bitmap.runOptimize()
    val buf = ByteBuffer.allocate(bitmap.serializedSizeInBytes())
    bitmap.serialize(buf)
    buf.array()
  }
}
