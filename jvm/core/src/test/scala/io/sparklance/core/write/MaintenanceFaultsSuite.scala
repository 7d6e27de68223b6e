package io.sparklance.core.write

import java.time.Instant

import org.apache.arrow.memory.RootAllocator
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitStateUnknownException, FileVersion, StorageException}
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.table.{Cleanup, Compaction, Dataset}
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/** Failures in the middle of compaction and cleanup: the table stays readable and no committed row is lost. */
class MaintenanceFaultsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  import IdTables.{root, schema}

  /** A table of `fragments` appends of 100 rows each. */
  private def table(fragments: Int): InMemoryStorage = {
    val storage = new InMemoryStorage
    (0 until fragments).foreach { k =>
      val w = new FragmentWriter(storage, root, schema, FileVersion.V2_2)
      val batch = IdTables.batch(allocator, k * 100L, 100)
      try w.write(batch) finally batch.close()
      val op = if (k == 0) Operation.overwrite(w.finish(), schema) else Operation.Append(w.finish())
      Committer.commit(storage, root, Transaction.create(k.toLong, op))
    }
    storage
  }

  private def ids(storage: InMemoryStorage): Seq[Long] = IdTables.ids(storage, allocator)

  test("a compaction whose commit fails leaves the table as it was, and deletes its files unless the outcome is unknown") {
    val storage = table(5)
    val before = storage.paths.toSet
    storage.failNext("create", 1000)  // the transaction file cannot be written: a plain failure before the commit
    intercept[StorageException](Compaction.compact(storage, root))
    storage.failNext("create", 0)
    assert(Dataset.open(storage, root).latestVersion() == 5 && ids(storage) == (0L until 500L))
    assert(storage.paths.toSet == before)
    storage.failNext("putIfAbsent", 1)  // the manifest write fails: the outcome is unknown, nothing is removed
    intercept[CommitStateUnknownException](Compaction.compact(storage, root))
    assert(Dataset.open(storage, root).latestVersion() == 5 && ids(storage) == (0L until 500L))
    assert(Compaction.compact(storage, root).version.contains(6L))
    assert(ids(storage) == (0L until 500L))
  }

  test("a cleanup that fails half way leaves every kept version readable") {
    val storage = table(4)
    assert(Compaction.compact(storage, root).version.contains(5L))
    storage.failNext("delete", 3)
    intercept[StorageException](Cleanup.run(storage, root, Instant.now().plusSeconds(60), dryRun = false))
    storage.failNext("delete", 0)
    assert(ids(storage) == (0L until 400L))
    val r = Cleanup.run(storage, root, Instant.now().plusSeconds(60), dryRun = false)
    assert(r.removedVersions.nonEmpty)
    assert(Dataset.open(storage, root).listVersions().entries.map(_.version) == Seq(5L))
    assert(ids(storage) == (0L until 400L))
  }
}
