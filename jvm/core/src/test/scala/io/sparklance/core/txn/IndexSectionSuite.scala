package io.sparklance.core.txn

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.format.{FeatureFlags, Manifest}
import io.sparklance.core.index.{IndexKind, IndexMetadata}
import io.sparklance.proto.{FileProtos, TableProtos}

/** What each operation does to the index section ([[ManifestBuilder.indexSection]]), operation by operation. */
class IndexSectionSuite extends AnyFunSuite {
  private def file(path: String) = TableProtos.DataFile.newBuilder().setPath(path).addFields(0).addFields(1)
    .addColumnIndices(0).addColumnIndices(1).setFileMajorVersion(2).setFileMinorVersion(2).build()
  private def frag(id: Long, path: String = "a.lance") =
    TableProtos.DataFragment.newBuilder().setId(id).addFiles(file(path)).setPhysicalRows(10).build()
  private val base = new Manifest(TableProtos.Manifest.newBuilder().addAllFragments(Seq(frag(1), frag(2), frag(3)).asJava)
    .addFields(FileProtos.Field.newBuilder().setId(0).setParentId(-1).setName("a").setLogicalType("int64"))
    .addFields(FileProtos.Field.newBuilder().setId(1).setParentId(-1).setName("b").setLogicalType("int64")).build(), "m")
  private def index(name: String, uuid: Int, field: Int, fragments: Int*) = IndexMetadata.create(new java.util.UUID(0, uuid),
    name, Seq(field), 1, RoaringBitmap.bitmapOf(fragments: _*), IndexKind.BTree, ByteString.EMPTY, 0, Nil)
  private val a = index("a", 1, 0, 1, 2, 3)
  private val b = index("b", 2, 1, 1, 2)
  private val section = Some(TableProtos.IndexSection.newBuilder().addIndices(a).addIndices(b).build())

  private def after(op: Operation): Seq[(String, Seq[Int])] =
    ManifestBuilder.indexSection(op, Some(base), section, None).toSeq.flatMap(_.getIndicesList.asScala).map { i =>
      i.getName -> new IndexMetadata(i, "m").fragmentBitmap.toArray.toSeq
    }

  test("appends, deletes, merges, reserved fragment ids and config changes keep every index as it is") {
    Seq(Operation.Append(Seq(frag(4))), Operation.Delete(Seq(frag(1)), Seq(2), ""), Operation.Merge(Nil, Nil),
        Operation.ReserveFragments(2), Operation.UpdateConfig(Map("a" -> "1"), Set("b"))).foreach { op =>
      assert(after(op) == Seq("a" -> Seq(1, 2, 3), "b" -> Seq(1, 2)), op)
    }
  }

