package io.sparklance.core.storage

import java.io.{FileNotFoundException, IOException, OutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{FileAlreadyExistsException, Files, StandardOpenOption}
import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileSystem, LocalFileSystem, Path, RawLocalFileSystem}

import io.sparklance.core.{CorruptFileException, StorageException, UnsupportedFeatureException}
import io.sparklance.core.util.Parse

/**
 * [[Storage]] over Hadoop's FileSystem API: local disk, HDFS, and (through hadoop-aws) S3.
 *
 * Put-if-absent is implemented per file system, and only where it is really atomic:
 *  - local disk (`file:` or a plain path): the bytes go to a temporary file that is then hard-linked to the target;
 *    link(2) fails if the target exists, so exactly one racer wins and the target is never partially written.
 *  - HDFS (`hdfs:`, `viewfs:`): rename of a temporary file, which HDFS performs atomically and refuses if the
 *    target exists.
 *  - object stores whose Hadoop connector offers conditional creation (S3A 3.4.2 and later with
 *    `fs.s3a.create.conditional.enabled`, the default: a PUT with `If-None-Match: *`, which the second writer
 *    loses with 412 Precondition Failed).
 * Elsewhere `offersPutIfAbsent` is false and `putIfAbsent` is refused; committing there is a matter for the
 * commit handler ([[io.sparklance.core.commit.CommitHandler]]), e.g. through an external manifest store.
 */
final class HadoopStorage(val conf: Configuration) extends Storage {

  def this() = this(new Configuration())

  // `s3://` (as pylance and Lance name S3) is served by S3A too, unless the configuration maps it elsewhere; set on
  // a copy, for the caller's configuration is not ours to change.
  private lazy val s3Conf = {
    val copy = new Configuration(conf)
    copy.set("fs.s3.impl", HadoopStorage.S3A)
    copy
  }

  // A path Hadoop or the local file system cannot represent (a NUL byte, a bad URI) fails like any storage error.
  private def hadoopPath(path: String): Path =
    try new Path(path)
    catch { case e: IllegalArgumentException => throw new StorageException(path, "parse the path", e) }

  /** The configuration a path's file system is made with: the caller's, or for `s3://` a copy mapping it to S3A. */
  private[storage] def confFor(p: Path): Configuration =
    if ("s3".equalsIgnoreCase(p.toUri.getScheme) && conf.get("fs.s3.impl") == null) s3Conf else conf

  // Local paths go through the raw local file system: no .crc side files beside the table's files.
  private def fs(path: String): FileSystem =
    try {
      val p = hadoopPath(path)
      p.getFileSystem(confFor(p)) match {
        case local: LocalFileSystem => local.getRaw
        case other => other
      }
    } catch {
      case e: IOException => throw new StorageException(path, "access the file system of", e)
      // Hadoop names the class of a scheme's file system that is not on the class path (S3A without hadoop-aws).
      case e: RuntimeException if e.getCause.isInstanceOf[ClassNotFoundException] =>
        throw new StorageException(path, "access the file system of", new IOException(s"${e.getCause.getMessage}: " +
          "put its connector on the class path (for s3:// and s3a://, org.apache.hadoop:hadoop-aws at the version of " +
          "Spark's Hadoop; docs/object-stores.md)", e))
    }

  private def wrap[T](path: String, operation: String)(body: => T): T =
    try body
    catch {
      case e: io.sparklance.core.LanceException => throw e
      case e: IOException => throw new StorageException(path, operation, e)
    }

  override def open(path: String): InputFile = open(path, -1L)

  override def open(path: String, knownLength: Long): InputFile = wrap(path, "open") {
    val f = fs(path)
    val p = hadoopPath(path)
    f match {
      case local: RawLocalFileSystem =>
        val file = try local.pathToFile(p).toPath
          catch { case e: java.nio.file.InvalidPathException => throw new StorageException(path, "parse the path", e) }
        new LocalInputFile(path, file)
      case _ =>
        // Ranged reads of pages, not a sequential stream: each read asks for exactly its range.
        val builder = f.openFile(p).opt("fs.option.openfile.read.policy", "random")
        val (length, modified) =
          if (knownLength >= 0) { builder.opt("fs.option.openfile.length", knownLength.toString); (knownLength, None) }
          else {
            val status = f.getFileStatus(p)
            builder.withFileStatus(status)
            (status.getLen, Some(status.getModificationTime).filter(_ > 0).map(java.time.Instant.ofEpochMilli))
          }
        val stream = org.apache.hadoop.util.functional.FutureIO.awaitFuture(builder.build())
        new HadoopInputFile(path, stream, length, conf.getLong(HadoopStorage.CoalesceGap, 1L << 20), modified)
    }
  }

