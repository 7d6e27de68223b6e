package io.sparklance.spark

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.format.TestManifests.field
import io.sparklance.core.schema.LanceSchema
import io.sparklance.spark.SparkSchemas.NanosecondMapping

class SparkSchemasSuite extends AnyFunSuite {

  private def sparkType(logical: String, nanos: NanosecondMapping = NanosecondMapping.TruncateToMicros): DataType =
    SparkSchemas.toSpark(LanceSchema.fromProtos("m", Seq(field(0, -1, "c", logical)), Map.empty), nanos).head.dataType

  test("scalar types map without narrowing") {
    val expected = Seq(
      "null" -> NullType, "bool" -> BooleanType, "int8" -> ByteType, "int16" -> ShortType, "int32" -> IntegerType,
      "int64" -> LongType, "uint8" -> ShortType, "uint16" -> IntegerType, "uint32" -> LongType,
      "uint64" -> DecimalType(20, 0), "halffloat" -> FloatType, "float" -> FloatType, "double" -> DoubleType,
      "string" -> StringType, "large_string" -> StringType, "json" -> StringType, "binary" -> BinaryType,
      "large_binary" -> BinaryType, "fixed_size_binary:16" -> BinaryType, "decimal:128:10:2" -> DecimalType(10, 2),
      "decimal:256:38:5" -> DecimalType(38, 5), "date32:day" -> DateType, "date64:ms" -> DateType,
      "time32:s" -> TimeType(0), "time32:ms" -> TimeType(3), "time64:us" -> TimeType(6),
      "timestamp:us:UTC" -> TimestampType, "timestamp:ms:-" -> TimestampNTZType,
      "duration:ms" -> DayTimeIntervalType(DayTimeIntervalType.DAY, DayTimeIntervalType.SECOND),
      "dict:string:int16:false" -> StringType,
      "fixed_size_list:float:128" -> ArrayType(FloatType, containsNull = true),
      "fixed_size_list:lance.bfloat16:8" -> ArrayType(FloatType, containsNull = true))
    expected.foreach { case (l, t) => assert(sparkType(l) == t, l) }
  }

  test("nanosecond types truncate to microseconds by default, or stay exact as LONG") {
    assert(sparkType("timestamp:ns:UTC") == TimestampType)
    assert(sparkType("timestamp:ns:-") == TimestampNTZType)
    assert(sparkType("time64:ns") == TimeType(6))
    Seq("timestamp:ns:UTC", "time64:ns", "duration:ns", "fixed_size_list:timestamp:ns:-:2").foreach { l =>
      val t = sparkType(l, NanosecondMapping.AsLong)
      assert(t == LongType || t == ArrayType(LongType, containsNull = true), l)
    }
    assert(sparkType("timestamp:us:UTC", NanosecondMapping.AsLong) == TimestampType)
  }

  test("nested types keep names, nullability, and the Lance field ids in metadata") {
    val s = SparkSchemas.toSpark(LanceSchema.fromProtos("m", Seq(
      field(0, -1, "s", "struct"), field(1, 0, "x", "int32", nullable = false), field(2, -1, "l", "list"),
      field(3, 2, "item", "string", nullable = false), field(4, -1, "m", "map"),
      field(5, 4, "entries", "struct", nullable = false), field(6, 5, "key", "string", nullable = false),
      field(7, 5, "value", "int64")), Map.empty))
    assert(s("s").dataType == StructType(Seq(StructField("x", IntegerType, nullable = false,
      new MetadataBuilder().putLong("lance.field_id", 1).putString("lance.logical_type", "int32").build()))))
    assert(s("l").dataType == ArrayType(StringType, containsNull = false))
    assert(s("m").dataType == MapType(StringType, LongType, valueContainsNull = true))
    assert(s("m").metadata.getLong(SparkSchemas.FieldIdKey) == 4)
    assert(s("m").metadata.getString(SparkSchemas.LogicalTypeKey) == "map")
  }

  test("decimals wider than Spark's 38 digits read as their exact text") {
    assert(sparkType("decimal:256:60:2") == StringType)
    assert(sparkType("decimal:256:38:2") == DecimalType(38, 2))
  }
}
