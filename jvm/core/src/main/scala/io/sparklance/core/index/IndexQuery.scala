package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import org.apache.arrow.vector._

/**
 * A condition on one indexed column that a scalar index answers (upstream `SargableQuery`), with literals in the
 * core's terms: integral numbers as `java.lang.Long` (dates and timestamps as the integer they store), floating ones
 * as `java.lang.Double` or `java.lang.Float`, strings, booleans. Nulls match nothing but [[IndexQuery.IsNull]].
 * Keys compare with literals as Spark SQL compares values: NaN equals NaN and is above every other value, and
 * -0.0 equals 0.0.
 */
sealed trait IndexQuery {
  /** Whether a null key satisfies the query. */
  def matchesNull: Boolean = false

  /** Whether some non-null key can satisfy the query. */
  def matchesValues: Boolean = true

  /** Whether a non-null key at row `i` of `keys` satisfies the query. */
  def matches(keys: FieldVector, i: Int): Boolean

  /**
   * Whether some key between `min(i)` and `max(j)` can satisfy the query; `max(j)` is not null, a null `min(i)` is
   * unbounded below (upstream's B-tree pages with nulls have a null minimum).
   */
  def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean
}

object IndexQuery {

  /** One end of a range: a literal and whether it is included. */
  final case class Bound(value: Any, inclusive: Boolean)

  /** `lower <(=) column <(=) upper`; a missing end is unbounded. Equality is a range of one value. */
  final case class Range(lower: Option[Bound], upper: Option[Bound]) extends IndexQuery {
    def matches(keys: FieldVector, i: Int): Boolean =
      lower.forall(b => within(Keys.compare(keys, i, b.value), b.inclusive, below = false)) &&
        upper.forall(b => within(Keys.compare(keys, i, b.value), b.inclusive, below = true))

    // Upstream sorts floats in IEEE total order, which puts NaNs with the sign bit below -Infinity (right after the
    // nulls) and the others above +Infinity, while SQL puts every NaN above all: a float page or zone may hold a NaN
    // when its max is NaN, or its min is NaN or null, whatever the query's bounds.
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean =
      (Keys.isFloat(max) && (Keys.isNaN(max, j) || min.isNull(i) || Keys.isNaN(min, i))) || (
        lower.forall(b => within(Keys.compare(max, j, b.value), b.inclusive, below = false)) &&
          upper.forall(b => min.isNull(i) || within(Keys.compare(min, i, b.value), b.inclusive, below = true)))

    private def within(c: Int, inclusive: Boolean, below: Boolean): Boolean =
      if (below) c < 0 || (inclusive && c == 0) else c > 0 || (inclusive && c == 0)

    override def toString: String =
      if (lower.isDefined && lower == upper) s"= ${lower.get.value}"
      else (lower.map(b => s"${if (b.inclusive) ">=" else ">"} ${b.value}") ++
        upper.map(b => s"${if (b.inclusive) "<=" else "<"} ${b.value}")).mkString(" AND ")
  }

  def equalTo(v: Any): Range = Range(Some(Bound(v, inclusive = true)), Some(Bound(v, inclusive = true)))

  final case class In(values: Seq[Any]) extends IndexQuery {
    private val each = values.map(equalTo)
    def matches(keys: FieldVector, i: Int): Boolean = each.exists(_.matches(keys, i))
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean = each.exists(_.overlaps(min, i, max, j))
    override def toString: String = s"IN (${values.mkString(", ")})"
  }

  case object IsNull extends IndexQuery {
    override def matchesNull: Boolean = true
    override def matchesValues: Boolean = false
    def matches(keys: FieldVector, i: Int): Boolean = false
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean = false
    override def toString: String = "IS NULL"
  }

  /**
   * The rows whose list holds one of `values` (upstream `LabelListQuery::HasAnyLabel`), for a label list index,
   * whose keys are the lists' items: a key matches when it equals one of the values. Rows whose list is null, or
   * holds only other items and nulls, are not found, as SQL's `array_contains` is not true on them.
   */
  final case class HasAny(values: Seq[Any]) extends IndexQuery {
    private val in = In(values)
    def matches(keys: FieldVector, i: Int): Boolean = in.matches(keys, i)
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean = in.overlaps(min, i, max, j)
    override def toString: String = s"HAS ANY (${values.mkString(", ")})"
  }

  /**
   * The string contains `text` (Spark's `LIKE '%x%'` and `contains`), byte for byte; an NGRAM index answers it with
   * a superset of the matching rows.
   */
  final case class Contains(text: String) extends IndexQuery {
    def matches(keys: FieldVector, i: Int): Boolean = keys.getObject(i).toString.contains(text)
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean = true
    override def toString: String = s"contains '$text'"
  }

