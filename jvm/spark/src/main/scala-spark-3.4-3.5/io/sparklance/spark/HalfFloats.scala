package io.sparklance.spark

import org.apache.arrow.vector.ValueVector

/**
 * Half-precision floats (Lance float16): the Arrow that Spark 3 ships (11 or 12) has no vector for them, so float16
 * columns are refused with a clear error before any is read or written (docs/spark-versions.md).
 */
object HalfFloats {
  val supported: Boolean = false

  def holds(v: ValueVector): Boolean = false

  def get(v: ValueVector, i: Int): Float = throw new UnsupportedOperationException("half floats need Arrow 15")

  def set(v: ValueVector, i: Int, f: Float): Unit = throw new UnsupportedOperationException("half floats need Arrow 15")
}
