package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, Float8Vector, VarCharVector, VectorSchemaRoot}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.storage.InMemoryStorage

/**
 * Top-N rows and MIN/MAX/COUNT answered from B-tree indexes ([[BTreeOrder]]), against the live rows sorted in
 * Spark's order: seeded tables with NaNs of both signs, -0.0, infinities and nulls in a double, nulls in a string,
 * B-trees of small pages (walks cross pages) built over them, then rows deleted and fragments appended after the
 * build (not covered), and scans of some fragments only.
 */
class BTreeOrderSuite extends AnyFunSuite with BeforeAndAfterAll {
  import TaskReaderSuite.Row

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val schema = TaskReaderSuite.schema
  /** A NaN with the sign bit set, which the index sorts before `-inf` and Spark above every number. */
  private val signedNaN = java.lang.Double.longBitsToDouble(0xfff8000000000000L)

  private def randomRows(r: Random, from: Int, n: Int, specials: Array[Double]): Seq[Row] = (from until from + n).map { i =>
    val x = if (r.nextInt(8) == 0) specials(r.nextInt(specials.length)) else r.nextInt(200) / 4.0 - 25
    Row(i, Option.when(r.nextInt(6) != 0)(x), Option.when(r.nextInt(7) != 0)(s"v${r.nextInt(30)}"))
  }

