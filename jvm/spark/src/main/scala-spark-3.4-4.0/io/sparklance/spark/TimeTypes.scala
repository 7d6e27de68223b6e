package io.sparklance.spark

import org.apache.spark.sql.types.{DataType, LongType}

/**
 * Spark's type for Lance time columns: before 4.1 Spark has no TIME type, so a time column reads as a LONG of
 * nanoseconds since midnight, and a LONG of them is written to one (docs/types.md).
 */
object TimeTypes {
  /** The type a Lance time column reads as, whatever its precision. */
  def read(precision: Int): DataType = LongType

  /** Whether `dt` is Spark's TIME type: never, before 4.1. */
  def isTime(dt: DataType): Boolean = false

  /** Whether values of `dt` are written to a Lance time column as nanoseconds of the day: a LONG of them. */
  def holdsTime(dt: DataType): Boolean = dt == LongType
}
