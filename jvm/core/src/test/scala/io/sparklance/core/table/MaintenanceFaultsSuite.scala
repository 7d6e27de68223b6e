package io.sparklance.core.table

import java.time.Instant

import org.apache.arrow.memory.RootAllocator
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitStateUnknownException, FileVersion, StorageException}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.{FragmentWriter, IdTables}

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

  private def opened(storage: InMemoryStorage): Table = Table.open(storage, CommitHandler.forStorage(storage), root)

  private def ids(storage: InMemoryStorage): Seq[Long] = IdTables.ids(storage, allocator)

  test("a compaction whose commit fails leaves the table as it was, and deletes its files unless the outcome is unknown") {
    val storage = table(5)
    val before = storage.paths.toSet
    storage.failNext("create", 1000)  // the transaction file cannot be written: a plain failure before the commit
    intercept[StorageException](opened(storage).compact(1024L * 1024))
    storage.failNext("create", 0)
    assert(Dataset.open(storage, root).latestVersion() == 5 && ids(storage) == (0L until 500L))
    assert(storage.paths.toSet == before)
    storage.failNext("putIfAbsent", 1)  // the manifest write fails: the outcome is unknown, nothing is removed
    intercept[CommitStateUnknownException](opened(storage).compact(1024L * 1024))
    assert(Dataset.open(storage, root).latestVersion() == 5 && ids(storage) == (0L until 500L))
    assert(opened(storage).compact(1024L * 1024).version.contains(6L))
    assert(ids(storage) == (0L until 500L))
  }

  test("a cleanup that fails half way leaves every kept version readable") {
    val storage = table(4)
    assert(opened(storage).compact(1024L * 1024).version.contains(5L))
    storage.failNext("delete", 3)
    intercept[StorageException](opened(storage).cleanup(Instant.now().plusSeconds(60)))
    storage.failNext("delete", 0)
    assert(ids(storage) == (0L until 400L))
    val r = opened(storage).cleanup(Instant.now().plusSeconds(60))
    assert(r.removedVersions.nonEmpty)
    assert(Dataset.open(storage, root).listVersions().entries.map(_.version) == Seq(5L))
    assert(ids(storage) == (0L until 400L))
  }
}
