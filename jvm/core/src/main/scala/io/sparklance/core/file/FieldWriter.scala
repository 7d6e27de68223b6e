package io.sparklance.core.file

import java.nio.ByteBuffer

import org.apache.arrow.vector.FieldVector

/**
 * Where a [[FieldWriter]] sends finished pages. The file writer places each buffer in the data region (64-aligned)
 * and records the page in the column's metadata (file2.proto `ColumnMetadata.Page`).
 */
trait PageSink {

  /**
   * One page of a column. `column` is relative to the field writer's first column; `length` and `priority` are the
   * page's `length`/`priority` fields (rows and first row in 2.1+, items and 0 in 2.0); `encoding` is the page's
   * encoding as a `google.protobuf.Any` (its type URL names the message: `/lance.encodings21.PageLayout` or
   * `/lance.encodings.ArrayEncoding`).
   */
  def page(column: Int, buffers: Array[ByteBuffer], length: Long, priority: Long, encoding: com.google.protobuf.Any): Unit

  /**
   * Writes bytes in the data region outside any page (2.0 and 2.1 blob payloads) and returns their position.
   */
  def raw(bytes: ByteBuffer): Long
}

/**
 * Encodes the values of one top-level field into the pages of its columns. A field writer buffers at most about
 * one page of data per column and emits pages through the sink as they fill; rows never span pages.
 */
trait FieldWriter {

  /** The ids of the fields stored in a column, in column order: what a manifest's `DataFile.fields` lists. */
  def columnFieldIds: IndexedSeq[Int]

  /**
   * The `ColumnMetadata.encoding` of each column: `ColumnEncoding{values}` for all but 2.0 blob columns, which
   * carry `ColumnEncoding{blob{inner{values}}}`.
   */
  def columnEncodings: IndexedSeq[com.google.protobuf.Any] = columnFieldIds.map(_ => FieldWriter.ValuesColumnEncoding)

  /**
   * The field's entries in the file's own schema when they differ from the table's (2.2 blob columns store
   * descriptors); None for the table's fields as they are.
   */
  def fileFields: Option[Seq[io.sparklance.proto.FileProtos.Field]] = None

  /**
   * Adds the next `vector.getValueCount` rows of the field. The vector has the Arrow type the reader produces for
   * the field ([[LanceFileReader.readField]]). The writer copies what it keeps; the caller may reuse the vector.
   */
  def write(vector: FieldVector, sink: PageSink): Unit

  /** Emits the rows still buffered as final pages. */
  def finish(sink: PageSink): Unit
}

object FieldWriter {
  /** `/lance.encodings.ColumnEncoding` holding an empty `values` message: what every plain column carries. */
  val ValuesColumnEncoding: com.google.protobuf.Any = com.google.protobuf.Any.newBuilder()
    .setTypeUrl("/lance.encodings.ColumnEncoding")
    .setValue(com.google.protobuf.ByteString.copyFrom(Array[Byte](0x0a, 0x00))).build()
}
