package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.{Predicate => V2Predicate}
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.sources._

import io.sparklance.core.schema.{LanceSchema, LogicalType}

import io.sparklance.core.table.Predicate
import io.sparklance.core.table.Predicate.Op

/**
 * Spark's filters as the core's [[Predicate]]s: comparisons, `IN`, `IS [NOT] NULL`, `<>` and `NOT IN`, `LIKE` of
 * a prefix, suffix or infix (`StringStartsWith`, `StringEndsWith`, `StringContains`), and `AND`/`OR` of those, on a column named by one name part. Anything else has no translation and stays Spark's alone.
 *
 * The core compares date and timestamp columns by the integer they store ([[Predicate.comparable]]), so a date or
 * timestamp literal becomes a comparison of that integer with the literal as Spark sees the column's values:
 * days for `date32`; for `date64` (milliseconds, which Spark reads as their day) and for timestamps of seconds,
 * milliseconds and nanoseconds (which Spark reads as microseconds, nanoseconds rounded down) the range of stored
 * integers that Spark reads as the literal. Timestamps read as LONG nanoseconds compare with Spark's LONG literals
 * as they are.
 */
object SparkPredicates {

  /** `f` for a table of `schema` read with `nanos`. */
  def of(f: Filter, schema: LanceSchema, nanos: SparkSchemas.NanosecondMapping): Option[Predicate] = {
    def compare(a: String, op: Op, v: Any): Option[Predicate] = stored(schema, nanos, a, v) match {
      case Some((value, mapping)) => Some(mapping.compare(a, op, value))
      case None => Some(Predicate.Compare(a, op, v))
    }
    def in(a: String, vs: Seq[Any]): Option[Predicate] = {
      val translated = vs.map(stored(schema, nanos, a, _))
      if (translated.forall(_.isEmpty)) Some(Predicate.In(a, vs))
      else if (translated.exists(_.isEmpty)) None
      else translated.flatten match {
        case all if all.forall(_._2 == Stored.Same) => Some(Predicate.In(a, all.map(t => java.lang.Long.valueOf(t._1))))
        case all if all.size <= MaxTranslatedIn => Some(all.map { case (v, m) => m.compare(a, Op.Eq, v) }.reduceLeft(Predicate.Or.apply))
        case _ => None
      }
    }
    def notEqual(a: String, v: Any): Option[Predicate] =
      for (below <- compare(a, Op.Lt, v); above <- compare(a, Op.Gt, v)) yield Predicate.Or(below, above)
    def go(f: Filter): Option[Predicate] = f match {
      case EqualTo(a, v) => compare(column(a), Op.Eq, v)
      case GreaterThan(a, v) => compare(column(a), Op.Gt, v)
      case GreaterThanOrEqual(a, v) => compare(column(a), Op.Ge, v)
      case LessThan(a, v) => compare(column(a), Op.Lt, v)
      case LessThanOrEqual(a, v) => compare(column(a), Op.Le, v)
      case In(a, vs) => in(column(a), vs.toSeq)
      // `a <> v` holds exactly where `a < v` or `a > v` does, nulls (neither) and NaN (above every number, equal
      // to itself) included; `NOT IN` of literals without a null is the AND of those.
      case Not(EqualTo(a, v)) if v != null => notEqual(column(a), v)
      case Not(In(a, vs)) if vs.nonEmpty && !vs.contains(null) =>
        vs.toSeq.map(notEqual(column(a), _)).reduceLeft((x, y) => for (p <- x; q <- y) yield Predicate.And(p, q))
      case StringStartsWith(a, v) if v != null => Some(Predicate.StringMatch(column(a), Predicate.StringOp.StartsWith, v))
      case StringEndsWith(a, v) if v != null => Some(Predicate.StringMatch(column(a), Predicate.StringOp.EndsWith, v))
      case StringContains(a, v) if v != null => Some(Predicate.StringMatch(column(a), Predicate.StringOp.Contains, v))
      case IsNull(a) => Some(Predicate.IsNull(column(a)))
      case IsNotNull(a) => Some(Predicate.IsNotNull(column(a)))
      case And(l, r) => for (x <- go(l); y <- go(r)) yield Predicate.And(x, y)
      case Or(l, r) => for (x <- go(l); y <- go(r)) yield Predicate.Or(x, y)
      case _ => None
    }
    go(f)
  }

