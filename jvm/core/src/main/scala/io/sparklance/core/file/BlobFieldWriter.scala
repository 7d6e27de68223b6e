package io.sparklance.core.file

import java.nio.ByteBuffer

import org.apache.arrow.vector.{BaseLargeVariableWidthVector, BaseVariableWidthVector, FieldVector}
import org.apache.arrow.vector.complex.StructVector

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.core.encoding.{Growable, LeafShredder, StructuralPageEncoder}
import io.sparklance.core.schema.{LanceField, LogicalType}
import io.sparklance.proto.{Encodings21Protos, FileProtos}
import io.sparklance.proto.Encodings21Protos.{CompressiveEncoding, Flat, PageLayout, RepDefLayer}

/**
 * Writes a top-level blob column (docs/dev/file-format-2.1.md §6): the bytes of each value go to the data region of
 * the file itself, and the column holds one descriptor per row.
 *
 *  - 2.1: a `large_binary` field with `lance-encoding:blob`; pages are `BlobLayout`s around a mini-block page of
 *    `(position u64, size u64)` descriptors; a null row's descriptor has size 0 and its definition level in the
 *    position (`def << 16`).
 *  - 2.2 (blob v2): a `struct<data: large_binary, uri: string>` field; the file's schema declares the column as a
 *    packed struct of `(kind u8, position u64, size u64, blob_id u32, blob_uri string)` descriptors, written as a
 *    full-zip page of variable packed structs. As pylance 14 writes them, blobs of up to 64 KiB stay in the data
 *    file (kind 0), larger ones go to the data file's sidecars ([[BlobSidecars]]: a shared file, kind 1, or one of
 *    their own above 4 MiB, kind 2). A row with a `uri` (an external blob) is refused.
 */
