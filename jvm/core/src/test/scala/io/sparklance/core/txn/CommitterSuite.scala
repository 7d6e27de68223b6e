package io.sparklance.core.txn

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitConflictException, CommitStateUnknownException}
import io.sparklance.core.format.{FeatureFlags, ManifestFile, RowIdSequence, TestManifests}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.table.{Dataset, Snapshot}
import io.sparklance.core.testing.Races
import io.sparklance.core.write.Deletions
import io.sparklance.proto.TableProtos
import org.roaringbitmap.RoaringBitmap

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

  test("an overwrite records the file version its fragments were written in; without one the table's stays") {
    val storage = new InMemoryStorage
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10)), schema)),
      Committer.Options(newTableFileVersion = "2.0"))
    def recorded: Option[String] = Dataset.open(storage, root).checkoutLatest().manifest.dataStorageVersion
    assert(recorded.contains("2.0"))
    Committer.commit(storage, root, Transaction.create(1, Operation.overwrite(Seq(fragment("b.lance", 1)), schema)))
    assert(recorded.contains("2.0"))
    Committer.commit(storage, root, Transaction.create(2,
      Operation.overwrite(Seq(fragment("c.lance", 1)), schema).copy(fileVersion = Some("2.2"))))
    assert(recorded.contains("2.2"))
    Committer.commit(storage, root, Transaction.create(3, Operation.Append(Seq(fragment("d.lance", 1)))))
    assert(recorded.contains("2.2"))
  }

  test("a table created with stable row ids has the feature and row ids from 0; an existing table keeps its choice") {
    val storage = new InMemoryStorage
    val stable = Committer.Options(stableRowIds = Some(true))
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 3)), schema)), stable)
    Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 2)))))
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.manifest.hasStableRowIds && (s.manifest.proto.getWriterFeatureFlags & FeatureFlags.StableRowIds) != 0)
    assert(s.fragments.map(f => RowIdSequence.decode("t", f.proto.getInlineRowIds, f.physicalRows).toArray.toSeq) ==
      Seq(Seq(0L, 1L, 2L), Seq(3L, 4L)))
    assert(s.manifest.proto.getNextRowId == 5)
    // Asking for the other choice on a table that exists is refused; asking for its own is not.
    val refused = intercept[io.sparklance.core.InvalidArgumentException](Committer.commit(storage, root,
      Transaction.create(2, Operation.overwrite(Seq(fragment("c.lance", 1)), schema)), Committer.Options(stableRowIds = Some(false))))
    assert(refused.getMessage.contains("has stable row ids"))
    assert(Committer.commit(storage, root, Transaction.create(2, Operation.overwrite(Seq(fragment("c.lance", 1)), schema)), stable) == 3)
    val plain = "mem://plain.lance"
    Committer.commit(storage, plain, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 3)), schema)))
    assert(!Dataset.open(storage, plain).checkoutLatest().manifest.hasStableRowIds)
    assert(intercept[io.sparklance.core.InvalidArgumentException](Committer.commit(storage, plain,
      Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 1)))), stable)).getMessage.contains("has no stable row ids"))
  }

  test("racing appends all commit exactly once, in contiguous versions") {
    val storage = new InMemoryStorage
    create(storage)
    val writers = 8
    val versions = Races.run(writers) { w =>
      Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment(s"w$w.lance", w + 1)))))
    }
    assert(versions.sorted == (2L to (writers + 1).toLong))
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

  test("a transaction that must not be rebased is refused over any version committed since it read, even an append") {
    val storage = new InMemoryStorage
    create(storage)
    Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 5)))))
    val strict = Committer.Options(rebases = false)
    val e = intercept[CommitConflictException] {
      Committer.commit(storage, root, Transaction.create(1, Operation.overwrite(Seq(fragment("c.lance", 1)), schema)), strict)
    }
    assert(e.getMessage.contains("version 2 was committed since this Overwrite read version 1"))
    assert(Dataset.open(storage, root).checkoutLatest().version == 2)
    // On the version it read, it commits.
    assert(Committer.commit(storage, root, Transaction.create(2, Operation.overwrite(Seq(fragment("c.lance", 1)), schema)), strict) == 3)
    // The same overwrite with rebases allowed goes on top of a later version.
    Committer.commit(storage, root, Transaction.create(3, Operation.Append(Seq(fragment("d.lance", 5)))))
    assert(Committer.commit(storage, root, Transaction.create(3, Operation.overwrite(Seq(fragment("e.lance", 1)), schema))) == 5)
  }

  test("conflict rules, pair by pair") {
    import ConflictRules.Verdict.Compatible
    val append = Operation.Append(Nil)
    val overwrite = Operation.overwrite(Nil, schema)
    assert(ConflictRules.check(append, Some(append)) == Compatible)
    assert(ConflictRules.check(append, Some(overwrite)) != Compatible)
    assert(ConflictRules.check(overwrite, Some(append)) == Compatible)
    assert(ConflictRules.check(overwrite, Some(overwrite)) == Compatible)
    assert(ConflictRules.check(append, Some(Operation.Other("delete"))) != Compatible)
    assert(ConflictRules.check(append, None) != Compatible, "a version without a transaction file conflicts")
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
      io.sparklance.core.format.ManifestFile.encode(TestManifests.manifest(1, TestManifests.t0), None))
    val e = intercept[CommitConflictException](Committer.commit(storage, root,
      Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 1)))), Committer.Options(maxRetries = 3)))
    assert(e.getMessage.contains("lost the race for a new version 3 times"))
  }

  // Row-level changes of one fragment racing (fragment 0, 10 rows, created at version 1).

  private def snapshot(storage: InMemoryStorage, version: Long): Snapshot = Dataset.open(storage, root).checkout(version)

  /** Deletes `offsets` of fragment 0 as of `version`: the fragment with its new deletion file, and the rows. */
  private def deletion(storage: InMemoryStorage, version: Long, offsets: Int*): Deletions.Updated = {
    val s = snapshot(storage, version)
    Deletions.delete(s.storage, s.layout, s.fragments.find(_.id == 0).get, RoaringBitmap.bitmapOf(offsets: _*)) match {
      case u: Deletions.Updated => u
      case other => fail(s"deleting $offsets gave $other")
    }
  }

  private def commitDelete(storage: InMemoryStorage, read: Long, d: Deletions.Updated): Long =
    Committer.commit(storage, root, Transaction.create(read, Operation.Delete(Seq(d.fragment), Nil, "", Map(0L -> d.deleted))))

  private def commitUpdate(storage: InMemoryStorage, read: Long, d: Deletions.Updated,
      added: TableProtos.DataFragment): Long =
    Committer.commit(storage, root, Transaction.create(read, Operation.Update(Nil, Seq(d.fragment), Seq(added),
      Map(0L -> d.deleted))))

  private def deleted(storage: InMemoryStorage): Seq[Int] = {
    val s = Dataset.open(storage, root).checkoutLatest()
    s.deletionVector(s.fragments.find(_.id == 0).get).toSortedArray.toSeq
  }

  test("deletes of disjoint rows of one fragment merge: the merged deletion file holds both sets") {
    val storage = new InMemoryStorage
    create(storage)
    val first = deletion(storage, 1, 1, 2)
    val second = deletion(storage, 1, 5)
    assert(commitDelete(storage, 1, first) == 2)
    assert(commitDelete(storage, 1, second) == 3)
    assert(deleted(storage) == Seq(1, 2, 5))
    val s = Dataset.open(storage, root).checkoutLatest()
    val file = s.fragments.head.deletionFile.get
    assert(file.numDeletedRows == 3 && file.fileType == TableProtos.DeletionFile.DeletionFileType.ARROW_ARRAY)
    // The rebased transaction reads version 2 and names the merged deletion file; neither writer's file is it.
    val txn = Transaction.fromProto(io.sparklance.proto.TransactionProtos.Transaction.parseFrom(
      storage.readAll(s"$root/_transactions/${s.manifest.transactionFile.get}")))
    assert(txn.readVersion == 2)
    val f = txn.operation match {
      case Operation.Delete(Seq(f), Nil, _, _) => f
      case other => fail(s"the rebased transaction is $other")
    }
    assert(f.getDeletionFile == s.fragments.head.proto.getDeletionFile && f.getDeletionFile.getReadVersion == 2)
    assert(Seq(first.file, second.file).forall(p => !s.deletionFilePath(s.fragments.head).contains(p)))
  }

  test("a large merged deletion file is a Roaring bitmap") {
    val storage = new InMemoryStorage
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(Seq(fragment("a.lance", 10000)), schema)))
    commitDelete(storage, 1, deletion(storage, 1, 0 until 3000: _*))
    commitDelete(storage, 1, deletion(storage, 1, 5000 until 7000: _*))
    assert(deleted(storage) == (0 until 3000) ++ (5000 until 7000))
    val file = Dataset.open(storage, root).checkoutLatest().fragments.head.deletionFile.get
    assert(file.numDeletedRows == 5000 && file.fileType == TableProtos.DeletionFile.DeletionFileType.BITMAP)
  }

  test("an update that rewrote a row another delete or update deleted meanwhile conflicts, naming fragment and rows") {
    val storage = new InMemoryStorage
    create(storage)
    commitDelete(storage, 1, deletion(storage, 1, 2, 3))
    val e = intercept[CommitConflictException](commitUpdate(storage, 1, deletion(storage, 1, 3, 4), fragment("u.lance", 2)))
    assert(e.getMessage.contains("fragment 0: 1 of the rows this Update deleted or updated (offsets 3) were also " +
      "deleted or updated by a transaction committed since it read version 1"), e.getMessage)
    assert(e.errorClass == "LANCE_COMMIT_CONFLICT")
    assert(Dataset.open(storage, root).latestVersion() == 2 && deleted(storage) == Seq(2, 3))
    // The rebase would have written its deletion file as of version 2; a conflict leaves none behind.
    assert(!storage.paths.exists(_.contains("_deletions/0-2-")))
    // As upstream does, two deletes of the same row conflict too.
    intercept[CommitConflictException](commitDelete(storage, 1, deletion(storage, 1, 2)))
  }

  test("a delete that read the table before its fragment was compacted, or removed, conflicts, naming the fragment") {
    val storage = new InMemoryStorage
    create(storage)
    val old = snapshot(storage, 1).fragments.head.proto
    Committer.commit(storage, root, Transaction.create(1, Operation.Rewrite(Seq(Seq(old) -> Seq(fragment("c.lance", 10))))))
    val e = intercept[CommitConflictException](commitDelete(storage, 1, deletion(storage, 1, 1)))
    assert(e.getMessage.contains("version 2, committed since this Delete read version 1, is a Rewrite, it rewrote " +
      "(compacted) fragment 0, which this Delete also changed"), e.getMessage)

    val removed = new InMemoryStorage
    create(removed)
    Committer.commit(removed, root, Transaction.create(1, Operation.Delete(Nil, Seq(0L), "")))
    val e2 = intercept[CommitConflictException](commitDelete(removed, 1, deletion(removed, 1, 1)))
    assert(e2.getMessage.contains("it removed fragment 0 (deleted every row of it)"), e2.getMessage)
  }

  test("without the rows it deleted, a delete of a fragment changed meanwhile conflicts") {
    val storage = new InMemoryStorage
    create(storage)
    commitDelete(storage, 1, deletion(storage, 1, 1))
    val e = intercept[CommitConflictException](Committer.commit(storage, root,
      Transaction.create(1, Operation.Delete(Seq(deletion(storage, 1, 2).fragment), Nil, ""))))
    assert(e.getMessage.contains("the rows this one deleted from it are not known"), e.getMessage)
  }

  test("a merge that deletes every remaining row of a fragment removes it; appends still commute") {
    val storage = new InMemoryStorage
    create(storage)
    val first = deletion(storage, 1, 0 until 5: _*)
    val second = deletion(storage, 1, 5 until 10: _*)
    Committer.commit(storage, root, Transaction.create(1, Operation.Append(Seq(fragment("b.lance", 3)))))
    commitDelete(storage, 1, first)
    assert(commitDelete(storage, 1, second) == 4)
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(s.fragments.map(_.id) == Seq(1L))
    assert(!FeatureFlags.describe(s.manifest.proto.getReaderFeatureFlags).contains("deletion files"))
  }

  test("racing deletes of disjoint rows of one fragment all commit, after as many rebases as it takes") {
    val storage = new InMemoryStorage
    create(storage)
    val writers = 8
    val deletions = (0 until writers).map(w => deletion(storage, 1, w))
    assert(Races.run(writers)(w => commitDelete(storage, 1, deletions(w))).sorted == (2L to (writers + 1).toLong))
    assert(deleted(storage) == (0 until writers))
  }

  test("stable row ids: an update that moved a row merges with a delete of another row, and conflicts with one of it") {
    val storage = new InMemoryStorage
    create(storage)
    // Version 1 as a table with stable row ids 0..9 in fragment 0.
    val v1 = Dataset.open(storage, root).listVersions().entries.last
    val proto = ManifestFile.decode(v1.path, storage.readAll(v1.path))
    val withIds = proto.toBuilder.setReaderFeatureFlags(proto.getReaderFeatureFlags | FeatureFlags.StableRowIds)
      .setWriterFeatureFlags(proto.getWriterFeatureFlags | FeatureFlags.StableRowIds).setNextRowId(10)
    withIds.setFragments(0, withIds.getFragments(0).toBuilder
      .setInlineRowIds(RowIdSequence.encode((0L until 10L).toArray).toByteString))
    storage.put(v1.path, ManifestFile.encode(withIds.build(), None))
    // Our update rewrites row 3 into a new fragment that keeps its row id.
    val moved = fragment("u.lance", 1).toBuilder.setInlineRowIds(RowIdSequence.encode(Array(3L)).toByteString).build()
    val update = deletion(storage, 1, 3)
    commitDelete(storage, 1, deletion(storage, 1, 7))
    assert(commitUpdate(storage, 1, update, moved) == 3)
    val s = Dataset.open(storage, root).checkoutLatest()
    assert(deleted(storage) == Seq(3, 7))
    assert(s.fragments.map(f => s.rowIds(f).get.toArray.toSeq) ==
      Seq(Seq(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), Seq(3L)))
    // A delete of row 3 that read version 1 must not resurrect it: it conflicts.
    val e = intercept[CommitConflictException](commitDelete(storage, 1, deletion(storage, 1, 3)))
    assert(e.getMessage.contains("(offsets 3)"), e.getMessage)
  }

  test("a conflict after a rebase removes the deletion files the rebase wrote, and nothing else") {
    final class Hooked extends InMemoryStorage {
      @volatile var beforeNextVersion: () => Unit = () => ()
      override def putIfAbsent(path: String, bytes: Array[Byte]): Boolean = {
        if (path.contains("_versions/")) { val hook = beforeNextVersion; beforeNextVersion = () => (); hook() }
        super.putIfAbsent(path, bytes)
      }
    }
    val storage = new Hooked
    create(storage)
    commitDelete(storage, 1, deletion(storage, 1, 1))
    val ours = deletion(storage, 1, 5)
    val theirs = deletion(storage, 2, 5)
    def deletionFiles = storage.paths.filter(_.contains("/_deletions/")).toSet
    val before = deletionFiles
    // Ours rebases over version 2 (writing a merged file), then loses version 3 to theirs, which deleted row 5 too.
    storage.beforeNextVersion = () => assert(commitDelete(storage, 2, theirs) == 3)
    val e = intercept[CommitConflictException](commitDelete(storage, 1, ours))
    assert(e.getMessage.contains("(offsets 5)"), e.getMessage)
    assert(deletionFiles == before)
    assert(Dataset.open(storage, root).latestVersion() == 3 && deleted(storage) == Seq(1, 5))
  }
}
