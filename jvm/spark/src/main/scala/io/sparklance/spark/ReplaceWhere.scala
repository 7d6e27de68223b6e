package io.sparklance.spark

import io.sparklance.core.InvalidArgumentException

/**
 * The other connector's `REPLACE t WHERE cond AS query`: the rows of `t` matching `cond` are deleted and the query's
 * rows appended, in one new version. It runs as the MERGE it means,
 * {{{
 *   MERGE INTO t USING (query) AS source ON false
 *   WHEN NOT MATCHED THEN INSERT *
 *   WHEN NOT MATCHED BY SOURCE AND (cond) THEN DELETE
 * }}}
 * so it commits as one Lance `Update` (deletion vectors for the matching rows, new fragments for the query's rows)
 * under the concurrent-commit rules of DELETE and MERGE, and a failure leaves the table's version as it was. `cond`
 * may name only the table's columns (Spark resolves a NOT MATCHED BY SOURCE condition against the target); the query's
 * columns are matched to the table's by name, as `INSERT *` does; its rows need not match `cond` (the other connector
 * does not ask it either).
 */
object ReplaceWhere {
  private val Source = "__lance_replace_source"

  /** The MERGE statement of `REPLACE table WHERE rest`, `rest` being `cond AS query`. */
  def merge(table: String, rest: String): String = {
    val (cond, query) = split(rest).getOrElse(throw new LanceSparkException(new InvalidArgumentException(
      s"REPLACE $table WHERE ...: no AS SELECT (or AS WITH / AS (...)) after the condition. Write REPLACE t WHERE " +
        "cond AS SELECT ...")))
    // Spark's grammar takes NOT MATCHED clauses before NOT MATCHED BY SOURCE ones.
    s"MERGE INTO $table USING ($query) AS $Source ON false " +
      s"WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED BY SOURCE AND ($cond) THEN DELETE"
  }

  private val AsQuery = """(?is)\s+AS\s+(?=SELECT\b|WITH\b|\()""".r

  /**
   * `cond` and `query` of `cond AS query`: the first ` AS SELECT` / ` AS WITH` / ` AS (` outside parentheses and quotes
   * (so `CAST(x AS ...)` and `'... AS SELECT'` stay in the condition).
   */
  private[spark] def split(rest: String): Option[(String, String)] = {
    var depth = 0
    var quote = 0.toChar
    var found: Option[(String, String)] = None
    var i = 0
    while (found.isEmpty && i < rest.length) {
      val c = rest.charAt(i)
      if (quote != 0) {
        if (c == '\\' && quote != '`') i += 1
        else if (c == quote) quote = 0
      } else c match {
        case '\'' | '"' | '`' => quote = c
        case '(' => depth += 1
        case ')' => depth -= 1
        case _ if depth == 0 && c.isWhitespace && rest.substring(0, i).trim.nonEmpty =>
          found = AsQuery.findPrefixMatchOf(rest.substring(i)).map(m => (rest.substring(0, i).trim, rest.substring(i + m.end).trim))
        case _ =>
      }
      i += 1
    }
    found
  }
}