  /** An `IN` of dates or timestamps stored in another unit than Spark's becomes this many ORs at most. */
  private val MaxTranslatedIn = 64

  /**
   * A date or timestamp literal as Spark's integer for it (days, microseconds), with how column `a` stores the
   * values Spark reads: None for any other literal, or a column of another type.
   */
  private def stored(schema: LanceSchema, nanos: SparkSchemas.NanosecondMapping, a: String, v: Any): Option[(Long, Stored)] = {
    val days: Option[Long] = v match {
      case d: java.sql.Date => Some(DateTimeUtils.fromJavaDate(d).toLong)
      case d: java.time.LocalDate => Some(d.toEpochDay)
      case _ => None
    }
    val micros: Option[Long] = v match {
      case t: java.sql.Timestamp => Some(DateTimeUtils.fromJavaTimestamp(t))
      case t: java.time.Instant => Some(DateTimeUtils.instantToMicros(t))
      case t: java.time.LocalDateTime => Some(DateTimeUtils.localDateTimeToMicros(t))
      case _ => None
    }
    if (a.contains('.')) None
    else schema.field(a).map(_.logicalType).flatMap {
      case LogicalType.Date32 => days.map(_ -> Stored.Same)
      case LogicalType.Date64 => days.map(_ -> Stored.FloorDiv(86400000L))
      case LogicalType.Timestamp(unit, tz) =>
        // Spark's TIMESTAMP literals are Timestamps or Instants, its TIMESTAMP_NTZ ones LocalDateTimes.
        val matching = micros.filter(_ => tz.isDefined != v.isInstanceOf[java.time.LocalDateTime])
        unit match {
          case LogicalType.TimeUnit.Second => matching.map(_ -> Stored.Times(1000000L))
          case LogicalType.TimeUnit.Millisecond => matching.map(_ -> Stored.Times(1000L))
          case LogicalType.TimeUnit.Microsecond => matching.map(_ -> Stored.Same)
          case LogicalType.TimeUnit.Nanosecond =>
            if (nanos == SparkSchemas.NanosecondMapping.TruncateToMicros) matching.map(_ -> Stored.FloorDiv(1000L)) else None
        }
      case _ => None
    }
  }

  /** How a column stores the integer Spark reads from it: `x` read as itself, as `x * m`, or as `floorDiv(x, d)`. */
  private sealed trait Stored {
    /** The stored integers Spark reads as x with `x op value`, for column `a`. */
    def compare(a: String, op: Op, value: Long): Predicate = {
      val (low, high) = range(BigInt(value))
      op match {
        case Op.Eq => Predicate.And(atLeast(a, low), atMost(a, high))
        case Op.Ge => atLeast(a, low)
        case Op.Gt => atLeast(a, range(BigInt(value) + 1)._1)
        case Op.Le => atMost(a, high)
        case Op.Lt => atMost(a, range(BigInt(value) - 1)._2)
      }
    }

    /** The least and greatest stored integers read as `value` (the least is above the greatest when none is). */
    protected def range(value: BigInt): (BigInt, BigInt)

    // Bounds beyond the stored integers: nothing is above Long.MaxValue, everything not null is at least MinValue.
    private def atLeast(a: String, v: BigInt): Predicate =
      if (v > Long.MaxValue) Predicate.Compare(a, Op.Gt, java.lang.Long.valueOf(Long.MaxValue))
      else Predicate.Compare(a, Op.Ge, java.lang.Long.valueOf(v.max(Long.MinValue).toLong))
    private def atMost(a: String, v: BigInt): Predicate =
      if (v < Long.MinValue) Predicate.Compare(a, Op.Lt, java.lang.Long.valueOf(Long.MinValue))
      else Predicate.Compare(a, Op.Le, java.lang.Long.valueOf(v.min(Long.MaxValue).toLong))
  }

