package io.sparklance.spark

import org.apache.spark.sql.types.{DataType, LongType, MetadataBuilder, ShortType, StringType, StructField, StructType}

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}
import io.sparklance.core.schema.{BlobColumns, LanceField}

/**
 * How blob v2 columns (file version 2.2) read in Spark, chosen by `blob_handling` (pylance's name and values for
 * the same choice; lance-spark has no option and always shows descriptors): a read option of a table read by path,
 * or the setting `spark.sql.catalog.<name>.blob_handling` of a catalog, for all its tables (docs/types.md):
 *  - `all_binary` (the default): `BINARY`, the blobs' bytes;
 *  - `blobs_descriptions`: the descriptor struct lance-spark shows ([[DescriptorType]]), without reading any bytes.
 * Blob columns of file versions 2.0 and 2.1 read as `BINARY` either way, as lance-spark reads them.
 */
sealed trait BlobHandling

object BlobHandling {
  /** Blob v2 columns read as `BINARY`: the blobs' bytes. */
  case object Bytes extends BlobHandling
  /** Blob v2 columns read as their descriptors ([[DescriptorType]]). */
  case object Descriptions extends BlobHandling

  /** The option's (and the catalog setting's) name. */
  val Key = "blob_handling"

  /**
   * A blob v2 descriptor as lance-spark shows it (its `BlobUtils.BLOB_DESCRIPTOR_STRUCT`): the parts of
   * [[BlobColumns.DescriptorParts]] in their order, the unsigned ones widened (`kind` uint8 to SMALLINT, `blob_id`
   * uint32 to BIGINT) or, for positions and sizes in a file, read as BIGINT.
   */
  val DescriptorType: StructType = StructType(Seq(
    StructField("kind", ShortType), StructField("position", LongType), StructField("size", LongType),
    StructField("blob_id", LongType), StructField("blob_uri", StringType)))

  /** The value of `blob_handling` given at `where` (e.g. "Option blob_handling"), or the default when none was. */
  def parse(value: Option[String], where: => String): BlobHandling = value.map(_.trim.toLowerCase) match {
    case None | Some("all_binary") => Bytes
    case Some("blobs_descriptions") => Descriptions
    case Some("all_descriptions") => throw new LanceSparkException(new UnsupportedFeatureException(s"$where = " +
      "all_descriptions (pylance's descriptions of every binary column) is not supported: only blob columns have " +
      "descriptors. Use blobs_descriptions for the blob columns' descriptors, or all_binary for their bytes."))
    case Some(other) => throw new LanceSparkException(new InvalidArgumentException(s"$where must be 'all_binary' " +
      s"(blob columns read as their bytes, the default) or 'blobs_descriptions' (as their descriptors: kind, " +
      s"position, size, blob_id, blob_uri), not '${value.getOrElse(other)}'."))
  }

  /** `blob_handling` among `options` (keys are case-insensitive). */
  def of(options: Map[String, String], where: String): BlobHandling =
    parse(LanceOptions.value(options, Key), s"$where $Key")

  /** Whether Spark values of type `dt` are blob descriptors, which are never written as a blob (or any column). */
  def isDescriptor(dt: DataType): Boolean = dt match {
    case st: StructType => st.fields.map(f => f.name -> f.dataType).toSeq == DescriptorType.fields.map(f => f.name -> f.dataType).toSeq
    case _ => false
  }

  /**
   * The Spark field of a blob v2 column read as descriptors: the metadata of its `BINARY` field but the blob mark,
   * since a descriptor is no blob (a table created from it gets no blob column: [[refuseWrite]]).
   */
  def descriptorField(bytes: StructField): StructField = StructField(bytes.name, DescriptorType, bytes.nullable,
    new MetadataBuilder().withMetadata(bytes.metadata).remove(ColumnProperties.BlobKey).build())

  /** The schema `full` (the table's, read as bytes) with the blob v2 columns of `fields` read as descriptors. */
  def descriptors(full: StructType, fields: Seq[LanceField]): StructType =
    StructType(full.fields.map(f => if (fields.exists(l => l.name == f.name && l.isBlobV2)) descriptorField(f) else f))

  /** The core's projection of a blob v2 column read as descriptors. */
  def projection(field: LanceField): LanceField = BlobColumns.descriptors(field)

  /** The core's projection of column `field` read as Spark shows it by default: a blob v2 column's bytes, else itself. */
  def bytes(field: LanceField): LanceField = if (field.isBlobV2) BlobColumns.view(field, BlobColumns.Data) else field

  /**
   * The error for a write of blob descriptors into `column`: a descriptor points into the files of the table it
   * was read from, so written anywhere, as a blob's bytes or as a struct, it would stand for no blob.
   */
  def refuseWrite(column: String): Nothing = throw new LanceSparkException(new UnsupportedFeatureException(
    s"Cannot write column '$column': its values are blob descriptors (kind, position, size, blob_id, " +
      "blob_uri), as a read with blob_handling = blobs_descriptions shows blob columns, not the blobs' bytes. Read " +
      "the source with blob_handling = all_binary (the default) to copy blobs, or select the descriptor's fields " +
      "(e.g. content.size) to store them as plain columns."))
}
