package io.sparklance.spark

import java.nio.ByteBuffer
import java.util.PriorityQueue

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._

/**
 * The `k` nearest of a group's rows, nearest first, as an array of the rows: `row` is a struct whose first field is
 * the distance (float; rows without one are skipped) and second the row id (long; ties go to the smaller). Each task
 * keeps a heap of `k` rows per group and the heaps are merged, so a batch of queries is searched in one pass over the
 * table (with the query's number as the group) instead of sorting every row of every query.
 */
case class NearestRows(row: Expression, k: Int, mutableAggBufferOffset: Int = 0, inputAggBufferOffset: Int = 0)
    extends TypedImperativeAggregate[PriorityQueue[InternalRow]] with UnaryLike[Expression] {

  override def child: Expression = row
  override def dataType: DataType = ArrayType(row.dataType, containsNull = false)
  override def nullable: Boolean = false
  override def prettyName: String = "nearest_rows"

  private[this] def fields: Int = row.dataType.asInstanceOf[StructType].length

  /** Nearest first: by distance, then row id. */
  private[this] def compare(a: InternalRow, b: InternalRow): Int = {
    val c = java.lang.Float.compare(a.getFloat(0), b.getFloat(0))
    if (c != 0) c else java.lang.Long.compare(a.getLong(1), b.getLong(1))
  }

  // The farthest kept row at the head, to be replaced by a nearer one.
  override def createAggregationBuffer(): PriorityQueue[InternalRow] =
    new PriorityQueue[InternalRow](math.min(k, 1024) + 1, (a: InternalRow, b: InternalRow) => compare(b, a))

  private[this] def offer(heap: PriorityQueue[InternalRow], r: InternalRow): Unit =
    if (heap.size < k) heap.add(r.copy())
    else if (compare(r, heap.peek()) < 0) { heap.poll(); heap.add(r.copy()) }

  override def update(heap: PriorityQueue[InternalRow], input: InternalRow): PriorityQueue[InternalRow] = {
    val r = row.eval(input).asInstanceOf[InternalRow]
    if (r != null && !r.isNullAt(0)) offer(heap, r)
    heap
  }

  override def merge(heap: PriorityQueue[InternalRow], other: PriorityQueue[InternalRow]): PriorityQueue[InternalRow] = {
    other.forEach(r => offer(heap, r))
    heap
  }

  override def eval(heap: PriorityQueue[InternalRow]): Any = {
    val rows = heap.toArray(new Array[InternalRow](0))
    java.util.Arrays.sort(rows, (a: InternalRow, b: InternalRow) => compare(a, b))
    new GenericArrayData(rows.asInstanceOf[Array[Any]])
  }

  @transient private[this] lazy val toUnsafe = UnsafeProjection.create(row.dataType.asInstanceOf[StructType])

  override def serialize(heap: PriorityQueue[InternalRow]): Array[Byte] = {
    val rows = heap.toArray(new Array[InternalRow](0)).map(r => toUnsafe(r).copy().getBytes)
    val out = ByteBuffer.allocate(4 + rows.map(4 + _.length).sum)
    out.putInt(rows.length)
    rows.foreach { b => out.putInt(b.length); out.put(b) }
    out.array()
  }

  override def deserialize(bytes: Array[Byte]): PriorityQueue[InternalRow] = {
    val in = ByteBuffer.wrap(bytes)
    val heap = createAggregationBuffer()
    (0 until in.getInt()).foreach { _ =>
      val b = new Array[Byte](in.getInt())
      in.get(b)
      val r = new UnsafeRow(fields)
      r.pointTo(b, b.length)
      heap.add(r)
    }
    heap
  }

  override def withNewMutableAggBufferOffset(offset: Int): NearestRows = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): NearestRows = copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): NearestRows = copy(row = newChild)
}