  override def exists(path: String): Boolean = wrap(path, "check the existence of") {
    fs(path).exists(hadoopPath(path))
  }

  override def create(path: String, bytes: Array[Byte]): Unit = {
    val out = createStream(path)
    try out.write(bytes)
    finally wrap(path, "write")(out.close())
  }

  override def overwrite(path: String, bytes: Array[Byte]): Unit = wrap(path, "write") {
    writeFile(fs(path), hadoopPath(path), bytes, overwrite = true)
  }

  override def createStream(path: String): OutputStream = wrap(path, "create") {
    fs(path).create(hadoopPath(path), false)
  }

  override def putIfAbsent(path: String, bytes: Array[Byte]): Boolean = wrap(path, "commit") {
    val f = fs(path)
    atomicPutIfAbsent(f, hadoopPath(path), bytes).getOrElse(throw new UnsupportedFeatureException(
      s"Cannot create $path only if absent: the '${f.getUri.getScheme}' file system offers no atomic put-if-absent " +
        "here."))
  }

  override def offersPutIfAbsent(path: String): Boolean = wrap(path, "access the file system of") {
    val f = fs(path)
    f.isInstanceOf[RawLocalFileSystem] || isHdfs(f) || canCreateConditionally(f, hadoopPath(path))
  }

  private def isHdfs(f: FileSystem): Boolean = f.getUri.getScheme == "hdfs" || f.getUri.getScheme == "viewfs"

  /**
   * The file system's own atomic put-if-absent: whether this caller won, or None where the file system has none.
   * Local disk links a temporary file (link(2) fails if the target exists); HDFS renames one (refused if the target
   * exists); object stores with conditional creation refuse the second writer.
   */
  private def atomicPutIfAbsent(f: FileSystem, p: Path, bytes: Array[Byte]): Option[Boolean] = f match {
    case local: RawLocalFileSystem => Some(localPutIfAbsent(local.pathToFile(p).toPath, bytes))
    case _ if isHdfs(f) =>
      val tmp = new Path(p.getParent, s".${p.getName}.${UUID.randomUUID()}.tmp")
      writeFile(f, tmp, bytes, overwrite = false)
      val won = f.rename(tmp, p)
      if (!won) f.delete(tmp, false)
      Some(won)
    case _ if canCreateConditionally(f, p) => Some(conditionalCreate(f, p, bytes))
    case _ => None
  }

  /**
   * Where the file system has no atomic put-if-absent, a plain create: object stores make an object visible only
   * once it is complete.
   */
  override def publish(path: String, bytes: Array[Byte]): Unit = wrap(path, "write") {
    val f = fs(path)
    val p = hadoopPath(path)
    if (atomicPutIfAbsent(f, p, bytes).isEmpty) {
      try writeFile(f, p, bytes, overwrite = false)
      catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => () }
    }
  }

  private def writeFile(f: FileSystem, p: Path, bytes: Array[Byte], overwrite: Boolean): Unit = {
    val out = f.create(p, overwrite)
    try out.write(bytes) finally out.close()
  }

  // Asking may need a connection (FTP): a file system that cannot answer offers nothing.
  private def canCreateConditionally(f: FileSystem, p: Path): Boolean =
    try f.hasPathCapability(p, HadoopStorage.ConditionalCreate) catch { case NonFatal(_) => false }

  /**
   * A create that the store itself refuses when the object exists (S3: `If-None-Match: *` on the PUT or on the
   * completion of a multipart upload). S3A probes for an existing object first (FileAlreadyExistsException); a
   * racer that loses at completion gets 412 Precondition Failed, or 409 ConditionalRequestConflict while another
   * conditional write of the key is in flight. Either way nothing of ours is visible, so the race is lost.
   */
  private def conditionalCreate(f: FileSystem, p: Path, bytes: Array[Byte]): Boolean =
    try {
      val out = f.createFile(p).overwrite(false).must(HadoopStorage.ConditionalCreate, true).build()
      try out.write(bytes)
      catch { case NonFatal(e) => scala.util.Try(out.close()); throw e }
      out.close()
      true
    } catch {
      case e: IOException if HadoopStorage.lostConditionalCreate(e) => false
    }

  private def localPutIfAbsent(target: java.nio.file.Path, bytes: Array[Byte]): Boolean = {
    Files.createDirectories(target.getParent)
    val tmp = target.resolveSibling(s".${target.getFileName}.${UUID.randomUUID()}.tmp")
    Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
    try {
      Files.createLink(target, tmp)
      true
    } catch {
      case _: FileAlreadyExistsException => false
      case _: UnsupportedOperationException =>
        // No hard links here: O_EXCL creation is still atomic with respect to other writers.
        try {
          Files.write(target, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
          true
        } catch { case _: FileAlreadyExistsException => false }
    } finally Files.deleteIfExists(tmp)
  }

  override def list(dir: String): Seq[FileEntry] = wrap(dir, "list") {
    val f = fs(dir)
    val p = hadoopPath(dir)
    try {
      f.listStatus(p).toSeq.map { s =>
        val name = s.getPath.getName
        FileEntry(Storage.join(dir, name), name, s.getLen, s.isDirectory, s.getModificationTime)
      }
    } catch { case _: FileNotFoundException => Seq.empty }
  }

  override def delete(path: String): Unit = wrap(path, "delete") {
    fs(path).delete(hadoopPath(path), false)
  }
}

