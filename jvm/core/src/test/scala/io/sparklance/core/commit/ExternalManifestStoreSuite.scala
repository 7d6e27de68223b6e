package io.sparklance.core.commit

import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{InvalidArgumentException, StorageException}
import io.sparklance.core.format.{ManifestNaming, TestManifests}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.Dataset
import io.sparklance.core.testing.Races
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TableProtos

/** A store in memory, shared by every HadoopStorage of a test through its name in the configuration. */
final class MemoryManifestStore(conf: Configuration) extends ExternalManifestStore {
  private val records = MemoryManifestStore.stores.computeIfAbsent(conf.get("test.store"), _ => new ConcurrentHashMap())
  override def putIfNotExists(table: String, version: Long, path: String, size: Long): Boolean =
    records.putIfAbsent(table -> version, path) == null
  override def putIfExists(table: String, version: Long, path: String, size: Long): Unit =
    if (records.replace(table -> version, path) == null) throw new IllegalStateException(s"no record of $version")
  override def latest(table: String): Option[(Long, String)] = records.synchronized {
    import scala.jdk.CollectionConverters._
    records.asScala.collect { case ((t, v), p) if t == table => v -> p }.maxByOption(_._1)
  }
}

object MemoryManifestStore {
  val stores = new ConcurrentHashMap[String, ConcurrentHashMap[(String, Long), String]]()
}

class ExternalManifestStoreSuite extends AnyFunSuite {
  private val schema = LanceSchema.fromProtos("test", TestManifests.simpleFields, Map.empty)

  private def fragment(name: String, rows: Long): TableProtos.DataFragment =
    TableProtos.DataFragment.newBuilder().setPhysicalRows(rows)
      .addFiles(TableProtos.DataFile.newBuilder().setPath(name).addFields(0).addFields(1).addColumnIndices(0)
        .addColumnIndices(1).setFileMajorVersion(2).setFileMinorVersion(2)).build()

  private def setup(name: String): (HadoopStorage, String, java.util.Map[(String, Long), String]) = {
    val conf = new Configuration()
    conf.set(ExternalManifestStore.Kind, classOf[MemoryManifestStore].getName)
    conf.set("test.store", name)
    val dir = Files.createTempDirectory("external-store").toUri.toString.stripSuffix("/")
    val root = s"$dir/t.lance"
    val storage = new HadoopStorage(conf)
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10)), schema)))
    (storage, root, MemoryManifestStore.stores.get(name))
  }

  private def versionFiles(storage: HadoopStorage, root: String): Seq[String] =
    new HadoopStorage().list(s"$root/_versions").map(_.name).filterNot(_.startsWith("latest")).sorted

  test("commits are recorded in the store with the final manifest path; no staged manifest is left") {
    val (storage, root, records) = setup("basic")
    assert(Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 5))))) == 2)
    val key = ExternalManifestStore.keyOf(root)
    assert(records.get(key -> 2L) == s"$key/_versions/${ManifestNaming.V2.fileName(2)}")
    assert(versionFiles(storage, root) == Seq(ManifestNaming.V2.fileName(2), ManifestNaming.V2.fileName(1)).sorted)
    assert(Dataset.open(new HadoopStorage(), root).checkoutLatest().fragments.size == 2, "readers without the store")
  }

  test("racing writers through the store commit exactly once each, in contiguous versions") {
    val (storage, root, _) = setup("race")
    val writers = 6
    val versions = Races.run(writers) { w =>
      // Each writer has its own HadoopStorage, as separate Spark tasks or processes would.
      val own = new HadoopStorage(storage.conf)
      Committer.commit(own, root, Transaction.create(1, Operation.Append(Seq(fragment(s"w$w.lance", w + 1)))))
    }
    assert(versions.sorted == (2L to (writers + 1).toLong))
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.fragments.map(_.files.head.path).sorted == ("a.lance" +: (0 until writers).map(w => s"w$w.lance")).sorted)
    assert(!versionFiles(storage, root).exists(_.contains("-")), "no staged manifest left behind")
  }

  test("a writer that died after recording its staged manifest: readers finish the version, writers go on after it") {
    val (storage, root, records) = setup("died")
    // What a writer leaves when it dies between steps 2 and 3: a staged manifest, recorded in the store.
    val plain = new HadoopStorage()
    val v1 = plain.readAll(s"$root/_versions/${ManifestNaming.V2.fileName(1)}")
    val staged = s"$root/_versions/${ManifestNaming.V2.fileName(2)}-0000dead"
    val v2 = io.sparklance.core.format.ManifestFile.decode(staged, v1).toBuilder.setVersion(2).build()
    plain.create(staged, io.sparklance.core.format.ManifestFile.encode(v2, None))
    val key = ExternalManifestStore.keyOf(root)
    assert(records.putIfAbsent(key -> 2L, ExternalManifestStore.keyOf(staged)) == null)
    assert(Dataset.open(plain, root).latestVersion() == 1, "a reader without the store is one version behind")

    assert(Dataset.open(storage, root).latestVersion() == 2, "a reader with the store finishes version 2")
    assert(records.get(key -> 2L) == s"$key/_versions/${ManifestNaming.V2.fileName(2)}")
    assert(!plain.exists(staged))
    assert(Committer.commit(storage, root, Transaction.create(2, Operation.Append(Seq(fragment("c.lance", 1))))) == 3)
    assert(Dataset.open(plain, root).latestVersion() == 3)
  }

  test("a writer that died after staging but before recording took nothing: the next writer gets the version") {
    val (storage, root, records) = setup("staged-only")
    val plain = new HadoopStorage()
    val orphan = s"$root/_versions/${ManifestNaming.V2.fileName(2)}-0000orphan"
    plain.create(orphan, plain.readAll(s"$root/_versions/${ManifestNaming.V2.fileName(1)}"))
    assert(Dataset.open(storage, root).latestVersion() == 1)
    assert(Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 5))))) == 2)
    val s = Dataset.open(plain, root).checkoutLatest()
    assert(s.version == 2 && s.fragments.map(_.files.head.path) == Seq("a.lance", "b.lance"))
    assert(records.get(ExternalManifestStore.keyOf(root) -> 2L).endsWith(ManifestNaming.V2.fileName(2)))
  }

  test("a recorded version whose manifest is gone everywhere is an error naming it, not a silent rollback") {
    val (storage, root, records) = setup("lost")
    val key = ExternalManifestStore.keyOf(root)
    records.put(key -> 2L, s"$key/_versions/${ManifestNaming.V2.fileName(2)}-0000gone")
    val e = intercept[StorageException](Dataset.open(storage, root).latestVersion())
    assert(e.getMessage.contains("version 2") && e.getMessage.contains("0000gone"), e.getMessage)
  }

  test("configuration errors name the setting") {
    val conf = new Configuration()
    conf.set(ExternalManifestStore.Kind, "no.such.Store")
    val e = intercept[InvalidArgumentException](ExternalManifestStore.fromConf(conf))
    assert(e.getMessage.contains(ExternalManifestStore.Kind) && e.getMessage.contains("no.such.Store"))
    conf.set(ExternalManifestStore.Kind, "dynamodb")
    val d = intercept[InvalidArgumentException](ExternalManifestStore.fromConf(conf))
    assert(d.getMessage.contains(DynamoDbManifestStore.TableKey))
  }
}
