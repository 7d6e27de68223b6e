package io.sparklance.core.index

/**
 * A bounded, least-recently-used cache in the driver's memory of what vector index files hold once read: each
 * index segment opened (centroids, quantizer, partition layout) and each partition read (row ids and codes).
 *
 * Keys name an index by its directory, which holds the table's location and the index's uuid. Lance never rewrites
 * an index's files (a new or optimized index gets a new uuid and directory), so an entry stays true for as long as
 * the directory exists. What depends on the table version (the live rows an index may return) is cached under a key
 * naming the table's location, the version and the index's uuid: a version of a table never changes either. Entries are weighed by their approximate size in bytes, and
 * the least recently used are dropped past [[MaxBytes]]; an entry larger than that is not kept.
 */
private[core] object IndexCache {

  /** The bytes the cache holds at most: 256 MB, or the system property `sparklance.index-cache-bytes` (0 disables). */
  lazy val MaxBytes: Long = sys.props.get(MaxBytesProperty).fold(256L << 20) { v =>
    scala.util.Try(v.trim.toLong).toOption.filter(_ >= 0).getOrElse(throw new io.sparklance.core.InvalidArgumentException(
      s"The JVM system property $MaxBytesProperty is '$v'; set it to a whole number of bytes, 0 or more (0 disables the cache)."))
  }

  private val MaxBytesProperty = "sparklance.index-cache-bytes"

  private final case class Entry(value: AnyRef, bytes: Long)

  private val entries = new java.util.LinkedHashMap[AnyRef, Entry](64, 0.75f, true)
  private var held = 0L

  /** The value cached for `key`, if any (which makes it the most recently used). */
  def get[T <: AnyRef](key: AnyRef): Option[T] = synchronized {
    Option(entries.get(key)).map(_.value.asInstanceOf[T])
  }

  /** Keeps `value` (of about `bytes`) for `key`, dropping the least recently used entries past the bound. */
  def put(key: AnyRef, value: AnyRef, bytes: Long): Unit = synchronized {
    if (bytes <= MaxBytes) {
      Option(entries.put(key, Entry(value, bytes))).foreach(old => held -= old.bytes)
      held += bytes
      val oldest = entries.entrySet().iterator()
      while (held > MaxBytes && oldest.hasNext) {
        held -= oldest.next().getValue.bytes
        oldest.remove()
      }
    }
  }

  /** The value cached for `key`, or `load`'s, then cached. Loads run outside the lock, and may run twice at once. */
  def getOrLoad[T <: AnyRef](key: AnyRef, bytes: T => Long)(load: => T): T = get[T](key).getOrElse {
    val value = load
    put(key, value, bytes(value))
    value
  }

  /** Drops every entry (for tests). */
  def clear(): Unit = synchronized { entries.clear(); held = 0 }

  /** The number of entries held (for tests). */
  def size: Int = synchronized(entries.size)
}
