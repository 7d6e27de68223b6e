package io.sparklance.spark

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{FieldVector, VectorSchemaRoot}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import io.sparklance.core.{table => lance}

/** Creates the readers of a scan's partitions on executors: columnar batches, or rows from them. */
final case class LanceReaderFactory(readSchema: StructType, columnar: Boolean) extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = columnar

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    LanceColumnarReader(partition.asInstanceOf[LancePartition], readSchema)

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val batches = LanceColumnarReader(partition.asInstanceOf[LancePartition], readSchema)
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
 * Reads one scan task of the table at `root` in batches: the core reads the task ([[lance.TaskReader]]: deletion
 * vectors, row ids, pushed predicates), and each batch is converted to the Arrow layouts Spark reads. Each batch is
 * freed when the next is requested; everything is released when the Spark task completes, whatever way it ends (or,
 * read on the driver, at `close`).
 */
final class LanceColumnarReader(root: String, conf: Configuration, task: lance.ScanTask, readSchema: StructType)
    extends PartitionReader[ColumnarBatch] {
  private val allocator = new RootAllocator(Long.MaxValue)
  private val reader = lance.Table.forPath(root, conf).read(task, allocator)
  private val live = mutable.ArrayBuffer.empty[FieldVector]
  private var current: ColumnarBatch = _
  private var closed = false

  Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => close()))

  private def release(): Unit = {
    live.foreach(v => try v.close() catch { case NonFatal(_) => () })
    live.clear()
    current = null
  }

  override def next(): Boolean = LanceSparkException.translate {
    release()
    reader.next() match {
      case Some(batch) => current = toBatch(batch); true
      case None => false
    }
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
                s"fit Spark's ${f.dataType.simpleString} (${e.getMessage}), in fragment ${reader.fragmentId}. Exclude " +
                "the column from the query, or read it with pylance.")
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
    try reader.close() finally allocator.close()
  }
}

object LanceColumnarReader {
  /** The reader of a partition, on an executor. */
  def apply(p: LancePartition, readSchema: StructType): LanceColumnarReader =
    new LanceColumnarReader(p.root, p.conf.value.value, p.task, readSchema)
}
