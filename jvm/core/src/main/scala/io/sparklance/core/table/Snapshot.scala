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
    versions(fragment,
      Option.when(p.hasInlineCreatedAtVersions)(p.getInlineCreatedAtVersions),
      Option.when(p.hasExternalCreatedAtVersions)(p.getExternalCreatedAtVersions))
  }

  /** The version each row of a fragment was last updated at, if recorded. */
  def lastUpdatedAtVersions(fragment: Fragment): Option[RowVersionSequence] = {
    val p = fragment.proto
    versions(fragment,
      Option.when(p.hasInlineLastUpdatedAtVersions)(p.getInlineLastUpdatedAtVersions),
      Option.when(p.hasExternalLastUpdatedAtVersions)(p.getExternalLastUpdatedAtVersions))
  }

  /** A row version sequence stored inline in the manifest or in a section of another file. */
  private def versions(fragment: Fragment, inline: Option[ByteString],
      external: Option[TableProtos.ExternalFile]): Option[RowVersionSequence] =
    inline.map(RowVersionSequence.decode(manifest.path, _, fragment.physicalRows)).orElse(external.map { f =>
      val (path, bytes) = FragmentFiles.external(storage, root, f)
      RowVersionSequence.decode(path, bytes, fragment.physicalRows)
    })

  override def toString: String = s"Snapshot($root@$version)"
}
