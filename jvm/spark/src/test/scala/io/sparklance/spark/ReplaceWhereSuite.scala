package io.sparklance.spark

import org.scalatest.funsuite.AnyFunSuite

class ReplaceWhereSuite extends AnyFunSuite {

  test("the condition ends at the first AS SELECT / AS WITH / AS ( outside parentheses and quotes") {
    val cases = Seq(
      "dt = '2026-08-01' AS SELECT id FROM s" -> ("dt = '2026-08-01'", "SELECT id FROM s"),
      "CAST(v AS INT) > 1 AND x = 'a AS SELECT b'\n  AS  WITH q AS (SELECT 1 AS a) SELECT * FROM q" ->
        ("CAST(v AS INT) > 1 AND x = 'a AS SELECT b'", "WITH q AS (SELECT 1 AS a) SELECT * FROM q"),
      "`as select` IS NULL as (SELECT 1)" -> ("`as select` IS NULL", "(SELECT 1)"),
      "x = 'it\\'s' AS SELECT 2" -> ("x = 'it\\'s'", "SELECT 2"))
    cases.foreach { case (rest, want) => assert(ReplaceWhere.split(rest).contains(want), rest) }
  }

  test("a statement without AS SELECT is refused, saying what is missing") {
    assert(ReplaceWhere.split("dt = 'AS SELECT'").isEmpty)
    assert(ReplaceWhere.split("AS SELECT 1").isEmpty)
    val e = intercept[LanceSparkException](ReplaceWhere.merge("t", "dt = 1"))
    assert(e.getMessage.contains("no AS SELECT"))
  }

  test("the MERGE deletes the matching rows and inserts the query's") {
    assert(ReplaceWhere.merge("lance.db.e", "dt > 1 AS SELECT * FROM s") == "MERGE INTO lance.db.e USING " +
      "(SELECT * FROM s) AS __lance_replace_source ON false WHEN NOT MATCHED THEN INSERT * " +
      "WHEN NOT MATCHED BY SOURCE AND (dt > 1) THEN DELETE")
  }
}
