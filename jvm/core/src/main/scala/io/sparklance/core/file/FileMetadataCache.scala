package io.sparklance.core.file

import io.sparklance.core.storage.InputFile

/**
 * The metadata of Lance files opened recently in this JVM, by path, size and modification time: a read of a few
 * rows of a file opened before (a B-tree's lookup and pages on each query, the data file a point query reads) skips
 * reading and parsing the file's footer, offset tables and column metadata again.
 *
 * Only for files that are never rewritten in place ([[LanceFileReader.openImmutable]]): data files are written once
 * under new unique (uuid) names, index files under their index's own uuid directory; a table deleted and created
 * again at the same path has new file names. The size and the modification time in the key turn a file replaced
 * at the same path into a miss all the same; a file whose storage does not tell its modification time without
 * another request is not cached. Bounded by the serialized size of the column metadata held (least recently used
 * first out).
 */
final class FileMetadataCache(maxBytes: Long) {
  private val entries = new java.util.LinkedHashMap[(String, Long, java.time.Instant), (FileMetadata, Long)](16, 0.75f, true)
  private var held = 0L

  /** The metadata of `file`: cached, or `load`ed (outside the lock) and kept when its modification time is known. */
  def apply(file: InputFile)(load: => FileMetadata): FileMetadata = file.lastModified match {
    case None => load
    case Some(modified) => cached((file.path, file.length, modified))(load)
  }

  private def cached(key: (String, Long, java.time.Instant))(load: => FileMetadata): FileMetadata = {
    val cached = synchronized(entries.get(key))
    if (cached != null) cached._1
    else {
      val m = load
      val weight = FileMetadataCache.weight(m)
      if (weight <= maxBytes) synchronized {
        val previous = entries.put(key, (m, weight))
        if (previous != null) held -= previous._2
        held += weight
        val oldest = entries.entrySet().iterator()
        while (held > maxBytes && oldest.hasNext) { held -= oldest.next().getValue._2; oldest.remove() }
      }
      m
    }
  }

  /** The files whose metadata is held. */
  def size: Int = synchronized(entries.size)

  /** The bytes held, as [[FileMetadataCache.weight]] counts them. */
  def bytes: Long = synchronized(held)
}

object FileMetadataCache {
  /** The cache [[LanceFileReader.openImmutable]] uses: 32 MiB of metadata, some thousands of files. */
  val Shared = new FileMetadataCache(32L << 20)

  /** About the heap a file's metadata takes: its column metadata protobufs' size, and a share per field. */
  def weight(m: FileMetadata): Long =
    1024L + m.columns.iterator.map(_.getSerializedSize.toLong).sum + 256L * m.schema.fields.size
}
