package io.sparklance.core.table

import java.io.Closeable

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._

import io.sparklance.core.MetadataColumn
import io.sparklance.core.file.{LanceFileReader, RowCopier}
import io.sparklance.core.format.{DeletionVector, Fragment, FragmentFiles}
import io.sparklance.core.scan.{CodedColumn, FragmentReader}
import io.sparklance.core.schema.LanceField
import io.sparklance.core.storage.Storage

/**
 * Reads a [[ScanTask]] in batches of live rows: for each fragment slice, its deletion vector is applied, its row ids
 * are read when `_rowid` is asked for, and batches of at most the scan's `batchRows` physical rows are returned as
 * Arrow roots owned by the caller: the projection's columns in order, then the metadata columns. Stops once the
 * scan's limit is reached. Not thread safe.
 *
 * With predicates, a batch is read in two steps: the filtered columns first, on which the predicates select rows
 * ([[BatchPredicate]]), then the other columns. A filtered column whose pages are dictionary-encoded is read as
 * the positions of its values in the dictionaries ([[CodedColumn]]), the predicates evaluated once per dictionary
 * item, and its values made only for the rows that come back. A batch where no row matches is skipped; one where few rows match
 * (fewer than one in [[TaskReader.LateRowsRatio]]) comes back as just those rows, the other columns read only at
 * their offsets, unless those rows lie so close together that reading them would decode half the batch anyway;
 * one where fewer than one in [[TaskReader.CompactRowsRatio]] match (or few, but close together) is read whole and
 * comes back as just those rows too; otherwise the whole batch comes back, and the caller drops the rows that do not match.
 *
 * Predicates that are all `IS NOT NULL` (what Spark adds above a scan for the keys of a join on nullable columns)
 * are the exception: a batch is read in one step and comes back whole unless no row matches. They rarely drop a
 * row, so reading the filtered columns first, as dictionary positions where they can be, only costs.
 */
final class TaskReader private[table] (storage: Storage, task: ScanTask, allocator: BufferAllocator) extends Closeable {
  private val ctx = task.context
  private lazy val fields = ctx.projection
  private val metadata = ctx.metadataColumns.flatMap(MetadataColumn.byName)
  private val slices = task.slices.iterator
  private var slice: ScanTask.Slice = _
  private var fragment: Fragment = _
  private var reader: FragmentReader = _
  private var deletions: DeletionVector = _
  private lazy val filterFields = fields.filter(f => ctx.filters.exists(_.columns.contains(f.name)))
  private lazy val otherFields = fields.filterNot(f => filterFields.exists(_.id == f.id))
  // A projected field by id and the children it keeps: a blob column may be projected once per part it reads.
  private def key(f: LanceField): (Int, Seq[String]) = (f.id, f.children.map(_.name))
  private def filtering = ctx.filters.nonEmpty && filterFields.nonEmpty
  private lazy val predicate = BatchPredicate.compile(ctx.filters, filterFields)
  private lazy val nullChecksOnly = ctx.filters.forall(_.isInstanceOf[Predicate.IsNotNull])
  private var selection = new Array[Int](0)
  private var position = 0L
  private var emitted = 0L

  /** The id of the fragment the last batch came from (for error messages). */
  def fragmentId: Long = if (fragment == null) -1L else fragment.id

  /** Moves to the next fragment slice; false when there is none. */
  private def advance(): Boolean = {
    if (reader != null) { reader.close(); reader = null }
    if (!slices.hasNext) return false
    slice = slices.next()
    fragment = slice.parsed
    deletions = FragmentFiles.deletionVector(storage, ctx.layout, fragment)
    val rowIds =
      if (metadata.contains(MetadataColumn.RowId)) FragmentFiles.rowIds(storage, ctx.layout.root, ctx.manifestPath, fragment, ctx.stableRowIds)
      else None
    reader = new FragmentReader(storage, ctx.layout, fragment, fields, metadata, deletions, rowIds)
    position = slice.from
    true
  }

  private var topNDone = false

