package io.sparklance.core.table

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.{Fragment, RowIdSequence, RowVersionSequence}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.util.Parse
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
   * `deletedFraction`: a fragment with at least this share of its rows deleted is rewritten without them (above 1:
   * never for that reason);
   * `maxSourceFragments`: at most this many fragments are rewritten in one compaction (the first ones, in order),
   * so that a very fragmented table can be compacted step by step.
   */
  final case class Options(targetRowsPerFragment: Long = 1024L * 1024, deletedFraction: Double = 0.1,
      batchRows: Int = 8192, maxPageBytes: Long = 8L << 20, maxSourceFragments: Option[Long] = None)

  object Options {
    /**
     * The options of a compaction from `settings` (the other Lance connector's `OPTIMIZE ... WITH (...)` names, as
     * pylance's `compact_files` takes them): `target_rows_per_fragment`, `materialize_deletions` (false: deleted rows
     * alone never cause a rewrite), `materialize_deletions_threshold` (the share of deleted rows that does, 0 to 1),
     * `max_source_fragments`, `batch_size` (rows per batch rewritten).
     */
    def apply(settings: Settings): Options = {
      val threshold = settings.lookup("materialize_deletions_threshold").map { case (where, v) =>
        Parse.double(v.trim).filter(d => d > 0 && d <= 1).getOrElse(throw new InvalidArgumentException(
          s"$where must be a fraction above 0 and at most 1, not '$v'."))
      }.getOrElse(0.1)
      val materialize = settings.flag(default = true, "materialize_deletions")
      Options(targetRowsPerFragment = settings.positive(1024L * 1024, "target_rows_per_fragment"),
        deletedFraction = if (materialize) threshold else Double.PositiveInfinity,
        batchRows = math.min(settings.positive(8192, "batch_size"), 1L << 20).toInt,
        maxSourceFragments = settings.lookup("max_source_fragments").map(_ => settings.positive(1, "max_source_fragments")))
    }
  }

  /** What a compaction did: the new version (None when there was nothing to do) and the fragments it replaced. */
  final case class Result(version: Option[Long], fragmentsRemoved: Int, fragmentsAdded: Int)

  /**
   * The groups of consecutive fragments worth rewriting together. A group never mixes fragments that different sets
   * of indexes cover (as upstream's planner splits them), so that each index covers all of a group or none of it.
   */
  def plan(snapshot: Snapshot, options: Options): Seq[Seq[Fragment]] = {
    def coveredBy(f: Fragment) = snapshot.indexes.filter(_.covers(f.id)).map(_.uuid).toSet
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
        if (current.nonEmpty && (rows + live(f) > options.targetRowsPerFragment ||
          coveredBy(current.head) != coveredBy(f))) close()
        current += f
        rows += live(f)
      }
    }
    close()
    options.maxSourceFragments.fold(groups.toSeq) { max =>
      // Whole groups while they fit, then what fits of the next one (a group of one fragment without deletions is no
      // rewrite, so it is left out).
      val kept = ArrayBuffer.empty[Seq[Fragment]]
      var left = max
      groups.foreach { g =>
        val part = g.take(math.min(left, g.size.toLong).toInt)
        if (part.size > 1 || part.exists(_.deletionFile.isDefined)) { kept += part; left -= part.size }
        else left = 0
      }
      kept.toSeq
    }
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