  /** Both queries: rows an index returns for each, intersected. */
  final case class Both(left: IndexQuery, right: IndexQuery) extends IndexQuery {
    override def matchesNull: Boolean = left.matchesNull && right.matchesNull
    override def matchesValues: Boolean = left.matchesValues && right.matchesValues
    def matches(keys: FieldVector, i: Int): Boolean = left.matches(keys, i) && right.matches(keys, i)
    def overlaps(min: FieldVector, i: Int, max: FieldVector, j: Int): Boolean =
      left.overlaps(min, i, max, j) && right.overlaps(min, i, max, j)
    override def toString: String = s"$left AND $right"
  }

  /**
   * Whether keys stored in vectors like `keys` can be compared with `literal` with SQL semantics by [[Keys]]:
   * signed and unsigned integers, dates and timestamps (as their stored numbers) with integral literals, 32- and
   * 64-bit floats with integral and floating literals (as doubles), 128-bit decimals with `java.math.BigDecimal`s
   * (by value, whatever the scales), strings with strings, booleans with booleans.
   */
  def comparable(keys: org.apache.arrow.vector.types.pojo.ArrowType, literal: Any): Boolean = {
    import org.apache.arrow.vector.types.pojo.ArrowType
    import org.apache.arrow.vector.types.FloatingPointPrecision
    val integral = literal match {
      case _: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte => true
      case _ => false
    }
    (keys, literal) match {
      case (_: ArrowType.Int | _: ArrowType.Date | _: ArrowType.Timestamp, _) => integral
      case (f: ArrowType.FloatingPoint, _) => f.getPrecision != FloatingPointPrecision.HALF &&
        (integral || literal.isInstanceOf[java.lang.Double] || literal.isInstanceOf[java.lang.Float])
      case (d: ArrowType.Decimal, _: java.math.BigDecimal) => d.getBitWidth == 128
      case (_: ArrowType.Utf8 | _: ArrowType.LargeUtf8, _: String) => true
      case (_: ArrowType.Bool, _: java.lang.Boolean) => true
      case _ => false
    }
  }
}

/** Comparison of stored keys with query literals. */
private[index] object Keys {

  /** The sign of (key at i) - literal; the key must not be null and the two must be [[IndexQuery.comparable]]. */
  def compare(v: FieldVector, i: Int, literal: Any): Int = v match {
    case b: BitVector => java.lang.Boolean.compare(b.get(i) == 1, literal.asInstanceOf[java.lang.Boolean])
    case s: VarCharVector => bytes(s.get(i), literal)
    case s: LargeVarCharVector => bytes(s.get(i), literal)
    case u: UInt8Vector =>
      val l = long(literal)
      if (l < 0) 1 else java.lang.Long.compareUnsigned(u.get(i), l)
    case n: BaseIntVector => java.lang.Long.compare(n.getValueAsLong(i), long(literal))
    case d: DateDayVector => java.lang.Long.compare(d.get(i).toLong, long(literal))
    case d: DateMilliVector => java.lang.Long.compare(d.get(i), long(literal))
    case t: TimeStampVector => java.lang.Long.compare(t.get(i), long(literal))
    case f: Float8Vector => doubles(f.get(i), literal)
    case f: Float4Vector => doubles(f.get(i).toDouble, literal)
    case d: DecimalVector => Integer.signum(d.getObject(i).compareTo(literal.asInstanceOf[java.math.BigDecimal]))
    case other => throw new IllegalArgumentException(s"keys of type ${other.getField.getType} are not comparable")
  }

  /** Whether keys of `v` are floats. */
  def isFloat(v: FieldVector): Boolean = v.isInstanceOf[Float8Vector] || v.isInstanceOf[Float4Vector]

  /** Whether the key at i is a NaN (so never for keys that are not floats). */
  def isNaN(v: FieldVector, i: Int): Boolean = v match {
    case f: Float8Vector => java.lang.Double.isNaN(f.get(i))
    case f: Float4Vector => java.lang.Float.isNaN(f.get(i))
    case _ => false
  }

  /** SQL's order of doubles: every NaN equal and above all else, -0.0 equal to 0.0. */
  private def doubles(key: Double, literal: Any): Int = {
    val l = literal.asInstanceOf[java.lang.Number].doubleValue()
    if (java.lang.Double.isNaN(key)) { if (java.lang.Double.isNaN(l)) 0 else 1 }
    else if (java.lang.Double.isNaN(l)) -1
    else if (key == l) 0
    else if (key < l) -1
    else 1
  }

  private def long(x: Any): Long = x.asInstanceOf[java.lang.Number].longValue()

  private def bytes(b: Array[Byte], literal: Any): Int =
    Integer.signum(java.util.Arrays.compareUnsigned(b, literal.asInstanceOf[String].getBytes(StandardCharsets.UTF_8)))
}
