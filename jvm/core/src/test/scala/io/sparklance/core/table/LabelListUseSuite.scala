package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.ListVector
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.InMemoryStorage

/**
 * Label list indexes searched with [[Predicate.ListHasAny]] over seeded tables of lists with null lists, empty lists
 * and null items, through appends after the index, deletes and OPTIMIZE INDEX: the rows a scan returns from fragments the index
 * covers are exactly those whose list holds one of the items of every predicate (the batches do not filter lists,
 * so any extra row would be the index's), and no matching row is lost anywhere.
 */
class LabelListUseSuite extends AnyFunSuite with BeforeAndAfterAll {
  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val itemField = new Field("item", FieldType.nullable(ArrowType.Utf8.INSTANCE), null)
  private val arrowSchema = new Schema(java.util.List.of(
    Field.nullable("id", new ArrowType.Int(64, true)),
    new Field("tags", FieldType.nullable(ArrowType.List.INSTANCE), java.util.List.of(itemField))))
  private val schema = ArrowSchemas.fromArrow(arrowSchema)
  private val labels = Seq("a", "b", "c", "", "é")

  private type Tags = Option[Seq[Option[String]]]

  private def randomTags(r: Random): Tags = r.nextInt(10) match {
    case 0 => None
    case 1 => Some(Nil)
    case _ => Some(Seq.fill(1 + r.nextInt(3))(if (r.nextInt(8) == 0) None else Some(labels(r.nextInt(labels.size)))))
  }

  private def batch(rows: Seq[(Long, Tags)]): VectorSchemaRoot = {
    val root = VectorSchemaRoot.create(arrowSchema, allocator)
    val id = root.getVector("id").asInstanceOf[BigIntVector]
    val tags = root.getVector("tags").asInstanceOf[ListVector]
    val items = tags.addOrGetVector[VarCharVector](FieldType.nullable(ArrowType.Utf8.INSTANCE)).getVector
    root.allocateNew()
    var k = 0
    rows.zipWithIndex.foreach { case ((i, t), row) =>
      id.setSafe(row, i)
      t match {
        case None => tags.setNull(row)
        case Some(xs) =>
          tags.startNewValue(row)
          xs.foreach { x => x.fold(items.setNull(k))(v => items.setSafe(k, v.getBytes(UTF_8))); k += 1 }
          tags.endValue(row, xs.size)
      }
    }
    items.setValueCount(k)
    root.setRowCount(rows.size)
    root
  }

  private def write(table: Table, rows: Seq[(Long, Tags)]): WrittenFiles = {
    val w = table.newDataWriter(schema, FileVersion.V2_2, 40, 1L << 20)
    try {
      rows.grouped(23).foreach { g => val b = batch(g); try w.write(b) finally b.close() }
      w.finish()
    } finally w.close()
  }

  /** (row address, id, tags) of every row a scan returns. */
  private def read(table: Table, scan: Scan): Seq[(Long, Long, Tags)] =
    ScanRows(table, scan, 64, allocator) { (root, i) =>
      val tags = root.getVector("tags").asInstanceOf[ListVector]
      val items = tags.getDataVector.asInstanceOf[VarCharVector]
      val t: Tags = Option.when(!tags.isNull(i))((tags.getElementStartIndex(i) until tags.getElementEndIndex(i)).map { k =>
        Option.when(!items.isNull(k))(new String(items.get(k), UTF_8))
      })
      (root.getVector("id").asInstanceOf[BigIntVector].get(i), t)
    }.map { case (address, (id, t)) => (address, id, t) }

  private def holds(p: Predicate.ListHasAny, t: Tags): Boolean = t.exists(_.exists(x => x.exists(p.values.contains)))

  test("seeded label list indexes find exactly the rows whose list holds an item, intersected over conjuncts") {
    (1 to 8).foreach { seed =>
      val r = new Random(seed * 7)
      val storage = new InMemoryStorage
      val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
      var next = 0L
      def rows(n: Int) = { val rs = Seq.tabulate(n)(i => (next + i) -> randomTags(r)); next += n; rs }
      table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, rows(100 + r.nextInt(200)))))
      table.newIndex(table.latest(), "tags_idx", "tags", "label_list", Map.empty, replace = false).runAndCommit()
      if (r.nextBoolean()) table.newAppend(table.latestVersion()).commit(Seq(write(table, rows(1 + r.nextInt(60)))))
      if (r.nextBoolean()) {
        val doomed = new DeletedRows
        read(table, table.latest().newScan()).filter(_._2 % 5 == 1).foreach(row => doomed.add(row._1))
        table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
      }
      if (r.nextBoolean()) {
        // OPTIMIZE INDEX: the items of the fragments appended since merged with the old index's.
        table.newAppend(table.latestVersion()).commit(Seq(write(table, rows(1 + r.nextInt(60)))))
        val update = table.newIndexUpdate(table.latest(), "tags_idx")
        assert(update.merges && update.fragments.nonEmpty && update.tasks.size == update.fragments.size)
        update.runAndCommit()
        val s = table.latest()
        assert(s.indexes.filter(_.name == "tags_idx").map(i => s.fragments.count(f => i.covers(f.id))) == Seq(s.fragments.size))
      }
      val snapshot = table.latest()
      val all = read(table, snapshot.newScan())
      val index = snapshot.indexes.find(_.name == "tags_idx").get
      (0 until 20).foreach { _ =>
        val ps = Seq.fill(1 + r.nextInt(2))(Predicate.ListHasAny("tags", r.shuffle(labels :+ "zz").take(1 + r.nextInt(2))))
        val scan = snapshot.newScan().withFilters(ps)
        assert(scan.indexUse.used.map(u => (u._1.name, u._3.toString)) == ps.map(p => ("tags_idx", s"HAS ANY (${p.values.mkString(", ")})")))
        val got = read(table, scan)
        val want = all.filter(row => ps.forall(holds(_, row._3)))
        assert(want.map(_._1).toSet.subsetOf(got.map(_._1).toSet), s"seed $seed, $ps: rows lost")
        got.filter(row => index.covers(row._1 >>> 32)).foreach { row =>
          assert(ps.forall(holds(_, row._3)), s"seed $seed, $ps: the index found $row")
        }
      }
    }
  }

  test("a ListHasAny on a column without a label list, or with literals its items do not compare with, uses no index") {
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(write(table, Seq(1L -> Some(Seq(Some("a")))))))
    assert(table.latest().newScan().withFilters(Seq(Predicate.ListHasAny("tags", Seq("a")))).indexUse.isEmpty)
    table.newIndex(table.latest(), "tags_idx", "tags", "label_list", Map.empty, replace = false).runAndCommit()
    val s = table.latest()
    assert(!s.newScan().withFilters(Seq(Predicate.ListHasAny("tags", Seq("a")))).indexUse.isEmpty)
    assert(s.newScan().withFilters(Seq(Predicate.ListHasAny("tags", Seq(java.lang.Long.valueOf(1L))))).indexUse.isEmpty)
    assert(s.newScan().withFilters(Seq(Predicate.ListHasAny("id", Seq(java.lang.Long.valueOf(1L))))).indexUse.isEmpty)
    assert(s.newScan().withFilters(Seq(Predicate.Compare("tags", Predicate.Op.Eq, "a"))).indexUse.isEmpty)
  }
}
