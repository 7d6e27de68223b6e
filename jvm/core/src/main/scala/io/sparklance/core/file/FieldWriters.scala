package io.sparklance.core.file

import io.sparklance.core.FileVersion
import io.sparklance.core.schema.LanceField

/**
 * Picks the field writer for a top-level field and a file version; blob v2 columns put their larger blobs in the
 * data file's `sidecars`.
 */
object FieldWriters {
  def create(field: LanceField, version: FileVersion, options: LanceFileWriter.Options,
      sidecars: BlobSidecars): FieldWriter = version match {
    case FileVersion.V2_0 => new Writer20(field, options)
    case _ if BlobFieldWriter.isBlob(field) => new BlobFieldWriter(field, version, options, sidecars)
    case _ => new StructuralFieldWriter(field, version, options)
  }
}
