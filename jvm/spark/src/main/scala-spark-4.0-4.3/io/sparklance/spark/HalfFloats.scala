package io.sparklance.spark

import org.apache.arrow.vector.{Float2Vector, ValueVector}

/** Half-precision floats (Lance float16) in the Arrow that Spark 4 ships (15 or later): read and written as FLOAT. */
object HalfFloats {
  val supported: Boolean = true

  /** Whether `v` holds half floats. */
  def holds(v: ValueVector): Boolean = v.isInstanceOf[Float2Vector]

  /** Value `i` of a half-float vector, widened. */
  def get(v: ValueVector, i: Int): Float = v.asInstanceOf[Float2Vector].getValueAsFloat(i)

  /** Sets value `i` of a half-float vector to `f`, rounded to the nearest half float. */
  def set(v: ValueVector, i: Int, f: Float): Unit = v.asInstanceOf[Float2Vector].setSafeWithPossibleTruncate(i, f)
}
