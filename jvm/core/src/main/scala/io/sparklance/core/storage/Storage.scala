package io.sparklance.core.storage

import java.io.{Closeable, OutputStream}
import java.nio.ByteBuffer

/**
 * The storage seam: the only way the format core reads and writes bytes.
 *
 * Paths are absolute URIs or absolute local paths (`file:/x`, `/x`, `s3a://bucket/x`), joined with [[Storage.join]].
 *
 * Contract every implementation must keep:
 *  - `putIfAbsent(path, bytes)` is atomic: when several callers race on one path, exactly one of them returns
 *    true, and from then on every reader sees that caller's complete bytes; the others return false and their
 *    bytes are never visible. This is what makes a manifest commit safe (see
 *    [[io.sparklance.core.commit.CommitHandler]]). Where an implementation cannot give this guarantee,
 *    `offersPutIfAbsent` is false and `putIfAbsent` throws rather than pretends.
 *  - `publish(path, bytes)` makes a file whose content is already decided visible whole or not at all; racing
 *    callers publish the same bytes, and finding the file there is success. It needs no put-if-absent.
 *  - `create` writes a complete object or nothing visible under its path (data and deletion files have unique
 *    names, so no two writers target one path).
 *  - `list` is a consistent listing of the direct children of a directory; a missing directory lists as empty.
 *  - every failure is a [[io.sparklance.core.StorageException]] naming the path and the operation, except a missing
 *    file on `open`, which is a [[java.io.FileNotFoundException]] wrapped the same way and detectable with
 *    [[Storage.isNotFound]].
 */
trait Storage {

  /** Opens a file for ranged reads. */
  def open(path: String): InputFile

  /**
   * Opens a file whose length the caller knows (a manifest records data file sizes; -1 when unknown), which spares
   * object stores a status request. A wrong length shows as a corrupt file, not as wrong data.
   */
  def open(path: String, knownLength: Long): InputFile = open(path)

  /** Reads a whole file; for small metadata files (manifests, deletion files, tags). */
  def readAll(path: String): Array[Byte] = readAll(path, -1L)

  /** Reads a whole file whose length a listing gave (-1: unknown). */
  def readAll(path: String, knownLength: Long): Array[Byte] = {
    val in = open(path, knownLength)
    try {
      val len = in.length
      if (len > Int.MaxValue - 16) {
        throw new io.sparklance.core.CorruptFileException(path, s"it is $len bytes long, too large for a metadata file")
      }
      val buf = in.read(0, len.toInt)
      val out = new Array[Byte](buf.remaining())
      buf.get(out)
      out
    } finally in.close()
  }

  def exists(path: String): Boolean

  /** Writes a whole file, replacing nothing: fails if the path exists. */
  def create(path: String, bytes: Array[Byte]): Unit

  /**
   * Opens a stream that writes a new file. On some file systems a partial file is visible before the stream is
   * closed, so callers give new files unique names and reference them only after `close` returned.
   */
  def createStream(path: String): OutputStream

  /** Writes a whole file, replacing any file there (not atomic: for hints such as `latest_version_hint.json`). */
  def overwrite(path: String, bytes: Array[Byte]): Unit

  /** Atomically creates `path` with `bytes` if nothing is there; returns false, writing nothing, if it exists. */
  def putIfAbsent(path: String, bytes: Array[Byte]): Boolean

  /** Whether `putIfAbsent` is atomic under `path`; where it is not, `putIfAbsent` throws. */
  def offersPutIfAbsent(path: String): Boolean = true

  /**
   * Writes a file whose content is already decided (every caller writes the same bytes to `path`), so that readers
   * see it whole or not at all; a file already there is taken as published.
   */
  def publish(path: String, bytes: Array[Byte]): Unit = { putIfAbsent(path, bytes); () }

  /** The direct children of a directory (files and directories); empty if the directory does not exist. */
  def list(dir: String): Seq[FileEntry]

  /** Deletes a file; deleting a missing file is not an error. */
  def delete(path: String): Unit
}

object Storage {

  /** Joins a directory and a relative path with exactly one separator. */
  def join(dir: String, rel: String): String =
    if (dir.endsWith("/")) dir + rel.stripPrefix("/") else dir + "/" + rel.stripPrefix("/")

  /** The last path component. */
  def fileName(path: String): String = path.stripSuffix("/").substring(path.stripSuffix("/").lastIndexOf('/') + 1)

  def isNotFound(e: Throwable): Boolean = e match {
    case s: io.sparklance.core.StorageException => s.getCause.isInstanceOf[java.io.FileNotFoundException]
    case _: java.io.FileNotFoundException => true
    case _ => false
  }
}

/** One entry of a directory listing. */
final case class FileEntry(path: String, name: String, size: Long, isDirectory: Boolean, modificationTime: Long)

/** A file open for ranged reads. Not thread safe. */
trait InputFile extends Closeable {
  def path: String

  /** The file's size in bytes. */
  def length: Long

  /**
   * Reads `length` bytes at `offset` into a new little-endian buffer. Reading past the end of the file is an error
   * naming the file, the range and the file's size. A buffer backed by an array holds an array of its own, which the
   * caller may keep (readers then use it without a copy).
   */
  def read(offset: Long, length: Int): ByteBuffer

  /**
   * Ranged reads this close together (in bytes) are better read as one: where a request costs much more than the
   * bytes in between (object stores). Negative: never coalesce (local disk, where the page cache serves small reads).
   */
  def coalesceGap: Long = -1L

  /**
   * When the file was last written, where the storage knows it without another request (a local file's status;
   * an object store's when its status was fetched to open it); None where it does not. With the path and length, it
   * tells a file from another written at the same path later ([[io.sparklance.core.file.FileMetadataCache]]).
   */
  def lastModified: Option[java.time.Instant] = None
}
