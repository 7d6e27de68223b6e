package io.sparklance.cli

import java.util.UUID

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.{InvalidArgumentException, LanceException, UnsupportedFeatureException}
import io.sparklance.core.file.{FileVersion, LanceFileReader, LanceFileWriter}
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.table.Dataset
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.proto.TableProtos

/**
 * `RewriteFiles [--max-page-bytes N] SRC_TABLE DST_TABLE VERSION [SRC_TABLE DST_TABLE VERSION ...]`: reads every data file of the latest
 * version of SRC_TABLE with the JVM reader, writes its rows with the JVM writer as a data file of file version
 * VERSION (2.0, 2.1, 2.2) under DST_TABLE/data/, and commits the files as DST_TABLE's new version (an overwrite with
 * SRC_TABLE's schema; one fragment per source fragment). Prints each new version; a failure is printed as
 * `error [CLASS] SRC_TABLE: message` and the next triple is tried; the exit code is 1 if any failed.
 */
object RewriteFiles {

  private val BatchRows = 8192

  def main(argv: Array[String]): Unit = {
    val (options, rest) = argv.toList match {
      case "--max-page-bytes" :: n :: tail => (LanceFileWriter.Options(maxPageBytes = n.toLong), tail)
      case all => (LanceFileWriter.Options(), all)
    }
    require(rest.nonEmpty && rest.length % 3 == 0,
      "usage: RewriteFiles [--max-page-bytes N] SRC_TABLE DST_TABLE VERSION [SRC DST VERSION ...]")
    val storage = new HadoopStorage()
    var failed = false
    rest.grouped(3).foreach { triple =>
      val (src, dst, v) = (triple(0), triple(1), triple(2))
      try println(rewrite(storage, src.stripSuffix("/"), dst.stripSuffix("/"), v, options))
      catch {
        case e: LanceException => failed = true; System.err.println(s"error [${e.errorClass}] $src: ${e.getMessage}")
        case NonFatal(e) => failed = true; System.err.println(s"error [LANCE_INTERNAL_ERROR] $src: $e")
      }
    }
    if (failed) sys.exit(1)
  }

  /** Rewrites SRC's latest version into DST; returns DST's new version. */
  def rewrite(storage: Storage, src: String, dst: String, versionName: String,
      options: LanceFileWriter.Options = LanceFileWriter.Options()): Long = {
    val version = FileVersion.parse(versionName).getOrElse(throw new InvalidArgumentException(
      s"Unknown file version '$versionName'; use one of ${FileVersion.supported.mkString(", ")}."))
    val snapshot = Dataset.open(storage, src).checkoutLatest()
    val allocator = new RootAllocator()
    try {
      val fragments = snapshot.fragments.map { fragment =>
        if (fragment.deletionFile.isDefined) {
          throw new UnsupportedFeatureException(s"Cannot rewrite $src: fragment ${fragment.id} has deleted rows, " +
            "which RewriteFiles does not carry over. Compact the table first.")
        }
        val out = TableProtos.DataFragment.newBuilder().setPhysicalRows(fragment.physicalRows)
        fragment.files.foreach { file =>
          val reader = LanceFileReader.open(storage, snapshot.dataFilePath(file))
          try {
            val name = s"${UUID.randomUUID()}.lance"
            val writer = LanceFileWriter.create(storage, Storage.join(dst, s"data/$name"), reader.metadata.schema, version, options)
            try {
              var from = 0L
              while (from < reader.numRows) {
                val to = math.min(reader.numRows, from + BatchRows)
                val batch = reader.read(reader.metadata.schema.fields, from, to, allocator)
                try writer.write(batch) finally batch.close()
                from = to
              }
              val size = writer.finish()
              val columns = writer.fieldColumns
              out.addFiles(TableProtos.DataFile.newBuilder().setPath(name)
                .addAllFields(columns.map(c => Integer.valueOf(c._1)).asJava)
                .addAllColumnIndices(columns.map(c => Integer.valueOf(c._2)).asJava)
                .setFileMajorVersion(version.major).setFileMinorVersion(version.minor)
                .setFileSizeBytes(size))
            } finally writer.close()
          } finally reader.close()
        }
        out.build()
      }
      val readVersion = try Dataset.open(storage, dst).latestVersion() catch { case _: io.sparklance.core.NotATableException => 0L }
      Committer.commit(storage, dst, Transaction.create(readVersion, Operation.overwrite(fragments, snapshot.schema)),
        Committer.Options(newTableFileVersion = version.toString))
    } finally allocator.close()
  }
}
