package io.sparklance.core.format

/**
 * How manifest files under `_versions/` are named (shared/spec/table-format.md, "Manifest Naming Schemes").
 *
 * A table uses exactly one scheme; a mixture is an error.
 */
sealed abstract class ManifestNaming(val name: String) extends Serializable {

  /** The file name of a version's manifest. */
  def fileName(version: Long): String

  /** The version a file name stands for, if the name follows this scheme. */
  def parse(fileName: String): Option[Long]
}

object ManifestNaming {

  private val Suffix = ".manifest"

  /** `{version}.manifest`, the legacy scheme. */
  case object V1 extends ManifestNaming("v1") {
    override def fileName(version: Long): String = s"$version$Suffix"

    override def parse(fileName: String): Option[Long] =
      stem(fileName).filter(s => s.length < 20 && !(s.length > 1 && s.startsWith("0"))).map(_.toLong)
  }

  /**
   * `{u64::MAX - version:020}.manifest`: newer versions sort first, so one listing finds the latest. The stem is
   * exactly 20 digits.
   */
  case object V2 extends ManifestNaming("v2") {
    override def fileName(version: Long): String = {
      val s = java.lang.Long.toUnsignedString(-1L - version)
      "0" * (20 - s.length) + s + Suffix
    }

    override def parse(fileName: String): Option[Long] =
      stem(fileName).filter(_.length == 20).flatMap { s =>
        try Some(-1L - java.lang.Long.parseUnsignedLong(s)) catch { case _: NumberFormatException => None }
      }.filter(_ >= 0)
  }

  private def stem(fileName: String): Option[String] =
    if (fileName.endsWith(Suffix)) {
      val s = fileName.dropRight(Suffix.length)
      if (s.nonEmpty && s.forall(c => c >= '0' && c <= '9')) Some(s) else None
    } else None

  /**
   * Whether a version is detached: pylance's `commit(..., detached=True)` numbers such versions with the top bit of
   * the unsigned 64-bit version set and names their manifests `d<version>.manifest`; they are in no listing.
   */
  def isDetached(version: Long): Boolean = version < 0

  def detachedFileName(version: Long): String = s"d${java.lang.Long.toUnsignedString(version)}$Suffix"

  /** A version number as Lance writes it: unsigned (detached versions are above 2^63). */
  def show(version: Long): String = java.lang.Long.toUnsignedString(version)

  /**
   * A version number as users write it, unsigned decimal (detached versions are above 2^63); None when `text` is
   * not one.
   */
  def parseVersion(text: String): Option[Long] = {
    val t = text.trim
    if (t.isEmpty || !t.forall(c => c >= '0' && c <= '9')) None
    else try Some(java.lang.Long.parseUnsignedLong(t)) catch { case _: NumberFormatException => None }
  }

  /** The scheme a manifest file name follows, and its version; None for files that are not manifests. */
  def classify(fileName: String): Option[(ManifestNaming, Long)] =
    V2.parse(fileName).map(v => (V2: ManifestNaming) -> v).orElse(V1.parse(fileName).map(v => (V1: ManifestNaming) -> v))
}
