package io.sparklance.core

/**
 * A Lance data file format version, as the manifest's `DataFile` names it (2.0, 2.1, 2.2) and as the file footer
 * stores it (2.0 files say 0.3 in their footer; shared/research/README.md "Version strings").
 */
sealed abstract class FileVersion(val major: Int, val minor: Int, val footerMajor: Int, val footerMinor: Int)
    extends Serializable {
  override def toString: String = s"$major.$minor"

  /** 2.1 and later: structural (repetition/definition level) encodings with MiniBlock and FullZip pages. */
  def isStructural: Boolean = this != FileVersion.V2_0
}

object FileVersion {
  case object V2_0 extends FileVersion(2, 0, 0, 3)
  case object V2_1 extends FileVersion(2, 1, 2, 1)
  case object V2_2 extends FileVersion(2, 2, 2, 2)

  val supported: Seq[FileVersion] = Seq(V2_0, V2_1, V2_2)

  /** The version a footer's major.minor stands for; `path` names the file in the error for anything else. */
  def fromFooter(path: String, major: Int, minor: Int): FileVersion =
    supported.find(v => v.footerMajor == major && v.footerMinor == minor).getOrElse {
      val name = (major, minor) match {
        case (0, 1) | (0, 2) => "the legacy Lance file format (v1, \"0.1\")"
        case (2, 3) => "file format 2.3, which is unstable"
        case (a, b) => s"file format $a.$b"
      }
      throw new UnsupportedFeatureException(s"Cannot read data file $path: it uses $name, which sparklance does " +
        "not support yet (it reads 2.0, 2.1 and 2.2). Rewrite the table with data_storage_version '2.2' using " +
        "pylance, or upgrade sparklance.")
    }

  /** Parses a `data_storage_version` string ("2.0", "2.1", "2.2", "stable"). */
  def parse(s: String): Option[FileVersion] = s.trim.toLowerCase match {
    case "2.0" => Some(V2_0)
    case "2.1" => Some(V2_1)
    case "2.2" | "stable" => Some(V2_2)
    case _ => None
  }
}
