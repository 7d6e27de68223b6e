package io.sparklance.cli

import scala.jdk.CollectionConverters._

import io.sparklance.core.LanceException
import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.table.Dataset
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TableProtos

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
    val storage = new HadoopStorage()
    try {
      val readVersion = try Dataset.open(storage, root).latestVersion() catch { case _: io.sparklance.core.NotATableException => 0L }
      var schema: Option[io.sparklance.core.schema.LanceSchema] = None
      val fragments = rest.tail.map { name =>
        val reader = LanceFileReader.open(storage, Storage.join(root, s"data/$name"))
        try {
          if (schema.isEmpty) schema = Some(reader.metadata.schema)
          val columns = reader.fieldColumns
          val file = TableProtos.DataFile.newBuilder().setPath(name)
            .addAllFields(columns.map(c => Integer.valueOf(c._1)).asJava)
            .addAllColumnIndices(columns.map(c => Integer.valueOf(c._2)).asJava)
            .setFileMajorVersion(reader.version.major).setFileMinorVersion(reader.version.minor)
            .setFileSizeBytes(reader.metadata.fileSize)
          TableProtos.DataFragment.newBuilder().addFiles(file).setPhysicalRows(reader.numRows).build()
        } finally reader.close()
      }
      val op =
        if (overwrite || readVersion == 0) Operation.overwrite(fragments, schema.get)
        else Operation.Append(fragments)
      val version = Committer.commit(storage, root, Transaction.create(readVersion, op),
        Committer.Options(newTableFileVersion = fragments.headOption.map { f =>
          s"${f.getFiles(0).getFileMajorVersion}.${f.getFiles(0).getFileMinorVersion}"
        }.getOrElse("2.2")))
      println(version)
    } catch {
      case e: LanceException => System.err.println(s"error [${e.errorClass}]: ${e.getMessage}"); sys.exit(1)
    }
  }
}
