package io.sparklance.core.table

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.format.{DeletionVector, Fragment, Manifest, RowIdSequence, RowVersionSequence}
import io.sparklance.core.index.{IndexKind, IndexMetadata}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.util.Parse
import io.sparklance.core.write.FragmentWriter
import io.sparklance.proto.{TableProtos, TransactionProtos}

/**
 * Compaction (upstream `compact_files`): merges runs of small fragments, and rewrites fragments with many deleted
 * rows, into fragments of up to `targetRowsPerFragment` live rows, committed as one Rewrite. Rows keep their order
 * and, where the table has stable row ids, their row ids and row versions. Readers of earlier versions are not
 * affected: old files stay until a cleanup removes them.
 *
 * On a table without stable row ids the rows' addresses change, and the indexes covering the rewritten fragments
 * are remapped in the same Rewrite, as pylance 14's `compact_files` does (`rewritten_indices`): the new fragments'
 * ids are reserved first (a ReserveFragments version, as upstream commits one), and each such index is written
 * again under a new uuid ([[Compaction.remap]]), covering the new fragments in place of the old. Zone maps and bloom
 * filters are not remapped (neither are they by pylance): they keep naming the old fragments, and the new ones are
 * read to be searched until OPTIMIZE INDEX.
 */
object Compaction {

  /**
   * `targetRowsPerFragment`: fragments below it are merged with their neighbours, up to it;
   * `deletedFraction`: a fragment with more than this share of its rows deleted is rewritten without them (above 1:
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

  /**
   * What a compaction did: the new version (None when there was nothing to do), the fragments it replaced, the
   * names of the indexes it remapped, and the files of the fragments it replaced (data and deletion files) and wrote
   * (data files), counted as pylance's `CompactionMetrics` counts them.
   */
  final case class Result(version: Option[Long], fragmentsRemoved: Int, fragmentsAdded: Int,
      indexesRemapped: Seq[String] = Nil, filesRemoved: Long = 0, filesAdded: Long = 0)

  /**
   * The groups of consecutive fragments worth rewriting together. A group never mixes fragments that different sets
   * of indexes cover (as upstream's planner splits them), so that each index covers all of a group or none of it.
   */
  def plan(snapshot: Snapshot, options: Options): Seq[Seq[Fragment]] = {
    def coveredBy(f: Fragment) = snapshot.indexes.filter(_.covers(f.id)).map(_.uuid).toSet
    def live(f: Fragment) = f.physicalRows - f.deletionFile.map(_.numDeletedRows).getOrElse(0L)
    // Upstream's candidacy: a fragment is rewritten on its own when more than the threshold's share of its rows is
    // deleted (`CompactItself`), and with its neighbours when it is small (`CompactWithNeighbors`); a group of one
    // small fragment is no rewrite, whatever deletions it has below the threshold.
    def itself(f: Fragment) = f.deletionFile.exists(d => d.numDeletedRows > options.deletedFraction * f.physicalRows)
    def candidate(f: Fragment) = f.physicalRows < options.targetRowsPerFragment || itself(f)
    val groups = ArrayBuffer.empty[Seq[Fragment]]
    var current = ArrayBuffer.empty[Fragment]
    var rows = 0L
    def close(): Unit = {
      if (current.size > 1 || current.exists(itself)) groups += current.toSeq
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
        if (part.size > 1 || part.exists(itself)) { kept += part; left -= part.size }
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
    val remaps = ArrayBuffer.empty[() => Unit]
    // Each rewritten fragment's deletions, read once for the rewrite and used again to move vector index rows.
    val deletedRows = scala.collection.mutable.Map.empty[Long, DeletionVector]
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
          deletedRows(f.id) = deletions
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
      val toRemap = remappable(snapshot, rewritten)
      val placed = if (toRemap.isEmpty) rewritten else withReservedIds(table, snapshot, rewritten)
      val remapped = toRemap.flatMap(i => remap(table, snapshot, placed, i, deletedRows).map { case (build, meta) =>
        remaps += build
        i -> meta
      })
      val op = Operation.Rewrite(placed, remapped.map { case (old, meta) => rewrittenIndex(old, meta) })
      val v = table.commit(Transaction.create(snapshot.version, op), Committer.Options())
      Result(Some(v), groups.map(_.size).sum, rewritten.map(_._2.size).sum, remapped.map(_._1.name),
        filesRemoved = rewritten.flatMap(_._1).map(f => f.getFilesCount + (if (f.hasDeletionFile) 1 else 0)).sum.toLong,
        filesAdded = rewritten.flatMap(_._2).map(_.getFilesCount).sum.toLong)
    } catch {
      case e: io.sparklance.core.CommitStateUnknownException => throw e
      case NonFatal(e) =>
        writers.foreach(_.abort())
        remaps.foreach(abort => abort())
        throw e
    } finally allocator.close()
  }

