package io.sparklance.core.format

import io.sparklance.core.UnsupportedFeatureException

/**
 * The manifest's reader and writer feature flags (Manifest fields 9 and 10): a bit set of features a client must
 * understand to read, or to write, the table. Bit values follow upstream Lance's `feature_flags`.
 */
object FeatureFlags {
  val DeletionFiles: Long = 1L
  /** Rows carry stable row ids (`next_row_id`, per-fragment row id sequences). */
  val StableRowIds: Long = 2L
  /** Deprecated marker of file format v2 data files. */
  val UseV2FormatDeprecated: Long = 4L
  val TableConfig: Long = 8L
  /** Data files may live under other base paths (`Manifest.base_paths`). */
  val BasePaths: Long = 16L
  val DisableTransactionFile: Long = 32L

  private val names = Seq(DeletionFiles -> "deletion files", StableRowIds -> "stable row ids",
    UseV2FormatDeprecated -> "v2 format (deprecated flag)", TableConfig -> "table config", BasePaths -> "base paths",
    DisableTransactionFile -> "no transaction files")

  /** Flags this reader implements. */
  val SupportedForRead: Long = names.map(_._1).reduce(_ | _)

  /**
   * Flags this writer implements (writes come with the commit protocol). With base paths, files a version inherits
   * (a branch's or a shallow clone's) stay where their base path says, and every new file goes under the table's
   * own root.
   */
  val SupportedForWrite: Long = DeletionFiles | StableRowIds | UseV2FormatDeprecated | TableConfig | BasePaths

  def describe(flags: Long): Seq[String] =
    names.collect { case (bit, n) if (flags & bit) != 0 => n } ++
      (0 until 64).map(1L << _).filter(b => (flags & b) != 0 && (SupportedForRead & b) == 0).map(b => s"unknown flag $b")

  /** Throws unless every reader flag set on the manifest is understood. */
  def checkReadable(tablePath: String, version: Long, readerFlags: Long): Unit = {
    val unknown = readerFlags & ~SupportedForRead
    if (unknown != 0) {
      throw new UnsupportedFeatureException(
        s"Cannot read version $version of table $tablePath: it requires reader feature flags " +
          s"${bits(unknown).mkString(", ")} (of ${java.lang.Long.toUnsignedString(readerFlags)}), which this " +
          "version of sparklance does not understand. Upgrade sparklance, or read the table with a Lance library " +
          "that supports them.")
    }
  }

  /** Throws unless every writer flag set on the manifest is implemented by this writer. */
  def checkWritable(tablePath: String, version: Long, writerFlags: Long): Unit = {
    val unknown = writerFlags & ~SupportedForWrite
    if (unknown != 0) {
      throw new UnsupportedFeatureException(
        s"Cannot write to table $tablePath (version $version): it requires writer feature flags " +
          s"${bits(unknown).mkString(", ")}, which this version of sparklance does not implement. Upgrade " +
          "sparklance, or write with a Lance library that supports them.")
    }
  }

  private def bits(flags: Long): Seq[String] =
    (0 until 64).map(1L << _).filter(b => (flags & b) != 0).map(java.lang.Long.toUnsignedString)
}
