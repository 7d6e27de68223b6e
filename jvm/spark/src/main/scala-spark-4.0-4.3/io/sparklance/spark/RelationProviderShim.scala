package io.sparklance.spark

import org.apache.spark.sql.sources.CreatableRelationProvider
import org.apache.spark.sql.types.DataType

/** Spark 4 asks a relation provider, before a path write, whether it writes each type (`supportsDataType`). */
trait RelationProviderShim extends CreatableRelationProvider {
  /** Whether `dt` is written; `spark` is Spark's own answer, for the types the connector leaves to it. */
  def writesDataType(dt: DataType, spark: DataType => Boolean): Boolean

  override def supportsDataType(dt: DataType): Boolean = writesDataType(dt, super.supportsDataType)
}
