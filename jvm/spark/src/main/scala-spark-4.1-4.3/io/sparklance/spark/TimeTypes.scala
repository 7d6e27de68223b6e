package io.sparklance.spark

import org.apache.spark.sql.types.{DataType, LongType, TimeType}

/** Spark's type for Lance time columns: TIME, which Spark has from 4.1 (it holds nanoseconds of the day). */
object TimeTypes {
  /** The type a Lance time column with `precision` fractional digits reads as. */
  def read(precision: Int): DataType = TimeType(precision)

  /** Whether `dt` is Spark's TIME type. */
  def isTime(dt: DataType): Boolean = dt.isInstanceOf[TimeType]

  /** Whether values of `dt` are written to a Lance time column as nanoseconds of the day: TIME, or a LONG of them. */
  def holdsTime(dt: DataType): Boolean = isTime(dt) || dt == LongType
}
