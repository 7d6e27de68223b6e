package io.sparklance.core.format

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos

/**
 * A fragment: a horizontal slice of the table's rows, stored as one or more data files (each holding some of the
 * columns) plus at most one deletion file (shared/spec/table-format.md, "Fragments").
 */
final class Fragment(val proto: TableProtos.DataFragment) {

  def id: Long = proto.getId

  /** Rows ever written to the fragment, deleted ones included. */
  def physicalRows: Long = proto.getPhysicalRows

  lazy val files: IndexedSeq[DataFile] = proto.getFilesList.asScala.toIndexedSeq.map(new DataFile(_))

  def deletionFile: Option[DeletionFile] =
    if (proto.hasDeletionFile) Some(new DeletionFile(proto.getDeletionFile)) else None

  def numDeletedRows: Long = deletionFile.map(_.numDeletedRows).getOrElse(0L)

  def numRows: Long = physicalRows - numDeletedRows

  override def toString: String = s"Fragment(id=$id, physicalRows=$physicalRows, files=${files.size})"
}

/** A data file of a fragment and the fields (by id) it stores, in column order. */
final class DataFile(val proto: TableProtos.DataFile) {

  /** Path relative to the `data/` directory of the table (or of the file's base path). */
  def path: String = proto.getPath

  /** Field ids per column; [[DataFile.TombstoneFieldId]] marks a column superseded by a newer data file. */
  lazy val fields: IndexedSeq[Int] = proto.getFieldsList.asScala.toIndexedSeq.map(_.intValue)

  lazy val columnIndices: IndexedSeq[Int] = proto.getColumnIndicesList.asScala.toIndexedSeq.map(_.intValue)

  def fileMajorVersion: Int = proto.getFileMajorVersion

  def fileMinorVersion: Int = proto.getFileMinorVersion

  /** The file's size, when the writer recorded it (saves a round trip to the store). */
  def fileSizeBytes: Option[Long] = if (proto.getFileSizeBytes > 0) Some(proto.getFileSizeBytes) else None

  def baseId: Option[Int] = if (proto.hasBaseId) Some(proto.getBaseId) else None

  /** Field ids this file holds that are live (not tombstoned). */
  def liveFields: IndexedSeq[Int] = fields.filter(_ != DataFile.TombstoneFieldId)
}

object DataFile {
  /** A field id of -2 in `DataFile.fields`: the column was rewritten into another data file. */
  val TombstoneFieldId: Int = -2

  /**
   * The manifest's entry for a data file: its name under `data/`, the (field id, column index) of each column, its
   * file version and size.
   */
  def entry(name: String, fieldColumns: Seq[(Int, Int)], version: io.sparklance.core.FileVersion,
      size: Long): TableProtos.DataFile =
    TableProtos.DataFile.newBuilder().setPath(name)
      .addAllFields(fieldColumns.map(c => Integer.valueOf(c._1)).asJava)
      .addAllColumnIndices(fieldColumns.map(c => Integer.valueOf(c._2)).asJava)
      .setFileMajorVersion(version.major).setFileMinorVersion(version.minor)
      .setFileSizeBytes(size).build()
}

/** The reference from a fragment to its deletion file (shared/spec/table-format.md, "Deletion"). */
final class DeletionFile(val proto: TableProtos.DeletionFile) {

  def fileType: TableProtos.DeletionFile.DeletionFileType = proto.getFileType

  def readVersion: Long = proto.getReadVersion

  /** An opaque u64, printed unsigned in the file name. */
  def id: Long = proto.getId

  def numDeletedRows: Long = proto.getNumDeletedRows

  def baseId: Option[Int] = if (proto.hasBaseId) Some(proto.getBaseId) else None

  def extension: String = fileType match {
    case TableProtos.DeletionFile.DeletionFileType.BITMAP => "bin"
    case _ => "arrow"
  }

  /** `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}`, relative to the table root. */
  def relativePath(fragmentId: Long): String =
    s"_deletions/$fragmentId-$readVersion-${java.lang.Long.toUnsignedString(id)}.$extension"
}
