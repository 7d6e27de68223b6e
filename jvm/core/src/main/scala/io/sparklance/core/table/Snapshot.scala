package io.sparklance.core.table

import com.google.protobuf.ByteString

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

  /** Where this version's files live. */
  lazy val layout: TableLayout = TableLayout.of(root, manifest)

  /** The absolute path of a data file. */
  def dataFilePath(file: DataFile): String = layout.dataFilePath(file)

  /** The absolute path of a fragment's deletion file, if it has one. */
  def deletionFilePath(fragment: Fragment): Option[String] =
    fragment.deletionFile.map(d => layout.deletionFilePath(fragment.id, d))

  /** The deleted row offsets of a fragment (empty if it has no deletion file). */
  def deletionVector(fragment: Fragment): DeletionVector = FragmentFiles.deletionVector(storage, layout, fragment)

  /** The stable row ids of a fragment's rows, if the table has stable row ids. */
  def rowIds(fragment: Fragment): Option[RowIdSequence] =
    FragmentFiles.rowIds(storage, root, manifest.path, fragment, manifest.hasStableRowIds)

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

  private def external(f: TableProtos.ExternalFile): (String, ByteString) = FragmentFiles.external(storage, root, f)

  override def toString: String = s"Snapshot($root@$version)"
}
