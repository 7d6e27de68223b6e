package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{Expression, NamedArgumentExpression}

/** A named argument of a function call (`name => value`), as Spark 3.5 and later parse them. */
object NamedArgument {
  def unapply(e: Expression): Option[(String, Expression)] = e match {
    case NamedArgumentExpression(key, value) => Some((key, value))
    case _ => None
  }
}
