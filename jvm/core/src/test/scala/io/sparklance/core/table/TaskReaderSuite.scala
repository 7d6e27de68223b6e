package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float8Vector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, MetadataColumn}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.format.FragmentFiles
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.InMemoryStorage

/**
 * Selective scans: a batch where few rows match comes back as exactly those rows, with the other columns read at
 * their offsets and the metadata columns of each kept row, across fragments with deletion vectors; and
 * [[FragmentReader.readRows]], which reads rows at explicit offsets.
 */
class TaskReaderSuite extends AnyFunSuite with BeforeAndAfterAll {
  import TaskReaderSuite.Row

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val schema = TaskReaderSuite.schema

  private def batch(rows: Seq[Row]): VectorSchemaRoot = TaskReaderSuite.batch(rows, allocator)

  /**
   * A table of 3 fragments of 2000 rows with ids 0 until 6000; about a tenth of the rows deleted. x and s take few
   * values (their pages are dictionary-encoded); `x` draws them.
   */
  private def table(r: Random, x: Random => Double = r => r.nextInt(100) / 4.0): (Table, Map[Long, Row]) = {
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    val rows = (0 until 6000).map(i => Row(i, Option.when(i % 7 != 0)(x(r)),
      Option.when(i % 11 != 0)(s"v-${r.nextInt(50)}")))
    val w = table.newDataWriter(schema, FileVersion.V2_2, 2000, 1L << 20)
    try {
      rows.grouped(500).foreach { g => val b = batch(g); try w.write(b) finally b.close() }
      table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(w.finish()))
    } finally w.close()
    val addresses = table.latest().fragments.sortBy(_.id).flatMap(f => (0L until f.physicalRows).map(o => (f.id << 32) | o))
    assert(addresses.size == rows.size)
    val byAddress = addresses.zip(rows).toMap
    val doomed = new DeletedRows
    val deleted = byAddress.keys.filter(_ => r.nextInt(10) == 0).toSet
    deleted.foreach(doomed.add)
    table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
    (table, byAddress -- deleted)
  }

  /** (row address, row, _rowid, _fragid) of every row a scan returns, and the sizes of the batches. */
  /** Reads `scan`, checks that it returns exactly the rows of `live` that `ps` match, once each, with their metadata
   * columns; returns the sizes of its batches. */
  private def readMatching(t: Table, scan: Scan, live: Map[Long, Row], ps: Seq[Predicate], seed: Int): Seq[Int] = {
    val (got, sizes) = read(t, scan)
    val want = live.filter { case (_, row) => ps.forall(TaskReaderSuite.matches(_, row)) }
    assert(got.map(g => g._1 -> g._2).toMap == want, s"seed $seed, $ps: rows")
    assert(got.size == want.size, s"seed $seed, $ps: rows came back more than once")
    got.foreach { case (address, _, rowId, fragmentId) =>
      assert(rowId == address && fragmentId == address >>> 32, s"seed $seed, $ps: metadata of $address")
    }
    sizes
  }

  private def read(table: Table, scan: Scan): (Seq[(Long, Row, Long, Long)], Seq[Int]) = {
    val sizes = Seq.newBuilder[Int]
    val rows = scan.withMetadataColumns(Seq(MetadataColumn.RowAddress, MetadataColumn.RowId, MetadataColumn.FragmentId))
      .planTasks(1L << 20).flatMap { task =>
        val reader = table.read(task, allocator)
        try Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.flatMap { root =>
          try {
            sizes += root.getRowCount
            val id = root.getVector("id").asInstanceOf[BigIntVector]
            val x = root.getVector("x").asInstanceOf[Float8Vector]
            val s = root.getVector("s").asInstanceOf[VarCharVector]
            def long(name: String, i: Int) = root.getVector(name).asInstanceOf[BigIntVector].get(i)
            (0 until root.getRowCount).map { i =>
              (long("_rowaddr", i), Row(id.get(i), Option.when(!x.isNull(i))(x.get(i)),
                Option.when(!s.isNull(i))(new String(s.get(i), UTF_8))), long("_rowid", i), long("_fragid", i))
            }
          } finally root.close()
        }.toList
        finally reader.close()
      }
    (rows, sizes.result())
  }

  test("batches where few rows match come back as exactly those rows, with their metadata, across deletions") {
    (1 to 6).foreach { seed =>
      val r = new Random(seed)
      val (t, live) = table(r)
      val batchRows = 256 + r.nextInt(512)
      val ids = live.values.map(_.id).toIndexedSeq
      // At most one row in eight of the table: fewer than one in four of every batch matches.
      val picked = Seq.fill(1 + r.nextInt(batchRows / 64))(ids(r.nextInt(ids.size))).distinct
      val byId = Predicate.In("id", picked.map(java.lang.Long.valueOf))
      val predicates = Seq(
        Seq(byId),
        Seq(Predicate.Or(byId, Predicate.Compare("s", Predicate.Op.Eq, "v-7")), Predicate.Compare("x", Predicate.Op.Gt, 24.0)),
        Seq(Predicate.Compare("s", Predicate.Op.Eq, "v-13"), Predicate.IsNull("x")))
      predicates.foreach { ps =>
        val scan = t.latest().newScan().withFilters(ps).withBatchRows(batchRows)
        assert(scan.dataFilters == ps)
        val sizes = readMatching(t, scan, live, ps, seed)
        assert(sizes.forall(n => n.toLong * TaskReader.LateRowsRatio < batchRows), s"seed $seed, $ps: batch sizes $sizes")
      }
    }
  }

  test("batches where few rows match, close together, are read whole and come back as exactly those rows") {
    (1 to 6).foreach { seed =>
      val r = new Random(seed)
      val (t, live) = table(r)
      val batchRows = 256 + r.nextInt(512)
      // Every k-th id over a stretch of the table: fewer than one row in 32 of a batch, closer than a take's gap.
      val k = 33 + r.nextInt(90)
      val start = r.nextInt(3000)
      val picked = (start until start + 2500 + r.nextInt(500) by k).map(i => java.lang.Long.valueOf(i.toLong))
      val predicates = Seq(
        Seq(Predicate.In("id", picked)),
        Seq(Predicate.In("id", picked), Predicate.IsNotNull("s")),
        Seq(Predicate.Or(Predicate.In("id", picked), Predicate.IsNull("x")), Predicate.Compare("s", Predicate.Op.Ge, "v-3")))
      predicates.foreach { ps =>
        val scan = t.latest().newScan().withFilters(ps).withBatchRows(batchRows)
        val sizes = readMatching(t, scan, live, ps, seed)
        assert(sizes.forall(_ < batchRows), s"seed $seed, $ps: batch sizes $sizes")
      }
    }
  }

  test("batches where between one row in 32 and one in 4 match are read whole and come back as exactly those rows") {
    (1 to 6).foreach { seed =>
      val r = new Random(seed)
      val (t, live) = table(r)
      val batchRows = 256 + r.nextInt(512)
      // x is a multiple of 0.25 in [0, 25), null for one row in 7; s is one of 50 values, null for one row in 11.
      val low = r.nextInt(20)
      val predicates = Seq(
        Seq(Predicate.Compare("x", Predicate.Op.Ge, low.toDouble), Predicate.Compare("x", Predicate.Op.Lt, low + 2.0)),
        Seq(Predicate.In("s", Seq.fill(4 + r.nextInt(4))(s"v-${r.nextInt(50)}"))),
        Seq(Predicate.Or(Predicate.Compare("s", Predicate.Op.Lt, "v-12"), Predicate.IsNull("x")),
          Predicate.Compare("id", Predicate.Op.Ge, java.lang.Long.valueOf(r.nextInt(3000)))))
      predicates.foreach { ps =>
        val scan = t.latest().newScan().withFilters(ps).withBatchRows(batchRows)
        val sizes = readMatching(t, scan, live, ps, seed)
        assert(sizes.forall(n => n.toLong * TaskReader.CompactRowsRatio < batchRows), s"seed $seed, $ps: batch sizes $sizes")
        assert(sizes.exists(n => n.toLong * TaskReader.LateRowsRatio >= batchRows), s"seed $seed, $ps: no batch read whole")
      }
    }
  }

  test("a batch where many rows match comes back whole, for the caller to filter") {
    val (t, live) = table(new Random(9))
    val p = Predicate.Compare("id", Predicate.Op.Lt, java.lang.Long.valueOf(100))
    val (got, _) = read(t, t.latest().newScan().withFilters(Seq(p)).withBatchRows(128))
    assert(got.map(_._2.id).toSet == live.values.map(_.id).filter(_ < 128).toSet)
  }

  test("IS NOT NULL alone returns a batch whole, the rows without a value included, unless none of it has one") {
    val (t, live) = table(new Random(5))
    Seq(("x", (r: Row) => r.x.isDefined), ("s", (r: Row) => r.s.isDefined)).foreach { case (c, hasValue) =>
      val (whole, _) = read(t, t.latest().newScan().withFilters(Seq(Predicate.IsNotNull(c), Predicate.IsNotNull("id")))
        .withBatchRows(128))
      assert(whole.size == live.size && whole.map(g => g._1 -> g._2).toMap == live, s"$c: batches of 128 rows")
      val (single, sizes) = read(t, t.latest().newScan().withFilters(Seq(Predicate.IsNotNull(c))).withBatchRows(1))
      assert(single.map(g => g._1 -> g._2).toMap == live.filter(e => hasValue(e._2)), s"$c: batches of one row")
      assert(sizes.forall(_ == 1) && single.size < live.size, s"$c: batches of one row")
    }
  }

  test("seeded predicates on dictionary-encoded columns select the rows the model selects: nulls, NaN, -0.0, OR, IS NULL, LIKE") {
    def draw(r: Random): Double = r.nextInt(12) match {
      case 0 => Double.NaN
      case 1 => -0.0
      case 2 => 0.0
      case _ => r.nextInt(40) / 4.0 - 3
    }
    def literal(r: Random): java.lang.Double = r.nextInt(6) match {
      case 0 => Double.NaN
      case 1 => -0.0
      case 2 => 0.0
      case 3 => r.nextInt(40) / 4.0 - 3 + 0.1
      case _ => r.nextInt(40) / 4.0 - 3
    }
    def string(r: Random): String = if (r.nextInt(8) == 0) s"v-${r.nextInt(50)}x" else s"v-${r.nextInt(55)}"
    def leaf(r: Random): Predicate = {
      val op = Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Le, Predicate.Op.Gt, Predicate.Op.Ge)(r.nextInt(5))
      r.nextInt(9) match {
        case 0 => Predicate.Compare("x", op, literal(r))
        case 1 => Predicate.In("x", Seq.fill(1 + r.nextInt(4))(literal(r)))
        case 2 => Predicate.Compare("s", op, string(r))
        case 3 => Predicate.In("s", Seq.fill(1 + r.nextInt(6))(string(r)))
        case 4 => if (r.nextBoolean()) Predicate.IsNull("x") else Predicate.IsNotNull("x")
        case 5 => if (r.nextBoolean()) Predicate.IsNull("s") else Predicate.IsNotNull("s")
        case 6 =>
          val text = Seq("v-1", "v-", "-3", "2", "", "x", "v-49", "-")(r.nextInt(8))
          Predicate.StringMatch("s", Seq(Predicate.StringOp.StartsWith, Predicate.StringOp.EndsWith,
            Predicate.StringOp.Contains)(r.nextInt(3)), text)
        case _ => Predicate.Compare("id", op, java.lang.Long.valueOf(r.nextInt(6000)))
      }
    }
    def predicate(r: Random, depth: Int): Predicate =
      if (depth == 0 || r.nextInt(3) == 0) leaf(r)
      else if (r.nextBoolean()) Predicate.Or(predicate(r, depth - 1), predicate(r, depth - 1))
      else Predicate.And(predicate(r, depth - 1), predicate(r, depth - 1))
    (1 to 6).foreach { seed =>
      val r = new Random(seed)
      val (t, live) = table(r, draw)
      val snapshot = t.latest()
      val fragment = snapshot.fragments.head
      val reader = new FragmentReader(t.storage, snapshot.layout, fragment, snapshot.schema.fields, Nil,
        FragmentFiles.deletionVector(t.storage, snapshot.layout, fragment), None)
      try {
        val coded = snapshot.schema.fields.filter(f => reader.codes(f, 100, 900, allocator).isDefined).map(_.name)
        assert(coded == Seq("x", "s"), s"seed $seed: the test needs x and s dictionary-encoded")
      } finally reader.close()
      (1 to 25).foreach { _ =>
        val ps = Seq.fill(1 + r.nextInt(2))(predicate(r, 3))
        val scan = t.latest().newScan().withFilters(ps).withBatchRows(128 + r.nextInt(1024))
        val (got, _) = read(t, scan)
        val want = live.filter { case (_, row) => ps.forall(TaskReaderSuite.matches(_, row)) }
        val returned = got.map(g => g._1 -> g._2).toMap
        assert(got.size == returned.size, s"seed $seed, $ps: rows came back more than once")
        // Rows compared by their values' bits: NaN is not equal to itself in a case class.
        def bits(row: Row) = (row.id, row.x.map(java.lang.Double.doubleToRawLongBits), row.s)
        assert(want.forall { case (a, row) => returned.get(a).map(bits).contains(bits(row)) }, s"seed $seed, $ps: matching rows missing")
        assert(returned.forall { case (a, row) => live.get(a).map(bits).contains(bits(row)) }, s"seed $seed, $ps: rows not in the table")
      }
    }
  }

  test("readRows reads the live rows among explicit offsets, with their metadata") {
    val (t, live) = table(new Random(5))
    val snapshot = t.latest()
    val fragment = snapshot.fragments.maxBy(_.id)
    val deletions = FragmentFiles.deletionVector(t.storage, snapshot.layout, fragment)
    assert(!deletions.isEmpty, "the test needs deleted rows")
    val reader = new FragmentReader(t.storage, snapshot.layout, fragment, snapshot.schema.fields,
      Seq(MetadataColumn.RowAddress, MetadataColumn.FragmentId), deletions, None)
    try {
      val offsets = (Seq(0L, 1L, fragment.physicalRows - 1) ++ deletions.toSortedArray.take(3).map(_.toLong) ++
        Seq(700L, 701L, 1500L)).distinct.sorted.toArray
      val root = reader.readRows(offsets, allocator, snapshot.schema.fields.reverse)
      try {
        val wantOffsets = offsets.filterNot(o => deletions.contains(o.toInt)).toSeq
        assert(root.getSchema.getFields.toString.startsWith("[s: Utf8, x: FloatingPoint(DOUBLE), id: Int(64, true) not null"))
        val address = root.getVector("_rowaddr").asInstanceOf[BigIntVector]
        val id = root.getVector("id").asInstanceOf[BigIntVector]
        assert((0 until root.getRowCount).map(i => address.get(i)) == wantOffsets.map(o => (fragment.id << 32) | o))
        assert((0 until root.getRowCount).map(i => id.get(i)) == wantOffsets.map(o => live((fragment.id << 32) | o).id))
        assert((0 until root.getRowCount).forall(i => root.getVector("_fragid").asInstanceOf[BigIntVector].get(i) == fragment.id))
      } finally root.close()
      val empty = reader.readRows(Array.empty[Long], allocator)
      try assert(empty.getRowCount == 0 && empty.getFieldVectors.size == 5) finally empty.close()
      val e = intercept[IllegalArgumentException](reader.readRows(Array(5L, 3L), allocator))
      assert(e.getMessage == s"row offsets of fragment ${fragment.id} (${fragment.physicalRows} rows) must be ascending, " +
        "distinct and within it: offset 3 at position 1")
    } finally reader.close()
  }
}

