package io.sparklance.spark

import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import io.sparklance.core.LanceException

/**
 * A sparklance error at the Spark boundary: carries the core error's class and SQLSTATE as a `SparkThrowable`,
 * so Spark reports them and the Python package can map errors by class. The message starts with the class.
 */
final class LanceSparkException(val cause: LanceException)
    extends RuntimeException(s"[${cause.errorClass}] ${cause.getMessage}", cause) with SparkThrowableShim {
  override def condition: String = cause.errorClass
  override def getSqlState: String = cause.sqlState
  override def getMessageParameters: JMap[String, String] = Map("message" -> cause.getMessage).asJava
}

object LanceSparkException {
  /** Runs `body`, rethrowing core errors as [[LanceSparkException]]. */
  def translate[T](body: => T): T =
    try body
    catch { case e: LanceException => throw new LanceSparkException(e) }
}
