package io.sparklance.core

/**
 * The one exception family of sparklance: every failure a user can see is one of these.
 *
 * Each carries an `errorClass` (stable, upper snake case, prefixed `LANCE_`) and an ANSI/ISO `sqlState`, so that
 * the Spark boundary and the Python package can map errors by class, never by message text. Messages say what went
 * wrong, why, and what to do.
 */
abstract class LanceException(val errorClass: String, val sqlState: String, message: String, cause: Throwable)
    extends RuntimeException(message, cause)

/** A storage operation (read, list, create, delete) failed; names the path and the operation. */
final class StorageException(val path: String, val operation: String, cause: Throwable)
    extends LanceException("LANCE_STORAGE_ERROR", "58030",
      s"Cannot $operation $path: ${StorageException.describe(cause)}", cause)

object StorageException {
  private def describe(t: Throwable): String =
    Option(t).map(c => Option(c.getMessage).getOrElse(c.getClass.getSimpleName)).getOrElse("unknown error")
}

/** A file of the table (manifest, deletion file, data file, ...) does not hold what the format says it must. */
final class CorruptFileException(val path: String, detail: String, cause: Throwable = null)
    extends LanceException("LANCE_CORRUPT_FILE", "XX001",
      s"Cannot read $path: $detail. The file is damaged or was not written by a Lance writer; restore it from a " +
        "backup or check out an earlier version of the table.", cause)

/** The path holds no Lance table. */
final class NotATableException(val path: String, detail: String)
    extends LanceException("LANCE_NOT_A_TABLE", "42P01",
      s"$path is not a Lance table: $detail. Check the path; a Lance table is a directory with a _versions/ " +
        "directory of manifests.", null)

/** A version asked for (by number or by timestamp) does not exist. */
final class VersionNotFoundException(val path: String, detail: String)
    extends LanceException("LANCE_VERSION_NOT_FOUND", "22023", s"Table $path: $detail", null)

/** A tag asked for does not exist. */
final class TagNotFoundException(val path: String, val tag: String, known: Iterable[String])
    extends LanceException("LANCE_TAG_NOT_FOUND", "22023",
      s"Table $path has no tag '$tag'. " +
        (if (known.isEmpty) "It has no tags." else s"Its tags are: ${known.toSeq.sorted.mkString(", ")}."), null)

/** The table's files break a rule of the table format as a whole (not one damaged file). */
final class InconsistentTableException(val path: String, detail: String)
    extends LanceException("LANCE_INCONSISTENT_TABLE", "55000", s"Table $path is inconsistent: $detail", null)

/** The table or file uses a feature this version of sparklance does not implement. */
final class UnsupportedFeatureException(detail: String)
    extends LanceException("LANCE_UNSUPPORTED_FEATURE", "0A000", detail, null)

/** A stored value cannot be represented in the type it is read as (e.g. a duration past Spark's range). */
final class ValueOutOfRangeException(detail: String)
    extends LanceException("LANCE_VALUE_OUT_OF_RANGE", "22003", detail, null)

/** A commit lost to concurrent commits it cannot be combined with, or ran out of retries; nothing was committed. */
final class CommitConflictException(val path: String, detail: String)
    extends LanceException("LANCE_COMMIT_CONFLICT", "40001", s"Cannot commit to table $path: $detail", null)

/**
 * A commit whose outcome is unknown: storage failed while the manifest was being written. The version may or may
 * not exist; nothing was cleaned up. Check the table's latest version before retrying.
 */
final class CommitStateUnknownException(val path: String, detail: String, cause: Throwable)
    extends LanceException("LANCE_COMMIT_STATE_UNKNOWN", "08007", s"The commit to table $path may or may not have " +
      s"happened: $detail. Check the table's latest version before retrying; no files were removed.", cause)

/** An argument given by the user (option, name, value) is not valid. */
final class InvalidArgumentException(detail: String)
    extends LanceException("LANCE_INVALID_ARGUMENT", "22023", detail, null)

/** A table was to be created where one exists. */
final class TableExistsException(val path: String, detail: String)
    extends LanceException("LANCE_TABLE_EXISTS", "42P07", s"Table $path already exists: $detail", null)
