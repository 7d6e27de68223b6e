package io.sparklance.core.schema

import org.apache.arrow.vector.types.pojo.ArrowType
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.UnsupportedFeatureException

class LogicalTypeSuite extends AnyFunSuite {

  /** Every logical type string of shared/spec/schema-format.md, plus the variants pylance writes. */
  val specTypes: Seq[String] = Seq("null", "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
    "uint64", "halffloat", "float", "double", "string", "binary", "large_string", "large_binary", "json",
    "decimal:128:10:2", "decimal:256:20:5", "decimal:128:38:0", "date32:day", "date64:ms", "time32:s", "time32:ms",
    "time64:us", "time64:ns", "duration:s", "duration:ms", "duration:us", "duration:ns", "timestamp:us:UTC",
    "timestamp:ms:America/New_York", "timestamp:ns:-", "timestamp:s:+05:30", "struct", "list", "list.struct",
    "large_list", "large_list.struct", "fixed_size_list:float:128", "fixed_size_list:int32:10",
    "fixed_size_list:lance.bfloat16:256", "fixed_size_binary:16", "dict:string:int16:false", "dict:large_string:int32:true",
    "map")

  test("every logical type of the spec parses and formats back to the same string") {
    specTypes.foreach { s => assert(LogicalType.parse(s).toString == s, s) }
  }

  test("parsed types carry their parameters") {
    import LogicalType._
    assert(LogicalType.parse("uint16") == Int(16, signed = false))
    assert(LogicalType.parse("decimal:256:20:5") == Decimal(256, 20, 5))
    assert(LogicalType.parse("timestamp:ns:-") == Timestamp(TimeUnit.Nanosecond, None))
    assert(LogicalType.parse("timestamp:s:+05:30") == Timestamp(TimeUnit.Second, Some("+05:30")))
    assert(LogicalType.parse("fixed_size_list:lance.bfloat16:256") == FixedSizeList(BFloat16, 256))
    assert(LogicalType.parse("dict:string:int16:false") == Dictionary(Utf8(false), Int(16, true), ordered = false))
    assert(LogicalType.parse("list.struct") == List(large = false, structElement = true))
  }

  test("unknown or malformed type strings are refused, naming the string") {
    Seq("int128", "decimal:64:3:1", "decimal:128:40:2", "fixed_size_list:float", "fixed_size_list:struct:2",
      "timestamp:ps:UTC", "dict:string:float:false", "", "time32:us").foreach { s =>
      val e = intercept[UnsupportedFeatureException](LogicalType.parse(s))
      assert(e.getMessage.contains(s"'$s'"), s)
    }
  }

  test("logical types map to the Arrow types of the spec's conversion table") {
    def arrow(s: String) = ArrowSchemas.arrowType(LogicalType.parse(s))
    assert(arrow("uint32") == new ArrowType.Int(32, false))
    assert(arrow("halffloat").toString == "FloatingPoint(HALF)")
    assert(arrow("large_string") == ArrowType.LargeUtf8.INSTANCE)
    assert(arrow("json") == ArrowType.LargeBinary.INSTANCE)
    assert(arrow("decimal:256:20:5") == new ArrowType.Decimal(20, 5, 256))
    assert(arrow("date64:ms").toString == "Date(MILLISECOND)")
    assert(arrow("time32:ms").toString == "Time(MILLISECOND, 32)")
    assert(arrow("time64:ns").toString == "Time(NANOSECOND, 64)")
    assert(arrow("timestamp:us:UTC").toString == "Timestamp(MICROSECOND, UTC)")
    assert(arrow("timestamp:ns:-").toString == "Timestamp(NANOSECOND, null)")
    assert(arrow("duration:ms").toString == "Duration(MILLISECOND)")
    assert(arrow("fixed_size_list:float:128") == new ArrowType.FixedSizeList(128))
    assert(arrow("fixed_size_binary:16") == new ArrowType.FixedSizeBinary(16))
    assert(arrow("dict:string:int16:false") == ArrowType.Utf8.INSTANCE, "the value type; the key is in the encoding")
    assert(arrow("map") == new ArrowType.Map(false))
  }
}
