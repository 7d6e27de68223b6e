package io.sparklance.core.txn

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.proto.TableProtos

/** The conflict table of [[ConflictRules]], pair by pair. */
class ConflictRulesSuite extends AnyFunSuite {
  private def frag(id: Long) = TableProtos.DataFragment.newBuilder().setId(id).build()
  private val append = Operation.Append(Seq(frag(0)))
  private val overwrite = Operation.Overwrite(Nil, Nil, Map.empty, Map.empty)
  private def delete(updated: Long*)(removed: Long*) = Operation.Delete(updated.map(frag), removed, "")
  private def update(updated: Long*)(removed: Long*) = Operation.Update(removed, updated.map(frag), Seq(frag(0)))
  private val other = Operation.Other("rewrite")

  import ConflictRules.Verdict._
  private def verdict(ours: Operation, theirs: Operation) = ConflictRules.check(ours, Some(theirs))
  private def ok(ours: Operation, theirs: Operation) = verdict(ours, theirs) == Compatible
  private def conflict(ours: Operation, theirs: Operation): String = verdict(ours, theirs) match {
    case Conflict(reason) => reason
    case v => fail(s"$ours over $theirs: $v, expected a conflict")
  }

  test("appends commute with appends, deletes, updates and rewrites, not with overwrites or unknown operations") {
    assert(ok(append, append) && ok(append, delete(1)()) && ok(append, update(1)(2)))
    assert(ok(append, Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(0))))))
    assert(conflict(append, overwrite) == "which a Append cannot be combined with")
    assert(!ok(append, other))
    assert(ConflictRules.check(append, None).isInstanceOf[Conflict], "a version without a transaction file conflicts")
  }

  test("deletes and updates commute with appends and with changes of other fragments") {
    assert(ok(delete(1)(), append) && ok(update(1)(), append))
    assert(ok(delete(1)(2), delete(3)(4)))
    assert(ok(update(1)(), delete(2)()))
    assert(ok(delete(1)(), update(2)(3)))
  }

  test("deletes and updates that both gave a fragment a new deletion file merge them") {
    assert(verdict(delete(1)(), delete(1)()) == MergeDeletions(Set(1)))
    assert(verdict(delete(1, 2, 3)(), update(3, 2)()) == MergeDeletions(Set(2, 3)))
    assert(verdict(update(4)(), delete(4)(5)) == MergeDeletions(Set(4)))
    assert(verdict(update(4)(), update(4)()) == MergeDeletions(Set(4)))
  }

  test("a fragment removed by either side, or given other data files, conflicts, naming it") {
    assert(conflict(delete(1)(), delete()(1)) == "it removed fragment 1 (deleted every row of it), which this Delete also changed")
    assert(conflict(delete()(1), update(1)()) == "it deleted rows of fragment 1, every row of which this Delete deletes")
    assert(conflict(update(2)(), update()(2)).contains("removed fragment 2"))
    val other = TableProtos.DataFragment.newBuilder().setId(1)
      .addFiles(TableProtos.DataFile.newBuilder().setPath("other.lance")).build()
    assert(conflict(delete(1)(), Operation.Delete(Seq(other), Nil, "")) ==
      "it changed the data files of fragment 1, which this Delete also changed")
  }

  test("a compaction of a fragment a delete or update changed conflicts in either order, naming the fragments") {
    val rewrite = Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(9))))
    assert(conflict(delete(1)(), rewrite) == "it rewrote (compacted) fragment 1, which this Delete also changed")
    assert(conflict(update(2)(1), rewrite) == "it rewrote (compacted) fragments 1, 2, which this Update also changed")
    assert(conflict(rewrite, delete(2)()) == "it deleted rows of fragment 2, which this Rewrite compacts")
    assert(ok(delete(3)(), rewrite) && ok(rewrite, update(3)(4)))
  }

  test("nothing rebases over an overwrite except an overwrite; an overwrite rebases over everything known") {
    assert(!ok(delete(1)(), overwrite) && !ok(update(1)(), overwrite))
    assert(ok(overwrite, append) && ok(overwrite, overwrite) && ok(overwrite, delete(1)()) && ok(overwrite, update(1)()))
    assert(!ok(overwrite, other) && !ok(delete(1)(), other))
  }

  test("a schema change combines with nothing, in either direction") {
    val project = Operation.Project(Nil)
    Seq(append, overwrite, delete(1)(), update(1)(), project).foreach { op =>
      assert(!ok(project, op), op)
      assert(!ok(op, project) || op == overwrite, op)
    }
  }

  private def index(name: String, uuid: Int, fragments: Int*) = io.sparklance.core.index.IndexMetadata.create(
    new java.util.UUID(0, uuid), name, Seq(1), 1, org.roaringbitmap.RoaringBitmap.bitmapOf(fragments: _*),
    io.sparklance.core.index.IndexKind.BTree, com.google.protobuf.ByteString.EMPTY, 0, Nil)
  private def createIndex(added: TableProtos.IndexMetadata*)(removed: TableProtos.IndexMetadata*) =
    Operation.CreateIndex(added, removed)

  test("an index rebases over appends and deletes, and over updates and rewrites of fragments it does not cover") {
    val ours = createIndex(index("i", 1, 1, 2))()
    assert(ok(ours, append) && ok(ours, delete(1)(2)))
    assert(ok(ours, update(3)(4)) && ok(ours, Operation.Rewrite(Seq(Seq(frag(3)) -> Seq(frag(5))))))
    assert(conflict(ours, update(2)()) == "it changed fragment 2, which the index being created covers; create the index again")
    assert(conflict(ours, Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(5))))).contains("fragments 1, 2"))
    assert(conflict(ours, overwrite) == "which a CreateIndex cannot be combined with")
    assert(!ok(ours, Operation.Project(Nil)) && !ok(ours, other))
  }

  test("two index changes combine unless they create the same name or drop the same index; others rebase over one") {
    val i = index("i", 1, 1)
    assert(ok(createIndex(index("a", 2, 1))(), createIndex(index("b", 3, 1))()))
    assert(conflict(createIndex(index("a", 2, 1))(), createIndex(index("a", 3, 1))()) == "it also created or dropped index a")
    assert(!ok(createIndex()(i), createIndex()(i)))
    Seq(append, delete(1)(), update(1)(), Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(5)))), overwrite).foreach { o =>
      assert(ok(o, createIndex(i)()), s"$o over a CreateIndex")
    }
    assert(!ok(Operation.Project(Nil), createIndex(i)()))
  }

  test("config changes rebase over everything known but changes of the same keys, and everything rebases over them") {
    val setA = Operation.UpdateConfig(Map("a" -> "1"), Set.empty)
    val dropA = Operation.UpdateConfig(Map.empty, Set("a"))
    val setB = Operation.UpdateConfig(Map("b" -> "2"), Set("c"))
    val index = Operation.CreateIndex(Nil, Nil)
    assert(ok(setA, setB) && ok(setB, setA))
    assert(conflict(setA, dropA) == "it also set or removed a")
    assert(conflict(setB, Operation.UpdateConfig(Map("c" -> "x"), Set.empty)) == "it also set or removed c")
    assert(conflict(setA, Operation.UpdateConfig(Map.empty, Set.empty, otherUpdates = true)).startsWith("it replaced"))
    Seq(append, delete(1)(2), update(1)(2), Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(0)))), index, overwrite,
      Operation.Project(Nil), Operation.Restore(1)).foreach(t => assert(ok(setA, t), t))
    assert(conflict(setA, Operation.Overwrite(Nil, Nil, Map.empty, Map("a" -> "2"))) == "it replaced the table and set a")
    assert(!ok(setA, other))
    Seq(append, delete(1)(2), update(1)(2), Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(0)))), index)
      .foreach(o => assert(ok(o, setA) && ok(o, Operation.UpdateConfig(Map.empty, Set.empty, otherUpdates = true)), o))
    assert(!ok(Operation.Project(Nil), setA) && !ok(overwrite, setA))
  }

  test("config changes are written as pylance 14 writes them and read back, old style too") {
    val op = Operation.UpdateConfig(Map("b" -> "2", "a" -> "1"), Set("c"))
    val proto = Transaction.create(3, op).toProto
    val entries = proto.getUpdateConfig.getConfigUpdates.getUpdateEntriesList
    assert(entries.size == 3 && entries.get(0).getKey == "a" && !entries.get(2).hasValue && entries.get(2).getKey == "c")
    assert(Transaction.fromProto(proto).operation == op)
    val old = proto.toBuilder.setUpdateConfig(io.sparklance.proto.TransactionProtos.Transaction.UpdateConfig.newBuilder()
      .putUpsertValues("x", "y").addDeleteKeys("z")).build()
    assert(Transaction.fromProto(old).operation == Operation.UpdateConfig(Map("x" -> "y"), Set("z")))
  }

  test("field metadata (a primary key) is written as pylance's update_field_metadata and conflicts with schema changes") {
    val key = Operation.UpdateConfig(Map.empty, Set.empty, fieldMetadata = Map(2 -> Map("k" -> "true", "p" -> "1")))
    val proto = Transaction.create(3, key).toProto
    val entries = proto.getUpdateConfig.getFieldMetadataUpdatesMap.get(2).getUpdateEntriesList
    assert(entries.size == 2 && entries.get(0).getKey == "k" && entries.get(0).getValue == "true")
    assert(!proto.getUpdateConfig.hasConfigUpdates)
    assert(Transaction.fromProto(proto).operation == key)
    Seq(Operation.Project(Nil), overwrite, Operation.Restore(1), key).foreach(t => assert(!ok(key, t), t))
    Seq(append, delete(1)(2), update(1)(2), Operation.UpdateConfig(Map("a" -> "1"), Set.empty)).foreach { t =>
      assert(ok(key, t) && ok(t, key), t)
    }
    // A removal or a whole map replaced (pylance can commit those) is not something sparklance commits.
    val removal = proto.toBuilder.setUpdateConfig(proto.getUpdateConfig.toBuilder.putFieldMetadataUpdates(3,
      io.sparklance.proto.TransactionProtos.Transaction.UpdateMap.newBuilder().addUpdateEntries(
        io.sparklance.proto.TransactionProtos.Transaction.UpdateMapEntry.newBuilder().setKey("k")).build())).build()
    assert(Transaction.fromProto(removal).operation.asInstanceOf[Operation.UpdateConfig].otherUpdates)
  }

  test("a compaction that remaps indexes conflicts with index changes of those indexes or of its fragments; reserving ids combines with everything") {
    val i = index("i", 1, 1, 2)
    def remapping(uuid: Int) = Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(9))),
      Seq(io.sparklance.proto.TransactionProtos.Transaction.Rewrite.RewrittenIndex.newBuilder()
        .setOldId(index("x", uuid).getUuid).setNewId(index("x", 100 + uuid).getUuid).build()))
    val rewrite = remapping(1)
    assert(conflict(rewrite, createIndex()(i)) == "it dropped or replaced an index this Rewrite remaps; compact again")
    assert(conflict(rewrite, createIndex(index("j", 2, 2))()) ==
      "it created an index covering fragment 2, which this Rewrite compacts; compact again")
    assert(ok(rewrite, createIndex(index("j", 2, 3))()))
    assert(conflict(createIndex()(i), rewrite) ==
      "it remapped an index this CreateIndex drops or replaces (under a new uuid); run it again")
    assert(ok(createIndex(index("j", 2, 3))(), rewrite))
    val elsewhere = Operation.Rewrite(Seq(Seq(frag(5)) -> Seq(frag(10))), remapping(1).rewrittenIndices)
    assert(conflict(elsewhere, rewrite) == "it remapped (rewrote the files of) the same index as this Rewrite; compact again")
    assert(ok(Operation.Rewrite(Seq(Seq(frag(5)) -> Seq(frag(10))), remapping(2).rewrittenIndices), rewrite))
    // Without remapped indexes a compaction still combines with any CreateIndex, as before.
    assert(ok(Operation.Rewrite(rewrite.groups), createIndex()(i)))
    val reserve = Operation.ReserveFragments(3)
    Seq(append, delete(1)(), update(1)(), rewrite, overwrite, createIndex(i)(), Operation.UpdateConfig(Map("a" -> "1"),
      Set.empty), Operation.Project(Nil), reserve).foreach { o =>
      assert(ok(o, reserve) && ok(reserve, o), o)
    }
    assert(!ok(reserve, other) && !ok(other, reserve))
    assert(Transaction.fromProto(Transaction.create(1, reserve).toProto).operation == reserve)
  }
}
