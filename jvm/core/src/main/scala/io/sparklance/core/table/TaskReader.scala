package io.sparklance.core.table

import java.io.Closeable

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._

import io.sparklance.core.MetadataColumn
import io.sparklance.core.format.{Fragment, FragmentFiles}
import io.sparklance.core.scan.FragmentReader
import io.sparklance.core.storage.Storage

/**
 * Reads a [[ScanTask]] in batches of live rows: for each fragment slice, its deletion vector is applied, its row ids
 * are read when `_rowid` is asked for, and batches of at most the scan's `batchRows` physical rows are returned as
 * Arrow roots owned by the caller: the projection's columns in order, then the metadata columns. With predicates, a
 * batch is read in two steps: the filtered columns first, then (only if a row can match) the other columns; a batch
 * without a possible match is skipped. Stops once the scan's limit is reached. Not thread safe.
 */
final class TaskReader private[table] (storage: Storage, task: ScanTask, allocator: BufferAllocator) extends Closeable {
  private val ctx = task.context
  private lazy val fields = ctx.projection
  private val metadata = ctx.metadataColumns.flatMap(MetadataColumn.byName)
  private val slices = task.slices.iterator
  private var slice: ScanTask.Slice = _
  private var fragment: Fragment = _
  private var reader: FragmentReader = _
  private lazy val filterFields = fields.filter(f => ctx.filters.exists(_.columns.contains(f.name)))
  private lazy val otherFields = fields.filterNot(f => filterFields.exists(_.id == f.id))
  private def filtering = ctx.filters.nonEmpty && filterFields.nonEmpty
  private lazy val predicate = BatchPredicate.compile(ctx.filters, filterFields)
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
    val deletions = FragmentFiles.deletionVector(storage, ctx.layout, fragment)
    val rowIds =
      if (metadata.contains(MetadataColumn.RowId)) FragmentFiles.rowIds(storage, ctx.layout.root, ctx.manifestPath, fragment, ctx.stableRowIds)
      else None
    reader = new FragmentReader(storage, ctx.layout, fragment, fields, metadata, deletions, rowIds)
    position = slice.from
    true
  }

  /** The next batch with at least one row, owned by the caller; None at the end of the task. */
  def next(): Option[VectorSchemaRoot] = {
    var result: Option[VectorSchemaRoot] = None
    var more = reader != null || advance()
    while (result.isEmpty && more && ctx.limit.forall(emitted < _)) {
      if (position >= slice.to) more = advance()
      else {
        val end = math.min(slice.to, position + ctx.batchRows)
        val root = if (filtering) readIfAnyMatch(position, end) else Some(reader.read(position, end, allocator))
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

  /**
   * Rows [from, to) if one of them can match the predicates: the filtered columns are read and evaluated, and kept
   * for the batch when a row matches (each column is decoded once).
   */
  private def readIfAnyMatch(from: Long, to: Long): Option[VectorSchemaRoot] = {
    val filtered = reader.read(from, to, allocator, filterFields, withMetadata = false)
    val n = filtered.getRowCount
    if (selection.length < n) selection = new Array[Int](n)
    if (predicate.select(filtered.getVector, n, selection) == 0) {
      filtered.close()
      None
    } else {
      val rest =
        try reader.read(from, to, allocator, otherFields, withMetadata = true)
        catch { case NonFatal(e) => filtered.close(); throw e }
      // The projection's order, then the metadata columns (which close the rest).
      val byId = (filterFields.zip(filtered.getFieldVectors.asScala) ++ otherFields.zip(rest.getFieldVectors.asScala))
        .map { case (f, v) => f.id -> v }.toMap
      val vectors = fields.map(f => byId(f.id)) ++ rest.getFieldVectors.asScala.drop(otherFields.size)
      Some(new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, n))
    }
  }

  override def close(): Unit = if (reader != null) { reader.close(); reader = null }
}