object HadoopStorage {
  /** The Hadoop stream option (and path capability) of a create that the store refuses when the file exists. */
  val ConditionalCreate = "fs.option.create.conditional.overwrite"

  /** Hadoop's S3 connector, which serves `s3a://` and here `s3://` too. */
  private val S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem"

  /** Ranged reads of a remote file closer than this many bytes are read as one (default 1 MiB). */
  val CoalesceGap = "sparklance.read.coalesce-gap-bytes"

  /**
   * The `sparklance.*` settings this storage reads, each with a check of its value (trimmed) that returns what a bad
   * value should have been.
   */
  val Settings: Map[String, String => Option[String]] = Map(
    CoalesceGap -> (v => if (Parse.long(v).exists(_ >= -1)) None else Some("a number of bytes (-1 turns coalescing off)")))

  /** Whether a failed conditional create failed because the object exists (or is being created by a racer). */
  private[storage] def lostConditionalCreate(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(8).exists {
      case _: org.apache.hadoop.fs.FileAlreadyExistsException | _: java.nio.file.FileAlreadyExistsException => true
      case other =>
        val name = other.getClass.getName
        val message = String.valueOf(other.getMessage)
        name.endsWith("RemoteFileChangedException") || message.contains("412") ||
          message.contains("PreconditionFailed") || message.contains("Precondition Failed") ||
          message.contains("ConditionalRequestConflict")
    }
}

/**
 * A local file read through a memory map: one copy from the page cache into the caller's buffer, where a
 * positioned stream read costs two (through a temporary direct buffer).
 */
private final class LocalInputFile(val path: String, file: java.nio.file.Path) extends InputFile {
  private val channel =
    try java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.READ)
    catch {
      case e: java.nio.file.NoSuchFileException =>
        throw new StorageException(path, "open", new FileNotFoundException(s"$path does not exist"))
      case e: IOException => throw new StorageException(path, "open", e)
    }
  val length: Long = channel.size()

  override lazy val lastModified: Option[java.time.Instant] =
    try Some(java.nio.file.Files.getLastModifiedTime(file).toInstant)
    catch { case _: IOException => None }

  override def read(offset: Long, len: Int): ByteBuffer = {
    if (offset < 0 || len < 0 || offset + len > length) {
      throw new CorruptFileException(path,
        s"a read of $len bytes at offset $offset goes past the end of the file, which is $length bytes long")
    }
    val bytes = new Array[Byte](len)
    try {
      if (len >= (1 << 20)) channel.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, offset, len).get(bytes)
      else {
        val buf = ByteBuffer.wrap(bytes)
        while (buf.hasRemaining) {
          if (channel.read(buf, offset + buf.position()) < 0) throw new java.io.EOFException(s"end of $path")
        }
      }
    } catch { case e: IOException => throw new StorageException(path, s"read $len bytes at offset $offset of", e) }
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
  }

  override def close(): Unit = channel.close()
}

private final class HadoopInputFile(val path: String, in: FSDataInputStream, val length: Long, override val coalesceGap: Long,
    override val lastModified: Option[java.time.Instant]) extends InputFile {
  override def read(offset: Long, len: Int): ByteBuffer = {
    if (offset < 0 || len < 0 || offset + len > length) {
      throw new CorruptFileException(path,
        s"a read of $len bytes at offset $offset goes past the end of the file, which is $length bytes long")
    }
    val bytes = new Array[Byte](len)
    try in.readFully(offset, bytes)
    catch { case e: IOException => throw new StorageException(path, s"read $len bytes at offset $offset of", e) }
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
  }

  override def close(): Unit = in.close()
}
