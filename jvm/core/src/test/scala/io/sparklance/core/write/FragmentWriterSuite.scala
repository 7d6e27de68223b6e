package io.sparklance.core.write

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.VectorSchemaRoot
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CommitStateUnknownException, FileVersion}
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.InMemoryStorage
import io.sparklance.core.table.Dataset
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/** Data files written by a FragmentWriter, and what happens to them when the commit fails. */
class FragmentWriterSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  import IdTables.{root, schema}

  private def batch(from: Long, n: Int): VectorSchemaRoot = IdTables.batch(allocator, from, n)

  private def write(storage: InMemoryStorage, from: Long, n: Int, maxRows: Long): (FragmentWriter, Seq[io.sparklance.proto.TableProtos.DataFragment]) = {
    val w = new FragmentWriter(storage, root, schema, FileVersion.V2_2, FragmentWriter.Options(maxRowsPerFile = maxRows))
    var at = 0
    while (at < n) {
      val b = batch(from + at, math.min(700, n - at))
      try w.write(b) finally b.close()
      at += 700
    }
    (w, w.finish())
  }

  private def ids(storage: InMemoryStorage, version: Option[Long] = None): Seq[Long] =
    IdTables.ids(storage, allocator, version)

  test("files roll over at max_rows_per_file; each is a fragment with its fields, columns and file version") {
    val storage = new InMemoryStorage
    val (w, fragments) = write(storage, 0, 5000, 2000)
    assert(fragments.map(_.getPhysicalRows) == Seq(2000L, 2000L, 1000L))
    assert(w.files.size == 3 && w.files.forall(storage.exists))
    fragments.foreach { f =>
      val file = f.getFiles(0)
      assert(file.getFieldsList.asScala.toSeq == Seq(0) && file.getColumnIndicesList.asScala.toSeq == Seq(0))
      assert(file.getFileMajorVersion == 2 && file.getFileMinorVersion == 2)
      val reader = LanceFileReader.open(storage, s"$root/data/${file.getPath}")
      try assert(reader.numRows == f.getPhysicalRows && reader.metadata.fileSize == file.getFileSizeBytes) finally reader.close()
    }
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(fragments, schema)))
    assert(ids(storage) == (0L until 5000L))
  }

  test("abort deletes every file the writer created") {
    val storage = new InMemoryStorage
    val (w, _) = write(storage, 0, 3000, 1000)
    assert(w.files.size == 3)
    w.abort()
    assert(w.files.forall(f => !storage.exists(f)))
  }

  test("a failure between writing data and committing leaves the table at its previous version") {
    val storage = new InMemoryStorage
    val (_, first) = write(storage, 0, 100, 1000)
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(first, schema)))
    val (w, more) = write(storage, 100, 100, 1000)
    // The manifest write fails: the outcome is unknown, so nothing is deleted, and the table reads as before.
    storage.failNext("putIfAbsent", 1)
    intercept[CommitStateUnknownException] {
      Committer.commit(storage, root, Transaction.create(1, Operation.Append(more)))
    }
    assert(Dataset.open(storage, root).latestVersion() == 1)
    assert(ids(storage) == (0L until 100L))
    assert(w.files.forall(storage.exists))
    // A writer that gives up instead deletes its files; the table is untouched.
    w.abort()
    assert(ids(storage) == (0L until 100L))
    assert(ids(storage, Some(1L)) == (0L until 100L))
  }

  test("a blob v2 file's sidecars are written beside it, and abort deletes them with it") {
    import org.apache.arrow.vector.{LargeVarBinaryVector, VarCharVector}
    import org.apache.arrow.vector.complex.StructVector
    import io.sparklance.core.file.BlobSidecars
    import io.sparklance.core.schema.{BlobColumns, LanceSchema}
    val storage = new InMemoryStorage
    val blobSchema = BlobColumns.forVersion(LanceSchema.fromFlat("blobs", Seq(
      LanceSchema.FlatField(0, -1, "content", "large_binary", nullable = true, Map("lance-encoding:blob" -> "true")))),
      FileVersion.V2_2)
    val w = new FragmentWriter(storage, root, blobSchema, FileVersion.V2_2, FragmentWriter.Options())
    val sizes = Seq(10, 100000, 5000000)
    val field = io.sparklance.core.schema.ArrowSchemas.toArrow(blobSchema.fields.head)
    val content = field.createVector(allocator).asInstanceOf[StructVector]
    try {
      val data = content.getChild("data").asInstanceOf[LargeVarBinaryVector]
      val uri = content.getChild("uri").asInstanceOf[VarCharVector]
      content.allocateNew()
      sizes.zipWithIndex.foreach { case (n, i) =>
        content.setIndexDefined(i); data.setSafe(i, Array.fill[Byte](n)(i.toByte)); uri.setNull(i)
      }
      data.setValueCount(sizes.size); uri.setValueCount(sizes.size); content.setValueCount(sizes.size)
      val b = new VectorSchemaRoot(java.util.List.of(content.getField), java.util.List.of[org.apache.arrow.vector.FieldVector](content), sizes.size)
      w.write(b)
    } finally content.close()
    w.finish()
    val dir = BlobSidecars.directory(w.files.head)
    assert(storage.list(dir).map(e => e.name -> e.size).sortBy(_._1) ==
      Seq(BlobSidecars.fileName(2) -> 5000000L, BlobSidecars.fileName(1) -> 100000L).sortBy(_._1))
    w.abort()
    assert(!storage.exists(w.files.head) && storage.list(dir).isEmpty)
  }

  test("a blob v2 column reads as its descriptors, as stored: kind, position, size, sidecar id, no uri; nulls null") {
    import org.apache.arrow.vector.{LargeVarBinaryVector, UInt1Vector, UInt4Vector, UInt8Vector, VarCharVector}
    import org.apache.arrow.vector.complex.StructVector
    import io.sparklance.core.scan.FragmentReader
    import io.sparklance.core.schema.{BlobColumns, LanceSchema}
    val storage = new InMemoryStorage
    val blobSchema = BlobColumns.forVersion(LanceSchema.fromFlat("blobs", Seq(
      LanceSchema.FlatField(0, -1, "content", "large_binary", nullable = true, Map("lance-encoding:blob" -> "true")))),
      FileVersion.V2_2)
    val w = new FragmentWriter(storage, root, blobSchema, FileVersion.V2_2, FragmentWriter.Options())
    // Inline (up to 64 KiB), packed into the shared sidecar, a sidecar of its own, null, inline again.
    val sizes = Seq(Some(10), Some(100000), Some(5000000), None, Some(65536))
    val content = io.sparklance.core.schema.ArrowSchemas.toArrow(blobSchema.fields.head).createVector(allocator).asInstanceOf[StructVector]
    try {
      val data = content.getChild("data").asInstanceOf[LargeVarBinaryVector]
      val uri = content.getChild("uri").asInstanceOf[VarCharVector]
      content.allocateNew()
      sizes.zipWithIndex.foreach {
        case (Some(n), i) => content.setIndexDefined(i); data.setSafe(i, Array.fill[Byte](n)(i.toByte)); uri.setNull(i)
        case (None, i) => content.setNull(i); data.setNull(i); uri.setNull(i)
      }
      data.setValueCount(sizes.size); uri.setValueCount(sizes.size); content.setValueCount(sizes.size)
      val b = new VectorSchemaRoot(java.util.List.of(content.getField), java.util.List.of[org.apache.arrow.vector.FieldVector](content), sizes.size)
      w.write(b)
    } finally content.close()
    Committer.commit(storage, root, Transaction.create(0, Operation.overwrite(w.finish(), blobSchema)))
    val s = Dataset.open(storage, root).checkoutLatest()
    val f = s.fragments.head
    val r = new FragmentReader(storage, s.layout, f, Seq(BlobColumns.descriptors(s.schema.fields.head)), Nil, s.deletionVector(f), None)
    try {
      val got = r.read(0, f.physicalRows, allocator)
      try {
        val d = got.getVector(0).asInstanceOf[StructVector]
        def part[V](name: String): V = d.getChild(name).asInstanceOf[V]
        val rows = (0 until got.getRowCount).map { i =>
          if (d.isNull(i)) None
          else Some((part[UInt1Vector]("kind").get(i).toInt, part[UInt8Vector]("position").get(i),
            part[UInt8Vector]("size").get(i), part[UInt4Vector]("blob_id").get(i), part[VarCharVector]("blob_uri").getObject(i).toString))
        }
        assert(d.getChildrenFromFields.asScala.map(_.getName) == BlobColumns.DescriptorParts.map(_._1))
        assert(rows.map(_.map(r => (r._1, r._3, r._4, r._5))) ==
          Seq(Some((0, 10L, 0, "")), Some((1, 100000L, 1, "")), Some((2, 5000000L, 2, "")), None, Some((0, 65536L, 0, ""))))
        // The packed blob starts the shared sidecar; a dedicated one fills its own from 0.
        assert(rows(1).map(_._2).contains(0L) && rows(2).map(_._2).contains(0L))
      } finally got.close()
    } finally r.close()
  }
}
