package io.sparklance.core.file

import java.io.OutputStream

import scala.collection.mutable
import scala.util.control.NonFatal

import io.sparklance.core.storage.Storage

/**
 * The sidecar files of one data file's blob v2 columns (file version 2.2), as pylance 14 writes them: a directory
 * named as the data file without `.lance`, beside it, holding `<blob id>.blob` files, the id's 32 bits written
 * least significant first ([[BlobSidecars.fileName]]). A blob of more than [[BlobSidecars.InlineMax]] bytes and at
 * most [[BlobSidecars.DedicatedMin]] goes to a shared file (descriptor kind 1: blob id, position and size in it),
 * which is closed and another opened when it would grow past [[BlobSidecars.PackFileMax]]; a larger blob gets a
 * file of its own (kind 2: blob id, position 0). Blob ids count from 1 per data file, in the order the files are
 * opened. Nothing is created until a blob needs it. (Upstream: rust/lance/src/dataset/blob.rs, `INLINE_MAX`,
 * `DEDICATED_THRESHOLD`, `PACK_FILE_MAX_SIZE`; names and ids as pylance 14 writes them, probed.)
 */
final class BlobSidecars(storage: Storage, dataFilePath: String) {
  private val dir = BlobSidecars.directory(dataFilePath)
  private var nextId = 1L
  private var pack: OutputStream = _
  private var packId = 0L
  private var packSize = 0L
  private val created = mutable.ArrayBuffer.empty[String]

  /** Appends `len` bytes of `b` from `off` to the shared file; returns (blob id, position in that file). */
  def packed(b: Array[Byte], off: Int, len: Int): (Long, Long) = {
    if (pack == null || packSize + len > BlobSidecars.PackFileMax) {
      closePack()
      packId = allocate()
      pack = new java.io.BufferedOutputStream(storage.createStream(path(packId)), 1 << 16)
      packSize = 0L
    }
    val at = packSize
    pack.write(b, off, len)
    packSize += len
    (packId, at)
  }

  /** Writes `len` bytes of `b` from `off` as a file of their own; returns its blob id. */
  def dedicated(b: Array[Byte], off: Int, len: Int): Long = {
    val id = allocate()
    val out = storage.createStream(path(id))
    try out.write(b, off, len) finally out.close()
    id
  }

  /** Closes the shared file, if one is open: every sidecar is then complete. */
  def finish(): Unit = closePack()

  /** Deletes every sidecar written (for a data file that is abandoned); best effort. */
  def abandon(): Unit = {
    try if (pack != null) pack.close() catch { case NonFatal(_) => () }
    pack = null
    if (created.nonEmpty) BlobSidecars.deleteAll(storage, dataFilePath)
  }

  private def allocate(): Long = {
    val id = nextId
    nextId += 1
    created += path(id)
    id
  }

  private def path(id: Long): String = Storage.join(dir, BlobSidecars.fileName(id))

  private def closePack(): Unit = if (pack != null) {
    val p = pack
    pack = null
    p.close()
  }
}

object BlobSidecars {
  /** Blobs of at most this many bytes stay in the data file (kind 0). */
  val InlineMax: Int = 64 * 1024
  /** Blobs of more than this many bytes get a sidecar file of their own (kind 2); smaller ones share one (kind 1). */
  val DedicatedMin: Int = 4 * 1024 * 1024
  /** A shared sidecar file holds at most this many bytes. */
  val PackFileMax: Long = 1L << 30

  /** The directory of a data file's sidecars: its path without `.lance`. */
  def directory(dataFilePath: String): String = dataFilePath.stripSuffix(".lance")

  /** The name of sidecar `id`: its 32 bits as binary digits, least significant first, then `.blob`. */
  def fileName(id: Long): String = {
    val name = new Array[Char](32)
    var i = 0
    while (i < 32) { name(i) = if (((id >>> i) & 1L) == 1L) '1' else '0'; i += 1 }
    new String(name) + ".blob"
  }

  /** Deletes the sidecar directory of a data file and what it holds, if it exists; best effort. */
  def deleteAll(storage: Storage, dataFilePath: String): Unit = deleteDirectory(storage, directory(dataFilePath))

  /** Deletes a sidecar directory and the files in it; best effort. */
  def deleteDirectory(storage: Storage, dir: String): Unit = {
    val files = try storage.list(dir) catch { case NonFatal(_) => Nil }
    files.filterNot(_.isDirectory).foreach(f => try storage.delete(f.path) catch { case NonFatal(_) => () })
    try storage.delete(dir) catch { case NonFatal(_) => () }
  }
}