  private def write(table: Table, rows: Seq[Row], first: Boolean): Unit = {
    val w = table.newDataWriter(schema, FileVersion.V2_2, 400, 1L << 20)
    try {
      rows.grouped(300).foreach { g => val b = TaskReaderSuite.batch(g, allocator); try w.write(b) finally b.close() }
      if (first) table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(w.finish()))
      else table.newAppend(table.latestVersion()).commit(Seq(w.finish()))
    } finally w.close()
  }

  /** Deletes about a tenth of the live rows; the rows left. */
  private def deleteSome(table: Table, r: Random, live: Seq[Row]): Seq[Row] = {
    val s = table.latest()
    val ids = ScanRows(table, s.newScan(), 1L << 20, allocator)((root, i) => root.getVector("id").asInstanceOf[BigIntVector].get(i))
    val doomed = new DeletedRows
    val gone = ids.filter(_ => r.nextInt(10) == 0)
    gone.foreach { case (address, _) => doomed.add(address) }
    table.newDelete(s).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
    val goneIds = gone.map(_._2).toSet
    live.filterNot(row => goneIds(row.id))
  }

  /** A seeded table with B-trees on x and s; its live rows and what was done, for messages. */
  private def table(seed: Int): (Table, Seq[Row], String) = {
    val r = new Random(seed)
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    // NaNs of either sign, or only those with the sign bit (then the index's last values are not the largest).
    val specials = Seq(Array(Double.NaN, signedNaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity),
      Array(signedNaN, -0.0, Double.NegativeInfinity), Array(-0.0, 0.0))(r.nextInt(3))
    var live = randomRows(r, 0, 1200, specials)
    write(table, live, first = true)
    var steps = Vector(s"seed $seed: 1200 rows, specials ${specials.mkString(" ")}")
    if (r.nextBoolean()) { live = deleteSome(table, r, live); steps :+= "deleted before the build" }
    Seq("x", "s").foreach { c =>
      val pageRows = 1 + r.nextInt(50)
      table.newIndex(table.latest(), s"${c}_idx", c, "btree", Map("zone_size" -> pageRows.toString), replace = false).runAndCommit()
      steps :+= s"B-tree on $c, $pageRows rows per page"
    }
    var nextId = 1200
    (0 until r.nextInt(3)).foreach { _ =>
      if (r.nextBoolean()) {
        val more = randomRows(r, nextId, 50 + r.nextInt(100), specials)
        nextId += more.size
        write(table, more, first = false)
        live ++= more
        steps :+= s"appended ${more.size} rows"
      } else { live = deleteSome(table, r, live); steps :+= "deleted after the build" }
    }
    (table, live, steps.mkString("; "))
  }

  private def readRows(t: Table, scan: Scan): Seq[Row] =
    scan.planTasks(500L).flatMap { task =>
      val reader = t.read(task, allocator)
      try Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.flatMap { (root: VectorSchemaRoot) =>
        try {
          val id = root.getVector("id").asInstanceOf[BigIntVector]
          val x = root.getVector("x").asInstanceOf[Float8Vector]
          val s = root.getVector("s").asInstanceOf[VarCharVector]
          (0 until root.getRowCount).map(i => Row(id.get(i), Option.when(!x.isNull(i))(x.get(i)),
            Option.when(!s.isNull(i))(new String(s.get(i), UTF_8))))
        } finally root.close()
      }.toList
      finally reader.close()
    }

  test("a top-N on a B-tree-indexed first key reads only the rows the index selects, and returns the table's first k") {
    var narrowed = 0
    (1 to 16).foreach { seed =>
      val (t, live, steps) = table(seed)
      val r = new Random(seed * 7)
      (1 to 8).foreach { _ =>
        val first = Seq("x", "s")(r.nextInt(2))
        val keys = (first +: r.shuffle(Seq("x", "s", "id").filterNot(_ == first)).take(r.nextInt(3)))
          .map(c => SortKey(c, descending = r.nextBoolean(), nullsFirst = r.nextBoolean()))
        val k = Seq(1, 3, 20, 150, 5000)(r.nextInt(5))
        val order = TopNSuite.ordering(keys)
        val scan = t.latest().newScan().withTopN(TopN(keys, k))
        val used = scan.topNBTree.getOrElse(fail(s"$steps: no B-tree used for $keys"))
        assert(scan.topNIndexUse.exists(_.startsWith(s"b-tree '${first}_idx' selects")), scan.toString)
        val got = readRows(t, scan).sorted(order).take(k).map(TopNSuite.keyOf(keys))
        val want = live.sorted(order).take(k).map(TopNSuite.keyOf(keys))
        assert(got == want, s"$steps; $keys, k $k")
        if (k <= 20 && used.rows.values.map(_.getLongCardinality).sum < live.size / 4) narrowed += 1
      }
    }
    assert(narrowed > 20, s"the B-tree narrowed only $narrowed small top-Ns to a quarter of the rows")
  }

  private def sqlMin(values: Seq[Double]): Option[Double] =
    if (values.isEmpty) None else Some(values.reduce((a, b) => if (ValueOrder.compareDoubles(a, b) <= 0) a else b))
  private def sqlMax(values: Seq[Double]): Option[Double] =
    if (values.isEmpty) None else Some(values.reduce((a, b) => if (ValueOrder.compareDoubles(a, b) >= 0) a else b))

  /** A double as Spark compares results: NaN as one value, -0.0 as 0.0. */
  private def norm(d: Option[Double]): Option[Any] = d.map(v => if (v.isNaN) "NaN" else if (v == 0.0) 0.0 else v)

  test("MIN, MAX and COUNT come from a B-tree where it covers every fragment read, through deletions and fragment filters") {
    var answered = 0
    (1 to 16).foreach { seed =>
      val (t, live, steps) = table(seed)
      val s = t.latest()
      val aggregates = Seq(Aggregate.Min("x"), Aggregate.Max("x"), Aggregate.Count("x"), Aggregate.Min("s"),
        Aggregate.Max("s"), Aggregate.Count("s"), Aggregate.CountRows)
      val ids = s.fragmentIds
      val subsets = Seq(ids, ids.take(1), ids.drop(1).take(2))
      subsets.filter(_.nonEmpty).foreach { subset =>
        val scan = s.newScan().withFilters(Seq(Predicate.In("_fragid", subset.map(java.lang.Long.valueOf))))
        val rows = ScanRows(t, scan, 1L << 20, allocator)((root, i) => root.getVector("id").asInstanceOf[BigIntVector].get(i)).map(_._2).toSet
        val mine = live.filter(row => rows(row.id))
        val covered = subset.forall(id => s.indexes.exists(i => i.name == "x_idx" && i.covers(id)))
        scan.aggregateFromMetadata(aggregates, allocator) match {
          case None => assert(!covered, s"$steps: fragments $subset are covered, yet not answered")
          case Some(answer) =>
            try {
              assert(covered, s"$steps: fragments $subset are not all covered, yet answered")
              answered += 1
              assert(answer.sources.contains("b-tree 'x_idx'") && answer.sources.contains("b-tree 's_idx'"), answer.sources)
              val root = answer.row
              def double(i: Int) = { val v = root.getVector(i).asInstanceOf[Float8Vector]; Option.when(!v.isNull(0))(v.get(0)) }
              def string(i: Int) = { val v = root.getVector(i).asInstanceOf[VarCharVector]; Option.when(!v.isNull(0))(new String(v.get(0), UTF_8)) }
              def long(i: Int) = root.getVector(i).asInstanceOf[BigIntVector].get(0)
              val xs = mine.flatMap(_.x)
              val ss = mine.flatMap(_.s)
              val where = s"$steps; fragments $subset"
              assert(norm(double(0)) == norm(sqlMin(xs)), where)
              assert(norm(double(1)) == norm(sqlMax(xs)), where)
              assert(long(2) == xs.size, where)
              assert(string(3) == (if (ss.isEmpty) None else Some(ss.min)) && string(4) == (if (ss.isEmpty) None else Some(ss.max)), where)
              assert(long(5) == ss.size && long(6) == mine.size, where)
            } finally answer.close()
        }
      }
    }
    assert(answered > 16, s"only $answered aggregates answered from B-trees")
  }
}
