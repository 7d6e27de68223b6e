package io.sparklance.cli

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.util.control.NonFatal

import org.apache.arrow.memory.{BufferAllocator, RootAllocator}

import io.sparklance.core.FileVersion
import io.sparklance.core.storage.{HadoopStorage, Storage}
import io.sparklance.core.table.{Dataset, LiveRows}
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter

/**
 * `RewriteTable [--max-rows-per-file N] [--max-page-bytes N] [--batch-rows N] VERSION SRC DST [SRC DST]...`: reads
 * every live row of each table SRC's latest version with the JVM reader and writes them with the JVM writer, in
 * file version VERSION, as a new version of table DST (created if missing) with SRC's schema. Prints each new
 * version; a pair that fails writes its error to `DST.err` (local path) and the others go on. A tool for proving
 * the writer against pylance on any table pylance can write.
 */
object RewriteTable {
  def main(argv: Array[String]): Unit = {
    val options = argv.sliding(2).collect { case Array(k, v) if k.startsWith("--") => k -> v.toLong }.toMap
    val positional = argv.indices.filter(i => !argv(i).startsWith("--") && (i == 0 || !argv(i - 1).startsWith("--"))).map(argv(_))
    require(positional.size >= 3 && positional.size % 2 == 1,
      "usage: RewriteTable [--max-rows-per-file N] [--max-page-bytes N] [--batch-rows N] VERSION SRC DST [SRC DST]...")
    val version = FileVersion.parse(positional.head).getOrElse(throw new IllegalArgumentException(s"unknown file version ${positional.head}"))
    val writeOptions = FragmentWriter.Options(options.getOrElse("--max-rows-per-file", 1024L * 1024),
      options.getOrElse("--max-page-bytes", 8L << 20))
    val batchRows = options.getOrElse("--batch-rows", 8192L)
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    var failed = 0
    try {
      positional.tail.grouped(2).foreach { pair =>
        val (src, dst) = (pair(0), pair(1))
        try println(rewrite(storage, allocator, src, dst, version, writeOptions, batchRows))
        catch {
          case NonFatal(e) =>
            failed += 1
            val text = s"${e.getClass.getName}: ${e.getMessage}\n${e.getStackTrace.take(12).mkString("\n")}"
            Files.write(Paths.get(dst.stripPrefix("file:") + ".err"), text.getBytes(StandardCharsets.UTF_8))
        }
      }
    } finally allocator.close()
    if (failed > 0) System.err.println(s"$failed table(s) failed; see their .err files")
  }

  private def rewrite(storage: Storage, allocator: BufferAllocator, src: String, dst: String, version: FileVersion,
      options: FragmentWriter.Options, batchRows: Long): Long = {
    val snapshot = Dataset.open(storage, src).checkoutLatest()
    val schema = snapshot.schema
    val writer = new FragmentWriter(storage, dst, schema, version, options)
    try {
      LiveRows.foreach(snapshot, batchRows, allocator)(writer.write)
      val fragments = writer.finish()
      val readVersion = try Dataset.open(storage, dst).latestVersion() catch { case _: io.sparklance.core.NotATableException => 0L }
      Committer.commit(storage, dst, Transaction.create(readVersion, Operation.overwrite(fragments, schema)),
        Committer.Options(newTableFileVersion = version.toString))
    } catch {
      case NonFatal(e) => writer.abort(); throw e
    }
  }
}
