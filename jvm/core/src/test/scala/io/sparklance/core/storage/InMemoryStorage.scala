package io.sparklance.core.storage

import java.io.{ByteArrayOutputStream, FileNotFoundException, IOException, OutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import io.sparklance.core.{CorruptFileException, StorageException}

/**
 * An in-memory [[Storage]] for tests, with injectable faults (as Iceberg's TestTables.failCommits):
 *  - `failNext("putIfAbsent", 2)` makes the next two calls of that operation throw a [[StorageException]];
 *  - `failCommits(n)`: the next n writes of a manifest (put-if-absent or create of a `.manifest` file under
 *    `_versions/`, staged copies included) throw a [[StorageException]], writing nothing;
 *  - `failCommitsAfterWriting(n)`: the next n writes of a manifest happen, then throw a [[StorageException]] (the
 *    write landed but the caller hears a failure: the state is unknown to it).
 */
class InMemoryStorage extends Storage {
  private val files = new ConcurrentHashMap[String, Array[Byte]]()
  private val faults = new ConcurrentHashMap[String, AtomicInteger]()
  private val commitFailures = new AtomicInteger()
  private val commitFailuresAfterWriting = new AtomicInteger()

  /** What the files it opens report as their coalescing gap (negative: never coalesce, as on local disk). */
  @volatile var coalesceGap: Long = -1L

  /** Ranged reads served, over all files. */
  val reads = new AtomicInteger()

  /** Bytes those reads returned. */
  val bytesRead = new java.util.concurrent.atomic.AtomicLong()

  /** Every path opened for reading, in order (one entry per open). */
  val opened = new java.util.concurrent.ConcurrentLinkedQueue[String]()

  def failNext(operation: String, times: Int): Unit = faults.put(operation, new AtomicInteger(times))

  def failCommits(times: Int): Unit = commitFailures.set(times)

  def failCommitsAfterWriting(times: Int): Unit = commitFailuresAfterWriting.set(times)

  private def isManifest(path: String): Boolean = path.contains("/_versions/") && path.contains(".manifest")

  private def take(counter: AtomicInteger): Boolean = counter.getAndUpdate(n => math.max(n - 1, 0)) > 0

  /** A manifest write: `failCommits` before it, `failCommitsAfterWriting` after it. */
  private def manifestWrite[T](operation: String, path: String)(write: => T): T = {
    if (isManifest(path) && take(commitFailures)) {
      throw new StorageException(path, operation, new IOException("injected failure of a manifest write"))
    }
    val result = write
    if (isManifest(path) && take(commitFailuresAfterWriting)) {
      throw new StorageException(path, operation, new IOException("injected failure after a manifest write"))
    }
    result
  }

  private def maybeFail(operation: String, path: String): Unit = {
    val left = faults.get(operation)
    if (left != null && left.getAndDecrement() > 0) {
      throw new StorageException(path, operation, new IOException(s"injected failure of $operation"))
    }
  }

  private def norm(p: String) = p.stripSuffix("/")

  /**
   * Runs a change of the files, or a listing, alone: a listing taken while files are added would otherwise see some
   * of them and not others added before them (the map's iteration is only weakly consistent), which no store a table
   * lives on does (a racing commit then found version n + 1 listed without version n).
   */
  private def written[T](body: => T): T = files.synchronized(body)

  def put(path: String, bytes: Array[Byte]): Unit = written(files.put(norm(path), bytes.clone()))

  def paths: Seq[String] = files.keySet().asScala.toSeq.sorted

  override def open(path: String): InputFile = {
    maybeFail("open", path)
    val bytes = Option(files.get(norm(path))).getOrElse(
      throw new StorageException(path, "open", new FileNotFoundException(s"$path does not exist")))
    val normalized = norm(path)
    opened.add(normalized)
    val gap = coalesceGap
    new InputFile {
      override def path: String = normalized
      override def length: Long = bytes.length.toLong
      override def coalesceGap: Long = gap
      override def read(offset: Long, len: Int): ByteBuffer = {
        reads.incrementAndGet()
        bytesRead.addAndGet(math.max(len, 0).toLong)
        if (offset < 0 || len < 0 || offset + len > bytes.length) {
          throw new CorruptFileException(path, s"a read of $len bytes at offset $offset goes past the end of the " +
            s"file, which is ${bytes.length} bytes long")
        }
        ByteBuffer.wrap(java.util.Arrays.copyOfRange(bytes, offset.toInt, offset.toInt + len)).order(ByteOrder.LITTLE_ENDIAN)
      }
      override def close(): Unit = ()
    }
  }

  override def exists(path: String): Boolean = files.containsKey(norm(path))

  override def create(path: String, bytes: Array[Byte]): Unit = {
    maybeFail("create", path)
    manifestWrite("create", path) {
      if (written(files.putIfAbsent(norm(path), bytes.clone())) != null) {
        throw new StorageException(path, "create", new IOException(s"$path already exists"))
      }
    }
  }

  override def overwrite(path: String, bytes: Array[Byte]): Unit = {
    maybeFail("overwrite", path)
    written(files.put(norm(path), bytes.clone()))
  }

  override def createStream(path: String): OutputStream = new ByteArrayOutputStream() {
    override def close(): Unit = create(path, toByteArray)
  }

  override def putIfAbsent(path: String, bytes: Array[Byte]): Boolean = {
    maybeFail("putIfAbsent", path)
    manifestWrite("commit", path)(written(files.putIfAbsent(norm(path), bytes.clone())) == null)
  }

  override def list(dir: String): Seq[FileEntry] = {
    maybeFail("list", dir)
    val prefix = norm(dir) + "/"
    val children = written(files.asScala.toSeq).collect { case (p, b) if p.startsWith(prefix) => (p.substring(prefix.length), b) }
    children.map { case (rest, b) =>
      val name = rest.takeWhile(_ != '/')
      val isDir = rest.contains('/')
      FileEntry(prefix + name, name, if (isDir) 0L else b.length.toLong, isDir, 0L)
    }.distinctBy(_.name)
  }

  override def delete(path: String): Unit = {
    maybeFail("delete", path)
    written(files.remove(norm(path)))
  }
}
