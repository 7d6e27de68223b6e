package io.sparklance.spark

import java.nio.charset.StandardCharsets

import org.apache.arrow.vector._
import org.apache.spark.sql.sources._

import io.sparklance.core.schema.{LanceSchema, LogicalType}

/**
 * Filters on data columns that the scan evaluates while reading: a batch of rows is first read for the filtered
 * columns only, and when no row of it can match, the other columns of the batch are never decoded. Supported: `=`,
 * `<`, `<=`, `>`, `>=`, `IN`, `IS NULL`, `IS NOT NULL`, and `AND`/`OR` of those, on top-level columns of signed
 * integer, float, double, string and boolean type. Spark still evaluates the filters on the rows the scan returns
 * (a batch with a match comes back whole), so the pushed filters only ever skip rows Spark would drop.
 *
 * Comparisons follow Spark's semantics: nulls match nothing but `IS NULL`; NaN equals NaN and is larger than every
 * other value; `-0.0 = 0.0`; strings compare by their UTF-8 bytes.
 */
object DataFilters {

  private def columnOk(schema: LanceSchema, name: String): Boolean =
    !name.contains('.') && schema.field(name).exists(f => f.logicalType match {
      case LogicalType.Int(_, true) | LogicalType.Float | LogicalType.Double | LogicalType.Bool => true
      case LogicalType.Utf8(_) => true
      case _ => false
    })

  private def valueOk(v: Any): Boolean = v match {
    case _: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte | _: java.lang.Double |
         _: java.lang.Float | _: String | _: java.lang.Boolean => true
    case _ => false
  }

  /** Whether the scan can evaluate this filter on the table's columns. */
  def applies(schema: LanceSchema, f: Filter): Boolean = f match {
    case EqualTo(a, v) => columnOk(schema, a) && valueOk(v)
    case GreaterThan(a, v) => columnOk(schema, a) && valueOk(v)
    case GreaterThanOrEqual(a, v) => columnOk(schema, a) && valueOk(v)
    case LessThan(a, v) => columnOk(schema, a) && valueOk(v)
    case LessThanOrEqual(a, v) => columnOk(schema, a) && valueOk(v)
    case In(a, vs) => columnOk(schema, a) && vs.nonEmpty && vs.forall(valueOk)
    case IsNull(a) => columnOk(schema, a)
    case IsNotNull(a) => columnOk(schema, a)
    case And(l, r) => applies(schema, l) && applies(schema, r)
    case Or(l, r) => applies(schema, l) && applies(schema, r)
    case _ => false
  }

  /** The columns a filter reads. */
  def columns(f: Filter): Set[String] = f.references.toSet

  /** Whether row `i` of the batch (columns by name) satisfies every filter. */
  def matches(filters: Seq[Filter], column: String => FieldVector, i: Int): Boolean =
    filters.forall(f => eval(f, column, i))

  private def eval(f: Filter, column: String => FieldVector, i: Int): Boolean = f match {
    case And(l, r) => eval(l, column, i) && eval(r, column, i)
    case Or(l, r) => eval(l, column, i) || eval(r, column, i)
    case IsNull(a) => column(a).isNull(i)
    case IsNotNull(a) => !column(a).isNull(i)
    case EqualTo(a, v) => compare(column(a), i, v).contains(0)
    case GreaterThan(a, v) => compare(column(a), i, v).exists(_ > 0)
    case GreaterThanOrEqual(a, v) => compare(column(a), i, v).exists(_ >= 0)
    case LessThan(a, v) => compare(column(a), i, v).exists(_ < 0)
    case LessThanOrEqual(a, v) => compare(column(a), i, v).exists(_ <= 0)
    case In(a, vs) => val c = column(a); vs.exists(v => compare(c, i, v).contains(0))
    case _ => true
  }

  /** The sign of (value at i) - v, or None when the value is null or the two cannot be compared. */
  private def compare(vector: FieldVector, i: Int, v: Any): Option[Int] = {
    if (vector.isNull(i)) return None
    def num(x: Any): Option[Double] = x match {
      case n: java.lang.Number => Some(n.doubleValue())
      case _ => None
    }
    def long(x: Any): Option[Long] = x match {
      case n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte) => Some(n.asInstanceOf[Number].longValue())
      case _ => None
    }
    def doubles(a: Double, b: Double): Int = if (a == b) 0 else java.lang.Double.compare(a, b)
    vector match {
      case b: BigIntVector => long(v).map(x => java.lang.Long.compare(b.get(i), x)).orElse(num(v).map(doubles(b.get(i).toDouble, _)))
      case b: IntVector => long(v).map(x => java.lang.Long.compare(b.get(i).toLong, x)).orElse(num(v).map(doubles(b.get(i).toDouble, _)))
      case b: SmallIntVector => long(v).map(x => java.lang.Long.compare(b.get(i).toLong, x)).orElse(num(v).map(doubles(b.get(i).toDouble, _)))
      case b: TinyIntVector => long(v).map(x => java.lang.Long.compare(b.get(i).toLong, x)).orElse(num(v).map(doubles(b.get(i).toDouble, _)))
      case d: Float8Vector => num(v).map(doubles(d.get(i), _))
      case d: Float4Vector => v match {
        case f: java.lang.Float => Some(if (d.get(i) == f.floatValue()) 0 else java.lang.Float.compare(d.get(i), f))
        case _ => num(v).map(doubles(d.get(i).toDouble, _))
      }
      case b: BitVector => v match {
        case x: java.lang.Boolean => Some(java.lang.Boolean.compare(b.get(i) == 1, x))
        case _ => None
      }
      case s: VarCharVector => v match {
        case x: String => Some(Integer.signum(java.util.Arrays.compareUnsigned(s.get(i), x.getBytes(StandardCharsets.UTF_8))))
        case _ => None
      }
      case s: LargeVarCharVector => v match {
        case x: String => Some(Integer.signum(java.util.Arrays.compareUnsigned(s.get(i), x.getBytes(StandardCharsets.UTF_8))))
        case _ => None
      }
      case _ => None
    }
  }
}