  private object Stored {
    case object Same extends Stored {
      override def compare(a: String, op: Op, value: Long): Predicate = Predicate.Compare(a, op, java.lang.Long.valueOf(value))
      override protected def range(value: BigInt): (BigInt, BigInt) = (value, value)
    }
    final case class Times(m: Long) extends Stored {
      // x * m == value for x in [ceil(value / m), floor(value / m)]: one integer or none.
      override protected def range(value: BigInt): (BigInt, BigInt) = {
        val floor = floorDiv(value, m)
        (if (floor * m == value) floor else floor + 1, floor)
      }
    }
    final case class FloorDiv(d: Long) extends Stored {
      override protected def range(value: BigInt): (BigInt, BigInt) = (value * d, value * d + d - 1)
    }

    private def floorDiv(a: BigInt, b: Long): BigInt = {
      val (q, r) = a /% b
      if (r != 0 && (r < 0) != (b < 0)) q - 1 else q
    }
  }

  /**
   * The column a V1 filter names: Spark quotes a name that is not a plain identifier (`my col`) and joins the parts
   * of a nested one with dots; a top-level name comes back unquoted, a nested one as Spark gave it (the core reads
   * names with a dot as nested, which no predicate is used on).
   */
  private def column(attribute: String): String =
    if (!attribute.contains('`')) attribute
    else scala.util.Try(org.apache.spark.sql.catalyst.parser.CatalystSqlParser.parseMultipartIdentifier(attribute))
      .toOption.collect { case Seq(one) => one }.getOrElse(attribute)

  /**
   * The column and values of an `IN` that Spark hands a scan when the query runs (the keys of a broadcast join's
   * other side, `SupportsRuntimeV2Filtering`: `DataSourceV2Strategy.translateRuntimeFilterV2`), as a V1 `In` of
   * Spark's external values (`String`, `java.sql.Date`, `java.math.BigDecimal`, ...), which [[of]] translates as it
   * does the filters of a query; its literals are Spark's internal values. Nulls are dropped: they equal no key.
   * None for any other predicate.
   */
  def runtimeIn(p: V2Predicate): Option[In] = {
    val children = p.children().toSeq
    children.headOption match {
      case Some(r: NamedReference) if p.name() == "IN" && r.fieldNames().length == 1 &&
          children.tail.forall(_.isInstanceOf[Literal[_]]) =>
        val literals = children.tail.map(_.asInstanceOf[Literal[_]])
        val external = literals.headOption.map(l => CatalystTypeConverters.createToScalaConverter(l.dataType()))
        val values = literals.flatMap(l => Option(l.value()).map(v => external.get(v)))
        Some(In(quoted(r.fieldNames()(0)), values.toArray))
      case _ => None
    }
  }

  /** The column a V1 `IN` names, as [[of]] reads it. */
  def columnOf(in: In): String = column(in.attribute)

  /** A column name as V1 filters name one (quoted unless a plain identifier), which [[column]] reads back. */
  private def quoted(name: String): String =
    if (name.matches("[A-Za-z_][A-Za-z0-9_]*")) name else "`" + name.replace("`", "``") + "`"

  /** A DataSourceV2 comparison or `IN` of one column with literals (what DELETE hands a table). */
  def of(p: V2Predicate): Option[Predicate] = {
    val children = p.children().toSeq
    val column = children.headOption.collect { case r: NamedReference if r.fieldNames().length == 1 => r.fieldNames()(0) }
    val values = children.drop(1).map { case l: Literal[_] => Option(l.value()); case _ => None }
    if (column.isEmpty || values.exists(_.isEmpty)) None
    else {
      val c = column.get
      (p.name(), values.flatten) match {
        case ("=", Seq(v)) => Some(Predicate.Compare(c, Op.Eq, v))
        case ("<", Seq(v)) => Some(Predicate.Compare(c, Op.Lt, v))
        case ("<=", Seq(v)) => Some(Predicate.Compare(c, Op.Le, v))
        case (">", Seq(v)) => Some(Predicate.Compare(c, Op.Gt, v))
        case (">=", Seq(v)) => Some(Predicate.Compare(c, Op.Ge, v))
        case ("IN", all) if all.nonEmpty => Some(Predicate.In(c, all))
        case _ => None
      }
    }
  }
}
