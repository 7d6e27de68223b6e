package io.sparklance.core.file

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.schema.LanceField

/** Picks the field writer for a top-level field and a file version. */
object FieldWriters {
  def create(field: LanceField, version: FileVersion, options: LanceFileWriter.Options): FieldWriter = version match {
    case FileVersion.V2_0 =>
      throw new UnsupportedFeatureException(s"Writing Lance file version 2.0 is not supported yet (field '${field.name}'). " +
        "Write file version 2.1 or 2.2.")
    case _ => new StructuralFieldWriter(field, version, options)
  }
}
