package io.sparklance.core.schema

import scala.jdk.CollectionConverters._

import org.apache.arrow.vector.types.pojo.ArrowType
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CorruptFileException, UnsupportedFeatureException}
import io.sparklance.core.format.TestManifests.field

class LanceSchemaSuite extends AnyFunSuite {

  // a: int32, b: struct { c: list<int32>, d: int32 }, m: map<string, double>, v: fixed_size_list<float, 4>,
  // k: dictionary<string, int16>
  private val protos = Seq(
    field(0, -1, "a", "int32", nullable = false), field(1, -1, "b", "struct"), field(2, 1, "c", "list"),
    field(3, 2, "item", "int32"), field(4, 1, "d", "int32"), field(5, -1, "m", "map"),
    field(6, 5, "entries", "struct", nullable = false), field(7, 6, "key", "string", nullable = false),
    field(8, 6, "value", "double"), field(9, -1, "v", "fixed_size_list:float:4"),
    field(10, -1, "k", "dict:string:int16:false"))

  test("the flat depth-first field list becomes a tree, and flattens back in the same order") {
    val s = LanceSchema.fromProtos("m", protos, Map.empty)
    assert(s.fields.map(_.name) == Seq("a", "b", "m", "v", "k"))
    assert(s.field("b").get.children.map(_.name) == Seq("c", "d"))
    assert(s.field(3).map(_.name).contains("item"))
    assert(s.allFields.map(_.id) == (0 to 10))
    assert(s.toProtos == protos)
    assert(s.maxFieldId == 10)
  }

  test("the Arrow schema has the shape pyarrow gives the same table") {
    val arrow = ArrowSchemas.toArrow(LanceSchema.fromProtos("m", protos, Map("k" -> "v".getBytes)))
    assert(arrow.getCustomMetadata.asScala == Map("k" -> "v"))
    val f = arrow.getFields.asScala.map(x => x.getName -> x).toMap
    assert(!f("a").isNullable && f("a").getType == new ArrowType.Int(32, true))
    assert(f("b").getChildren.asScala.map(_.getName) == Seq("c", "d"))
    assert(f("b").getChildren.get(0).getChildren.get(0).getType == new ArrowType.Int(32, true))
    val entries = f("m").getChildren.get(0)
    assert(entries.getName == "entries" && !entries.isNullable)
    assert(entries.getChildren.asScala.map(c => c.getName -> c.isNullable) == Seq("key" -> false, "value" -> true))
    val item = f("v").getChildren.get(0)
    assert(item.getName == "item" && item.isNullable && item.getType.toString == "FloatingPoint(SINGLE)")
    assert(f("k").getDictionary.getIndexType == new ArrowType.Int(16, true) && f("k").getType == ArrowType.Utf8.INSTANCE)
  }

  test("structural damage in the field list is corruption, naming the source and field") {
    def err(ps: Seq[io.sparklance.proto.FileProtos.Field]) = intercept[CorruptFileException](LanceSchema.fromProtos("x.manifest", ps, Map.empty)).getMessage
    assert(err(protos :+ field(3, -1, "dup", "int32")).contains("field id 3 twice"))
    assert(err(protos :+ field(11, 42, "orphan", "int32")).contains("parent id 42"))
    assert(err(protos :+ field(11, 3, "under_leaf", "int32")).contains("'item' (id 3) of type 'int32' has 1 child"))
    assert(err(Seq(field(0, 1, "x", "struct"), field(1, 0, "y", "struct"))).contains("not reachable"))
  }

  test("an unknown logical type names the field") {
    val e = intercept[UnsupportedFeatureException](
      LanceSchema.fromProtos("x.manifest", Seq(field(0, -1, "weird", "quaternion")), Map.empty))
    assert(e.getMessage.contains("field 'weird' (id 0)") && e.getMessage.contains("'quaternion'"))
  }

  test("a damaged logical type name is corruption; a well-formed unknown one is unsupported") {
    def corrupt(t: String) = intercept[CorruptFileException](
      LanceSchema.fromProtos("x.manifest", Seq(field(0, -1, "c", t)), Map.empty)).getMessage
    // Bit flips of real names: bytes outside the grammar, or a known type with parameters no writer produces.
    assert(corrupt("in\u0000t32") == "Cannot read x.manifest: field 'c' (id 0) has logical type 'in\\u0000t32', " +
      "which is not a well-formed Lance logical type. The file is damaged or was not written by a Lance writer; " +
      "restore it from a backup or check out an earlier version of the table.")
    assert(corrupt("Int32").contains("'Int32'"))
    assert(corrupt("strinc\u00e7").contains("'strinc\u00e7'"))
    assert(corrupt("fixed_size_list:float:-4").contains("fixed_size_list:float:-4"))
    assert(corrupt("decimal:128:99:2").contains("decimal:128:99:2"))
    assert(corrupt("int32:x").contains("int32:x"))
    val e = intercept[UnsupportedFeatureException](
      LanceSchema.fromProtos("x.manifest", Seq(field(0, -1, "c", "geo.point:wgs84")), Map.empty))
    assert(e.getMessage.contains("'geo.point:wgs84', which this version of sparklance does not support"))
  }
}
