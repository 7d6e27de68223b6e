package io.sparklance.core.format

import java.time.Instant

import scala.jdk.CollectionConverters._

import io.sparklance.core.CorruptFileException
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.util.Printable
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

  /** The table schema; its field ids are not negative (data files use negative ids for internal fields only). */
  lazy val schema: LanceSchema = {
    val s = LanceSchema.fromProtos(path, proto.getFieldsList.asScala.toSeq,
      proto.getSchemaMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap)
    s.allFields.find(_.id < 0).foreach { f =>
      throw new CorruptFileException(path, s"field '${Printable.of(f.name)}' of the table schema has id ${f.id}")
    }
    s
  }

  /** The fragments, with distinct ids, each checked against the rules every writer follows (see [[checkFragment]]). */
  lazy val fragments: IndexedSeq[Fragment] = {
    val all = proto.getFragmentsList.asScala.toIndexedSeq.map(p => checkFragment(new Fragment(p)))
    val ids = all.map(_.id)
    if (ids.distinct.size != ids.size) {
      throw new CorruptFileException(path, s"fragment ids repeat: ${ids.diff(ids.distinct).distinct.mkString(", ")}")
    }
    all
  }

  /**
   * A fragment has a 32-bit id, rows and at least one data file; each has a file name (no control characters), distinct field ids and,
   * in file versions 2.x, one column index per field id (upstream `DataFile.column_indices`): in 2.1 and later -1
   * exactly for the fields stored in no column of their own (structs, lists and maps that are not packed or
   * blobs, v1 or v2). Anything else is damage.
   */
  private def checkFragment(f: Fragment): Fragment = {
    def corrupt(detail: String) = throw new CorruptFileException(path, s"fragment ${f.id} $detail")
    // Row addresses hold the fragment id in 32 bits.
    if (f.id < 0 || f.id > 0xFFFFFFFFL) corrupt("has an id that does not fit in 32 bits")
    if (f.files.isEmpty) corrupt("has no data files")
    if (f.physicalRows <= 0) corrupt(s"records ${f.physicalRows} physical rows")
    f.files.foreach { d =>
      if (!Printable.isName(d.path)) corrupt(s"names data file '${Printable.of(d.path)}', which is not a valid file name")
      val live = d.liveFields
      if (live.distinct.size != live.size) corrupt(s"lists a field id twice for data file ${d.path}: ${d.fields.mkString(", ")}")
      val columns = d.columnIndices.size
      if ((columns > 0 || d.fileMajorVersion >= 2) && columns != d.fields.size) {
        corrupt(s"lists ${d.fields.size} field ids but $columns column indices for data file ${d.path}")
      }
      if (d.fileMajorVersion > 2 || (d.fileMajorVersion == 2 && d.fileMinorVersion >= 1)) {
        d.fields.zip(d.columnIndices).foreach { case (id, column) =>
          schema.field(id).foreach { field =>
            val ownColumn = field.children.isEmpty || field.isPacked || field.isBlob || field.isBlobV2
            if (ownColumn == (column == -1)) {
              corrupt(s"gives field '${field.name}' (id $id) column index $column in data file ${d.path}; in file " +
                "version 2.1 and later a field has a column of its own exactly when it is a leaf, a packed struct or a blob")
            }
          }
        }
      }
    }
    f
  }

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