  /**
   * The next batch with at least one row, owned by the caller; None at the end of the task. With a top-N, the
   * task's first `k` rows in its order, sorted, in one batch ([[TopRows]]).
   */
  def next(): Option[VectorSchemaRoot] = ctx.topN match {
    case None => nextBatch()
    case Some(_) if topNDone => None
    case Some(t) =>
      topNDone = true
      val top = new TopRows(t, allocator)
      try {
        var batch = nextBatch()
        while (batch.isDefined) { top.add(batch.get); batch = nextBatch() }
        top.result()
      } finally top.close()
  }

  private def nextBatch(): Option[VectorSchemaRoot] = {
    var result: Option[VectorSchemaRoot] = None
    var more = reader != null || advance()
    while (result.isEmpty && more && ctx.limit.forall(emitted < _)) {
      if (position >= slice.to) more = advance()
      else if (slice.selected.isDefined) {
        // Rows an index selected, batchRows of them at a time; position counts them.
        val rows = slice.selected.get
        val at = (position - slice.from).toInt
        val chunk = java.util.Arrays.copyOfRange(rows, at, math.min(rows.length, at + ctx.batchRows))
        position = if (at + chunk.length >= rows.length) slice.to else slice.from + at + chunk.length
        val r = reader.readRows(chunk.map(_.toLong), allocator, fields)
        if (r.getRowCount > 0) { emitted += r.getRowCount; result = Some(r) } else r.close()
      } else {
        val end = math.min(slice.to, position + ctx.batchRows)
        val root =
          if (!filtering) Some(reader.read(position, end, allocator))
          else if (nullChecksOnly) readUnlessNoneMatch(position, end)
          else readMatching(position, end)
        position = end
        root.foreach { r =>
          if (r.getRowCount > 0) {
            emitted += r.getRowCount
            result = Some(r)
          } else r.close()
        }
      }
    }
    result
  }

  /** Rows [from, to), all of them, or None when the predicates hold on none. */
  private def readUnlessNoneMatch(from: Long, to: Long): Option[VectorSchemaRoot] = {
    val root = reader.read(from, to, allocator)
    val n = root.getRowCount
    if (selection.length < n) selection = new Array[Int](n)
    val selected =
      try predicate.select(root.getVector(_: String), n, selection)
      catch { case NonFatal(e) => root.close(); throw e }
    if (selected > 0) Some(root) else { root.close(); None }
  }

  /**
   * Rows [from, to) where the predicates can hold: none (None), the rows selected alone when they are few, or all.
   * A filtered column whose pages there are dictionary-encoded is read as a [[CodedColumn]]: the predicates are
   * evaluated on its distinct values, and only the rows that come back are turned into values. The other filtered
   * columns are decoded once.
   */
  private def readMatching(from: Long, to: Long): Option[VectorSchemaRoot] = {
    val coded = filterFields.flatMap(f => reader.codes(f, from, to, allocator).map(f -> _))
    val decodedFields = filterFields.filterNot(f => coded.exists(_._1.id == f.id))
    val codedByName = coded.map { case (f, c) => f.name -> c }.toMap
    val filtered = reader.read(from, to, allocator, decodedFields, withMetadata = false)
    val n = filtered.getRowCount
    if (selection.length < n) selection = new Array[Int](n)
    val selected =
      try predicate.select(filtered.getVector, codedByName.get, n, selection)
      catch { case NonFatal(e) => filtered.close(); throw e }
    if (selected == 0) {
      filtered.close()
      None
    } else {
      val few = selected.toLong * TaskReader.LateRowsRatio < n && !clustered(selected, n)
      val compacted = few || selected.toLong * TaskReader.CompactRowsRatio < n
      // The filtered columns' vectors, of just the selected rows when the batch is compacted, else of all.
      val vectors = scala.collection.mutable.ArrayBuffer.empty[((Int, Seq[String]), FieldVector)]
      try {
        decodedFields.zip(filtered.getFieldVectors.asScala).foreach { case (f, v) =>
          vectors += key(f) -> (if (compacted) RowCopier.select(v, selection, selected, allocator) else transfer(v))
        }
        coded.foreach { case (f, c) => vectors += key(f) -> values(c, if (compacted) selected else n, compacted) }
      } catch { case NonFatal(e) => vectors.foreach(_._2.close()); throw e }
      finally filtered.close()
      val byId = vectors.toMap
      try {
        if (few) Some(assemble(byId, reader.readRows(offsets(from, to, selected), allocator, otherFields), selected))
        else {
          val rest = reader.read(from, to, allocator, otherFields, withMetadata = true)
          if (!compacted) Some(assemble(byId, rest, n))
          else {
            val kept = try rest.getFieldVectors.asScala.map(v => RowCopier.select(v, selection, selected, allocator)) finally rest.close()
            Some(assemble(byId, new VectorSchemaRoot(kept.map(_.getField).asJava, kept.asJava, selected), selected))
          }
        }
      } catch { case NonFatal(e) => vectors.foreach(_._2.close()); throw e }
    }
  }

