package io.sparklance.core.table

import com.google.protobuf.ByteString

import io.sparklance.core.{CorruptFileException, InconsistentTableException}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * One version of a table, pinned: its manifest and how to find the files it references. Everything read through a
 * snapshot belongs to that version, whatever is committed meanwhile.
 */
final class Snapshot(val dataset: Dataset, val manifest: Manifest, val naming: ManifestNaming) {

  def root: String = dataset.root

  def storage: Storage = dataset.storage

  def version: Long = manifest.version

  def schema: LanceSchema = manifest.schema

  def fragments: IndexedSeq[Fragment] = manifest.fragments

  /** The absolute path of a data file. */
  def dataFilePath(file: DataFile): String = Storage.join(dataDir(file.baseId, file.path), file.path)

  /** The absolute path of a fragment's deletion file, if it has one. */
  def deletionFilePath(fragment: Fragment): Option[String] =
    fragment.deletionFile.map(d => Storage.join(baseRoot(d.baseId, fragment.id.toString), d.relativePath(fragment.id)))

  /** The deleted row offsets of a fragment (empty if it has no deletion file). */
  def deletionVector(fragment: Fragment): DeletionVector = (fragment.deletionFile, deletionFilePath(fragment)) match {
    case (Some(d), Some(path)) =>
      val dv = DeletionVector.decode(path, d.fileType, storage.readAll(path), fragment.physicalRows)
      if (d.numDeletedRows != 0 && dv.cardinality != d.numDeletedRows) {
        throw new CorruptFileException(path, s"it deletes ${dv.cardinality} rows, but the manifest of version " +
          s"$version records ${d.numDeletedRows} for fragment ${fragment.id}")
      }
      dv
    case _ => DeletionVector.Empty
  }

  /** The stable row ids of a fragment's rows, if the table has stable row ids. */
  def rowIds(fragment: Fragment): Option[RowIdSequence] = {
    val p = fragment.proto
    import TableProtos.DataFragment.RowIdSequenceCase._
    p.getRowIdSequenceCase match {
      case INLINE_ROW_IDS => Some(RowIdSequence.decode(manifest.path, p.getInlineRowIds, fragment.physicalRows))
      case EXTERNAL_ROW_IDS =>
        val (path, bytes) = external(p.getExternalRowIds)
        Some(RowIdSequence.decode(path, bytes, fragment.physicalRows))
      case _ if manifest.hasStableRowIds =>
        throw new InconsistentTableException(root, s"version $version has stable row ids, but fragment " +
          s"${fragment.id} has no row id sequence")
      case _ => None
    }
  }

  /** The version each row of a fragment was created at, if recorded. */
  def createdAtVersions(fragment: Fragment): Option[RowVersionSequence] = {
    val p = fragment.proto
    import TableProtos.DataFragment.CreatedAtVersionSequenceCase._
    p.getCreatedAtVersionSequenceCase match {
      case INLINE_CREATED_AT_VERSIONS =>
        Some(RowVersionSequence.decode(manifest.path, p.getInlineCreatedAtVersions, fragment.physicalRows))
      case EXTERNAL_CREATED_AT_VERSIONS =>
        val (path, bytes) = external(p.getExternalCreatedAtVersions)
        Some(RowVersionSequence.decode(path, bytes, fragment.physicalRows))
      case _ => None
    }
  }

  /** The version each row of a fragment was last updated at, if recorded. */
  def lastUpdatedAtVersions(fragment: Fragment): Option[RowVersionSequence] = {
    val p = fragment.proto
    import TableProtos.DataFragment.LastUpdatedAtVersionSequenceCase._
    p.getLastUpdatedAtVersionSequenceCase match {
      case INLINE_LAST_UPDATED_AT_VERSIONS =>
        Some(RowVersionSequence.decode(manifest.path, p.getInlineLastUpdatedAtVersions, fragment.physicalRows))
      case EXTERNAL_LAST_UPDATED_AT_VERSIONS =>
        val (path, bytes) = external(p.getExternalLastUpdatedAtVersions)
        Some(RowVersionSequence.decode(path, bytes, fragment.physicalRows))
      case _ => None
    }
  }

  private def external(f: TableProtos.ExternalFile): (String, ByteString) = {
    val path = Storage.join(root, f.getPath)
    if (f.getSize > 64L * 1024 * 1024) throw new CorruptFileException(path, s"a row id section of ${f.getSize} bytes")
    val in = storage.open(path)
    try (path, ByteString.copyFrom(in.read(f.getOffset, f.getSize.toInt)))
    finally in.close()
  }

  /** The root a file of the given base path lives under (the table root when `baseId` is None). */
  private def baseRoot(baseId: Option[Int], what: String): String = baseId match {
    case None => root
    case Some(id) =>
      manifest.basePaths.get(id).map(_.getPath.stripSuffix("/")).getOrElse(throw new InconsistentTableException(root,
        s"version $version references base path id $id for $what, but its manifest defines no such base path"))
  }

  private def dataDir(baseId: Option[Int], what: String): String = baseId match {
    case None => Storage.join(root, "data")
    case Some(id) =>
      val base = manifest.basePaths.getOrElse(id, throw new InconsistentTableException(root,
        s"version $version references base path id $id for $what, but its manifest defines no such base path"))
      if (base.getIsDatasetRoot) Storage.join(base.getPath.stripSuffix("/"), "data") else base.getPath.stripSuffix("/")
  }

  override def toString: String = s"Snapshot($root@$version)"
}
