package io.sparklance.core.txn

import java.util.concurrent.{CountDownLatch, Executors, TimeUnit}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitConflictException, CommitStateUnknownException}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.table.{Dataset, TestManifests}
import io.sparklance.proto.TableProtos

class CommitterSuite extends AnyFunSuite {
  private val root = "mem://t.lance"
  private val schema = LanceSchema.fromProtos("test", TestManifests.simpleFields, Map.empty)

  private def fragment(name: String, rows: Long): TableProtos.DataFragment =
    TableProtos.DataFragment.newBuilder().setPhysicalRows(rows)
      .addFiles(TableProtos.DataFile.newBuilder().setPath(name).addFields(0).addFields(1).addColumnIndices(0)
        .addColumnIndices(1).setFileMajorVersion(2).setFileMinorVersion(2)).build()

  private def create(storage: InMemoryStorage): Long =
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10)), schema)))

  test("create, then append: versions 1 and 2, fragment ids from max_fragment_id, a transaction file each") {
    val storage = new InMemoryStorage
    assert(create(storage) == 1)
    assert(Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 5))))) == 2)
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.fragments.map(f => f.id -> f.physicalRows) == Seq(0L -> 10L, 1L -> 5L))
    assert(s.manifest.maxFragmentId.contains(1L))
    assert(s.schema.fields.map(_.name) == Seq("a", "b"))
    assert(s.manifest.transactionFile.exists(n => storage.exists(s"$root/_transactions/$n")))
    assert(new String(storage.readAll(s"$root/_versions/latest_version_hint.json")) == """{"version":2}""")
  }

  test("racing appends all commit exactly once, in contiguous versions") {
    val storage = new InMemoryStorage
    create(storage)
    val writers = 8
    val pool = Executors.newFixedThreadPool(writers)
    val start = new CountDownLatch(1)
    try {
      val results = (0 until writers).map { w =>
        pool.submit(() => {
          start.await()
          Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment(s"w$w.lance", w + 1)))))
        })
      }
      start.countDown()
      val versions = results.map(_.get(60, TimeUnit.SECONDS)).sorted
      assert(versions == (2L to (writers + 1).toLong))
    } finally pool.shutdownNow()
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.fragments.map(_.files.head.path).sorted == ("a.lance" +: (0 until writers).map(w => s"w$w.lance")).sorted)
    assert(s.fragments.map(_.id).sorted == (0L to writers.toLong))
  }

  test("an append that read a version before a committed overwrite is refused, naming the version") {
    val storage = new InMemoryStorage
    create(storage)
    Committer.commit(storage, root, Transaction.create(1, Operation.overwrite(Seq(fragment("o.lance", 3)), schema)))
    val e = intercept[CommitConflictException](
      Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("late.lance", 1))))))
    assert(e.getMessage.contains("version 2") && e.getMessage.contains("Overwrite") && e.errorClass == "LANCE_COMMIT_CONFLICT")
    assert(Dataset.open(storage, root).latestVersion() == 2)
  }

  test("conflict rules, pair by pair") {
    val append = Operation.Append(Nil)
    val overwrite = Operation.overwrite(Nil, schema)
    assert(ConflictRules.compatible(append, Some(append)))
    assert(!ConflictRules.compatible(append, Some(overwrite)))
    assert(ConflictRules.compatible(overwrite, Some(append)))
    assert(ConflictRules.compatible(overwrite, Some(overwrite)))
    assert(!ConflictRules.compatible(append, Some(Operation.Other("delete"))))
    assert(!ConflictRules.compatible(append, None), "a version without a transaction file conflicts")
  }

  test("a version committed without a readable transaction file conflicts") {
    val storage = new InMemoryStorage
    create(storage)
    Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 1)))))
    val v2 = Dataset.open(storage, root).checkout(2).manifest.transactionFile.get
    storage.delete(s"$root/_transactions/$v2")
    intercept[CommitConflictException](
      Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("c.lance", 1))))))
  }

  test("a storage failure while writing the manifest is 'state unknown', and removes nothing") {
    val storage = new InMemoryStorage
    create(storage)
    val before = storage.paths
    storage.failNext("putIfAbsent", 1)
    val e = intercept[CommitStateUnknownException](
      Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 1))))))
    assert(e.errorClass == "LANCE_COMMIT_STATE_UNKNOWN" && e.getMessage.contains("no files were removed"))
    assert(before.forall(storage.exists), "nothing that existed was deleted")
    assert(Dataset.open(storage, root).checkoutLatest().version == 1, "the table reads at its previous version")
  }

  test("losing every race ends in a conflict after the retry limit") {
    val storage = new InMemoryStorage {
      override def putIfAbsent(path: String, bytes: Array[Byte]): Boolean =
        if (path.contains("_versions/")) false else super.putIfAbsent(path, bytes)
    }
    storage.put(s"$root/_versions/18446744073709551614.manifest",
      io.sparklance.core.table.ManifestFile.encode(TestManifests.manifest(1, TestManifests.t0), None))
    val e = intercept[CommitConflictException](Committer.commit(storage, root,
      Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 1)))), Committer.Options(maxRetries = 3)))
    assert(e.getMessage.contains("lost the race for a new version 3 times"))
  }
}