  /**
   * Whether the rows `selection(0 until count)` of a batch of `n` lie so close together that a read of just them
   * would decode at least half of the batch anyway: a take reads rows closer than [[LanceFileReader.TakeGap]] as one
   * range, one read of every column per range, so such a selection costs more as ranges than as one read.
   */
  private def clustered(count: Int, n: Int): Boolean = {
    var covered = 0L
    var i = 1
    while (i < count) {
      val gap = selection(i) - selection(i - 1)
      covered += (if (gap < LanceFileReader.TakeGap) gap else 1)
      i += 1
    }
    (covered + 1) * 2 >= n
  }

  /** A vector owned by the caller with the buffers of `v` (whose root is closed after). */
  private def transfer(v: FieldVector): FieldVector = {
    val tp = v.getTransferPair(allocator)
    tp.transfer()
    tp.getTo.asInstanceOf[FieldVector]
  }

  /** The values of coded column `c` at the selected rows (`selection(0 until count)`), or at all of its rows. */
  private def values(c: CodedColumn, count: Int, selectedOnly: Boolean): FieldVector = {
    val slots =
      if (!selectedOnly) c.ids
      else {
        val s = new Array[Int](count)
        var i = 0
        while (i < count) { s(i) = c.ids(selection(i)); i += 1 }
        s
      }
    RowCopier.select(c.values, slots, count, allocator)
  }

  /** The physical offsets of the rows `selection(0 until count)` among the live rows of [from, to). */
  private def offsets(from: Long, to: Long, count: Int): Array[Long] = {
    val live = deletions.liveOffsets(from, to)
    val out = new Array[Long](count)
    var i = 0
    while (i < count) {
      val row = selection(i)
      out(i) = live match {
        case Some(l) => l(row)
        case None => from + row
      }
      i += 1
    }
    out
  }

  /**
   * One root of the filtered columns' vectors (by [[key]]) and `rest` (the other columns, then the metadata
   * columns), in the projection's order, then the metadata columns. Takes over all of the vectors.
   */
  private def assemble(filteredVectors: Map[(Int, Seq[String]), FieldVector], rest: VectorSchemaRoot, rows: Int): VectorSchemaRoot = {
    val others = rest.getFieldVectors.asScala.toSeq
    val byKey = filteredVectors ++ otherFields.zip(others).map { case (f, v) => key(f) -> v }
    val vectors = fields.map(f => byKey(key(f))) ++ others.drop(otherFields.size)
    new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, rows)
  }

  override def close(): Unit = if (reader != null) { reader.close(); reader = null }
}

object TaskReader {
  /**
   * A filtered batch comes back as just its matching rows when fewer than one row in this many matches: then
   * reading the other columns at a few offsets (only the parts of pages that hold them) and copying those rows out
   * costs less than reading every row and letting the engine drop most of them. Measured with Spark on 1M-row
   * pages of five columns, a 32-float vector among them: just the matching rows is 3x faster at 0.1% of the rows,
   * 1.3x at 1%, even at 2-5%, and slower from 10% on.
   */
  val LateRowsRatio = 32

  /**
   * A filtered batch read whole comes back as just its matching rows when fewer than one row in this many matches:
   * copying them out costs less than the engine's work on the rows it would drop (turning each into a row and
   * evaluating the filter again, string comparisons included). Not measured alone: together with faster decoding,
   * Spark's executor CPU on TPC-H SF1 q12 and q19 (lineitem filters keeping about 4% of the rows) fell by 12-16%
   * (docs/performance.md).
   */
  val CompactRowsRatio = 4
}
