package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.index.{IndexKind, InvertedIndex}
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.InMemoryStorage

/**
 * OPTIMIZE INDEX of a full-text index ([[Table.newFullTextIndexUpdate]]) over an in-memory store, on seeded tables
 * of appends and scattered deletes: the update covers every fragment, keeps the old partitions and adds the new
 * ones after them, matches the same rows as before it, and scores the appended rows as they were scored by their
 * text before (with the statistics of the old documents, deleted ones included, and of their own).
 */
class FullTextIndexUpdateSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()

  override def afterAll(): Unit = allocator.close()

  private val schema: LanceSchema = ArrowSchemas.fromArrow(new Schema(java.util.List.of(
    Field.nullable("id", new ArrowType.Int(64, true)), Field.nullable("s", ArrowType.Utf8.INSTANCE))))

  private val words = Seq("spark", "lance", "index", "indexes", "running", "ran", "the", "of", "vector", "table")

  private def text(r: Random): Option[String] =
    Option.when(r.nextInt(10) != 0)(Seq.fill(1 + r.nextInt(8))(words(r.nextInt(words.size))).mkString(" "))

  private def append(table: Table, r: Random, start: Long, n: Int): Unit = {
    val id = new BigIntVector("id", allocator)
    val s = new VarCharVector("s", allocator)
    id.allocateNew(n); s.allocateNew()
    (0 until n).foreach { i => id.set(i, start + i); text(r).fold(s.setNull(i))(t => s.setSafe(i, t.getBytes(UTF_8))) }
    Seq[FieldVector](id, s).foreach(_.setValueCount(n))
    val root = new VectorSchemaRoot(java.util.List.of[FieldVector](id, s))
    val w = table.newDataWriter(schema, FileVersion.V2_2, 20L + r.nextInt(40), 1L << 20)
    val written = try { w.write(root); w.finish() } finally { w.close(); root.close() }
    if (table.latestIfExists().isEmpty) table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
    else table.newAppend(table.latestVersion()).commit(Seq(written))
  }

  /** Deletes a few rows of each fragment, never all of one. */
  private def deleteSome(table: Table, r: Random): Unit = {
    val doomed = new DeletedRows
    table.latest().fragments.filter(_.numDeletedRows == 0).foreach { f =>
      (0L until f.physicalRows).filter(_ => r.nextInt(6) == 0).take((f.physicalRows - 1).toInt)
        .foreach(o => doomed.add((f.id << 32) | o))
    }
    table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
  }

  private def ranking(table: Table, query: String) =
    FullTextRanking.search(table.latest(), Seq("s"), query, 1000, None, "test").map(h => h.rowId -> h.score).toMap

  test("seeded appends and deletes: the update covers every fragment, keeps the old partitions, scores new rows as before") {
    (1 to 6).foreach { seed =>
      val r = new Random(seed)
      val storage = new InMemoryStorage
      val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
      append(table, r, 0, 60 + r.nextInt(100))
      table.newFullTextIndex(table.latest(), "s_idx", "s", Map.empty, replace = false).runAndCommit()
      (1 to 2).foreach { round =>
        append(table, r, round * 1000L, 20 + r.nextInt(80))
        deleteSome(table, r)
        val before = table.latest()
        val old = before.indexes.find(_.name == "s_idx").get
        val oldIds = InvertedIndex.open(storage, before.indexDir(old), "s_idx").partitions.map(_.id)
        val queries = Seq.fill(6)(Seq.fill(1 + r.nextInt(3))(words(r.nextInt(words.size))).mkString(" "))
        val expected = queries.map(ranking(table, _))
        val updated = table.newFullTextIndexUpdate(before, "s_idx", Map.empty).runAndCommit()
        val after = table.latest()
        assert(after.version == before.version + 1 && updated.uuid != old.uuid, s"seed $seed round $round")
        assert(after.indexes.filter(_.name == "s_idx").map(_.uuid) == Seq(updated.uuid))
        assert(after.fragments.forall(f => updated.covers(f.id)) && updated.kind == IndexKind.Inverted)
        assert(updated.datasetVersion == old.datasetVersion)
        val ids = InvertedIndex.open(storage, after.indexDir(updated), "s_idx").partitions.map(_.id)
        assert(ids.take(oldIds.size) == oldIds && ids.drop(oldIds.size).forall(_ > oldIds.max), s"seed $seed: $ids")
        queries.zip(expected).foreach { case (q, e) =>
          val got = ranking(table, q)
          assert(got.keySet == e.keySet, s"seed $seed round $round: $q")
          e.filter { case (id, _) => !old.covers(id >>> 32) }.foreach { case (id, s) => assert(math.abs(got(id) - s) <= 1e-5f * math.abs(s), s"seed $seed: $q row $id") }
        }
        assert(table.newFullTextIndexUpdate(after, "s_idx", Map.empty).runAndCommit().uuid == updated.uuid)
        assert(table.latestVersion() == after.version, "an up-to-date index commits nothing")
      }
    }
  }

  /** The row ids of every document of index `name` of the latest version. */
  private def documents(table: Table, name: String): Seq[Long] = {
    val snapshot = table.latest()
    snapshot.indexes.filter(_.name == name).flatMap { i =>
      InvertedIndex.open(table.storage, snapshot.indexDir(i), name).partitions.flatMap(p => (0 until p.numDocs).map(p.rowId))
    }
  }

  test("seeded: after whole fragments are deleted or compacted away, the update drops their documents, keeps the others' and adds the new rows'") {
    (1 to 4).foreach { seed =>
      val r = new Random(100 + seed)
      val storage = new InMemoryStorage
      val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
      (0 until 4).foreach(k => append(table, r, k * 1000L, 20 + r.nextInt(60)))
      table.newFullTextIndex(table.latest(), "s_idx", "s", Map.empty, replace = false).runAndCommit()
      deleteSome(table, r)
      val whole = table.latest().fragments.head
      val doomed = new DeletedRows
      (0L until whole.physicalRows).foreach(o => doomed.add((whole.id << 32) | o))
      table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
      append(table, r, 9000, 10 + r.nextInt(30))
      val compacted = table.latest().fragments.take(2).map(_.id).toSet
      assert(table.compact(Compaction.Options(targetRowsPerFragment = 100000, maxSourceFragments = Some(2))).version.isDefined)
      val before = table.latest()
      assert(before.fragments.forall(f => !compacted.contains(f.id)))
      val queries = Seq.fill(8)(Seq.fill(1 + r.nextInt(3))(words(r.nextInt(words.size))).mkString(" "))
      val expected = queries.map(q => ranking(table, q).keySet)
      val gone = (compacted + whole.id)
      val keptDocs = documents(table, "s_idx").filterNot(id => gone.contains(id >>> 32))
      val updated = table.newFullTextIndexUpdate(before, "s_idx", Map.empty).runAndCommit()
      val after = table.latest()
      assert(after.fragments.forall(f => updated.covers(f.id)) && updated.fragmentBitmap.getCardinality == after.fragments.size)
      val docs = documents(table, "s_idx")
      // The documents kept (deleted rows of the fragments still there included) and every live row with a token of
      // the fragments the old index did not cover.
      assert(keptDocs.forall(docs.contains), s"seed $seed")
      assert(docs.forall(id => !gone.contains(id >>> 32)) && docs.distinct.size == docs.size, s"seed $seed")
      queries.zip(expected).foreach { case (q, e) => assert(ranking(table, q).keySet == e, s"seed $seed: $q") }
      assert(table.newFullTextIndexUpdate(after, "s_idx", Map.empty).runAndCommit().uuid == updated.uuid)
    }
  }

  test("options are refused") {
    val r = new Random(7)
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    append(table, r, 0, 50)
    table.newFullTextIndex(table.latest(), "s_idx", "s", Map.empty, replace = false).runAndCommit()
    append(table, r, 1000, 30)
    val options = intercept[io.sparklance.core.InvalidArgumentException] {
      table.newFullTextIndexUpdate(table.latest(), "s_idx", Map("stem" -> "false"))
    }
    assert(options.getMessage.contains("OPTIMIZE INDEX keeps the analysis it was built with"))
  }

  test("a compaction keeps groups apart where different indexes cover their fragments") {
    val r = new Random(8)
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    (0 until 3).foreach(k => append(table, r, k * 1000L, 20))
    table.newFullTextIndex(table.latest(), "s_idx", "s", Map.empty, replace = false).runAndCommit()
    (3 until 5).foreach(k => append(table, r, k * 1000L, 20))
    val groups = Compaction.plan(table.latest(), Compaction.Options(targetRowsPerFragment = 100000))
    val index = table.latest().indexes.head
    assert(groups.map(_.map(f => index.covers(f.id))) == Seq(Seq(true, true, true), Seq(false, false)))
  }
}
