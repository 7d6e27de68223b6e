package io.sparklance.spark

import org.scalatest.funsuite.AnyFunSuite

class ReadOptionsSuite extends AnyFunSuite {

  private val none = Map.empty[String, String]

  test("defaults") {
    assert(ReadOptions(none, none) ==
      ReadOptions(8192, None, columnar = true))
  }

  test("a read option wins over a table property, which wins over the default") {
    val table = Map("rows_per_partition" -> "1000", "Batch_Size" -> "64", "columnar" -> "false")
    assert(ReadOptions(none, table) == ReadOptions(64, Some(1000L), columnar = false))
    assert(ReadOptions(Map("ROWS_PER_PARTITION" -> "10", "columnar" -> "true"), table) == ReadOptions(64, Some(10L), columnar = true))
  }

  test("an invalid value names where it was given") {
    val fromTable = intercept[LanceSparkException](ReadOptions(none, Map("rows_per_partition" -> "many")))
    assert(fromTable.getMessage.contains("Table property rows_per_partition must be a positive number, not 'many'."))
    val fromOption = intercept[LanceSparkException](ReadOptions(Map("columnar" -> "maybe"), Map("columnar" -> "true")))
    assert(fromOption.getMessage.contains("Option columnar must be true or false, not 'maybe'."))
  }
}
