package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, Float8Vector, VarCharVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.FileVersion
import io.sparklance.core.commit.CommitHandler
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.InMemoryStorage

/**
 * A scan's estimate of the rows its filters keep ([[Scan.filterSelectivity]]) against the rows a model of the
 * predicates keeps, on seeded tables whose key column is random, sorted or clustered in runs, with deletions:
 * exact on scans of few rows, an upper bound not far above the truth on larger ones.
 */
class FilterSelectivitySuite extends AnyFunSuite with BeforeAndAfterAll {
  import FilterSelectivitySuite._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val seed0 = sys.env.get("SPARKLANCE_FUZZ_SEED").map(_.toLong).getOrElse(20261127L)
  private val rounds = sys.env.get("SPARKLANCE_FUZZ_N").map(_.toInt).getOrElse(4)

  private val schema: LanceSchema = ArrowSchemas.fromArrow(new Schema(java.util.List.of(
    Field.nullable("k", new ArrowType.Int(64, true)),
    Field.nullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
    Field.nullable("s", ArrowType.Utf8.INSTANCE))))

  private val strings = Seq("MAIL", "SHIP", "AIR", "RAIL", "TRUCK", "FOB", "REG AIR")

  private def rows(r: Random, n: Int, layout: Layout): Seq[Row] = {
    val keys: Seq[Long] = layout match {
      case Random_ => Seq.fill(n)(r.nextInt(1000).toLong)
      case Sorted => Seq.fill(n)(r.nextInt(1000).toLong).sorted
      case Clustered => Iterator.continually {
        val v = r.nextInt(1000).toLong
        Seq.fill(1 + r.nextInt(3000))(v)
      }.flatten.take(n).toSeq
    }
    keys.map(k => Row(Option.when(r.nextInt(20) != 0)(k), Option.when(r.nextInt(10) != 0)(r.nextGaussian()),
      Option.when(r.nextInt(15) != 0)(strings(r.nextInt(strings.size)))))
  }

  private def batch(rows: Seq[Row]): VectorSchemaRoot = {
    val k = new BigIntVector("k", allocator)
    val x = new Float8Vector("x", allocator)
    val s = new VarCharVector("s", allocator)
    k.allocateNew(rows.size); x.allocateNew(rows.size); s.allocateNew()
    rows.zipWithIndex.foreach { case (row, i) =>
      row.k.fold(k.setNull(i))(k.set(i, _))
      row.x.fold(x.setNull(i))(x.set(i, _))
      row.s.fold(s.setNull(i))(v => s.setSafe(i, v.getBytes(UTF_8)))
    }
    Seq[FieldVector](k, x, s).foreach(_.setValueCount(rows.size))
    new VectorSchemaRoot(java.util.List.of[FieldVector](k, x, s))
  }

  /** A table of `all` in files of `rowsPerFile` rows, with each row deleted at `deleteRate`; its live rows. */
  private def table(all: Seq[Row], rowsPerFile: Int, deleteRate: Double, r: Random): (Table, Seq[Row]) = {
    val storage = new InMemoryStorage
    val table = Table.open(storage, CommitHandler.forStorage(storage), "mem://t.lance")
    val w = table.newDataWriter(schema, FileVersion.V2_2, rowsPerFile, 1L << 20)
    val written = try {
      all.grouped(4096).foreach { g => val b = batch(g); try w.write(b) finally b.close() }
      w.finish()
    } finally w.close()
    table.newOverwrite(0, schema, FileVersion.V2_2, Map.empty).commit(Seq(written))
    if (deleteRate <= 0) (table, all)
    else {
      // Row i is in fragment i / rowsPerFile (fragment ids from 0, in order), at offset i % rowsPerFile.
      val ids = table.latest().fragments.map(_.id)
      val doomed = new DeletedRows
      val live = all.zipWithIndex.filter { case (_, i) =>
        val gone = r.nextDouble() < deleteRate
        if (gone) doomed.add((ids(i / rowsPerFile) << 32) | (i % rowsPerFile).toLong)
        !gone
      }.map(_._1)
      table.newDelete(table.latest()).delete(DeletedRows.fromBytes(doomed.toBytes)).commit()
      (table, live)
    }
  }

