package io.sparklance.core.txn

import java.util.concurrent.atomic.AtomicInteger

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitConflictException, CommitStateUnknownException, VersionNotFoundException}
import io.sparklance.core.commit.{CommitHandler, ExternalStoreCommitHandler, FileSystemCommitHandler, InMemoryManifestStore,
  ManifestPut}
import io.sparklance.core.format.TestManifests
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.{FileEntry, InMemoryStorage}
import io.sparklance.core.table.Dataset
import io.sparklance.proto.TableProtos

/** The outcomes of the commit loop, through an explicit [[CommitHandler]]. */
class CommitLoopSuite extends AnyFunSuite {
  private val root = "mem://bucket/t.lance"
  private val schema = LanceSchema.fromProtos("test", TestManifests.simpleFields, Map.empty)

  private def fragment(name: String, rows: Long): TableProtos.DataFragment =
    TableProtos.DataFragment.newBuilder().setPhysicalRows(rows)
      .addFiles(TableProtos.DataFile.newBuilder().setPath(name).addFields(0).addFields(1).addColumnIndices(0)
        .addColumnIndices(1).setFileMajorVersion(2).setFileMinorVersion(2)).build()

  /** A handler that counts puts and may act before each (another writer committing first) or answer instead. */
  private final class Scripted(inner: CommitHandler) extends CommitHandler {
    val puts = new AtomicInteger()
    @volatile var beforePut: () => Unit = () => ()
    @volatile var answer: Option[ManifestPut] = None
    override def listManifests(root: String): Seq[FileEntry] = inner.listManifests(root)
    override def putManifest(root: String, version: Long, fileName: String, bytes: Array[Byte]): ManifestPut = {
      puts.incrementAndGet()
      val hook = beforePut
      beforePut = () => ()
      hook()
      answer.getOrElse(inner.putManifest(root, version, fileName, bytes))
    }
  }

  private def append(storage: InMemoryStorage, commits: CommitHandler, read: Long, name: String,
      options: Committer.Options = Committer.Options()): Long =
    Committer.commit(storage, commits, root, Transaction.create(read, Operation.Append(Seq(fragment(name, 1)))), options)

