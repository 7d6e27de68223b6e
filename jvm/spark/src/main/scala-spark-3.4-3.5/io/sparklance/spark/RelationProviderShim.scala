package io.sparklance.spark

import org.apache.spark.sql.sources.CreatableRelationProvider
import org.apache.spark.sql.types.DataType

/** Spark 3 does not ask a relation provider which types it writes: `supportsDataType` is not called there. */
trait RelationProviderShim extends CreatableRelationProvider {
  def writesDataType(dt: DataType, spark: DataType => Boolean): Boolean
}
