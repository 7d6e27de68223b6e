package io.sparklance.spark

import scala.util.Try

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

  /**
   * Metadata key on each Spark field of a Lance list or map: the Lance fields below it (JSON, see [[FieldTrees]]).
   * Spark keeps no metadata on array elements and map entries, so this is how a rewrite keeps, say, a
   * `large_list` or a `timestamp:s` inside a list.
   */
  val FieldTreeKey = "lance.children"

  /** Spark field metadata naming the dimension of a vector column: `ARRAY<FLOAT>` written as a fixed-size list. */
  val FixedSizeListKey = "arrow.fixed-size-list.size"

  /**
   * The Lance schema of a new table from a Spark schema: the reverse of the read mapping (TIMESTAMP is
   * `timestamp:us:UTC`, TIMESTAMP_NTZ `timestamp:us:-`, INTERVAL DAY TO SECOND `duration:us`, TIME `time64:us`),
   * field ids depth first from 0. A field that came from a Lance table keeps its Lance type (its
   * `lance.logical_type` metadata) when that type reads back as the same Spark type; an `ARRAY` with
   * `arrow.fixed-size-list.size` metadata becomes a fixed-size list (a vector), of float16 items with `arrow.float16`;
   * a `STRING` with `arrow:large-var-char` a large_string, a `BINARY` with `lance-encoding:blob` a blob column (a
   * blob-marked large_binary: [[io.sparklance.core.schema.BlobColumns]] makes it blob v2 in file version 2.2), and
   * Lance's other encoding hints (`lance-encoding:*`, see [[ColumnProperties]]) stay in the field's metadata.
   */
  def toLance(schema: StructType): LanceSchema = LanceSparkException.translate {
    import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit => AU}
    import org.apache.arrow.vector.types.pojo.{ArrowType, Field => AField, FieldType}
    import scala.jdk.CollectionConverters._
    def unsupported(path: String, dt: DataType): Nothing = throw new UnsupportedFeatureException(
      s"Column '$path' has Spark type ${dt.sql}, which Lance tables cannot store. Cast it to a supported type first.")
    def field(name: String, dt: DataType, nullable: Boolean, meta: Metadata, path: String): AField = {
      // Lance's encoding hints (`lance-encoding:*`) go to the field's metadata, as pylance keeps them.
      val hints = ColumnProperties.encodingMetadata(meta)
      def leaf(t: ArrowType) = new AField(name, new FieldType(nullable, t, null, if (hints.isEmpty) null else hints.asJava), null)
      def flag(key: String) = meta.contains(key) && meta.getString(key).equalsIgnoreCase("true")
      val shaped = flag(ColumnProperties.LargeVarCharKey) || flag(ColumnProperties.BlobKey) || flag(ColumnProperties.Float16Key)
      val kept = if (meta.contains(LogicalTypeKey) && !shaped) LogicalType.tryParse(meta.getString(LogicalTypeKey)) else None
      val keptTree = kept.filter(t => t.isNested && meta.contains(FieldTreeKey)).flatMap(t =>
        FieldTrees.keep(name, t, nullable, meta.getString(FieldTreeKey), probe => Try(dataType(probe, NanosecondMapping.TruncateToMicros)).toOption.exists(sameShape(_, dt))))
      keptTree.orElse(kept.filter(t => !t.isNested && !t.isInstanceOf[LogicalType.Dictionary] && t != LogicalType.Json).flatMap { t =>
        val probe = LanceSchema.fromFlat("a Spark schema",
          Seq(LanceSchema.FlatField(0, -1, name, t.toString, nullable))).fields.head
        if (scala.util.Try(dataType(probe, NanosecondMapping.TruncateToMicros)).toOption.contains(dt)) {
          Some(io.sparklance.core.schema.ArrowSchemas.toArrow(probe))
        } else None
      }).getOrElse(dt match {
        case BooleanType => leaf(ArrowType.Bool.INSTANCE)
        case ByteType => leaf(new ArrowType.Int(8, true))
        case ShortType => leaf(new ArrowType.Int(16, true))
        case IntegerType => leaf(new ArrowType.Int(32, true))
        case LongType => leaf(new ArrowType.Int(64, true))
        case FloatType => leaf(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))
        case DoubleType => leaf(new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))
        case StringType if flag(ColumnProperties.LargeVarCharKey) => leaf(ArrowType.LargeUtf8.INSTANCE)
        case StringType => leaf(ArrowType.Utf8.INSTANCE)
        case BinaryType if flag(ColumnProperties.BlobKey) => leaf(ArrowType.LargeBinary.INSTANCE)
        case BinaryType => leaf(ArrowType.Binary.INSTANCE)
        case d: DecimalType => leaf(new ArrowType.Decimal(d.precision, d.scale, 128))
        case DateType => leaf(new ArrowType.Date(DateUnit.DAY))
        case TimestampType => leaf(new ArrowType.Timestamp(AU.MICROSECOND, "UTC"))
        case TimestampNTZType => leaf(new ArrowType.Timestamp(AU.MICROSECOND, null))
        case DayTimeIntervalType(_, _) => leaf(new ArrowType.Duration(AU.MICROSECOND))
        case t if TimeTypes.isTime(t) => leaf(new ArrowType.Time(AU.MICROSECOND, 64))
        case NullType => leaf(ArrowType.Null.INSTANCE)
        case ArrayType(et, containsNull) if meta.contains(FixedSizeListKey) =>
          val dim = meta.getLong(FixedSizeListKey).toInt
          if (dim <= 0) throw new io.sparklance.core.InvalidArgumentException(s"Column '$path': $FixedSizeListKey must be positive, not $dim.")
          val item = if (flag(ColumnProperties.Float16Key) && (et == FloatType || et == DoubleType)) {
            new AField("item", new FieldType(true, new ArrowType.FloatingPoint(FloatingPointPrecision.HALF), null), null)
          } else field("item", et, nullable = true, Metadata.empty, s"$path.item")
          if (item.getType.isComplex) unsupported(path, dt)
          new AField(name, new FieldType(nullable, new ArrowType.FixedSizeList(dim), null, if (hints.isEmpty) null else hints.asJava),
            java.util.Collections.singletonList(item))
        case ArrayType(et, containsNull) =>
          new AField(name, new FieldType(nullable, ArrowType.List.INSTANCE, null),
            java.util.Collections.singletonList(field("item", et, containsNull, Metadata.empty, s"$path.element")))
        case MapType(kt, vt, valueNullable) =>
          val entries = new AField("entries", new FieldType(false, ArrowType.Struct.INSTANCE, null), java.util.List.of(
            field("key", kt, nullable = false, Metadata.empty, s"$path.key"),
            field("value", vt, valueNullable, Metadata.empty, s"$path.value")))
          new AField(name, new FieldType(nullable, new ArrowType.Map(false), null), java.util.Collections.singletonList(entries))
        case st: StructType =>
          new AField(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null),
            st.fields.map(f => field(f.name, f.dataType, f.nullable, f.metadata, s"$path.${f.name}")).toSeq.asJava)
        case other => unsupported(path, other)
      })
    }
    schema.fields.find(_.name.contains('.')).foreach { f =>
      throw new io.sparklance.core.InvalidArgumentException(s"Column '${f.name}': Lance tables cannot have a " +
        "top-level column whose name contains '.' (it separates the parts of a nested column's name). Rename it.")
    }
    io.sparklance.core.schema.ArrowSchemas.fromArrow(new org.apache.arrow.vector.types.pojo.Schema(
      schema.fields.map(f => field(f.name, f.dataType, f.nullable, f.metadata, f.name)).toSeq.asJava))
  }

  /** Equal types, field names and nullability, whatever the fields' metadata. */
  private def sameShape(a: DataType, b: DataType): Boolean = (a, b) match {
    case (x: StructType, y: StructType) => x.length == y.length && x.fields.zip(y.fields).forall { case (f, g) =>
      f.name == g.name && f.nullable == g.nullable && sameShape(f.dataType, g.dataType) }
    case (ArrayType(x, xn), ArrayType(y, yn)) => xn == yn && sameShape(x, y)
    case (MapType(xk, xv, xn), MapType(yk, yv, yn)) => xn == yn && sameShape(xk, yk) && sameShape(xv, yv)
    case _ => a == b
  }

  /**
   * The schema with every field, array element and map value nullable: what a table created from a DataFrame gets,
   * as Spark's own file sources and table formats do, so that later writes may carry nulls.
   */
  def asNullable(schema: StructType): StructType = {
    def loose(dt: DataType): DataType = dt match {
      case st: StructType => asNullable(st)
      case ArrayType(et, _) => ArrayType(loose(et), containsNull = true)
      case MapType(kt, vt, _) => MapType(loose(kt), loose(vt), valueContainsNull = true)
      case other => other
    }
    StructType(schema.fields.map(f => f.copy(dataType = loose(f.dataType), nullable = true)))
  }

  /**
   * The columns of `table` that a schema given to a read (`requested`) names (case-insensitively), in its order. Every column it
   * names must be in the table with the same type (nullability and metadata aside): a given schema selects
   * columns, it does not convert them.
   */
  def project(table: StructType, requested: StructType, tableName: String): StructType = {
    val byName = table.fields.map(f => f.name.toLowerCase -> f).toMap
    val problems = requested.fields.toSeq.flatMap { g =>
      byName.get(g.name.toLowerCase) match {
        case None => Some(s"column '${g.name}' is not in the table")
        case Some(t) if !PathWrites.sameType(t.dataType, g.dataType) =>
          Some(s"column '${g.name}' is ${t.dataType.sql} in the table but ${g.dataType.sql} in the requested schema")
        case Some(_) => None
      }
    }
    if (problems.nonEmpty) {
      // Spark also asks a streaming sink's table for its schema with the stream's, before the sink can say more.
      throw new io.sparklance.core.InvalidArgumentException(s"The schema requested to the read of $tableName does not match the table: " +
        s"${problems.mkString("; ")}. Leave out .schema(...) to read the table's own schema (${table.toDDL}), or " +
        "give a subset of its columns with their types. (A stream written to the table must have the table's " +
        "columns: select and cast them before writeStream.)")
    }
    StructType(requested.fields.map(g => byName(g.name.toLowerCase)))
  }

  /**
   * Refuses to `action` (read, write) the given fields when one of them, or a field inside one, is float16 and this
   * Spark's Arrow has no half floats (Spark 3.x): other columns of such a table are read and written as usual.
   */
  def refuseHalfFloats(fields: Seq[LanceField], action: String): Unit =
    if (!HalfFloats.supported) {
      def half(t: LogicalType): Boolean = t match {
        case LogicalType.HalfFloat => true
        case LogicalType.FixedSizeList(element, _) => half(element) // a float16 vector: its items have no field of their own
        case _ => false
      }
      fields.flatMap(_.flatten).find(f => half(f.logicalType)).foreach { f =>
        throw new UnsupportedFeatureException(s"Cannot $action column '${f.name}': it is float16${if (f.logicalType == LogicalType.HalfFloat) "" else " vectors"}, and the Arrow " +
          "library of Spark 3.x has no half-precision floats. Use Spark 4.0 or later for this column, leave it out " +
          "of the query, or cast it with pylance.")
      }
    }

  def toSpark(schema: LanceSchema, nanos: NanosecondMapping = NanosecondMapping.TruncateToMicros): StructType =
    StructType(schema.fields.map(toSpark(_, nanos)))

  def toSpark(field: LanceField, nanos: NanosecondMapping): StructField = {
    // A bfloat16 column is `fixed_size_binary:2` with pylance's extension; its Spark field names the bfloat16 type.
    val logical = if (isBFloat16(field)) LogicalType.format(LogicalType.BFloat16) else field.logicalTypeName
    val meta = new MetadataBuilder().putLong(FieldIdKey, field.id.toLong).putString(LogicalTypeKey, logical)
    if (field.parentId == -1 && (field.isBlobV2 || (field.isBlob && field.logicalType == LogicalType.Binary(true)))) {
      meta.putString(ColumnProperties.BlobKey, "true")
    }
    field.logicalType match {
      case LogicalType.List(_, _) | LogicalType.Map => meta.putString(FieldTreeKey, FieldTrees.encode(field.children))
      case _ =>
    }
    StructField(field.name, dataType(field, nanos), field.nullable, meta.build())
  }

  def dataType(field: LanceField, nanos: NanosecondMapping): DataType = {
    import LogicalType._
    def nanoOr(t: DataType) = nanos match {
      case NanosecondMapping.AsLong => LongType
      case NanosecondMapping.TruncateToMicros => t
    }
    field.logicalType match {
      // A blob v2 column is BINARY, as lance-spark shows it: its values are the blobs' bytes.
      case Struct if field.isBlobV2 => BinaryType
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
      case _ if isBFloat16(field) => FloatType
      case other => scalar(field, other, nanoOr)
    }
  }

  private def isBFloat16(field: LanceField): Boolean =
    field.logicalType == LogicalType.FixedSizeBinary(2) && field.extensionName.contains("lance.bfloat16")

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
      case Time(TimeUnit.Second) => TimeTypes.read(0)
      case Time(TimeUnit.Millisecond) => TimeTypes.read(3)
      case Time(TimeUnit.Microsecond) => TimeTypes.read(6)
      case Time(TimeUnit.Nanosecond) => nanoOr(TimeTypes.read(6))
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
