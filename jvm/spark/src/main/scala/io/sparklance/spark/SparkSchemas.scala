package io.sparklance.spark

import org.apache.spark.sql.types._

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.schema.{LanceField, LanceSchema, LogicalType}

/**
 * The mapping from Lance logical types to Spark SQL types (docs/types.md is the user-facing table).
 *
 * Nothing is narrowed silently: unsigned integers widen to the next signed type (uint64 to DECIMAL(20,0)),
 * halffloat and bfloat16 widen to FLOAT, decimals over 38 digits read as their exact decimal text (STRING). Spark keeps time at microsecond
 * precision, so nanosecond times, timestamps and durations are either truncated to microseconds (the default, as
 * Spark's own readers do) or read as their raw LONG count of nanoseconds, by [[NanosecondMapping]].
 */
object SparkSchemas {

  /** Metadata key on each Spark field: the Lance field id. */
  val FieldIdKey = "lance.field_id"
  /** Metadata key on each Spark field: the Lance logical type string. */
  val LogicalTypeKey = "lance.logical_type"

  sealed trait NanosecondMapping
  object NanosecondMapping {
    /** Nanosecond values become microsecond TIME/TIMESTAMP/INTERVAL values, rounded toward negative infinity. */
    case object TruncateToMicros extends NanosecondMapping
    /** Nanosecond values stay exact, as LONG. */
    case object AsLong extends NanosecondMapping
  }

  def toSpark(schema: LanceSchema, nanos: NanosecondMapping = NanosecondMapping.TruncateToMicros): StructType =
    StructType(schema.fields.map(toSpark(_, nanos)))

  def toSpark(field: LanceField, nanos: NanosecondMapping): StructField = {
    val meta = new MetadataBuilder().putLong(FieldIdKey, field.id.toLong)
      .putString(LogicalTypeKey, field.proto.getLogicalType).build()
    StructField(field.name, dataType(field, nanos), field.nullable, meta)
  }

  def dataType(field: LanceField, nanos: NanosecondMapping): DataType = {
    import LogicalType._
    def nanoOr(t: DataType) = nanos match {
      case NanosecondMapping.AsLong => LongType
      case NanosecondMapping.TruncateToMicros => t
    }
    field.logicalType match {
      case Struct => StructType(field.children.map(toSpark(_, nanos)))
      case List(_, _) =>
        val elem = field.children.head
        ArrayType(dataType(elem, nanos), elem.nullable)
      case LogicalType.Map =>
        val entries = field.children.head
        val (key, value) = entries.children match {
          case Seq(k, v) => (k, v)
          case other => throw new UnsupportedFeatureException(s"Map column '${field.name}' has ${other.size} entry " +
            "fields; a Lance map has exactly a key and a value.")
        }
        MapType(dataType(key, nanos), dataType(value, nanos), value.nullable)
      case FixedSizeList(elem, _) => ArrayType(scalar(field, elem, nanoOr), containsNull = true)
      case other => scalar(field, other, nanoOr)
    }
  }

  private def scalar(field: LanceField, t: LogicalType, nanoOr: DataType => DataType): DataType = {
    import LogicalType._
    t match {
      case Null => NullType
      case Bool => BooleanType
      case Int(8, true) => ByteType
      case Int(16, true) => ShortType
      case Int(32, true) => IntegerType
      case Int(64, true) => LongType
      case Int(8, false) => ShortType
      case Int(16, false) => IntegerType
      case Int(32, false) => LongType
      case Int(64, false) => DecimalType(20, 0)
      case HalfFloat | BFloat16 | Float => FloatType
      case Double => DoubleType
      case Utf8(_) | Json => StringType
      case Binary(_) | FixedSizeBinary(_) => BinaryType
      case Decimal(_, p, s) if p <= DecimalType.MAX_PRECISION => DecimalType(p, s)
      // Spark decimals hold 38 digits: wider ones read as their exact decimal text.
      case _: Decimal => StringType
      case Date32 | Date64 => DateType
      case Time(TimeUnit.Second) => TimeType(0)
      case Time(TimeUnit.Millisecond) => TimeType(3)
      case Time(TimeUnit.Microsecond) => TimeType(6)
      case Time(TimeUnit.Nanosecond) => nanoOr(TimeType(6))
      case Timestamp(unit, tz) =>
        val t = if (tz.isDefined) TimestampType else TimestampNTZType
        if (unit == TimeUnit.Nanosecond) nanoOr(t) else t
      case Duration(unit) =>
        val t = DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.SECOND)
        if (unit == TimeUnit.Nanosecond) nanoOr(t) else t
      case Dictionary(value, _, _) => scalar(field, value, nanoOr)
      case FixedSizeList(elem, _) => ArrayType(scalar(field, elem, nanoOr), containsNull = true)
      case nested => throw new UnsupportedFeatureException(
        s"Column '${field.name}' has a fixed-size list of $nested elements, which Spark reading does not support.")
    }
  }
}
