package io.sparklance.core.util

/**
 * Parsing of option values and command-line arguments, and the first element of an iterator, written once for every
 * Scala version the core is built for (2.12 lacks `toLongOption` and `nextOption`).
 */
object Parse {
  /** `s` as a Long, or None when it is not one. */
  def long(s: String): Option[Long] = try Some(java.lang.Long.parseLong(s)) catch { case _: NumberFormatException => None }

  /** `s` as an Int, or None when it is not one. */
  def double(s: String): Option[Double] =
    try Some(java.lang.Double.parseDouble(s)).filterNot(d => d.isNaN || d.isInfinite) catch { case _: NumberFormatException => None }

  def int(s: String): Option[Int] = try Some(Integer.parseInt(s)) catch { case _: NumberFormatException => None }

  /** `true` or `false` (any case), or None for anything else. */
  def boolean(s: String): Option[Boolean] =
    if (s.equalsIgnoreCase("true")) Some(true) else if (s.equalsIgnoreCase("false")) Some(false) else None

  /** The first element of `it`, or None when it is empty. */
  def first[A](it: Iterator[A]): Option[A] = if (it.hasNext) Some(it.next()) else None
}