object TaskReaderSuite {
  final case class Row(id: Long, x: Option[Double], s: Option[String])

  /** The table of [[Row]]s: a non-null id, a nullable double and a nullable string. */
  val schema: LanceSchema = ArrowSchemas.fromArrow(new Schema(java.util.List.of(
    Field.notNullable("id", new ArrowType.Int(64, true)),
    Field.nullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
    Field.nullable("s", ArrowType.Utf8.INSTANCE))))

  /** `rows` as one batch of [[schema]], owned by the caller. */
  def batch(rows: Seq[Row], allocator: BufferAllocator): VectorSchemaRoot = {
    val id = new BigIntVector("id", allocator)
    val x = new Float8Vector("x", allocator)
    val s = new VarCharVector("s", allocator)
    id.allocateNew(rows.size); x.allocateNew(rows.size); s.allocateNew()
    rows.zipWithIndex.foreach { case (row, i) =>
      id.set(i, row.id)
      row.x.fold(x.setNull(i))(x.set(i, _))
      row.s.fold(s.setNull(i))(v => s.setSafe(i, v.getBytes(UTF_8)))
    }
    Seq[FieldVector](id, x, s).foreach(_.setValueCount(rows.size))
    new VectorSchemaRoot(java.util.List.of[FieldVector](id, x, s))
  }

  def matches(p: Predicate, row: Row): Boolean = {
    def value(c: String): Option[Any] = c match {
      case "id" => Some(row.id)
      case "x" => row.x
      case "s" => row.s
    }
    def cmp(v: Any, lit: Any): Int = (v, lit) match {
      case (a: Long, b: java.lang.Long) => java.lang.Long.compare(a, b)
      // As Spark orders doubles: NaN above all and equal to itself, -0.0 equal to 0.0.
      case (a: Double, b: java.lang.Double) => java.lang.Double.compare(a + 0.0, b + 0.0)
      case (a: String, b: String) => a.compareTo(b)
      case other => throw new IllegalArgumentException(s"no comparison for $other")
    }
    PredicateModel.matches(p, value, (_, v, literal) => cmp(v, literal))
  }
}
