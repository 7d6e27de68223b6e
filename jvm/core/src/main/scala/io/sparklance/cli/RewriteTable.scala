package io.sparklance.cli

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.LanceException
import io.sparklance.core.file.FileVersion
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.Dataset
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter

/**
 * `RewriteTable SRC DST VERSION [--max-rows-per-file N] [--max-page-bytes N] [--batch-rows N]`: reads every live
 * row of table SRC's latest version with the JVM reader and writes them with the JVM writer, in file version
 * VERSION, as a new version of table DST (created if missing) with SRC's schema. Prints the new version. A tool
 * for proving the writer against pylance on any table pylance can write.
 */
object RewriteTable {
  def main(argv: Array[String]): Unit = {
    def opt(name: String): Option[Long] = argv.sliding(2).collectFirst { case Array(`name`, v) => v.toLong }
    val positional = argv.toSeq.zipWithIndex.filter { case (a, i) => !a.startsWith("--") && (i == 0 || !argv(i - 1).startsWith("--")) }.map(_._1)
    require(positional.size == 3, "usage: RewriteTable SRC DST VERSION [--max-rows-per-file N] [--max-page-bytes N] [--batch-rows N]")
    val (src, dst, v) = (positional(0), positional(1), positional(2))
    val version = FileVersion.parse(v).getOrElse(throw new IllegalArgumentException(s"unknown file version $v"))
    val options = FragmentWriter.Options(opt("--max-rows-per-file").getOrElse(1024L * 1024), opt("--max-page-bytes").getOrElse(8L << 20))
    val batchRows = opt("--batch-rows").getOrElse(8192L)
    val storage = new HadoopStorage()
    val allocator = new RootAllocator()
    try {
      val snapshot = Dataset.open(storage, src).checkoutLatest()
      val schema = snapshot.schema
      val writer = new FragmentWriter(storage, dst, schema, version, options)
      try {
        snapshot.fragments.foreach { fragment =>
          val reader = new FragmentReader(storage, snapshot.layout, fragment, schema.fields, Nil,
            snapshot.deletionVector(fragment), None)
          try {
            var from = 0L
            while (from < fragment.physicalRows) {
              val to = math.min(fragment.physicalRows, from + batchRows)
              val batch = reader.read(from, to, allocator)
              try writer.write(batch) finally batch.close()
              from = to
            }
          } finally reader.close()
        }
        val fragments = writer.finish()
        val readVersion = try Dataset.open(storage, dst).latestVersion() catch { case _: io.sparklance.core.NotATableException => 0L }
        val newVersion = Committer.commit(storage, dst, Transaction.create(readVersion, Operation.overwrite(fragments, schema)),
          Committer.Options(newTableFileVersion = version.toString))
        println(newVersion)
      } catch {
        case e: Throwable => writer.abort(); throw e
      }
    } catch {
      case e: LanceException => System.err.println(s"error [${e.errorClass}]: ${e.getMessage}"); sys.exit(1)
    } finally allocator.close()
  }
}
