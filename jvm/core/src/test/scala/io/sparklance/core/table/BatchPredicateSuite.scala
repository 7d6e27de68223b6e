package io.sparklance.core.table

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, Schema}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.schema.ArrowSchemas

/**
 * The compiled predicates against a plain row-by-row evaluator of the same semantics, on seeded random batches of
 * every column type a scan compares: nulls, NaN, ±0.0, infinities, extreme integers, empty and non-ASCII strings,
 * decimals, `IN` lists, and nested `AND`/`OR`. Both must select exactly the same rows.
 */
class BatchPredicateSuite extends AnyFunSuite with BeforeAndAfterAll {
  import BatchPredicateSuite._

  private val allocator = new RootAllocator()
  override def afterAll(): Unit = allocator.close()

  private val arrowFields = Seq(
    Field.nullable("i64", new ArrowType.Int(64, true)),
    Field.nullable("i32", new ArrowType.Int(32, true)),
    Field.nullable("i16", new ArrowType.Int(16, true)),
    Field.nullable("i8", new ArrowType.Int(8, true)),
    Field.nullable("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
    Field.nullable("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
    Field.nullable("b", ArrowType.Bool.INSTANCE),
    Field.nullable("s", ArrowType.Utf8.INSTANCE),
    Field.nullable("ls", ArrowType.LargeUtf8.INSTANCE),
    Field.nullable("d32", new ArrowType.Date(DateUnit.DAY)),
    Field.nullable("d64", new ArrowType.Date(DateUnit.MILLISECOND)),
    Field.nullable("tsus", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
    Field.nullable("tsns", new ArrowType.Timestamp(TimeUnit.NANOSECOND, null)),
    Field.nullable("dec", new ArrowType.Decimal(18, 3, 128)))
  private val schema = ArrowSchemas.fromArrow(new Schema(arrowFields.asJava))

  private val longs = Seq(0L, 1L, -1L, 7L, 42L, -42L, Long.MaxValue, Long.MinValue, Int.MaxValue.toLong, Int.MinValue.toLong,
    (1L << 53) + 1, 127L, -128L, 32767L, -32768L)
  private val doubles = Seq(0.0, -0.0, 1.5, -1.5, 7.0, 42.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity,
    Double.MinPositiveValue, Double.MaxValue, 0.1, 9.223372036854775807e18)
  private val strings = Seq("", "a", "b", "ab", "abc", "é", "z", "\u00ff", "日本", "日本語", "user-000042", "user-000043", "ac", "\u0000", "🙂")
  private val decimals = Seq("0", "0.001", "-0.001", "1.5", "-1.5", "42", "123456789012345.678", "-123456789012345.678")
    .map(new java.math.BigDecimal(_))

  /** One random value of a column (None: null), in the column's own terms. */
  private def value(r: Random, column: String): Option[Any] = if (r.nextInt(7) == 0) None else Some(column match {
    case "i64" | "d64" | "tsus" | "tsns" => if (r.nextBoolean()) longs(r.nextInt(longs.size)) else r.nextInt(20).toLong - 10
    case "i32" | "d32" => if (r.nextBoolean()) longs(r.nextInt(longs.size)).toInt.toLong else r.nextInt(20).toLong - 10
    case "i16" => (if (r.nextBoolean()) longs(r.nextInt(longs.size)) else r.nextInt(20).toLong - 10).toShort.toLong
    case "i8" => (if (r.nextBoolean()) longs(r.nextInt(longs.size)) else r.nextInt(20).toLong - 10).toByte.toLong
    case "f64" => if (r.nextBoolean()) doubles(r.nextInt(doubles.size)) else r.nextInt(20) - 10.0
    case "f32" => (if (r.nextBoolean()) doubles(r.nextInt(doubles.size)) else r.nextInt(20) - 10.0).toFloat.toDouble
    case "b" => r.nextBoolean()
    case "s" | "ls" => strings(r.nextInt(strings.size))
    case "dec" => decimals(r.nextInt(decimals.size))
  })

  private def batch(r: Random, rows: Int): (VectorSchemaRoot, IndexedSeq[Map[String, Option[Any]]]) = {
    val model = IndexedSeq.fill(rows)(arrowFields.map(f => f.getName -> value(r, f.getName)).toMap)
    val vectors = arrowFields.map { f =>
      val v = f.createVector(allocator).asInstanceOf[FieldVector]
      v.setInitialCapacity(rows)
      v.allocateNew()
      model.zipWithIndex.foreach { case (row, i) =>
        row(f.getName) match {
          case None => v match {
            case fw: BaseFixedWidthVector => fw.setNull(i)
            case vw: BaseVariableWidthVector => vw.setNull(i)
            case lw: BaseLargeVariableWidthVector => lw.setNull(i)
            case other => fail(s"no nulls for $other")
          }
          case Some(x) => (v, x) match {
            case (w: BigIntVector, l: Long) => w.set(i, l)
            case (w: IntVector, l: Long) => w.set(i, l.toInt)
            case (w: SmallIntVector, l: Long) => w.set(i, l.toShort)
            case (w: TinyIntVector, l: Long) => w.set(i, l.toByte)
            case (w: Float8Vector, d: Double) => w.set(i, d)
            case (w: Float4Vector, d: Double) => w.set(i, d.toFloat)
            case (w: BitVector, b: Boolean) => w.set(i, if (b) 1 else 0)
            case (w: VarCharVector, s: String) => w.setSafe(i, s.getBytes(UTF_8))
            case (w: LargeVarCharVector, s: String) => w.setSafe(i, s.getBytes(UTF_8))
            case (w: DateDayVector, l: Long) => w.set(i, l.toInt)
            case (w: DateMilliVector, l: Long) => w.set(i, l)
            case (w: TimeStampVector, l: Long) => w.set(i, l)
            case (w: DecimalVector, d: java.math.BigDecimal) => w.set(i, d.setScale(3))
            case other => fail(s"no setter for $other")
          }
        }
      }
      v.setValueCount(rows)
      v
    }
    (new VectorSchemaRoot(vectors.asJava), model)
  }

  /** A literal for a column: a value of its kind (integral, floating, string, ...) as a scan is handed them. */
  private def literal(r: Random, column: String): Any = column match {
    case "i64" | "i32" | "i16" | "i8" => r.nextInt(5) match {
      case 0 => java.lang.Double.valueOf(doubles(r.nextInt(doubles.size)))
      case 1 => java.lang.Integer.valueOf(r.nextInt(20) - 10)
      case 2 => java.lang.Short.valueOf((r.nextInt(20) - 10).toShort)
      case _ => java.lang.Long.valueOf(if (r.nextBoolean()) longs(r.nextInt(longs.size)) else r.nextInt(20) - 10L)
    }
    case "d32" | "d64" | "tsus" | "tsns" =>
      if (r.nextBoolean()) java.lang.Integer.valueOf(r.nextInt(20) - 10)
      else java.lang.Long.valueOf(longs(r.nextInt(longs.size)))
    case "f64" | "f32" => r.nextInt(4) match {
      case 0 => java.lang.Long.valueOf(r.nextInt(20) - 10L)
      case 1 => java.lang.Float.valueOf(doubles(r.nextInt(doubles.size)).toFloat)
      case _ => java.lang.Double.valueOf(if (r.nextBoolean()) doubles(r.nextInt(doubles.size)) else r.nextInt(20) - 10.0)
    }
    case "b" => java.lang.Boolean.valueOf(r.nextBoolean())
    case "s" | "ls" => strings(r.nextInt(strings.size))
    case "dec" => r.nextInt(3) match {
      case 0 => decimals(r.nextInt(decimals.size))
      case 1 => new java.math.BigDecimal("1.5000") // more digits than the column's scale, the same value
      case _ => new java.math.BigDecimal(s"${r.nextInt(400) - 200}.${r.nextInt(100000)}") // between two of the column's values
    }
  }

  private def randomPredicate(r: Random, depth: Int = 0): Predicate = {
    val ops = Seq(Predicate.Op.Eq, Predicate.Op.Lt, Predicate.Op.Le, Predicate.Op.Gt, Predicate.Op.Ge)
    val c = arrowFields(r.nextInt(arrowFields.size)).getName
    r.nextInt(if (depth < 3) 8 else 4) match {
      case 0 | 1 if (c == "s" || c == "ls") && r.nextBoolean() =>
        // A part of one of the strings (bytes cut at characters), or a whole one.
        val whole = strings(r.nextInt(strings.size)).codePoints().toArray
        val from = r.nextInt(whole.length + 1)
        val text = new String(whole, from, r.nextInt(whole.length - from + 1))
        Predicate.StringMatch(c, Seq(Predicate.StringOp.StartsWith, Predicate.StringOp.EndsWith,
          Predicate.StringOp.Contains)(r.nextInt(3)), text)
      case 0 | 1 => Predicate.Compare(c, ops(r.nextInt(ops.size)), literal(r, c))
      case 2 => if (r.nextBoolean()) Predicate.IsNull(c) else Predicate.IsNotNull(c)
      case 3 => Predicate.In(c, Seq.fill(1 + r.nextInt(if (r.nextInt(4) == 0) 20 else 3))(literal(r, c)))
      case 4 | 5 => Predicate.And(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
      case _ => Predicate.Or(randomPredicate(r, depth + 1), randomPredicate(r, depth + 1))
    }
  }

  test("compiled predicates select exactly the rows the row-by-row evaluator keeps, on every column type") {
    var selectedSome = 0
    (1 to 300).foreach { seed =>
      val r = new Random(seed)
      val rows = if (seed % 10 == 0) 0 else 1 + r.nextInt(400)
      val (root, model) = batch(r, rows)
      try {
        val predicates = Seq.fill(1 + r.nextInt(2))(randomPredicate(r))
        predicates.foreach(p => assert(Scan.filterUse(schema, p) == Scan.FilterUse.SkipsBatches, p))
        val compiled = BatchPredicate.compile(predicates, schema.fields)
        (0 until 3).foreach { _ => // again on the same batch: scratch state must not leak between batches
          val out = Array.fill(rows + r.nextInt(3))(-1)
          val n = compiled.select(root.getVector, rows, out)
          val want = model.indices.filter(i => predicates.forall(Reference.matches(_, model(i))))
          assert(out.take(n).toSeq == want, s"seed $seed: $predicates (compiled: $compiled)")
          if (n > 0 && n < rows) selectedSome += 1
        }
      } finally root.close()
    }
    assert(selectedSome > 300, "too few predicates selected some but not all rows to test anything")
  }

  test("an IN of many values (a join's keys, looked up by hash) selects exactly the rows the evaluator keeps") {
    (1 to 60).foreach { seed =>
      val r = new Random(1000 + seed)
      val rows = 1 + r.nextInt(400)
      val (root, model) = batch(r, rows)
      try {
        val c = arrowFields(r.nextInt(arrowFields.size)).getName
        // The column's own literals (Long.MinValue among them, the hash table's free-slot mark), and many others
        // that match no row.
        val others: Seq[Any] = c match {
          case "s" | "ls" => Seq.fill(r.nextInt(3000))(s"key-${r.nextInt(1 << 20)}")
          case "b" | "dec" | "f64" | "f32" => Nil
          case _ => Seq.fill(r.nextInt(3000))(java.lang.Long.valueOf(r.nextLong()))
        }
        val p = Predicate.In(c, r.shuffle(Seq.fill(1 + r.nextInt(40))(literal(r, c)) ++ others))
        val compiled = BatchPredicate.compile(Seq(p), schema.fields)
        val out = new Array[Int](rows)
        val n = compiled.select(root.getVector, rows, out)
        val want = model.indices.filter(i => Reference.matches(p, model(i)))
        assert(out.take(n).toSeq == want, s"seed $seed: IN on $c of ${p.values.size} values")
      } finally root.close()
    }
  }

  test("a predicate on a column the batch holds in a vector of another kind keeps every row") {
    val (root, _) = batch(new Random(1), 50)
    try {
      val compiled = BatchPredicate.compile(Seq(Predicate.Compare("i64", Predicate.Op.Eq, java.lang.Long.valueOf(3))),
        schema.fields)
      val out = new Array[Int](50)
      assert(compiled.select(c => root.getVector(if (c == "i64") "s" else c), 50, out) == 50)
      assert(out.toSeq == (0 until 50))
    } finally root.close()
  }

  test("literals a column's values cannot be compared with leave the predicate unused") {
    val use = Scan.filterUse(schema, _: Predicate)
    assert(use(Predicate.Compare("i64", Predicate.Op.Eq, "1")) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("s", Predicate.Op.Eq, java.lang.Long.valueOf(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("d32", Predicate.Op.Eq, java.lang.Double.valueOf(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("dec", Predicate.Op.Eq, java.lang.Double.valueOf(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("b", Predicate.Op.Eq, java.lang.Long.valueOf(1))) == Scan.FilterUse.Unused)
    assert(use(Predicate.In("i32", Seq(java.lang.Long.valueOf(1), "2"))) == Scan.FilterUse.Unused)
    assert(use(Predicate.Compare("dec", Predicate.Op.Eq, new java.math.BigDecimal("1.5"))) == Scan.FilterUse.SkipsBatches)
  }
}

object BatchPredicateSuite {

  /** The semantics, one row at a time over boxed values: the oracle of the compiled predicates. */
  object Reference {
    def matches(p: Predicate, row: Map[String, Option[Any]]): Boolean = PredicateModel.matches(p, row, compare)

    /** Spark's order of doubles: NaN equals NaN and is above everything; -0.0 equals 0.0. */
    private def doubles(a: Double, b: Double): Int =
      if (a.isNaN && b.isNaN) 0 else if (a.isNaN) 1 else if (b.isNaN) -1 else if (a == b) 0 else if (a < b) -1 else 1

    private def compare(column: String, v: Any, literal: Any): Int = (v, literal) match {
      case (a: Long, b @ (_: java.lang.Double | _: java.lang.Float)) => doubles(a.toDouble, b.asInstanceOf[Number].doubleValue())
      case (a: Long, b: Number) => java.lang.Long.compare(a, b.longValue())
      case (a: Double, b: Number) => doubles(a, b.doubleValue())
      case (a: Boolean, b: java.lang.Boolean) => java.lang.Boolean.compare(a, b)
      case (a: String, b: String) => Integer.signum(java.util.Arrays.compareUnsigned(a.getBytes(UTF_8), b.getBytes(UTF_8)))
      case (a: java.math.BigDecimal, b: java.math.BigDecimal) => a.compareTo(b)
      case other => throw new IllegalArgumentException(s"$column: no comparison for $other")
    }
  }
}