  private def compare(v: Any, literal: Any): Int = (v, literal) match {
    case (a: Long, b: java.lang.Long) => java.lang.Long.compare(a, b)
    case (a: Double, b: java.lang.Double) => java.lang.Double.compare(a, b)
    case (a: String, b: String) => Integer.signum(java.util.Arrays.compareUnsigned(a.getBytes(UTF_8), b.getBytes(UTF_8)))
    case other => fail(s"no comparison for $other")
  }

  private def matches(p: Predicate, row: Row): Boolean = PredicateModel.matches(p, {
    case "k" => row.k
    case "x" => row.x
    case "s" => row.s
  }, (_, v, literal) => compare(v, literal))

  /** A random predicate of every kind a batch evaluates: comparisons, IN, null checks, string matches, AND, OR. */
  private def randomPredicate(r: Random, depth: Int = 0): Predicate = {
    val ops = Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Le, Predicate.Op.Gt, Predicate.Op.Ge)
    val c = Seq("k", "k", "x", "s")(r.nextInt(4))
    def literal(): Any = c match {
      case "k" => java.lang.Long.valueOf(r.nextInt(1100) - 50L)
      case "x" => java.lang.Double.valueOf(r.nextGaussian() * 1.5)
      case _ => strings(r.nextInt(strings.size))
    }
    r.nextInt(if (depth < 2) 9 else 6) match {
      case 0 | 1 => Predicate.Compare(c, ops(r.nextInt(ops.size)), literal())
      case 2 => if (r.nextBoolean()) Predicate.IsNull(c) else Predicate.IsNotNull(c)
      case 3 | 4 => Predicate.In(c, Seq.fill(1 + r.nextInt(4))(literal()))
      case 5 => Predicate.StringMatch("s", Seq(Predicate.StringOp.StartsWith, Predicate.StringOp.EndsWith,
        Predicate.StringOp.Contains)(r.nextInt(3)), Seq("M", "AIL", "R", "X", "RUC")(r.nextInt(5)))
      case 6 | 7 => Predicate.And(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
      case _ => Predicate.Or(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
    }
  }

  test("on seeded random, sorted and clustered tables with deletions, the share is an upper bound of the rows kept, within 0.12 of it; exact where the scan reads few rows") {
    var sampled = 0
    var exact = 0
    (0 until rounds).foreach { round =>
      Seq(Random_, Sorted, Clustered).foreach { layout =>
        val seed = seed0 + round * 7919 + layout.hashCode % 1000
        val r = new Random(seed)
        val small = r.nextInt(4) == 0
        val n = if (small) 200 + r.nextInt(FilterSelectivity.SampleRows - 200) else 30000 + r.nextInt(60000)
        val perFile = if (small) 100 + r.nextInt(5000) else 2000 + r.nextInt(30000)
        val (t, live) = table(rows(r, n, layout), perFile, if (r.nextBoolean()) r.nextDouble() * 0.3 else 0, r)
        val snapshot = t.latest()
        val read = ScanRows(t, snapshot.newScan(), 1L << 20, allocator) { (root, i) =>
          val k = root.getVector("k").asInstanceOf[BigIntVector]
          Option.when(!k.isNull(i))(k.get(i))
        }.map(_._2)
        assert(read == live.map(_.k), s"seed $seed: the table's rows are not the model's")
        (0 until 12).foreach { _ =>
          val p = randomPredicate(r)
          val truth = live.count(matches(p, _)).toDouble / live.size
          val scan = snapshot.newScan().withFilters(Seq(p))
          val est = scan.filterSelectivity
          val clue = s"seed $seed, $layout, ${live.size} live rows in ${snapshot.fragments.size} fragments, $p: truth $truth, $est"
          if (live.size <= FilterSelectivity.SampleRows) {
            exact += 1
            assert(est.exact && est.sampled == live.size && math.abs(est.share - truth) < 1e-12, clue)
          } else {
            sampled += 1
            assert(!est.exact && est.sampled <= FilterSelectivity.SampleRows + FilterSelectivity.SampleFragments * FilterSelectivity.RangeRows, clue)
            assert(est.share >= truth && est.share <= truth + 0.12, clue)
          }
          val (rows, _) = scan.estimate(16, 1.0)
          assert(rows >= math.round(truth * live.size) && rows == math.min(live.size.toLong, math.ceil(live.size * est.share).toLong), clue)
        }
      }
    }
    assert(sampled > 0 && exact > 0, s"$sampled sampled, $exact exact")
  }

  test("a filter no row passes: exactly 0 on a small scan, a small share above 0 on a large one") {
    val r = new Random(seed0)
    val none = Predicate.Compare("k", Predicate.Op.Gt, java.lang.Long.valueOf(5000L))
    val (small, _) = table(rows(r, 3000, Sorted), 1000, 0, r)
    val exact = small.latest().newScan().withFilters(Seq(none))
    assert(exact.filterSelectivity.exact && exact.filterSelectivity.share == 0.0)
    assert(exact.estimate(16, 1.0)._1 == 0)
    val (large, _) = table(rows(r, 100000, Sorted), 25000, 0.1, r)
    val est = large.latest().newScan().withFilters(Seq(none)).filterSelectivity
    assert(!est.exact && est.matched == 0 && est.share > 0 && est.share <= 0.01, est)
    assert(est.ranges == FilterSelectivity.SampleRows / FilterSelectivity.RangeRows, est)
  }

  test("the sample reads at most SampleFragments fragments, spread over those the scan keeps") {
    val r = new Random(seed0 + 1)
    val (t, live) = table(rows(r, 60000, Random_), 2000, 0, r)
    val p = Predicate.In("s", Seq("MAIL", "SHIP"))
    val est = t.latest().newScan().withFilters(Seq(p)).filterSelectivity
    val truth = live.count(matches(p, _)).toDouble / live.size
    assert(est.sampled == FilterSelectivity.SampleFragments * (FilterSelectivity.SampleRows / FilterSelectivity.RangeRows /
      FilterSelectivity.SampleFragments) * FilterSelectivity.RangeRows, est)
    assert(est.share >= truth && est.share < truth + 0.05, s"$est, truth $truth")
  }

  test("an estimate is made once per version, fragments and filters, and made again for another version") {
    val r = new Random(seed0 + 3)
    val (t, _) = table(rows(r, 60000, Random_), 20000, 0, r)
    val p = Predicate.In("s", Seq("MAIL"))
    val first = t.latest().newScan().withFilters(Seq(p)).filterSelectivity
    val key = { val s = t.latest(); (s.root, s.manifest.path, s.fragments.map(f => (f.id, Option.empty[Long])), Seq(p)) }
    assert(FilterSelectivity.cached(key)(fail("the estimate of a planned scan is made again")) == first)
    assert(t.latest().newScan().withFilters(Seq(p)).filterSelectivity == first)
    var made = 0
    val other = key.copy(_2 = key._2 + ".other")
    FilterSelectivity.cached(other) { made += 1; first }
    FilterSelectivity.cached(other) { made += 1; first }
    assert(made == 1)
  }

  test("no filters, or filters an index answers alone: every row read, as estimateRead counts them") {
    val r = new Random(seed0 + 2)
    val (t, live) = table(rows(r, 40000, Random_), 10000, 0.05, r)
    val plain = t.latest().newScan()
    assert(plain.filterSelectivity == FilterSelectivity.All && plain.estimate(16, 0.5) == plain.estimateRead(16, 0.5))
    t.newIndex(t.latest(), "k_idx", "k", "btree", Map.empty, replace = false).runAndCommit()
    val onKey = Predicate.Compare("k", Predicate.Op.Eq, java.lang.Long.valueOf(7L))
    val indexed = t.latest().newScan().withFilters(Seq(onKey))
    assert(!indexed.indexUse.isEmpty && indexed.filterSelectivity == FilterSelectivity.All)
    assert(indexed.estimate(16, 1.0)._1 == indexed.estimateRead(16, 1.0)._1)
    assert(indexed.estimate(16, 1.0)._1 >= live.count(matches(onKey, _)))
    // A filter the index does not answer is evaluated on the rows the index selects: exactly, they are few.
    val onString = Predicate.Compare("s", Predicate.Op.Eq, "MAIL")
    val both = t.latest().newScan().withFilters(Seq(onKey, onString))
    val selected = both.estimateRead(16, 1.0)._1
    val est = both.filterSelectivity
    assert(est.exact && est.sampled == selected, est)
    assert(math.abs(est.share * selected - live.count(row => matches(onKey, row) && matches(onString, row))) < 1e-6, est)
  }
}

object FilterSelectivitySuite {
  final case class Row(k: Option[Long], x: Option[Double], s: Option[String])

  /** How the key column `k` (0 until 1000) lies in the table. */
  sealed trait Layout
  case object Random_ extends Layout
  case object Sorted extends Layout
  case object Clustered extends Layout
}
