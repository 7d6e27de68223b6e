package io.sparklance.core

/**
 * A metadata column a scan can add to the table's columns: a non-null 64-bit value per row computed from its
 * fragment and offset (upstream Lance's `_rowid`, `_rowaddr` and `_fragid`).
 */
sealed abstract class MetadataColumn(val name: String) extends Serializable

object MetadataColumn {
  /** The row address: fragment id in the high 32 bits, row offset in the low 32. */
  case object RowAddress extends MetadataColumn("_rowaddr")

  /** The stable row id when the table has them, else the row address. */
  case object RowId extends MetadataColumn("_rowid")

  /** The id of the row's fragment. */
  case object FragmentId extends MetadataColumn("_fragid")

  val all: Seq[MetadataColumn] = Seq(RowId, RowAddress, FragmentId)

  def byName(name: String): Option[MetadataColumn] = all.find(_.name == name)
}
