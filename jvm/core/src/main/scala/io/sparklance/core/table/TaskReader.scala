package io.sparklance.core.table

import java.io.Closeable
import java.nio.charset.StandardCharsets

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
      else if (slice.selected.isDefined) {
        // Rows an index selected, batchRows of them at a time; position counts them.
        val rows = slice.selected.get
        val at = (position - slice.from).toInt
        val chunk = java.util.Arrays.copyOfRange(rows, at, math.min(rows.length, at + ctx.batchRows))
        position = if (at + chunk.length >= rows.length) slice.to else slice.from + at + chunk.length
        val r = reader.readRows(chunk, allocator, fields, withMetadata = true)
        if (r.getRowCount > 0) { emitted += r.getRowCount; result = Some(r) } else r.close()
      } else {
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
    val byName = filtered.getFieldVectors.asScala.map(v => v.getName -> v).toMap
    val n = filtered.getRowCount
    var i = 0
    var found = false
    while (!found && i < n) { found = ctx.filters.forall(p => PredicateEval.matches(p, byName, i)); i += 1 }
    if (!found) {
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

/**
 * Evaluates a [[Predicate]] on a row of Arrow vectors with Spark's SQL semantics (the semantics of the engines
 * that hand predicates to the core): nulls match nothing but `IS NULL`; NaN equals NaN and is larger than every
 * other value; `-0.0 = 0.0`; strings compare by their UTF-8 bytes.
 */
private[table] object PredicateEval {

  def matches(p: Predicate, column: String => FieldVector, i: Int): Boolean = p match {
    case Predicate.And(l, r) => matches(l, column, i) && matches(r, column, i)
    case Predicate.Or(l, r) => matches(l, column, i) || matches(r, column, i)
    case Predicate.IsNull(a) => column(a).isNull(i)
    case Predicate.IsNotNull(a) => !column(a).isNull(i)
    case Predicate.Compare(a, op, v) => compare(column(a), i, v).exists { c =>
      op match {
        case Predicate.Op.Eq => c == 0
        case Predicate.Op.Gt => c > 0
        case Predicate.Op.Ge => c >= 0
        case Predicate.Op.Lt => c < 0
        case Predicate.Op.Le => c <= 0
      }
    }
    case Predicate.In(a, vs) => val c = column(a); vs.exists(v => compare(c, i, v).contains(0))
  }

  /** The sign of (value at i) - v, or None when the value is null or the two cannot be compared. */
  private def compare(vector: FieldVector, i: Int, v: Any): Option[Int] = {
    if (vector.isNull(i)) return None
    def num(x: Any): Option[Double] = x match {
      case n: java.lang.Number => Some(n.doubleValue())
      case _ => None
    }
    def long(x: Any): Option[Long] = x match {
      case n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte) => Some(n.asInstanceOf[Number].longValue())
      case _ => None
    }
    def doubles(a: Double, b: Double): Int = if (a == b) 0 else java.lang.Double.compare(a, b)
    def integral(x: Long): Option[Int] = long(v).map(java.lang.Long.compare(x, _)).orElse(num(v).map(doubles(x.toDouble, _)))
    def bytes(b: Array[Byte]): Option[Int] = v match {
      case x: String => Some(Integer.signum(java.util.Arrays.compareUnsigned(b, x.getBytes(StandardCharsets.UTF_8))))
      case _ => None
    }
    vector match {
      case b: BigIntVector => integral(b.get(i))
      case b: IntVector => integral(b.get(i).toLong)
      case b: SmallIntVector => integral(b.get(i).toLong)
      case b: TinyIntVector => integral(b.get(i).toLong)
      case d: Float8Vector => num(v).map(doubles(d.get(i), _))
      case d: Float4Vector => v match {
        case f: java.lang.Float => Some(if (d.get(i) == f.floatValue()) 0 else java.lang.Float.compare(d.get(i), f))
        case _ => num(v).map(doubles(d.get(i).toDouble, _))
      }
      case b: BitVector => v match {
        case x: java.lang.Boolean => Some(java.lang.Boolean.compare(b.get(i) == 1, x))
        case _ => None
      }
      case s: VarCharVector => bytes(s.get(i))
      case s: LargeVarCharVector => bytes(s.get(i))
      case _ => None
    }
  }
}
