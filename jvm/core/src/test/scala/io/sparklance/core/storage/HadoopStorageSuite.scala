package io.sparklance.core.storage

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CorruptFileException, StorageException}

class HadoopStorageSuite extends AnyFunSuite {

  private def tmpDir(): String = Files.createTempDirectory("sparklance-storage").toString

  test("putIfAbsent creates a file once and refuses to replace it") {
    val storage = new HadoopStorage()
    val path = Storage.join(tmpDir(), "_versions/1.manifest")
    assert(storage.putIfAbsent(path, "first".getBytes(UTF_8)))
    assert(!storage.putIfAbsent(path, "second".getBytes(UTF_8)))
    assert(new String(storage.readAll(path), UTF_8) == "first")
    val dir = path.substring(0, path.lastIndexOf('/'))
    assert(storage.list(dir).map(_.name) == Seq("1.manifest"), "no temporary files are left behind")
  }

  test("putIfAbsent has exactly one winner among racing writers, whose bytes are the file") {
    val storage = new HadoopStorage()
    val dir = tmpDir()
    val pool = Executors.newFixedThreadPool(8)
    try {
      (1 to 20).foreach { round =>
        val path = Storage.join(dir, s"v$round.manifest")
        val start = new CountDownLatch(1)
        val results = (0 until 8).map { w =>
          pool.submit(() => { start.await(); w -> storage.putIfAbsent(path, s"writer $w ".getBytes(UTF_8) ++ new Array[Byte](4096)) })
        }
        start.countDown()
        val outcomes = results.map(_.get(30, TimeUnit.SECONDS))
        val winners = outcomes.filter(_._2).map(_._1)
        assert(winners.size == 1, s"round $round: winners $winners")
        assert(new String(storage.readAll(path), UTF_8).startsWith(s"writer ${winners.head} "))
      }
    } finally pool.shutdownNow()
  }

  test("create refuses an existing path and list shows files and directories") {
    val storage = new HadoopStorage()
    val dir = tmpDir()
    storage.create(Storage.join(dir, "a/x.bin"), Array[Byte](1, 2, 3))
    val e = intercept[StorageException](storage.create(Storage.join(dir, "a/x.bin"), Array[Byte](4)))
    assert(e.getMessage.contains("x.bin") && e.errorClass == "LANCE_STORAGE_ERROR")
    val entries = storage.list(dir)
    assert(entries.map(e => e.name -> e.isDirectory) == Seq("a" -> true))
    assert(storage.list(Storage.join(dir, "a")).map(e => e.name -> e.size) == Seq("x.bin" -> 3L))
    assert(storage.list(Storage.join(dir, "missing")).isEmpty)
    assert(!storage.exists(Storage.join(dir, "a/.x.bin.crc")), "raw local file system: no checksum side files")
  }

  test("ranged reads return the bytes asked for and refuse ranges past the end") {
    val storage = new HadoopStorage()
    val path = Storage.join(tmpDir(), "f")
    storage.create(path, (0 until 100).map(_.toByte).toArray)
    val in = storage.open(path)
    try {
      assert(in.length == 100)
      val buf = in.read(10, 4)
      assert(buf.getInt == 0x0D0C0B0A, "little endian")
      val e = intercept[CorruptFileException](in.read(98, 4))
      assert(e.getMessage.contains("offset 98") && e.getMessage.contains("100 bytes long"))
    } finally in.close()
  }

  test("opening a missing file is a storage error that says not found") {
    val storage = new HadoopStorage()
    val path = Storage.join(tmpDir(), "nope")
    val e = intercept[StorageException](storage.open(path))
    assert(Storage.isNotFound(e))
    assert(e.getMessage.contains(path) && e.getMessage.startsWith("Cannot open"))
  }

  test("putIfAbsent is refused on file systems without an atomic primitive") {
    val storage = new HadoopStorage()
    val e = intercept[io.sparklance.core.UnsupportedFeatureException](
      storage.putIfAbsent("ftp://example.invalid/t/_versions/1.manifest", Array[Byte](1)))
    assert(e.getMessage.contains("'ftp'") && e.getMessage.contains("put-if-absent"))
  }

  test("put-if-absent is offered where it is atomic; committing elsewhere is refused by the commit handler") {
    val storage = new HadoopStorage()
    assert(storage.offersPutIfAbsent(Storage.join(tmpDir(), "_versions/1.manifest")))
    val ftp = "ftp://example.invalid/t/_versions/1.manifest"
    assert(!storage.offersPutIfAbsent(ftp))
    val e = intercept[io.sparklance.core.UnsupportedFeatureException](
      io.sparklance.core.commit.FileSystemCommitHandler.forStorage(storage).createIfAbsent(ftp, Array[Byte](1)))
    assert(e.getMessage.startsWith(s"Cannot commit to $ftp: the 'ftp' file system offers no atomic put-if-absent"))
    assert(e.getMessage.contains("sparklance.commit.external-store=dynamodb") && e.getMessage.contains("sparklance.commit.unsafe=true"))
  }

  test("publish writes a decided file once; publishing it again keeps it") {
    val storage = new HadoopStorage()
    val path = Storage.join(tmpDir(), "_versions/2.manifest")
    storage.publish(path, "decided".getBytes(UTF_8))
    storage.publish(path, "decided".getBytes(UTF_8))
    assert(new String(storage.readAll(path), UTF_8) == "decided")
  }

  test("deleting a missing file is not an error") {
    val storage = new HadoopStorage()
    storage.delete(Storage.join(tmpDir(), "missing"))
  }
}
