package io.sparklance.core.commit

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{StorageException, UnsupportedFeatureException}
import io.sparklance.core.format.ManifestNaming
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.testing.Races

class FileSystemCommitHandlerSuite extends AnyFunSuite {
  private val root = "mem://bucket/t.lance"
  private val name = ManifestNaming.V2.fileName(1)
  private val path = s"$root/_versions/$name"

  private def text(storage: InMemoryStorage, p: String): String = new String(storage.readAll(p), UTF_8)

  test("the first put of a version commits it and is listed; a second put of the version loses, writing nothing") {
    val storage = new InMemoryStorage
    val handler = FileSystemCommitHandler(storage)
    assert(handler.putManifest(root, 1, name, "first".getBytes(UTF_8)) == ManifestPut.Committed)
    assert(handler.putManifest(root, 1, name, "second".getBytes(UTF_8)) == ManifestPut.Lost)
    assert(text(storage, path) == "first")
    assert(handler.listManifests(root).map(_.name) == Seq(name))
    assert(handler.listManifests("mem://bucket/none.lance").isEmpty)
  }

  test("a storage failure before the write is 'unknown', and nothing is written") {
    val storage = new InMemoryStorage
    storage.failCommits(1)
    FileSystemCommitHandler(storage).putManifest(root, 1, name, Array[Byte](1)) match {
      case ManifestPut.Unknown(e: StorageException) => assert(e.getMessage.contains("injected failure"), e.getMessage)
      case other => fail(s"got $other")
    }
    assert(!storage.exists(path))
    assert(FileSystemCommitHandler(storage).putManifest(root, 1, name, Array[Byte](2)) == ManifestPut.Committed)
  }

  test("a write that landed but reported a failure is 'unknown': the manifest is there") {
    val storage = new InMemoryStorage
    storage.failCommitsAfterWriting(1)
    assert(FileSystemCommitHandler(storage).putManifest(root, 1, name, "mine".getBytes(UTF_8)).isInstanceOf[ManifestPut.Unknown])
    assert(text(storage, path) == "mine")
  }

  test("racing writers of one version: exactly one commits, and the manifest is its bytes") {
    val storage = new InMemoryStorage
    val outcomes = Races.run(8)(w => w -> FileSystemCommitHandler(storage).putManifest(root, 1, name, s"writer $w".getBytes(UTF_8)))
    val winners = outcomes.collect { case (w, ManifestPut.Committed) => w }
    assert(winners.size == 1 && outcomes.count(_._2 == ManifestPut.Lost) == 7)
    assert(text(storage, path) == s"writer ${winners.head}")
  }

  /** A store without an atomic put-if-absent (an object store without conditional writes). */
  private final class NoPutIfAbsent extends InMemoryStorage {
    override def offersPutIfAbsent(path: String): Boolean = false
    override def putIfAbsent(path: String, bytes: Array[Byte]): Boolean = fail("put-if-absent is not atomic here")
  }

  test("a store without put-if-absent is refused, naming the settings that make it safe") {
    val e = intercept[UnsupportedFeatureException](
      FileSystemCommitHandler(new NoPutIfAbsent).putManifest("s3a://bucket/t.lance", 1, name, Array[Byte](1)))
    assert(e.getMessage.startsWith(s"Cannot commit to s3a://bucket/t.lance/_versions/$name: the 's3a' file system " +
      "offers no atomic put-if-absent here"), e.getMessage)
    assert(e.getMessage.contains("fs.s3a.create.conditional.enabled") &&
      e.getMessage.contains("sparklance.commit.external-store=dynamodb") &&
      e.getMessage.contains("set sparklance.commit.unsafe=true"), e.getMessage)
  }

  test("trusting one writer (sparklance.commit.unsafe), a store without put-if-absent checks, then writes") {
    val storage = new NoPutIfAbsent
    val handler = FileSystemCommitHandler.trustingOneWriter(storage)
    assert(handler.putManifest(root, 1, name, "first".getBytes(UTF_8)) == ManifestPut.Committed)
    assert(handler.putManifest(root, 1, name, "second".getBytes(UTF_8)) == ManifestPut.Lost)
    assert(text(storage, path) == "first")
    val conf = new org.apache.hadoop.conf.Configuration(false)
    conf.set(FileSystemCommitHandler.UnsafeCommits, "true")
    assert(CommitHandler.fromConf(storage, conf).putManifest(root, 2, ManifestNaming.V2.fileName(2), Array[Byte](1)) ==
      ManifestPut.Committed)
  }
}
