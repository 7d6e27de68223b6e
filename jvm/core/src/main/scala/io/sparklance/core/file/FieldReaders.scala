package io.sparklance.core.file

import io.sparklance.core.FileVersion

/** Picks the field reader for a data file's version. */
private[file] object FieldReaders {
  def create(pages: ColumnPages): FieldReader = pages.metadata.version match {
    case FileVersion.V2_0 => new FieldReader20(pages)
    case FileVersion.V2_1 | FileVersion.V2_2 => new StructuralFieldReader(pages)
  }
}
