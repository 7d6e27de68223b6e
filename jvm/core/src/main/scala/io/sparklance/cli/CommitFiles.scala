package io.sparklance.cli

import org.apache.hadoop.conf.Configuration

import io.sparklance.core.LanceException
import io.sparklance.core.table.Table

/**
 * `CommitFiles TABLE [--overwrite] FILE...`: commits Lance data files already written under `TABLE/data/` (by any
 * writer) as one new version: an append, or with `--overwrite` (or for a new table) an overwrite whose schema is
 * the first file's. One fragment per file. Prints the new version.
 */
object CommitFiles {
  def main(argv: Array[String]): Unit = {
    val overwrite = argv.contains("--overwrite")
    val rest = argv.filterNot(_ == "--overwrite").toSeq
    require(rest.size >= 2, "usage: CommitFiles TABLE [--overwrite] FILE...")
    val root = rest.head.stripSuffix("/")
    val table = Table.forPath(root, new Configuration())
    try {
      val version = if (overwrite) table.overwriteWithFiles(rest.tail) else table.appendFiles(rest.tail)
      println(version)
    } catch {
      case e: LanceException => System.err.println(s"error [${e.errorClass}]: ${e.getMessage}"); sys.exit(1)
    }
  }
}
