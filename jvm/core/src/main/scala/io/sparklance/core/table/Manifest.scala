package io.sparklance.core.table

import java.time.Instant

import scala.jdk.CollectionConverters._

import io.sparklance.core.schema.LanceSchema
import io.sparklance.proto.TableProtos

/**
 * The manifest of one version of a table (shared/spec/table-format.md, "Manifest"): schema, fragments, feature
 * flags and table settings. A thin view over the protobuf message, which is kept whole so that unknown fields
 * written by newer Lance versions survive a read/modify/write.
 *
 * @param path the manifest file this was read from
 */
final class Manifest(val proto: TableProtos.Manifest, val path: String) {

  def version: Long = proto.getVersion

  /** The commit time of this version (UTC); the epoch if the writer recorded none. */
  def timestamp: Instant = Instant.ofEpochSecond(proto.getTimestamp.getSeconds, proto.getTimestamp.getNanos.toLong)

  lazy val schema: LanceSchema = LanceSchema.fromProtos(path, proto.getFieldsList.asScala.toSeq,
    proto.getSchemaMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap)

  lazy val fragments: IndexedSeq[Fragment] = proto.getFragmentsList.asScala.toIndexedSeq.map(new Fragment(_))

  def readerFeatureFlags: Long = proto.getReaderFeatureFlags

  def writerFeatureFlags: Long = proto.getWriterFeatureFlags

  def hasStableRowIds: Boolean = (readerFeatureFlags & FeatureFlags.StableRowIds) != 0

  /** The highest fragment id ever used, if any fragment was ever written. */
  def maxFragmentId: Option[Long] =
    if (proto.hasMaxFragmentId) Some(proto.getMaxFragmentId.toLong & 0xFFFFFFFFL) else None

  def nextRowId: Long = proto.getNextRowId

  /** The data file format version new files are written with, e.g. "2.2" (Manifest.data_format.version). */
  def dataStorageVersion: Option[String] =
    if (proto.hasDataFormat && proto.getDataFormat.getVersion.nonEmpty) Some(proto.getDataFormat.getVersion) else None

  def config: Map[String, String] = proto.getConfigMap.asScala.toMap

  def tableMetadata: Map[String, String] = proto.getTableMetadataMap.asScala.toMap

  /** Transaction file name under `_transactions/`, if the writer wrote one. */
  def transactionFile: Option[String] = Option(proto.getTransactionFile).filter(_.nonEmpty)

  def writerLibrary: Option[String] =
    if (proto.hasWriterVersion) Some(s"${proto.getWriterVersion.getLibrary} ${proto.getWriterVersion.getVersion}")
    else None

  def basePaths: Map[Int, TableProtos.BasePath] = proto.getBasePathsList.asScala.map(b => b.getId -> b).toMap

  /** Rows in the version: physical rows minus deleted rows, summed over fragments. */
  def numRows: Long = fragments.map(_.numRows).sum

  override def toString: String = s"Manifest(version=$version, fragments=${fragments.size}, path=$path)"
}
