package io.sparklance.spark

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

class ColumnPropertiesSuite extends AnyFunSuite {

  private val columns = Seq("id", "name")

  test("a column property of a column the table has is refused on an existing table, naming both") {
    val e = intercept[LanceSparkException](
      ColumnProperties.checkSetOnExistingTable("NAME.lance.encoding", Some("blob"), columns, "lance.db.t"))
    assert(e.getMessage.contains("Table property NAME.lance.encoding cannot be set or removed on lance.db.t: column " +
      "name exists"))
    intercept[LanceSparkException](ColumnProperties.checkSetOnExistingTable("name.arrow.float16", None, columns, "t"))
  }

  test("a column property of a column not added yet is checked like one at CREATE") {
    ColumnProperties.checkSetOnExistingTable("content.lance.encoding", Some("BLOB"), columns, "t")
    ColumnProperties.checkSetOnExistingTable("emb.arrow.fixed-size-list.size", Some("8"), columns, "t")
    ColumnProperties.checkSetOnExistingTable("emb.arrow.float16", None, columns, "t")
    val bad = intercept[LanceSparkException](
      ColumnProperties.checkSetOnExistingTable("content.lance.encoding", Some("rle"), columns, "t"))
    assert(bad.getMessage.contains("Table property content.lance.encoding must be 'blob', not 'rle'."))
    val unknown = intercept[LanceSparkException](
      ColumnProperties.checkSetOnExistingTable("content.lance.dict-divisor", Some("2"), columns, "t"))
    assert(unknown.getMessage.contains("Table property content.lance.dict-divisor is not supported"))
  }

  test("properties kept in a table's config shape only the columns they name") {
    val config = Map("content.lance.encoding" -> "blob", "emb.arrow.fixed-size-list.size" -> "4", "team" -> "x")
    val (shaped, rest) = ColumnProperties(StructType(Seq(StructField("content", BinaryType))), config)
    assert(shaped("content").metadata.getString(ColumnProperties.BlobKey) == "true")
    assert(rest == Map("emb.arrow.fixed-size-list.size" -> "4", "team" -> "x"))
  }

  test("float16 vectors are made of FLOAT or DOUBLE arrays, nothing else") {
    val props = Map("v.arrow.fixed-size-list.size" -> "2", "v.arrow.float16" -> "true")
    Seq(FloatType, DoubleType).foreach { t =>
      if (HalfFloats.supported) {
        val (shaped, _) = ColumnProperties(StructType(Seq(StructField("v", ArrayType(t)))), props)
        assert(shaped("v").metadata.getString(ColumnProperties.Float16Key) == "true")
      }
    }
    val e = intercept[LanceSparkException](ColumnProperties(StructType(Seq(StructField("v", ArrayType(IntegerType)))), props))
    assert(e.getMessage.contains("Column v: arrow.float16 applies to ARRAY<FLOAT> and ARRAY<DOUBLE> columns"))
  }
}
