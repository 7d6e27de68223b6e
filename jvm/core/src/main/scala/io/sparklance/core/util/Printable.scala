package io.sparklance.core.util

/** Strings read from a damaged file, made fit for an error message. */
object Printable {

  /** `s` with control characters and other non-printable code points written as backslash-u escapes (four hex digits). */
  def of(s: String): String = {
    val out = new StringBuilder(s.length)
    s.foreach { c =>
      if (Character.isISOControl(c) || !Character.isDefined(c) || Character.isSurrogate(c)) out.append(f"\\u${c.toInt}%04x")
      else out.append(c)
    }
    out.toString
  }

  /** True if `s` is not empty and has no control characters (a file or field name a writer can have produced). */
  def isName(s: String): Boolean = s.nonEmpty && !s.exists(c => Character.isISOControl(c))
}
