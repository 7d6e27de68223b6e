package io.sparklance.core.util

import java.time.{Instant, LocalDate, LocalDateTime, OffsetDateTime, ZoneOffset}
import java.time.format.DateTimeParseException

import io.sparklance.core.InvalidArgumentException

/** Parsing of user-given points in time (time travel `as of`). */
object Timestamps {

  /**
   * Parses `2026-01-01T10:00:00Z`, `2026-01-01T10:00:00+02:00`, `2026-01-01 10:00:00[.ffffff]` (UTC) or
   * `2026-01-01` (midnight UTC).
   */
  def parse(text: String): Instant = {
    val s = text.trim
    def attempt[T](f: => T): Option[T] = try Some(f) catch { case _: DateTimeParseException => None }
    attempt(Instant.parse(s))
      .orElse(attempt(OffsetDateTime.parse(s.replace(' ', 'T')).toInstant))
      .orElse(attempt(LocalDateTime.parse(s.replace(' ', 'T')).toInstant(ZoneOffset.UTC)))
      .orElse(attempt(LocalDate.parse(s).atStartOfDay(ZoneOffset.UTC).toInstant))
      .getOrElse(throw new InvalidArgumentException(s"Cannot parse '$text' as a timestamp: use ISO-8601, e.g. " +
        "'2026-01-01T10:00:00Z', '2026-01-01 10:00:00' (UTC) or '2026-01-01'."))
  }

  /** Microseconds since the epoch (floor). */
  def micros(i: Instant): Long = Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), i.getNano / 1000L)
}
