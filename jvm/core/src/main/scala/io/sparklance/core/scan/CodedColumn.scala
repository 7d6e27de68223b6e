package io.sparklance.core.scan

import java.util.concurrent.atomic.AtomicLong

import org.apache.arrow.vector.FieldVector

/**
 * Rows of a column as positions in a vector of its distinct values (the dictionaries of the pages that hold them):
 * row i's value is `values(ids(i))`, and `ids(i) == nullSlot` (the last slot of `values`, a null) when it is null.
 *
 * `serial` identifies the values: two coded columns with the same serial share them, so what a caller computed on
 * the values (which of them a filter keeps) holds for both. Serials are never reused within a JVM.
 */
final class CodedColumn(val values: FieldVector, val nullSlot: Int, val ids: Array[Int], val serial: Long) {
  def rows: Int = ids.length
}

object CodedColumn {
  private val serials = new AtomicLong

  private[scan] def nextSerial(): Long = serials.incrementAndGet()
}
