package io.sparklance.core.file

import scala.jdk.CollectionConverters._

import io.sparklance.core.format.{FragmentFiles, Fragment, Manifest, TableLayout}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * Fills in the row counts a manifest leaves unset, as Lance does for tables written before it recorded them (upstream
 * `migrate_fragments`; `DataFragment.physical_rows` and `DeletionFile.num_deleted_rows` are 0, protobuf's default,
 * when a writer did not set them). A fragment's physical rows are then the row count of its first data file, and a
 * deletion file's deleted rows the rows it deletes. A manifest that records both for every fragment (as every
 * current writer does) is returned as it is, without reading anything.
 *
 * Applied where a manifest is read for a table (a checkout and a commit's base), so that scans, counts and the next
 * manifest see the counts; the fragment checks of [[Manifest]] still refuse a fragment whose files hold no rows.
 */
object LegacyFragmentCounts {

  /** The manifest `proto` (read from `manifestPath` of the table at `root`) with every fragment's counts set. */
  def complete(storage: Storage, root: String, manifestPath: String, proto: TableProtos.Manifest): TableProtos.Manifest = {
    val fragments = proto.getFragmentsList.asScala.toIndexedSeq
    if (!fragments.exists(unset)) proto
    else {
      val layout = TableLayout.of(root, new Manifest(proto, manifestPath))
      val b = proto.toBuilder
      fragments.indices.filter(i => unset(fragments(i))).foreach(i => b.setFragments(i, counted(storage, layout, fragments(i))))
      b.build()
    }
  }

  private def unset(f: TableProtos.DataFragment): Boolean = f.getFilesCount > 0 &&
    (f.getPhysicalRows == 0 || f.hasDeletionFile && f.getDeletionFile.getNumDeletedRows == 0)

  private def counted(storage: Storage, layout: TableLayout, p: TableProtos.DataFragment): TableProtos.DataFragment = {
    val b = p.toBuilder
    if (p.getPhysicalRows == 0) {
      val file = new Fragment(p).files.head
      val reader = LanceFileReader.open(storage, layout.dataFilePath(file), file.fileSizeBytes.getOrElse(-1L))
      try b.setPhysicalRows(reader.numRows)
      finally reader.close()
    }
    if (p.hasDeletionFile && p.getDeletionFile.getNumDeletedRows == 0 && b.getPhysicalRows > 0) {
      val deleted = FragmentFiles.deletionVector(storage, layout, new Fragment(b.build())).cardinality
      b.setDeletionFile(p.getDeletionFile.toBuilder.setNumDeletedRows(deleted))
    }
    b.build()
  }
}