  /** The index kinds a compaction remaps (pylance 14 remaps these and leaves zone maps and bloom filters). */
  private val Remapped: Set[IndexKind] = Set(IndexKind.BTree, IndexKind.Bitmap, IndexKind.LabelList, IndexKind.NGram,
    IndexKind.Inverted, IndexKind.Vector)

  /**
   * The indexes whose files a compaction writes again: on a table without stable row ids (with them, indexes hold row
   * ids the rows keep), each index of a kind [[Remapped]] that covers a rewritten group and is the only segment of
   * its name (one of several delta segments is left as it is: its new fragments are read until OPTIMIZE INDEX).
   */
  private def remappable(snapshot: Snapshot,
      groups: Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])]): Seq[IndexMetadata] =
    if (snapshot.hasStableRowIds) Nil
    else snapshot.indexes.filter { i =>
      Remapped.contains(i.kind) && snapshot.indexes.count(_.name == i.name) == 1 &&
        groups.exists(_._1.exists(f => i.covers(f.getId)))
    }

  /**
   * The groups with their new fragments numbered from ids reserved by a ReserveFragments version, so that their row
   * addresses are known before the Rewrite commits (upstream's `reserve_fragment_ids`).
   */
  private def withReservedIds(table: Table, snapshot: Snapshot,
      groups: Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])])
      : Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])] = {
    val n = groups.map(_._2.size).sum
    if (n == 0) groups
    else {
      val v = table.commit(Transaction.create(snapshot.version, Operation.ReserveFragments(n)), Committer.Options())
      var next = table.snapshot(TimeTravel.AtVersion(v)).manifest.maxFragmentId.getOrElse(throw new IllegalStateException(
        s"version $v of ${table.root} reserved fragment ids but records no max_fragment_id")) - n + 1
      groups.map { case (olds, news) =>
        (olds, news.map { f => next += 1; f.toBuilder.setId(next - 1).build() })
      }
    }
  }

  /**
   * Writes `index` again for the rewritten table: the version as it will be once `groups` (their new fragments
   * numbered) are committed, restricted to the fragments the index covers then (those it covered and kept, and the
   * new fragments of the groups it covered), brought up to date as OPTIMIZE INDEX would: the rows of the fragments no
   * longer there are left out, the new fragments' rows are read and added; a vector index covering every fragment of
   * the groups it touches instead carries its rows' payloads to their new addresses ([[moves]]), reading nothing, as
   * upstream's remap does (its vectors are the costly column to read, and its codes stay as they were). The result holds the rows pylance's remap
   * holds (deleted rows of fragments not rewritten stay, as they stayed before), so its queries answer alike. None,
   * with a warning, when the index cannot be brought up to date here (an index kind or layout OPTIMIZE INDEX refuses,
   * e.g. a vector index of float16 vectors, or a failure writing it): it then keeps naming the old fragments.
   */
  private def remap(table: Table, snapshot: Snapshot,
      groups: Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])],
      index: IndexMetadata, deletedRows: collection.Map[Long, DeletionVector])
      : Option[(() => Unit, TableProtos.IndexMetadata)] = {
    val gone = groups.flatMap(_._1.map(_.getId)).toSet
    val added = groups.filter(_._1.exists(f => index.covers(f.getId))).flatMap(_._2)
    val kept = snapshot.fragments.filter(f => index.covers(f.id) && !gone.contains(f.id)).map(_.proto)
    val fragments = (kept ++ added).sortBy(_.getId)
    val proto = snapshot.manifest.proto.toBuilder.clearFragments().addAllFragments(fragments.asJava)
    fragments.lastOption.foreach(f => proto.setMaxFragmentId(math.max(proto.getMaxFragmentId, f.getId.toInt)))
    val view = new Snapshot(snapshot.dataset, new Manifest(proto.build(), snapshot.manifest.path), snapshot.naming)
    try {
      val (write, abort) = index.kind match {
        case IndexKind.Inverted =>
          val b = table.newFullTextIndexUpdate(view, index.name, Map.empty)
          (() => b.writeHere(), () => b.abort())
        case IndexKind.Vector =>
          val b = VectorIndexBuild.update(table, view, index.name, Map.empty, moves(snapshot, groups, index, deletedRows))
          (() => b.writeHere(), () => b.abort())
        case _ =>
          val b = table.newIndexUpdate(view, index.name)
          (() => b.writeHere(), () => b.abort())
      }
      val meta = try write() catch { case NonFatal(e) => abort(); throw e }
      Some(abort -> meta)
    } catch {
      // The index stays as it is, and right: its compacted fragments are read to be searched.
      case NonFatal(e) =>
        log.warn(s"Compaction of ${table.root} leaves index '${index.name}' as it is (its compacted fragments are " +
          s"read to be searched until OPTIMIZE INDEX): ${e.getMessage}")
        None
    }
  }

  /**
   * Where the compaction moved the rows of the groups `index` covers, when it covers every fragment they rewrote: each
   * old fragment's live rows, in order, fill the group's new fragments in order (as [[compact]] writes them). None when
   * a group mixes fragments the index covers with others, whose rows must then be read.
   */
  private def moves(snapshot: Snapshot, groups: Seq[(Seq[TableProtos.DataFragment], Seq[TableProtos.DataFragment])],
      index: IndexMetadata, deletedRows: collection.Map[Long, DeletionVector]): Option[VectorIndexBuild.RowMoves] = {
    val touched = groups.filter(_._1.exists(f => index.covers(f.getId)))
    if (!touched.forall(_._1.forall(f => index.covers(f.getId)))) None
    else {
      val byId = snapshot.fragments.map(f => f.id -> f).toMap
      val from = touched.flatMap { case (olds, news) =>
        var n = 0
        var offset = 0L
        olds.map { proto =>
          val f = byId(proto.getId)
          val deleted = deletedRows(f.id)
          val to = new Array[Long](f.physicalRows.toInt)
          var i = 0
          while (i < to.length) {
            if (deleted.contains(i)) to(i) = -1L
            else {
              while (offset >= news(n).getPhysicalRows) { n += 1; offset = 0 }
              to(i) = (news(n).getId << 32) | offset
              offset += 1
            }
            i += 1
          }
          f.id -> to
        }
      }.toMap
      Some(new VectorIndexBuild.RowMoves(from, touched.flatMap(_._2.map(_.getId))))
    }
  }

  /** The `rewritten_indices` entry of an index remapped into `meta`. */
  private def rewrittenIndex(old: IndexMetadata, meta: TableProtos.IndexMetadata)
      : TransactionProtos.Transaction.Rewrite.RewrittenIndex = {
    val r = TransactionProtos.Transaction.Rewrite.RewrittenIndex.newBuilder()
      .setOldId(old.proto.getUuid).setNewId(meta.getUuid).addAllNewIndexFiles(meta.getFilesList)
      .setNewIndexVersion(meta.getIndexVersion)
    if (meta.hasIndexDetails) r.setNewIndexDetails(meta.getIndexDetails)
    r.build()
  }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
}
