package io.sparklance.spark

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.connector.catalog.Identifier
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.sparklance.PlanFrames
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.core.InvalidArgumentException

/**
 * The evaluated arguments of one call of a table function (`search`, `hybrid_search`), by name, with typed getters
 * whose errors name the function and the argument. [[TableFunctionArguments.of]] reads them from the call's named
 * and positional arguments.
 */
private[spark] final class TableFunctionArguments(function: String, val values: Map[String, (Any, DataType)]) {
  private def get(k: String): Option[(Any, DataType)] = values.get(k).filter(_._1 != null)

  def has(k: String): Boolean = get(k).isDefined

  def raw(k: String): Option[(Any, DataType)] = get(k)

  def string(k: String): Option[String] = get(k).map {
    case (s: UTF8String, _) => s.toString
    case (v, t) => invalid(s"argument '$k' must be a string, not ${t.catalogString} $v.")
  }

  def long(k: String): Option[Long] = get(k).map {
    case (v: java.lang.Number, ByteType | ShortType | IntegerType | LongType) => v.longValue()
    case (d: Decimal, _) if d.toBigDecimal.isWhole => d.toLong
    case (v, t) => invalid(s"argument '$k' must be a whole number, not ${t.catalogString} $v.")
  }

  def double(k: String): Option[Double] = get(k).map {
    case (v: java.lang.Number, _: NumericType) => v.doubleValue()
    case (d: Decimal, _) => d.toDouble
    case (v, t) => invalid(s"argument '$k' must be a number, not ${t.catalogString} $v.")
  }

  def bool(k: String): Option[Boolean] = get(k).map {
    case (b: java.lang.Boolean, BooleanType) => b.booleanValue()
    case (v, t) => invalid(s"argument '$k' must be true or false, not ${t.catalogString} $v.")
  }

  /** A whole number from 1 to Int.MaxValue. */
  def positive(k: String): Option[Int] = long(k).map { n =>
    if (n <= 0 || n > Int.MaxValue) invalid(s"argument '$k' must be positive and at most ${Int.MaxValue}, not $n.")
    n.toInt
  }

  /** A whole number from 0 to Int.MaxValue. */
  def count(k: String): Option[Int] = long(k).map { n =>
    if (n < 0 || n > Int.MaxValue) invalid(s"argument '$k' must be between 0 and ${Int.MaxValue}, not $n.")
    n.toInt
  }

  /** A table version: a number, or a tag's name. */
  def version(k: String): Option[String] = get(k).map {
    case (s: UTF8String, _) => s.toString
    case _ => long(k).get.toString
  }

  def strings(k: String): Option[Seq[String]] = get(k).map {
    case (a: ArrayData, ArrayType(StringType, _)) =>
      (0 until a.numElements()).map { i =>
        if (a.isNullAt(i)) invalid(s"argument '$k' holds a null.")
        a.getUTF8String(i).toString
      }
    case (_, t) => invalid(s"argument '$k' must be an array of strings, not ${t.catalogString}.")
  }

  def invalid(detail: String): Nothing = throw new InvalidArgumentException(s"$function: $detail")
}

private[spark] object TableFunctionArguments {

  /**
   * The arguments of a call: named ones (`name => value`, names case-insensitive, `aliases` mapping other names to
   * the canonical ones) and positional ones, in the order of `parameters`, or of `shortForm` when the call is
   * exactly that many positional arguments and `isShortForm` says so. Unknown, repeated or missing (`required`)
   * arguments and arguments that are not constants are errors naming the function.
   */
  def of(function: String, args: Seq[Expression], parameters: Seq[String], aliases: Map[String, String],
      required: Seq[String], shortForm: Option[(Seq[String], Seq[Expression] => Boolean)] = None): TableFunctionArguments = {
    def invalid(detail: String): Nothing = throw new InvalidArgumentException(s"$function: $detail")
    val positional = args.forall(NamedArgument.unapply(_).isEmpty)
    val order = shortForm.collect { case (names, test) if positional && args.size == names.size && test(args) => names }
      .getOrElse(parameters)
    var named = false
    val pairs = args.zipWithIndex.map {
      case (NamedArgument(key, value), _) =>
        named = true
        key.toLowerCase(Locale.ROOT) -> value
      case (value, i) =>
        if (named) invalid(s"positional argument ${i + 1} follows a named one; name it too (the arguments are ${parameters.mkString(", ")}).")
        if (i >= order.size) invalid(s"there are at most ${parameters.size} arguments (${parameters.mkString(", ")}).")
        order(i) -> value
    }.map { case (k, v) => aliases.getOrElse(k, k) -> v }
    pairs.map(_._1).groupBy(identity).collect { case (k, vs) if vs.size > 1 => invalid(s"argument '$k' is given ${vs.size} times.") }
    pairs.map(_._1).filterNot(parameters.contains).foreach { k =>
      invalid(s"there is no argument '$k'; the arguments are ${(parameters ++ aliases.keys).mkString(", ")}.")
    }
    val supplied = pairs.map { case (k, e) =>
      if (!e.foldable) invalid(s"argument '$k' must be a constant, not ${e.sql}.")
      (k, (e.eval(InternalRow.empty), e.dataType))
    }.toMap
    required.filterNot(k => supplied.get(k).exists(_._1 != null)).foreach(k => invalid(s"the argument '$k' is required."))
    new TableFunctionArguments(function, supplied)
  }
}

/** How the search table functions load the table they search. */
private[spark] object SearchTables {

  /** `table` quoted for SQL text. */
  def sqlName(table: Seq[String]): String = table.map(p => "`" + p.replace("`", "``") + "`").mkString(".")

  /**
   * The table (at `version`) with its columns, `_rowid` and `_fragid`, resolved here: left unresolved, a
   * `lance.`/path`` name would be taken for a query on files by a rule that runs before the catalogs see it. A name
   * in one of the session's Lance catalogs is loaded from it, as Spark's analysis of a query on it would load it,
   * without that analysis; any other name is resolved by Spark's analysis of such a query.
   */
  def relation(spark: SparkSession, table: Seq[String], version: Option[String]): LogicalPlan = {
    def analyzed(): LogicalPlan = {
      val asOf = version.fold("")(v => s" VERSION AS OF '${v.replace("'", "\\'")}'")
      spark.sql(s"SELECT *, _rowid, _fragid FROM ${sqlName(table)}$asOf").queryExecution.analyzed
    }
    table match {
      case Seq(name, parts @ _*) if parts.nonEmpty => PlanFrames.catalog(spark, name) match {
        case Some(catalog: LanceCatalog) =>
          val ident = Identifier.of(parts.init.toArray, parts.last)
          val loaded = version.fold(catalog.loadTable(ident))(v => catalog.loadTable(ident, v))
          val columns = DataSourceV2Relation.create(loaded, Some(catalog), Some(ident))
          val withMetadata = columns.withMetadataColumns()
          val metadata = Seq("_rowid", "_fragid").map(n => withMetadata.output.find(_.name == n).getOrElse(
            throw new IllegalStateException(s"the Lance table ${table.mkString(".")} has no metadata column $n")))
          Project(columns.output ++ metadata, withMetadata)
        case _ => analyzed()
      }
      case _ => analyzed()
    }
  }
}
