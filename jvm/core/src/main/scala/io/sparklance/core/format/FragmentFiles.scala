package io.sparklance.core.format

import com.google.protobuf.ByteString

import io.sparklance.core.{CorruptFileException, InconsistentTableException}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/** Reading the per-fragment side files of a table version: deletion files and row id sequences. */
object FragmentFiles {

  /** The deleted row offsets of a fragment (empty if it has no deletion file). */
  def deletionVector(storage: Storage, layout: TableLayout, fragment: Fragment): DeletionVector =
    fragment.deletionFile match {
      case Some(d) =>
        val path = layout.deletionFilePath(fragment.id, d)
        val dv = DeletionVector.decode(path, d.fileType, storage.readAll(path), fragment.physicalRows)
        if (d.numDeletedRows != 0 && dv.cardinality != d.numDeletedRows) {
          throw new CorruptFileException(path, s"it deletes ${dv.cardinality} rows, but the manifest of version " +
            s"${layout.version} records ${d.numDeletedRows} for fragment ${fragment.id}")
        }
        dv
      case None => DeletionVector.Empty
    }

  /** The stable row ids of a fragment's rows; None when the table has no stable row ids. */
  def rowIds(storage: Storage, root: String, manifestPath: String, fragment: Fragment,
      hasStableRowIds: Boolean): Option[RowIdSequence] = {
    val p = fragment.proto
    import TableProtos.DataFragment.RowIdSequenceCase._
    p.getRowIdSequenceCase match {
      case INLINE_ROW_IDS => Some(RowIdSequence.decode(manifestPath, p.getInlineRowIds, fragment.physicalRows))
      case EXTERNAL_ROW_IDS =>
        val (path, bytes) = external(storage, root, p.getExternalRowIds)
        Some(RowIdSequence.decode(path, bytes, fragment.physicalRows))
      case _ if hasStableRowIds =>
        throw new InconsistentTableException(root, s"the table has stable row ids, but fragment ${fragment.id} has " +
          "no row id sequence")
      case _ => None
    }
  }

  /** A section of a file of the table (row id and version sequences stored out of line). */
  def external(storage: Storage, root: String, f: TableProtos.ExternalFile): (String, ByteString) = {
    val path = Storage.join(root, f.getPath)
    if (f.getSize > 64L * 1024 * 1024) throw new CorruptFileException(path, s"a row id section of ${f.getSize} bytes")
    val in = storage.open(path)
    try { (path, ByteString.copyFrom(in.read(f.getOffset, f.getSize.toInt))) }
    finally in.close()
  }
}
