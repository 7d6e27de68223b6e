package io.sparklance.core.file

import org.apache.arrow.vector.FieldVector

import io.sparklance.core.encoding.{DataBlock, EncodingException, Jsonb}
import io.sparklance.core.schema.LanceField

/**
 * Decodes the columns of a data file's fields into Arrow vectors, in the column layout of one file version. The
 * file reader picks one per file ([[FieldReaders.create]]) and reads every field through it; the field reader
 * reaches the file only through its [[ColumnPages]].
 */
private[file] trait FieldReader {

  /** The column index of each field stored in a column, by field id: what a manifest's `DataFile` lists. */
  def columns: Map[Int, Int]

  /**
   * Whether the pages a read needs are known before it decodes any, so they can be fetched ahead in coalesced
   * requests ([[pageSpans]]).
   */
  def plansPages: Boolean

  /**
   * The byte ranges of the pages a read of rows [from, to) of these fields will fetch: the pages of every column
   * of the fields overlapping the rows, except each column's page already decoded. Empty unless [[plansPages]].
   */
  def pageSpans(fields: Seq[LanceField], from: Long, to: Long): Seq[(Long, Long)]

  /**
   * Fills `vector`, created from [[LanceFileReader.readField]] of `field`, with rows [from, to) of that top-level
   * field of the file's schema (possibly with some children pruned).
   */
  def fill(vector: FieldVector, field: LanceField, from: Long, to: Long): Unit

  /**
   * Rows [from, to) of a top-level field that is one leaf column, as indices into the dictionaries of its pages
   * when every page holding them is dictionary-encoded; None otherwise (other layouts, nested fields, versions
   * whose reader does not offer it).
   */
  def dictionaryCodes(field: LanceField, from: Long, to: Long): Option[DictionaryCodes] = None
}

private[file] object FieldReader {

  /** A decoded block of JSONB values as a block of their JSON text (Lance stores json values as JSONB). */
  def jsonText(block: DataBlock): DataBlock = block match {
    case w: DataBlock.VariableWidth => Jsonb.toJsonBlock(w)
    case other => throw new EncodingException(s"json values decoded as ${other.getClass.getSimpleName}, not variable-width bytes")
  }
}
