package io.sparklance.core.table

import java.time.Instant

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.ManifestNaming
import io.sparklance.core.util.Timestamps

/**
 * Which version of a table a read pins: the latest, a version number, the latest version committed at or before
 * an instant, or a tag; on the main branch or on a named branch.
 */
sealed trait TimeTravel

object TimeTravel {
  case object Latest extends TimeTravel
  final case class AtVersion(version: Long) extends TimeTravel
  final case class AsOf(instant: Instant) extends TimeTravel
  final case class AtTag(name: String) extends TimeTravel
  /** A point on a branch (pylance's `tree/<branch>/`); never a tag, which names its branch itself. */
  final case class OnBranch(branch: String, at: TimeTravel) extends TimeTravel

  /**
   * From read options `version`, `timestamp`, `tag` (case-insensitive keys; at most one may be given) and `branch`.
   * Versions are unsigned 64-bit numbers: pylance's detached versions are above 2^63.
   */
  def fromOptions(options: Map[String, String]): TimeTravel = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    val named = Seq("version", "timestamp", "tag").filter(o.contains)
    if (named.size > 1) {
      throw new InvalidArgumentException(s"Options ${named.mkString(" and ")} were both given; give at most one of " +
        "version, timestamp and tag.")
    }
    val point = o.get("version").map(v => AtVersion(ManifestNaming.parseVersion(v).getOrElse(
      throw new InvalidArgumentException(s"Option version must be a version number, not '$v'."))))
      .orElse(o.get("timestamp").map(t => AsOf(Timestamps.parse(t))))
      .orElse(o.get("tag").map(AtTag.apply))
      .getOrElse(Latest)
    o.get("branch").map(_.trim) match {
      case None | Some("main") => point
      case Some(b) if o.contains("tag") =>
        throw new InvalidArgumentException(s"Options branch ('$b') and tag were both given; a tag names its branch " +
          "itself: give only the tag.")
      case Some(b) => OnBranch(b, point)
    }
  }

  /** `VERSION AS OF x` of SQL: a version number (unsigned, detached versions are above 2^63), else a tag name. */
  def versionOrTag(s: String): TimeTravel = ManifestNaming.parseVersion(s).map(AtVersion.apply).getOrElse(AtTag(s))

  private[table] def checkout(dataset: Dataset, tt: TimeTravel): Snapshot = tt match {
    case Latest => dataset.checkoutLatest()
    case AtVersion(v) => dataset.checkout(v)
    case AsOf(i) => dataset.checkoutAsOf(i)
    case AtTag(t) => dataset.checkoutTag(t)
    case OnBranch(b, at) => checkout(dataset.branch(b), at)
  }
}
