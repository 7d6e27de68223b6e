package io.sparklance.core.schema

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.util.Parse

/**
 * A Lance logical type: the `logical_type` string of a schema field (shared/spec/schema-format.md, "Data Types"),
 * parsed. `LogicalType.parse(t.toString) == t` for every type.
 */
sealed trait LogicalType {
  /** The canonical logical type string. */
  override def toString: String = LogicalType.format(this)

  /** True for types whose values are described by child fields (struct, lists, map). */
  def isNested: Boolean = false
}

object LogicalType {

  sealed abstract class TimeUnit(val symbol: String) extends Serializable
  object TimeUnit {
    case object Second extends TimeUnit("s")
    case object Millisecond extends TimeUnit("ms")
    case object Microsecond extends TimeUnit("us")
    case object Nanosecond extends TimeUnit("ns")
    val all: Seq[TimeUnit] = Seq(Second, Millisecond, Microsecond, Nanosecond)
    def parse(s: String): Option[TimeUnit] = all.find(_.symbol == s)
  }

  case object Null extends LogicalType
  case object Bool extends LogicalType
  /** Integers of 8, 16, 32 or 64 bits. */
  final case class Int(bitWidth: scala.Int, signed: Boolean) extends LogicalType
  case object HalfFloat extends LogicalType
  case object Float extends LogicalType
  case object Double extends LogicalType
  /** UTF-8 strings; `large` means 64-bit offsets. */
  final case class Utf8(large: Boolean) extends LogicalType
  final case class Binary(large: Boolean) extends LogicalType
  /** JSON text stored as large binary (Lance's `json` logical type). */
  case object Json extends LogicalType
  final case class FixedSizeBinary(byteWidth: scala.Int) extends LogicalType
  /** Decimal of 128 or 256 bits. */
  final case class Decimal(bitWidth: scala.Int, precision: scala.Int, scale: scala.Int) extends LogicalType
  case object Date32 extends LogicalType
  case object Date64 extends LogicalType
  /** time32 (s, ms) or time64 (us, ns): time of day. */
  final case class Time(unit: TimeUnit) extends LogicalType {
    def bitWidth: scala.Int = if (unit == TimeUnit.Second || unit == TimeUnit.Millisecond) 32 else 64
  }
  /** A timestamp; `timezone` None means a wall-clock time without zone (`-` in the string). */
  final case class Timestamp(unit: TimeUnit, timezone: Option[String]) extends LogicalType
  final case class Duration(unit: TimeUnit) extends LogicalType
  case object Struct extends LogicalType { override def isNested = true }
  /**
   * A variable-length list; the element is the field's one child. `structElement` records the `.struct` suffix
   * Lance writes when the element is a struct.
   */
  final case class List(large: Boolean, structElement: Boolean) extends LogicalType { override def isNested = true }
  /** A fixed-size list; the element type is part of the type string, there is no child field. */
  final case class FixedSizeList(element: LogicalType, size: scala.Int) extends LogicalType
  /** bfloat16, only as the element of a fixed-size list (`fixed_size_list:lance.bfloat16:N`). */
  case object BFloat16 extends LogicalType
  final case class Dictionary(value: LogicalType, key: Int, ordered: Boolean) extends LogicalType
  /** A map; the one child is the `entries` struct of key and value. */
  case object Map extends LogicalType { override def isNested = true }

  private val simple: Predef.Map[String, LogicalType] = Predef.Map(
    "null" -> Null, "bool" -> Bool,
    "int8" -> Int(8, true), "uint8" -> Int(8, false), "int16" -> Int(16, true), "uint16" -> Int(16, false),
    "int32" -> Int(32, true), "uint32" -> Int(32, false), "int64" -> Int(64, true), "uint64" -> Int(64, false),
    "halffloat" -> HalfFloat, "float" -> Float, "double" -> Double,
    "string" -> Utf8(false), "large_string" -> Utf8(true), "binary" -> Binary(false),
    "large_binary" -> Binary(true), "json" -> Json,
    "date32:day" -> Date32, "date64:ms" -> Date64,
    "time32:s" -> Time(TimeUnit.Second), "time32:ms" -> Time(TimeUnit.Millisecond),
    "time64:us" -> Time(TimeUnit.Microsecond), "time64:ns" -> Time(TimeUnit.Nanosecond),
    "duration:s" -> Duration(TimeUnit.Second), "duration:ms" -> Duration(TimeUnit.Millisecond),
    "duration:us" -> Duration(TimeUnit.Microsecond), "duration:ns" -> Duration(TimeUnit.Nanosecond),
    "struct" -> Struct, "list" -> List(false, false), "list.struct" -> List(false, true),
    "large_list" -> List(true, false), "large_list.struct" -> List(true, true), "map" -> Map,
    "lance.bfloat16" -> BFloat16)

