package io.sparklance.core.commit

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.StorageException
import io.sparklance.core.format.ManifestNaming
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.testing.Races

/** The external-store commit over a plain in-memory storage: no Hadoop file system involved. */
class ExternalStoreCommitHandlerSuite extends AnyFunSuite {
  private val root = "mem://bucket/t.lance"
  private val table = "t.lance"
  private def name(v: Long) = ManifestNaming.V2.fileName(v)
  private def path(v: Long) = s"$root/_versions/${name(v)}"

  private def text(storage: InMemoryStorage, p: String): String = new String(storage.readAll(p), UTF_8)
  private def staged(storage: InMemoryStorage): Seq[String] = storage.paths.filter(_.contains(".manifest-"))

  test("a won version is recorded with its final path, and no staged manifest is left") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    val handler = new ExternalStoreCommitHandler(storage, store)
    assert(handler.putManifest(root, 1, name(1), "v1".getBytes(UTF_8)) == ManifestPut.Committed)
    assert(text(storage, path(1)) == "v1")
    assert(store.records.get(table -> 1L) == s"$table/_versions/${name(1)}")
    assert(staged(storage).isEmpty)
    assert(handler.listManifests(root).map(_.name) == Seq(name(1)))
  }

  test("a version recorded for another writer, or already in place, is lost; the loser's staged copy goes") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    val handler = new ExternalStoreCommitHandler(storage, store)
    store.records.put(table -> 1L, s"$table/_versions/${name(1)}-other")
    assert(handler.putManifest(root, 1, name(1), "mine".getBytes(UTF_8)) == ManifestPut.Lost)
    assert(staged(storage).isEmpty && !storage.exists(path(1)))
    storage.put(path(2), "before the store".getBytes(UTF_8))
    assert(handler.putManifest(root, 2, name(2), "mine".getBytes(UTF_8)) == ManifestPut.Lost)
    assert(text(storage, path(2)) == "before the store" && !store.records.containsKey(table -> 2L))
  }

  test("a failure of the store is 'unknown', and the staged manifest stays for readers") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    store.failPuts(1)
    new ExternalStoreCommitHandler(storage, store).putManifest(root, 1, name(1), "v1".getBytes(UTF_8)) match {
      case ManifestPut.Unknown(e: StorageException) =>
        assert(e.getMessage.contains("record version 1 of") && e.getMessage.contains("external manifest store"), e.getMessage)
      case other => fail(s"got $other")
    }
    assert(staged(storage).size == 1 && store.records.isEmpty)
  }

  test("a failure staging the manifest is 'unknown'") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    storage.failCommits(1)
    assert(new ExternalStoreCommitHandler(storage, store).putManifest(root, 1, name(1), Array[Byte](1))
      .isInstanceOf[ManifestPut.Unknown])
    assert(store.records.isEmpty)
  }

  test("a version the store recorded although the writer heard a failure is finished by the next listing") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    val handler = new ExternalStoreCommitHandler(storage, store)
    store.failPutsAfterRecording(1)
    assert(handler.putManifest(root, 1, name(1), "v1".getBytes(UTF_8)).isInstanceOf[ManifestPut.Unknown])
    assert(!storage.exists(path(1)) && staged(storage).size == 1)
    assert(handler.listManifests(root).map(_.name) == Seq(name(1)))
    assert(text(storage, path(1)) == "v1" && staged(storage).isEmpty)
    assert(store.records.get(table -> 1L) == s"$table/_versions/${name(1)}")
  }

  test("a staged version of a writer that stopped after recording it is finished by a reader, once") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    val handler = new ExternalStoreCommitHandler(storage, store)
    assert(handler.putManifest(root, 1, name(1), "v1".getBytes(UTF_8)) == ManifestPut.Committed)
    storage.put(s"${path(2)}-0000dead", "v2".getBytes(UTF_8))
    store.records.put(table -> 2L, s"$table/_versions/${name(2)}-0000dead")
    val listings = Races.run(4)(_ => new ExternalStoreCommitHandler(storage, store).listManifests(root).map(_.name).sorted)
    assert(listings.forall(_ == Seq(name(1), name(2)).sorted))
    assert(text(storage, path(2)) == "v2" && staged(storage).isEmpty)
    assert(store.records.get(table -> 2L) == s"$table/_versions/${name(2)}")
    assert(handler.putManifest(root, 2, name(2), "late".getBytes(UTF_8)) == ManifestPut.Lost)
  }

  test("a recorded version whose manifest is gone everywhere fails the listing, naming it") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    store.records.put(table -> 3L, s"$table/_versions/${name(3)}-0000gone")
    val e = intercept[StorageException](new ExternalStoreCommitHandler(storage, store).listManifests(root))
    assert(e.getMessage.contains("version 3") && e.getMessage.contains("0000gone"), e.getMessage)
  }

  test("racing writers of one version: exactly one commits, its bytes are the manifest, no staged copy is left") {
    val (storage, store) = (new InMemoryStorage, new InMemoryManifestStore)
    val outcomes = Races.run(8) { w =>
      w -> new ExternalStoreCommitHandler(storage, store).putManifest(root, 1, name(1), s"writer $w".getBytes(UTF_8))
    }
    val winners = outcomes.collect { case (w, ManifestPut.Committed) => w }
    assert(winners.size == 1 && outcomes.count(_._2 == ManifestPut.Lost) == 7, outcomes)
    assert(text(storage, path(1)) == s"writer ${winners.head}")
    assert(staged(storage).isEmpty)
  }
}