final class BlobFieldWriter(field: LanceField, version: FileVersion, options: LanceFileWriter.Options,
    sidecars: BlobSidecars) extends FieldWriter {

  private val v22 = version == FileVersion.V2_2
  override val columnFieldIds: IndexedSeq[Int] = IndexedSeq(field.id)

  private val data = new Growable.Bytes(1 << 16)
  private val ends = new Growable.Longs(1024)
  private val nulls = new Growable.Bytes(1024)
  // 2.2: per row, the descriptor's kind, and for sidecar blobs their blob id, position and size.
  private val kinds = new Growable.Bytes(1024)
  private val blobIds = new Growable.Longs(1024)
  private val sidePositions = new Growable.Longs(1024)
  private val sideSizes = new Growable.Longs(1024)
  private var firstRow = 0L

  override def fileFields: Option[Seq[FileProtos.Field]] =
    if (!v22) None
    else {
      def descriptor(name: String, t: String, encoding: Int) = FileProtos.Field.newBuilder().setName(name).setId(-1)
        .setParentId(-1).setLogicalType(t).setEncodingValue(encoding).build()
      val blob = field.proto.toBuilder
        .putMetadata("lance-encoding:blob", com.google.protobuf.ByteString.copyFromUtf8("true"))
        .putMetadata("lance-encoding:packed", com.google.protobuf.ByteString.copyFromUtf8("true")).build()
      Some(Seq(blob, descriptor("kind", "uint8", 1), descriptor("position", "uint64", 1), descriptor("size", "uint64", 1),
        descriptor("blob_id", "uint32", 1), descriptor("blob_uri", "string", 2)))
    }

  override def write(vector: FieldVector, sink: PageSink): Unit = {
    val n = vector.getValueCount
    val bytes: FieldVector = if (v22) {
      val st = vector.asInstanceOf[StructVector]
      val uri = st.getChildrenFromFields.get(1)
      var i = 0
      while (i < n) {
        if (!st.isNull(i) && !uri.isNull(i) && uri.asInstanceOf[BaseVariableWidthVector].getValueLength(i) > 0) {
          throw new UnsupportedFeatureException(s"Cannot write blob column '${field.name}': row $i names an external " +
            "blob (uri), which this version of sparklance does not write. Give the bytes in `data` instead.")
        }
        i += 1
      }
      st.getChildrenFromFields.get(0)
    } else vector
    val b = bytes.asInstanceOf[BaseLargeVariableWidthVector]
    var i = 0
    while (i < n) {
      val isNull = vector.isNull(i) || (v22 && b.isNull(i))
      nulls.add(if (isNull) 1.toByte else 0.toByte)
      var kind = 0
      if (!isNull) {
        val s = b.getOffsetBuffer.getLong(8L * i)
        val e = b.getOffsetBuffer.getLong(8L * (i + 1))
        if (e - s > Int.MaxValue - 64) {
          throw new io.sparklance.core.InvalidArgumentException(s"Cannot write blob column '${field.name}': row $i " +
            s"holds a blob of ${e - s} bytes; a blob holds at most 2 GiB.")
        }
        val len = (e - s).toInt
        if (v22 && len > BlobSidecars.InlineMax) {
          val bytes = new Array[Byte](len)
          b.getDataBuffer.getBytes(s, bytes, 0, len)
          if (len > BlobSidecars.DedicatedMin) {
            kind = 2
            blobIds.add(sidecars.dedicated(bytes, 0, len))
            sidePositions.add(0L)
          } else {
            kind = 1
            val (id, at) = sidecars.packed(bytes, 0, len)
            blobIds.add(id)
            sidePositions.add(at)
          }
          sideSizes.add(len.toLong)
        } else {
          data.ensure(len)
          b.getDataBuffer.getBytes(s, data.data, data.size, len)
          data.size += len
        }
      }
      if (v22) {
        kinds.add(kind.toByte)
        if (kind == 0) { blobIds.add(0L); sidePositions.add(0L); sideSizes.add(0L) }
      }
      ends.add(data.size)
      if (data.size >= options.maxPageBytes) flush(sink)
      i += 1
    }
  }

  override def finish(sink: PageSink): Unit = if (nulls.size > 0) flush(sink)

  private def flush(sink: PageSink): Unit = {
    val rows = nulls.size
    val anyNull = (0 until rows).exists(nulls.data(_) != 0)
    val positions = new Array[Long](rows)
    var start = 0L
    var i = 0
    while (i < rows) {
      val end = ends.data(i)
      val len = (end - start).toInt
      if (nulls.data(i) == 0 && len > 0) positions(i) = sink.raw(ByteBuffer.wrap(data.data, start.toInt, len))
      start = end
      i += 1
    }
    val page = if (v22) blobV2Page(rows, anyNull, positions) else blobPage(rows, anyNull, positions)
    val any = com.google.protobuf.Any.newBuilder().setTypeUrl("/lance.encodings21.PageLayout")
      .setValue(page.layout.toByteString).build()
    sink.page(0, page.buffers, rows, firstRow, any)
    firstRow += rows
    data.clear(); ends.clear(); nulls.clear()
    kinds.clear(); blobIds.clear(); sidePositions.clear(); sideSizes.clear()
  }

  private def size(i: Int): Long = ends.data(i) - (if (i == 0) 0L else ends.data(i - 1))

  /** 2.1: a mini-block page of (position, size) descriptors, wrapped in a BlobLayout with the column's layers. */
  private def blobPage(rows: Int, anyNull: Boolean, positions: Array[Long]): StructuralPageEncoder.Page = {
    val descriptors = new LeafShredder(Array(LeafShredder.LEAF), Array(field.name), LeafShredder.PACKED_STRUCT, 16, null)
    descriptors.packedWidths = Array(8, 8)
    var i = 0
    while (i < rows) {
      val (position, length) = if (nulls.data(i) != 0) (1L << 16, 0L) else (if (size(i) == 0) 0L else positions(i), size(i))
      descriptors.values.u64(position)
      descriptors.values.u64(length)
      descriptors.`def`.add(0)
      i += 1
    }
    descriptors.seen(0) = true
    descriptors.numVisible = rows
    descriptors.numValid = rows
    descriptors.rows = rows
    val inner = StructuralPageEncoder.encode(descriptors, false, false)
    val layout = PageLayout.newBuilder().setBlobLayout(Encodings21Protos.BlobLayout.newBuilder()
      .setInnerLayout(inner.layout)
      .addLayers(if (anyNull) RepDefLayer.REPDEF_NULLABLE_ITEM else RepDefLayer.REPDEF_ALL_VALID_ITEM)).build()
    new StructuralPageEncoder.Page(inner.buffers, layout)
  }

  /** 2.2: a full-zip page of variable packed struct descriptors: kind 0 (bytes in this file), 1 or 2 (a sidecar). */
  private def blobV2Page(rows: Int, anyNull: Boolean, positions: Array[Long]): StructuralPageEncoder.Page = {
    val zip = new Growable.Bytes(rows * 30)
    val index = new Growable.Longs(rows + 1)
    var i = 0
    while (i < rows) {
      index.add(zip.size)
      if (anyNull) zip.add(if (nulls.data(i) != 0) 1.toByte else 0.toByte)
      if (nulls.data(i) == 0) {
        zip.u32(1 + 8 + 8 + 4 + 4)
        val kind = kinds.data(i)
        zip.add(kind)
        zip.u64(if (kind == 0) positions(i) else sidePositions.data(i))
        zip.u64(if (kind == 0) size(i) else sideSizes.data(i))
        zip.u32(blobIds.data(i))
        zip.u32(0)                     // blob_uri: empty
      }
      i += 1
    }
    index.add(zip.size)
    val w = if (zip.size < (1 << 8)) 1 else if (zip.size < (1 << 16)) 2 else 4
    val idx = new Growable.Bytes((rows + 1) * w)
    (0 until index.size).foreach(k => idx.uint(index.data(k), w))
    def flat(bits: Int) = CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits)).build()
    def fixed(bits: Int) = Encodings21Protos.VariablePackedStruct.FieldEncoding.newBuilder().setValue(flat(bits)).setBitsPerValue(bits)
    val uri = Encodings21Protos.VariablePackedStruct.FieldEncoding.newBuilder().setValue(CompressiveEncoding.newBuilder()
      .setVariable(Encodings21Protos.Variable.newBuilder().setOffsets(flat(32)))).setBitsPerLength(32)
    val vps = Encodings21Protos.VariablePackedStruct.newBuilder()
      .addFields(fixed(8)).addFields(fixed(64)).addFields(fixed(64)).addFields(fixed(32)).addFields(uri)
    val layout = PageLayout.newBuilder().setFullZipLayout(Encodings21Protos.FullZipLayout.newBuilder()
      .setBitsDef(if (anyNull) 1 else 0).setBitsPerOffset(32).setNumItems(rows).setNumVisibleItems(rows)
      .setValueCompression(CompressiveEncoding.newBuilder().setVariablePackedStruct(vps))
      .addLayers(if (anyNull) RepDefLayer.REPDEF_NULLABLE_ITEM else RepDefLayer.REPDEF_ALL_VALID_ITEM)).build()
    new StructuralPageEncoder.Page(Array(zip.view(), idx.view()), layout)
  }
}

object BlobFieldWriter {
  /** A top-level blob column: 2.1's blob-marked large binary, or 2.2's blob v2 struct. */
  def isBlob(f: LanceField): Boolean =
    f.parentId == -1 && ((f.isBlob && f.logicalType == LogicalType.Binary(true)) ||
      f.isBlobV2)
}
