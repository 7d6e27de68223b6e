package io.sparklance.core.txn

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.format.Manifest
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

  test("appends, deletes and merges keep every index as it is") {
    Seq(Operation.Append(Seq(frag(4))), Operation.Delete(Seq(frag(1)), Seq(2), ""), Operation.Merge(Nil, Nil)).foreach { op =>
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

  test("a schema change drops the indexes of removed fields; an overwrite drops all; CreateIndex adds and removes by uuid") {
    val withoutB = Operation.Project(base.proto.getFieldsList.asScala.take(1).toSeq)
    assert(after(withoutB) == Seq("a" -> Seq(1, 2, 3)))
    assert(after(Operation.Overwrite(Nil, Nil, Map.empty, Map.empty)).isEmpty)
    val c = index("c", 3, 1, 3)
    assert(after(Operation.CreateIndex(Seq(c), Seq(a))) == Seq("b" -> Seq(1, 2), "c" -> Seq(3)))
  }
}