  private def created(): (InMemoryStorage, Scripted) = {
    val storage = new InMemoryStorage
    val commits = new Scripted(FileSystemCommitHandler(storage))
    Committer.commit(storage, commits, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10)), schema)),
      Committer.Options())
    commits.puts.set(0)
    (storage, commits)
  }

  private def files(storage: InMemoryStorage): Seq[String] =
    Dataset.open(storage, root).checkoutLatest().fragments.map(_.files.head.path)

  test("(1) committed: the first put wins") {
    val (storage, commits) = created()
    assert(append(storage, commits, 1, "b.lance") == 2 && commits.puts.get == 1)
    assert(files(storage) == Seq("a.lance", "b.lance"))
  }

  test("(2) a lost race over a compatible version is rebased and committed on the next version") {
    val (storage, commits) = created()
    commits.beforePut = () => append(storage, FileSystemCommitHandler(storage), 1, "theirs.lance")
    assert(append(storage, commits, 1, "ours.lance") == 3 && commits.puts.get == 2)
    assert(files(storage) == Seq("a.lance", "theirs.lance", "ours.lance"))
  }

  test("(3) a lost race over a version that conflicts ends the commit, naming that version") {
    val (storage, commits) = created()
    commits.beforePut = () => Committer.commit(storage, root,
      Transaction.create(1, Operation.overwrite(Seq(fragment("o.lance", 3)), schema)))
    val e = intercept[CommitConflictException](append(storage, commits, 1, "late.lance"))
    assert(e.getMessage.contains("version 2, committed since this Append read version 1, is a Overwrite"), e.getMessage)
    assert(commits.puts.get == 1 && files(storage) == Seq("o.lance"))
  }

  test("(3) retries are bounded: a commit that loses every race stops after maxRetries puts") {
    val (storage, commits) = created()
    commits.answer = Some(ManifestPut.Lost)
    val e = intercept[CommitConflictException](append(storage, commits, 1, "b.lance", Committer.Options(maxRetries = 4)))
    assert(e.getMessage.contains("lost the race for a new version 4 times"), e.getMessage)
    assert(commits.puts.get == 4)
  }

  test("(4) state unknown: no retry, and nothing is removed, although the version may be committed") {
    val (storage, commits) = created()
    val before = storage.paths
    storage.failCommitsAfterWriting(1)
    val e = intercept[CommitStateUnknownException](append(storage, commits, 1, "b.lance"))
    assert(e.errorClass == "LANCE_COMMIT_STATE_UNKNOWN" && e.getMessage.contains("no files were removed"), e.getMessage)
    assert(commits.puts.get == 1)
    assert(before.forall(storage.exists) && storage.paths.exists(_.contains("/_transactions/1-")))
    assert(Dataset.open(storage, root).latestVersion() == 2, "the write landed: version 2 is committed")
  }

  test("(4) state unknown after a rebase keeps the deletion files the rebase wrote") {
    val (storage, commits) = created()
    def deletion(offset: Int) = {
      val s = Dataset.open(storage, root).checkout(1)
      io.sparklance.core.write.Deletions.delete(s.storage, s.layout, s.fragments.head, RoaringBitmap.bitmapOf(offset)) match {
        case u: io.sparklance.core.write.Deletions.Updated => u
        case other => fail(s"$other")
      }
    }
    def delete(d: io.sparklance.core.write.Deletions.Updated, handler: CommitHandler) =
      Committer.commit(storage, handler, root, Transaction.create(1, Operation.Delete(Seq(d.fragment), Nil, "",
        Map(0L -> d.deleted))), Committer.Options())
    val (ours, theirs) = (deletion(1), deletion(2))
    delete(theirs, FileSystemCommitHandler(storage))
    val before = storage.paths.filter(_.contains("/_deletions/")).toSet
    storage.failCommits(1)
    intercept[CommitStateUnknownException](delete(ours, commits))
    val after = storage.paths.filter(_.contains("/_deletions/")).toSet
    assert(before.subsetOf(after) && after.size == before.size + 1, "the merged deletion file of the rebase stays")
  }

  test("through the external store: a version recorded although the writer heard a failure is finished by readers") {
    val storage = new InMemoryStorage
    val store = new InMemoryManifestStore
    val commits = new ExternalStoreCommitHandler(storage, store)
    Committer.commit(storage, commits, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10)), schema)),
      Committer.Options())
    store.failPutsAfterRecording(1)
    intercept[CommitStateUnknownException](append(storage, commits, 1, "b.lance"))
    assert(Dataset.open(storage, root).latestVersion() == 1, "a reader without the store does not see version 2 yet")
    assert(Dataset.open(storage, root, commits).latestVersion() == 2)
    assert(append(storage, commits, 2, "c.lance") == 3)
    assert(files(storage) == Seq("a.lance", "b.lance", "c.lance"))
  }

  test("a Restore carries only the version: the committer reads that version's manifest") {
    val (storage, commits) = created()
    append(storage, commits, 1, "b.lance")
    val txn = Transaction.create(2, Operation.Restore(1))
    assert(Transaction.fromProto(txn.toProto) == txn)
    assert(Committer.commit(storage, commits, root, txn, Committer.Options()) == 3)
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.fragments.map(f => f.id -> f.files.head.path) == Seq(0L -> "a.lance"))
    assert(s.manifest.maxFragmentId.contains(1L), "fragment ids keep counting from the latest version")
  }

  test("a Restore of a version that does not exist fails before writing anything") {
    val (storage, commits) = created()
    val before = storage.paths
    intercept[VersionNotFoundException](
      Committer.commit(storage, commits, root, Transaction.create(1, Operation.Restore(7)), Committer.Options()))
    assert(storage.paths == before)
  }

  test("the rows a Delete deleted are not written to its transaction file") {
    val op = Operation.Delete(Nil, Seq(3L), "x > 1", Map(0L -> RoaringBitmap.bitmapOf(1, 2)))
    assert(Transaction.fromProto(Transaction.create(1, op).toProto).operation == op.copy(deletedRows = Map.empty))
    val update = Operation.Update(Seq(3L), Nil, Nil, Map(0L -> RoaringBitmap.bitmapOf(1)))
    assert(Transaction.fromProto(Transaction.create(1, update).toProto).operation == update.copy(deletedRows = Map.empty))
  }
}
