package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.Expression

/** Spark 3.4 parses no named arguments (`name => value`): every argument is positional. */
object NamedArgument {
  def unapply(e: Expression): Option[(String, Expression)] = None
}
