package io.sparklance.core.schema

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision, TimeUnit => ArrowTimeUnit}
import org.apache.arrow.vector.types.pojo.{ArrowType, DictionaryEncoding, Field, FieldType, Schema}

import io.sparklance.core.schema.LogicalType._

/**
 * The mapping from Lance schemas to Arrow schemas, as pylance does it (shared/spec/schema-format.md, "Type
 * Conversion Reference"): field names, nullability and metadata carry over; list elements and map entries come
 * from the child fields; fixed-size list elements are named `item` and nullable.
 */
object ArrowSchemas {

  def toArrow(schema: LanceSchema): Schema =
    new Schema(schema.fields.map(toArrow).asJava, strings(schema.metadata).asJava)

  def toArrow(field: LanceField): Field = {
    val meta = strings(field.metadata)
    val children = field.logicalType match {
      case LogicalType.Map =>
        // Arrow requires the entries struct and its key to be non-null.
        val entries = field.children.head
        val kv = entries.children.map(c => if (c == entries.children.head) nonNull(toArrow(c)) else toArrow(c))
        Seq(new Field(entries.name, new FieldType(false, ArrowType.Struct.INSTANCE, null, strings(entries.metadata).asJava),
          kv.asJava))
      case _ => field.children.map(toArrow)
    }
    field.logicalType match {
      case Dictionary(value, key, ordered) =>
        val encoding = new DictionaryEncoding(field.id.toLong, ordered, intType(key))
        new Field(field.name, new FieldType(field.nullable, arrowType(value), encoding, meta.asJava), children.asJava)
      case FixedSizeList(elem, _) =>
        new Field(field.name, new FieldType(field.nullable, arrowType(field.logicalType), null, meta.asJava),
          Seq(fixedSizeListItem(elem)).asJava)
      case Json =>
        // pylance presents Lance's json type as the canonical arrow.json extension over UTF-8 text.
        val ext = meta ++ Predef.Map("ARROW:extension:name" -> "arrow.json", "ARROW:extension:metadata" -> "")
        new Field(field.name, new FieldType(field.nullable, ArrowType.Utf8.INSTANCE, null, ext.asJava), null)
      case lt => new Field(field.name, new FieldType(field.nullable, arrowType(lt), null, meta.asJava), children.asJava)
    }
  }

  /** The `item` child of a fixed-size list: nullable, and itself a fixed-size list for nested vectors. */
  private def fixedSizeListItem(elem: LogicalType): Field = elem match {
    case BFloat16 =>
      new Field("item", new FieldType(true, new ArrowType.FixedSizeBinary(2), null,
        Predef.Map("ARROW:extension:name" -> "lance.bfloat16", "ARROW:extension:metadata" -> "").asJava), null)
    case FixedSizeList(inner, _) =>
      new Field("item", FieldType.nullable(arrowType(elem)), java.util.List.of(fixedSizeListItem(inner)))
    case other => new Field("item", FieldType.nullable(arrowType(other)), null)
  }

  /** The Arrow type of a logical type (for nested types, without children). */
  def arrowType(t: LogicalType): ArrowType = t match {
    case Null => ArrowType.Null.INSTANCE
    case Bool => ArrowType.Bool.INSTANCE
    case i: Int => intType(i)
    case HalfFloat => new ArrowType.FloatingPoint(FloatingPointPrecision.HALF)
    case Float => new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)
    case Double => new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)
    case Utf8(false) => ArrowType.Utf8.INSTANCE
    case Utf8(true) => ArrowType.LargeUtf8.INSTANCE
    case Binary(false) => ArrowType.Binary.INSTANCE
    case Binary(true) | Json => ArrowType.LargeBinary.INSTANCE
    case FixedSizeBinary(w) => new ArrowType.FixedSizeBinary(w)
    case Decimal(bits, p, s) => new ArrowType.Decimal(p, s, bits)
    case Date32 => new ArrowType.Date(DateUnit.DAY)
    case Date64 => new ArrowType.Date(DateUnit.MILLISECOND)
    case tt @ Time(unit) => new ArrowType.Time(arrowUnit(unit), tt.bitWidth)
    case Timestamp(unit, tz) => new ArrowType.Timestamp(arrowUnit(unit), tz.orNull)
    case Duration(unit) => new ArrowType.Duration(arrowUnit(unit))
    case Struct => ArrowType.Struct.INSTANCE
    case List(false, _) => ArrowType.List.INSTANCE
    case List(true, _) => ArrowType.LargeList.INSTANCE
    case FixedSizeList(_, size) => new ArrowType.FixedSizeList(size)
    case BFloat16 => new ArrowType.FixedSizeBinary(2)
    case Dictionary(value, _, _) => arrowType(value)
    case LogicalType.Map => new ArrowType.Map(false)
  }

  private def intType(i: Int): ArrowType.Int = new ArrowType.Int(i.bitWidth, i.signed)

  private def arrowUnit(u: TimeUnit): ArrowTimeUnit = u match {
    case TimeUnit.Second => ArrowTimeUnit.SECOND
    case TimeUnit.Millisecond => ArrowTimeUnit.MILLISECOND
    case TimeUnit.Microsecond => ArrowTimeUnit.MICROSECOND
    case TimeUnit.Nanosecond => ArrowTimeUnit.NANOSECOND
  }

  private def nonNull(f: Field): Field =
    new Field(f.getName, new FieldType(false, f.getType, f.getDictionary, f.getMetadata), f.getChildren)

  private def strings(m: Map[String, Array[Byte]]): Map[String, String] =
    m.map { case (k, v) => k -> new String(v, StandardCharsets.UTF_8) }

}
