package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, Float8Vector, VarCharVector, VectorSchemaRoot}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{FileVersion, UnsupportedFeatureException}
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.storage.InMemoryStorage

/**
 * A scan with a top-N: every task returns at most `k` rows, sorted, and the first `k` of all tasks' rows are the
 * table's first `k` live rows in the order (compared by their keys: rows tied on every key may differ), for random
 * orders over a double with NaN, -0.0, infinities and nulls, a string with nulls and the id, across deletions and
 * tasks and batches of a few hundred rows.
 */
class TopNSuite extends AnyFunSuite with BeforeAndAfterAll {
  import TaskReaderSuite.Row

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val schema = TaskReaderSuite.schema

  private def batch(rows: Seq[Row]): VectorSchemaRoot = TaskReaderSuite.batch(rows, allocator)

  /** 3 fragments of 1000 rows, about a tenth of them deleted; the live rows. */
  private def table(r: Random): (Table, Seq[Row]) = {
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    val specials = Array(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity)
    val rows = (0 until 3000).map { i =>
      val x = if (r.nextInt(10) == 0) specials(r.nextInt(specials.length)) else r.nextInt(200) / 4.0 - 25
      Row(i, Option.when(r.nextInt(8) != 0)(x), Option.when(r.nextInt(9) != 0)(s"v${r.nextInt(40)}"))
    }
    val w = table.newDataWriter(schema, FileVersion.V2_2, 1000, 1L << 20)
    try {
      rows.grouped(500).foreach { g => val b = batch(g); try w.write(b) finally b.close() }
      table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(w.finish()))
    } finally w.close()
    val addresses = table.latest().fragments.sortBy(_.id).flatMap(f => (0L until f.physicalRows).map(o => (f.id << 32) | o))
    val doomed = new DeletedRows
    val deleted = addresses.zip(rows).filter(_ => r.nextInt(10) == 0)
    deleted.foreach { case (a, _) => doomed.add(a) }
    table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
    (table, rows.filterNot(row => deleted.exists(_._2.id == row.id)))
  }

  private def readTasks(t: Table, scan: Scan, rowsPerTask: Long): Seq[Seq[Row]] =
    scan.planTasks(rowsPerTask).map { task =>
      val reader = t.read(task, allocator)
      try Iterator.continually(reader.next()).takeWhile(_.isDefined).flatten.flatMap { root =>
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

  test("each task returns its first k rows, sorted, and together they hold the table's first k") {
    (1 to 8).foreach { seed =>
      val r = new Random(seed)
      val (t, live) = table(r)
      (1 to 6).foreach { _ =>
        val keys = r.shuffle(Seq("x", "s", "id")).take(1 + r.nextInt(2))
          .map(c => SortKey(c, descending = r.nextBoolean(), nullsFirst = r.nextBoolean()))
        val k = Seq(1, 7, 60, 900, 5000)(r.nextInt(5))
        val order = TopNSuite.ordering(keys)
        val scan = t.latest().newScan().withBatchRows(64 + r.nextInt(300)).withTopN(TopN(keys, k))
        val tasks = readTasks(t, scan, 400L + r.nextInt(1200))
        assert(tasks.size > 1, s"seed $seed: one task")
        tasks.foreach { rows =>
          assert(rows.size <= k, s"seed $seed, $keys, k $k: a task returned ${rows.size} rows")
          assert(rows == rows.sorted(order), s"seed $seed, $keys, k $k: a task's rows are not sorted")
        }
        val got = tasks.flatten.sorted(order).take(k).map(TopNSuite.keyOf(keys))
        val want = live.sorted(order).take(k).map(TopNSuite.keyOf(keys))
        assert(got == want, s"seed $seed, $keys, k $k")
      }
    }
  }

  test("a top-N refuses filters on data and columns it cannot order by") {
    val (t, _) = table(new Random(1))
    val top = TopN(Seq(SortKey("x", descending = false, nullsFirst = true)), 3)
    val filtered = t.latest().newScan().withFilters(Seq(Predicate.Compare("x", Predicate.Op.Gt, 1.0)))
    val e = intercept[UnsupportedFeatureException](filtered.withTopN(top))
    assert(e.getMessage.contains("with filters on its data (x > 1.0)"), e.getMessage)
    val e2 = intercept[UnsupportedFeatureException](t.latest().newScan().withTopN(TopN(Seq(SortKey("nope", descending = false, nullsFirst = true)), 3)))
    assert(e2.getMessage.contains("ordered by 'nope'"), e2.getMessage)
  }
}

object TopNSuite {
  import TaskReaderSuite.Row

  private def key(row: Row, column: String): Option[Any] = column match {
    case "id" => Some(row.id)
    case "x" => row.x
    case "s" => row.s
  }

  /** Each row's keys, NaN as a string (NaN equals NaN in SQL's order), -0.0 as 0.0. */
  def keyOf(keys: Seq[SortKey])(row: Row): Seq[Option[Any]] = keys.map(k => key(row, k.column).map {
    case d: Double if d.isNaN => "NaN"
    case d: Double if d == 0.0 => 0.0
    case other => other
  })

  /** Spark's order of rows by `keys`. */
  def ordering(keys: Seq[SortKey]): Ordering[Row] = new Ordering[Row] {
    def compare(a: Row, b: Row): Int = keys.iterator.map { k =>
      (key(a, k.column), key(b, k.column)) match {
        case (None, None) => 0
        case (None, _) => if (k.nullsFirst) -1 else 1
        case (_, None) => if (k.nullsFirst) 1 else -1
        case (Some(x), Some(y)) =>
          val c = (x, y) match {
            case (p: Double, q: Double) => ValueOrder.compareDoubles(p, q)
            case (p: Long, q: Long) => java.lang.Long.compare(p, q)
            case (p: String, q: String) => p.compareTo(q)
            case other => throw new IllegalStateException(s"$other")
          }
          if (k.descending) -c else c
      }
    }.find(_ != 0).getOrElse(0)
  }
}