  test("a compaction keeps every index (their bitmaps name fragments that are gone); an update drops the fragments whose files it replaced") {
    assert(after(Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(5))))) == Seq("a" -> Seq(1, 2, 3), "b" -> Seq(1, 2)))
    val deletionsOnly = Operation.Update(Nil, Seq(frag(1)), Seq(frag(5)))
    assert(after(deletionsOnly) == Seq("a" -> Seq(1, 2, 3), "b" -> Seq(1, 2)))
    val rewritten = Operation.Update(Nil, Seq(frag(2, "new.lance")), Nil)
    assert(after(rewritten) == Seq("a" -> Seq(1, 3), "b" -> Seq(1)))
  }

  test("a compaction on a table with stable row ids moves each full-text index from a group's old fragments to its new ones when it covered all of them") {
    val stable = new Manifest(base.proto.toBuilder.setReaderFeatureFlags(FeatureFlags.StableRowIds).setMaxFragmentId(7)
      .build(), "m")
    def fts(name: String, uuid: Int, fragments: Int*) = IndexMetadata.create(new java.util.UUID(0, uuid), name, Seq(1), 1,
      RoaringBitmap.bitmapOf(fragments: _*), IndexKind.Inverted, ByteString.EMPTY, 2, Nil)
    val texts = Some(TableProtos.IndexSection.newBuilder().addIndices(fts("t", 3, 1, 2, 3)).addIndices(fts("u", 4, 1, 2))
      .addIndices(a).build())
    def afterStable(op: Operation) = ManifestBuilder.indexSection(op, Some(stable), texts, None).toSeq
      .flatMap(_.getIndicesList.asScala).map(i => i.getName -> new IndexMetadata(i, "m").fragmentBitmap.toArray.toSeq)
    // New fragments take ids 8, 9, 10, ... in the groups' order: ([1, 2] -> 8, 9), ([3] -> 10). The B-tree `a` may
    // hold row addresses: it keeps its bitmap.
    val op = Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(0), frag(0)), Seq(frag(3)) -> Seq(frag(0))))
    assert(afterStable(op) == Seq("t" -> Seq(8, 9, 10), "u" -> Seq(8, 9), "a" -> Seq(1, 2, 3)))
    // u covers only fragment 2 of the group [2, 3]: it covers none of the group after it.
    val mixed = Operation.Rewrite(Seq(Seq(frag(2), frag(3)) -> Seq(frag(0))))
    assert(afterStable(mixed) == Seq("t" -> Seq(1, 8), "u" -> Seq(1), "a" -> Seq(1, 2, 3)))
    assert(ManifestBuilder.next(Some(stable), Transaction.create(1, op), 2, java.time.Instant.now(), Committer.Options())
      .getFragmentsList.asScala.map(_.getId).toSeq == Seq(8, 9, 10))
  }

  test("a schema change drops the indexes of removed fields; an overwrite drops all; CreateIndex adds and removes by uuid") {
    val withoutB = Operation.Project(base.proto.getFieldsList.asScala.take(1).toSeq)
    assert(after(withoutB) == Seq("a" -> Seq(1, 2, 3)))
    assert(after(Operation.Overwrite(Nil, Nil, Map.empty, Map.empty)).isEmpty)
    val c = index("c", 3, 1, 3)
    assert(after(Operation.CreateIndex(Seq(c), Seq(a))) == Seq("b" -> Seq(1, 2), "c" -> Seq(3)))
  }

  test("a compaction that remaps an index gives it the new uuid, details, version and files, and trades each group's old fragments for its new ones") {
    val reserved = new Manifest(base.proto.toBuilder.setMaxFragmentId(9).build(), "m")
    val newA = index("a", 7, 0, 8, 9, 3)
    val files = Seq(TableProtos.IndexFile.newBuilder().setPath("page_data.lance").setSizeBytes(12).build())
    val remap = io.sparklance.proto.TransactionProtos.Transaction.Rewrite.RewrittenIndex.newBuilder()
      .setOldId(a.getUuid).setNewId(newA.getUuid).setNewIndexDetails(newA.getIndexDetails).setNewIndexVersion(3)
      .addAllNewIndexFiles(files.asJava).build()
    // Fragments 8 and 9 were reserved: the new fragments keep those ids. `b` is not remapped and keeps its bitmap.
    val op = Operation.Rewrite(Seq(Seq(frag(1), frag(2)) -> Seq(frag(8), frag(9))), Seq(remap))
    val out = ManifestBuilder.indexSection(op, Some(reserved), section, None).get.getIndicesList.asScala
    assert(out.map(i => i.getName -> new IndexMetadata(i, "m").fragmentBitmap.toArray.toSeq) ==
      Seq("a" -> Seq(3, 8, 9), "b" -> Seq(1, 2)))
    assert(out.head.getUuid == newA.getUuid && out.head.getIndexVersion == 3 && out.head.getFilesList.asScala == files)
    assert(out(1) == b)
    val next = ManifestBuilder.next(Some(reserved), Transaction.create(1, op), 2, java.time.Instant.now(), Committer.Options())
    assert(next.getFragmentsList.asScala.map(_.getId).toSeq == Seq(3, 8, 9) && next.getMaxFragmentId == 9)
    // The transaction file carries the remapped index (field 5 included) and reads back the same.
    assert(Transaction.fromProto(Transaction.create(1, op).toProto).operation == op)
    // An index the table no longer has (dropped meanwhile) cannot be remapped.
    val gone = Some(TableProtos.IndexSection.newBuilder().addIndices(b).build())
    assert(intercept[IllegalArgumentException](ManifestBuilder.indexSection(op, Some(reserved), gone, None))
      .getMessage.contains("no longer has"))
  }

  test("reserving fragment ids raises max_fragment_id as upstream does, and a rewrite's new fragments then keep theirs") {
    val withMax = new Manifest(base.proto.toBuilder.setMaxFragmentId(3).build(), "m")
    def next(m: Manifest, op: Operation) = ManifestBuilder.next(Some(m), Transaction.create(1, op), 2,
      java.time.Instant.now(), Committer.Options())
    val reserved = next(withMax, Operation.ReserveFragments(2))
    assert(reserved.getMaxFragmentId == 5 && reserved.getFragmentsList.asScala.map(_.getId).toSeq == Seq(1, 2, 3))
    assert(next(new Manifest(base.proto.toBuilder.clearMaxFragmentId().build(), "m"), Operation.ReserveFragments(2))
      .getMaxFragmentId == 2)
    val after = next(new Manifest(reserved, "m"), Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(5), frag(0)))))
    assert(after.getFragmentsList.asScala.map(_.getId).toSeq == Seq(2, 3, 5, 6))
    assert(intercept[IllegalArgumentException](next(withMax, Operation.Rewrite(Seq(Seq(frag(1)) -> Seq(frag(2))))))
      .getMessage.contains("fragment id 2 is already taken"))
  }
}