  /**
   * Parses a logical type string; throws [[UnsupportedFeatureException]] naming the string if it is unknown (callers
   * that know the file tell a damaged string from a newer type with [[isUnknownTypeName]]).
   */
  def parse(s: String): LogicalType = tryParse(s).getOrElse(
    throw new UnsupportedFeatureException(s"Unsupported Lance logical type '$s'. This version of sparklance does " +
      "not know this type; upgrade sparklance or drop the column."))

  // The first part of every type string this version parses: a string that starts with one of these and still does
  // not parse has parameters no Lance writer produces.
  private val knownHeads: Set[String] = simple.keySet.map(_.split(":", -1).head) ++
    Set("fixed_size_list", "fixed_size_binary", "decimal", "timestamp", "dict")
  private val Identifier = "[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*".r
  private val Parameter = "[A-Za-z0-9_.+\\-/]+".r

  /**
   * True if `s`, which does not parse, is still shaped like the type string of a type newer than this version: a
   * lower-case identifier this version does not know, with `:`-separated parameters of letters, digits and
   * `_ . + - /`. A string with other bytes, or a known type with parameters out of range, is damage, not a newer
   * type.
   */
  def isUnknownTypeName(s: String): Boolean = {
    val parts = s.split(":", -1)
    Identifier.pattern.matcher(parts.head).matches() && !knownHeads.contains(parts.head) &&
      parts.tail.forall(Parameter.pattern.matcher(_).matches())
  }

  def tryParse(s: String): Option[LogicalType] = simple.get(s).orElse {
    val parts = s.split(":", -1).toSeq
    def int(x: String): Option[scala.Int] = Parse.int(x)
    parts.head match {
      case "fixed_size_list" if parts.length >= 3 =>
        for {
          size <- int(parts.last) if size >= 0
          elem <- tryParse(parts.slice(1, parts.length - 1).mkString(":")) if !elem.isNested
        } yield FixedSizeList(elem, size)
      case "fixed_size_binary" if parts.length == 2 => int(parts(1)).filter(_ >= 0).map(FixedSizeBinary.apply)
      case "decimal" if parts.length == 4 =>
        for {
          bits <- int(parts(1)) if bits == 128 || bits == 256
          p <- int(parts(2)) if p >= 1 && p <= (if (bits == 128) 38 else 76)
          sc <- int(parts(3)) if sc <= p
        } yield Decimal(bits, p, sc)
      case "timestamp" if parts.length >= 3 =>
        val tz = parts.drop(2).mkString(":")
        TimeUnit.parse(parts(1)).map(u => Timestamp(u, if (tz == "-") None else Some(tz)))
      case "dict" if parts.length == 4 =>
        for {
          value <- tryParse(parts(1)) if !value.isNested
          key <- tryParse(parts(2)).collect { case i: Int => i }
          ordered <- Parse.boolean(parts(3))
        } yield Dictionary(value, key, ordered)
      case _ => None
    }
  }

  def format(t: LogicalType): String = t match {
    case Int(bits, signed) => (if (signed) "int" else "uint") + bits
    case Utf8(large) => if (large) "large_string" else "string"
    case Binary(large) => if (large) "large_binary" else "binary"
    case FixedSizeBinary(w) => s"fixed_size_binary:$w"
    case Decimal(bits, p, s) => s"decimal:$bits:$p:$s"
    case Time(unit) => s"time${if (unit == TimeUnit.Second || unit == TimeUnit.Millisecond) 32 else 64}:${unit.symbol}"
    case Timestamp(unit, tz) => s"timestamp:${unit.symbol}:${tz.getOrElse("-")}"
    case Duration(unit) => s"duration:${unit.symbol}"
    case List(large, st) => (if (large) "large_list" else "list") + (if (st) ".struct" else "")
    case FixedSizeList(elem, size) => s"fixed_size_list:${format(elem)}:$size"
    case Dictionary(v, k, ordered) => s"dict:${format(v)}:${format(k)}:$ordered"
    case other => simple.collectFirst { case (k, v) if v == other => k }.get
  }
}
