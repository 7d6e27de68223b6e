package io.sparklance.core.table

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.format.{Fragment, RowIdSequence, RowVersionSequence}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter

/**
 * Compaction (upstream `compact_files`): merges runs of small fragments, and rewrites fragments with many deleted
 * rows, into fragments of up to `targetRowsPerFragment` live rows, committed as one Rewrite. Rows keep their order
 * and, where the table has stable row ids, their row ids and row versions. Readers of earlier versions are not
 * affected: old files stay until a cleanup removes them.
 */
object Compaction {

  /**
   * `targetRowsPerFragment`: fragments below it are merged with their neighbours, up to it;
   * `deletedFraction`: a fragment with at least this share of its rows deleted is rewritten without them.
   */
  final case class Options(targetRowsPerFragment: Long = 1024L * 1024, deletedFraction: Double = 0.1,
      batchRows: Int = 8192, maxPageBytes: Long = 8L << 20)

  /** What a compaction did: the new version (None when there was nothing to do) and the fragments it replaced. */
  final case class Result(version: Option[Long], fragmentsRemoved: Int, fragmentsAdded: Int)

  /** The groups of consecutive fragments worth rewriting together. */
  def plan(snapshot: Snapshot, options: Options): Seq[Seq[Fragment]] = {
    def live(f: Fragment) = f.physicalRows - f.deletionFile.map(_.numDeletedRows).getOrElse(0L)
    def candidate(f: Fragment) = f.physicalRows < options.targetRowsPerFragment ||
      f.deletionFile.exists(d => d.numDeletedRows >= options.deletedFraction * f.physicalRows)
    val groups = ArrayBuffer.empty[Seq[Fragment]]
    var current = ArrayBuffer.empty[Fragment]
    var rows = 0L
    def close(): Unit = {
      if (current.size > 1 || current.exists(_.deletionFile.isDefined)) groups += current.toSeq
      current = ArrayBuffer.empty[Fragment]
      rows = 0L
    }
    snapshot.fragments.foreach { f =>
      if (!candidate(f)) close()
      else {
        if (current.nonEmpty && rows + live(f) > options.targetRowsPerFragment) close()
        current += f
        rows += live(f)
      }
    }
    close()
    groups.toSeq
  }

  private[table] def compact(table: Table, options: Options): Result = {
    val storage = table.storage
    val root = table.root
    val snapshot = table.latest()
    val groups = plan(snapshot, options)
    if (groups.isEmpty) return Result(None, 0, 0)
    val version = snapshot.fileVersion
    val allocator = new RootAllocator()
    val writers = ArrayBuffer.empty[FragmentWriter]
    try {
      val rewritten = groups.map { group =>
        val writer = new FragmentWriter(storage, root, snapshot.schema, version,
          FragmentWriter.Options(options.targetRowsPerFragment, options.maxPageBytes))
        writers += writer
        val rowIds = ArrayBuffer.empty[Long]
        val created = ArrayBuffer.empty[Long]
        val updated = ArrayBuffer.empty[Long]
        group.foreach { f =>
          val deletions = snapshot.deletionVector(f)
          val ids = snapshot.rowIds(f)
          val c = snapshot.createdAtVersions(f)
          val u = snapshot.lastUpdatedAtVersions(f)
          var offset = 0
          while (offset < f.physicalRows) {
            if (!deletions.contains(offset)) {
              ids.foreach(s => rowIds += s(offset))
              c.foreach(s => created += s(offset))
              u.foreach(s => updated += s(offset))
            }
            offset += 1
          }
          val reader = new FragmentReader(storage, snapshot.layout, f, snapshot.schema.fields, Nil, deletions, None)
          try {
            var from = 0L
            while (from < f.physicalRows) {
              val to = math.min(f.physicalRows, from + options.batchRows)
              val batch = reader.read(from, to, allocator)
              try writer.write(batch) finally batch.close()
              from = to
            }
          } finally reader.close()
        }
        var at = 0
        val news = writer.finish().map { n =>
          val rows = n.getPhysicalRows.toInt
          val b = n.toBuilder
          if (snapshot.manifest.hasStableRowIds) {
            b.setInlineRowIds(RowIdSequence.encode(rowIds.slice(at, at + rows).toArray).toByteString)
            if (created.nonEmpty) b.setInlineCreatedAtVersions(RowVersionSequence.encode(created.slice(at, at + rows).toArray).toByteString)
            if (updated.nonEmpty) b.setInlineLastUpdatedAtVersions(RowVersionSequence.encode(updated.slice(at, at + rows).toArray).toByteString)
          }
          at += rows
          b.build()
        }
        (group.map(_.proto), news)
      }
      val v = table.commit(Transaction.create(snapshot.version, Operation.Rewrite(rewritten)), Committer.Options())
      Result(Some(v), groups.map(_.size).sum, rewritten.map(_._2.size).sum)
    } catch {
      case e: io.sparklance.core.CommitStateUnknownException => throw e
      case NonFatal(e) => writers.foreach(_.abort()); throw e
    } finally allocator.close()
  }
}
