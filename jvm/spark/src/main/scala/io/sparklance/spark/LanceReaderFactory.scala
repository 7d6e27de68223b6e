package io.sparklance.spark

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import io.sparklance.core.scan.{FragmentReader, MetadataColumn}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.HadoopStorage
import io.sparklance.core.table.{Fragment, FragmentFiles}
import io.sparklance.proto.{FileProtos, TableProtos}

/** Creates the readers of a scan's partitions on executors: columnar batches, or rows from them. */
final case class LanceReaderFactory(readSchema: StructType, columnar: Boolean) extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = columnar

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new LanceColumnarReader(partition.asInstanceOf[LancePartition], readSchema)

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val batches = new LanceColumnarReader(partition.asInstanceOf[LancePartition], readSchema)
    new PartitionReader[InternalRow] {
      private var rows: Iterator[InternalRow] = Iterator.empty
      override def next(): Boolean = {
        while (!rows.hasNext && batches.next()) rows = batches.get().rowIterator().asScala
        rows.hasNext
      }
      override def get(): InternalRow = rows.next()
      override def close(): Unit = batches.close()
    }
  }
}

/**
 * Reads one partition in batches: each fragment slice's rows through the core's [[FragmentReader]], converted to
 * the Arrow layouts Spark reads. Each batch is freed when the next is requested; everything is released when the
 * task completes, whatever way it ends.
 */
final class LanceColumnarReader(p: LancePartition, readSchema: StructType) extends PartitionReader[ColumnarBatch] {
  private val ctx = p.context
  private val allocator = new RootAllocator(Long.MaxValue)
  private val storage = new HadoopStorage(ctx.conf.value.value)
  private lazy val fields = LanceSchema.fromProtos(ctx.manifestPath,
    FileProtos.Schema.parseFrom(ctx.fields).getFieldsList.asScala.toSeq, Map.empty).fields
  private val metadata = ctx.metadataColumns.flatMap(MetadataColumn.byName)
  private val slices = p.slices.iterator
  private var slice: FragmentSlice = _
  private var fragment: Fragment = _
  private var reader: FragmentReader = _
  // With pushed filters, a batch is read in two steps: the filtered columns first, then - only if a row can match -
  // the other columns and the metadata columns, and the batch is put together from both.
  private lazy val filterFields = fields.filter(f => ctx.filters.exists(DataFilters.columns(_).contains(f.name)))
  private lazy val otherFields = fields.filterNot(f => filterFields.exists(_.id == f.id))
  private def filtering = ctx.filters.nonEmpty && filterFields.nonEmpty
  private var position = 0L
  private var emitted = 0L
  private val live = mutable.ArrayBuffer.empty[FieldVector]
  private var current: ColumnarBatch = _
  private var closed = false

  Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => close()))

  private def release(): Unit = {
    live.foreach(v => try v.close() catch { case NonFatal(_) => () })
    live.clear()
    current = null
  }

  /** Moves to the next fragment slice; false when there is none. */
  private def advance(): Boolean = {
    if (reader != null) { reader.close(); reader = null }
    if (!slices.hasNext) return false
    slice = slices.next()
    fragment = new Fragment(TableProtos.DataFragment.parseFrom(slice.fragment))
    val deletions = FragmentFiles.deletionVector(storage, ctx.layout, fragment)
    val rowIds =
      if (metadata.contains(MetadataColumn.RowId)) FragmentFiles.rowIds(storage, ctx.layout.root, ctx.manifestPath, fragment, ctx.stableRowIds)
      else None
    reader = new FragmentReader(storage, ctx.layout, fragment, fields, metadata, deletions, rowIds)
    position = slice.from
    true
  }

  override def next(): Boolean = LanceSparkException.translate {
    release()
    var found = false
    var more = reader != null || advance()
    while (!found && more && ctx.limit.forall(emitted < _)) {
      if (position >= slice.to) more = advance()
      else {
        val end = math.min(slice.to, position + ctx.batchSize)
        val root = if (filtering) readIfAnyMatch(position, end) else reader.read(position, end, allocator)
        position = end
        if (root == null) ()
        else if (root.getRowCount > 0) {
          current = toBatch(root)
          emitted += current.numRows()
          found = true
        } else root.close()
      }
    }
    found
  }

  /**
   * Rows [from, to) if one of them can match the pushed filters, else null: the filtered columns are read and
   * evaluated, and kept for the batch when a row matches (each column is decoded once).
   */
  private def readIfAnyMatch(from: Long, to: Long): VectorSchemaRoot = {
    val filtered = reader.read(from, to, allocator, filterFields, withMetadata = false)
    val byName = filtered.getFieldVectors.asScala.map(v => v.getName -> v).toMap
    val n = filtered.getRowCount
    var i = 0
    var found = false
    while (!found && i < n) { found = DataFilters.matches(ctx.filters, byName, i); i += 1 }
    if (!found) { filtered.close(); return null }
    val rest =
      try reader.read(from, to, allocator, otherFields, withMetadata = true)
      catch { case NonFatal(e) => filtered.close(); throw e }
    // The projection's order, then the metadata columns (which close the rest).
    val byId = (filterFields.zip(filtered.getFieldVectors.asScala) ++ otherFields.zip(rest.getFieldVectors.asScala))
      .map { case (f, v) => f.id -> v }.toMap
    val vectors = fields.map(f => byId(f.id)) ++ rest.getFieldVectors.asScala.drop(otherFields.size)
    new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, n)
  }

  private def toBatch(root: VectorSchemaRoot): ColumnarBatch = {
    val n = root.getRowCount
    val vectors = root.getFieldVectors.asScala.toIndexedSeq
    val columns = new Array[ColumnVector](vectors.size)
    var i = 0
    try {
      while (i < vectors.size) {
        val v = vectors(i)
        val f = readSchema.fields(i)
        val converted =
          try SparkArrow.convert(v, f.dataType, allocator)
          catch {
            case e: ArithmeticException =>
              throw new io.sparklance.core.ValueOutOfRangeException(s"Column '${f.name}' holds a value that does not " +
                s"fit Spark's ${f.dataType.simpleString} (${e.getMessage}), in fragment ${fragment.id}. Exclude the " +
                "column from the query, or read it with pylance.")
          }
        if (converted ne v) v.close()
        live += converted
        columns(i) = DirectColumnVector.of(f.dataType, converted)
        i += 1
      }
    } catch {
      case NonFatal(e) =>
        // Vectors not yet handed over would leak: close them before the error leaves.
        vectors.drop(i).foreach(v => try v.close() catch { case NonFatal(_) => () })
        throw e
    }
    new ColumnarBatch(columns, n)
  }

  override def get(): ColumnarBatch = current

  override def close(): Unit = if (!closed) {
    closed = true
    release()
    if (reader != null) reader.close()
    allocator.close()
  }
}
