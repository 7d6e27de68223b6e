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
      case BFloat16 =>
        // A bfloat16 column outside a fixed-size list: pylance's extension over 2-byte fixed-size binaries.
        new Field(field.name, new FieldType(field.nullable, arrowType(BFloat16), null, (meta ++ BFloat16Extension).asJava), null)
      case lt => new Field(field.name, new FieldType(field.nullable, arrowType(lt), null, meta.asJava), children.asJava)
    }
  }

  private val BFloat16Extension = Predef.Map("ARROW:extension:name" -> "lance.bfloat16", "ARROW:extension:metadata" -> "")

  /** The `item` child of a fixed-size list: nullable, and itself a fixed-size list for nested vectors. */
  /**
   * The Arrow field a field's values are read as and written from: [[toArrow]] without dictionary encodings (readers
   * decode dictionaries; writers take plain values).
   */
  def plain(field: LanceField): Field = withoutDictionaries(toArrow(field))

  private def withoutDictionaries(f: Field): Field = {
    val ft = new FieldType(f.isNullable, f.getType, null, f.getMetadata)
    new Field(f.getName, ft, f.getChildren.asScala.map(withoutDictionaries).asJava)
  }

  private def fixedSizeListItem(elem: LogicalType): Field = elem match {
    case BFloat16 => new Field("item", new FieldType(true, new ArrowType.FixedSizeBinary(2), null, BFloat16Extension.asJava), null)
    case FixedSizeList(inner, _) =>
      new Field("item", FieldType.nullable(arrowType(elem)), java.util.Collections.singletonList(fixedSizeListItem(inner)))
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

  /**
   * The Lance schema of an Arrow schema, as pylance creates it for a new table: field ids assigned depth first from
   * `firstId`, logical types per the same mapping in reverse. Arrow types Lance cannot store are an
   * [[io.sparklance.core.UnsupportedFeatureException]] naming the field.
   */
  def fromArrow(schema: Schema, firstId: scala.Int = 0): LanceSchema = {
    var next = firstId
    val protos = IndexedSeq.newBuilder[io.sparklance.proto.FileProtos.Field]
    def add(f: Field, parent: scala.Int, path: String): Unit = {
      val id = next
      next += 1
      val b = io.sparklance.proto.FileProtos.Field.newBuilder().setName(f.getName).setId(id).setParentId(parent)
        .setNullable(f.isNullable)
      // pylance stores a bfloat16 column as `fixed_size_binary:2` with the extension in the field metadata (kept
      // below); `lance.bfloat16` is a logical type only as the element of a fixed-size list.
      logicalType(f, path) match {
        case BFloat16 => b.setLogicalType(LogicalType.format(FixedSizeBinary(2))).putAllMetadata(BFloat16Extension.map {
          case (k, v) => k -> com.google.protobuf.ByteString.copyFromUtf8(v) }.asJava)
        case lt => b.setLogicalType(LogicalType.format(lt))
      }
      Option(f.getMetadata).foreach(_.asScala.foreach { case (k, v) =>
        b.putMetadata(k, com.google.protobuf.ByteString.copyFromUtf8(v))
      })
      if (f.getDictionary != null) b.setDictionary(io.sparklance.proto.FileProtos.Dictionary.newBuilder())
      protos += b.build()
      f.getType match {
        case _: ArrowType.FixedSizeList => // the element is part of the logical type
        case _ => f.getChildren.asScala.foreach(c => add(c, id, s"$path.${c.getName}"))
      }
    }
    schema.getFields.asScala.foreach(f => add(f, -1, f.getName))
    LanceSchema.fromProtos("an Arrow schema", protos.result(), Option(schema.getCustomMetadata)
      .map(_.asScala.map { case (k, v) => k -> v.getBytes(StandardCharsets.UTF_8) }.toMap).getOrElse(Predef.Map.empty))
  }

  private def logicalType(f: Field, path: String): LogicalType = {
    def unsupported(what: String): Nothing = throw new io.sparklance.core.UnsupportedFeatureException(
      s"Column '$path' has Arrow type $what, which Lance cannot store. Cast it to a supported type first.")
    val ext = Option(f.getMetadata).flatMap(m => Option(m.get("ARROW:extension:name")))
    if (ext.contains("arrow.json")) return Json
    if (ext.contains("lance.bfloat16")) return BFloat16
    val t = f.getType
    val base: LogicalType = t match {
      case _: ArrowType.Null => Null
      case _: ArrowType.Bool => Bool
      case i: ArrowType.Int => Int(i.getBitWidth, i.getIsSigned)
      case fp: ArrowType.FloatingPoint => fp.getPrecision match {
        case FloatingPointPrecision.HALF => HalfFloat
        case FloatingPointPrecision.SINGLE => Float
        case FloatingPointPrecision.DOUBLE => Double
      }
      case _: ArrowType.Utf8 => Utf8(false)
      case _: ArrowType.LargeUtf8 => Utf8(true)
      case _: ArrowType.Binary => Binary(false)
      case _: ArrowType.LargeBinary => Binary(true)
      case b: ArrowType.FixedSizeBinary => FixedSizeBinary(b.getByteWidth)
      case d: ArrowType.Decimal => Decimal(d.getBitWidth, d.getPrecision, d.getScale)
      case d: ArrowType.Date => if (d.getUnit == DateUnit.DAY) Date32 else Date64
      case tt: ArrowType.Time => Time(lanceUnit(tt.getUnit))
      case ts: ArrowType.Timestamp => Timestamp(lanceUnit(ts.getUnit), Option(ts.getTimezone))
      case d: ArrowType.Duration => Duration(lanceUnit(d.getUnit))
      case _: ArrowType.Struct => Struct
      case _: ArrowType.List => List(false, f.getChildren.get(0).getType.isInstanceOf[ArrowType.Struct])
      case _: ArrowType.LargeList => List(true, f.getChildren.get(0).getType.isInstanceOf[ArrowType.Struct])
      case _: ArrowType.Map => Map
      case fsl: ArrowType.FixedSizeList =>
        val item = f.getChildren.get(0)
        val elem = logicalType(item, s"$path.${item.getName}")
        if (elem.isNested) unsupported(s"fixed_size_list<${item.getType}>")
        FixedSizeList(elem, fsl.getListSize)
      case other => unsupported(other.toString)
    }
    Option(f.getDictionary).map(d => Dictionary(base, Int(d.getIndexType.getBitWidth, d.getIndexType.getIsSigned), d.isOrdered))
      .getOrElse(base)
  }

  private def lanceUnit(u: ArrowTimeUnit): TimeUnit = u match {
    case ArrowTimeUnit.SECOND => TimeUnit.Second
    case ArrowTimeUnit.MILLISECOND => TimeUnit.Millisecond
    case ArrowTimeUnit.MICROSECOND => TimeUnit.Microsecond
    case ArrowTimeUnit.NANOSECOND => TimeUnit.Nanosecond
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
