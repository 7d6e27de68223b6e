package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types._

/**
 * A question about a row (`rowId`: its `_rowid`) answered from the rows a vector index found for one query (`rowIds`,
 * nearest first). `index` names the index, for EXPLAIN. The row ids are sorted once per task and looked up by binary
 * search, without boxing.
 */
sealed abstract class IndexFoundRows extends UnaryExpression with CodegenFallback {
  def rowId: Expression
  def rowIds: Seq[Long]
  def index: String

  override def child: Expression = rowId
  override def toString: String = s"$prettyName($rowId, $index, ${rowIds.size} rows)"
  override def sql: String = toString

  /** The positions in `rowIds`, in the order of the row ids they hold. */
  @transient private[this] lazy val order: Array[Int] = {
    val ids = rowIds.toArray
    ids.indices.sortBy(ids(_)).toArray
  }
  @transient private[this] lazy val sortedIds: Array[Long] = {
    val ids = rowIds.toArray
    order.map(ids(_))
  }

  /** The position in `rowIds` of the row `id`, or -1 if the index did not find it. */
  protected def position(id: Long): Int = {
    val i = java.util.Arrays.binarySearch(sortedIds, id)
    if (i < 0) -1 else order(i)
  }
}

/**
 * The distance a vector index reported for a row, among the rows it found (`rowIds`, with `distances`); null for a
 * row it did not find, and outside `[lowerBound, upperBound)`, as [[VectorDistance]] is. What a search served by the
 * index alone returns: pylance reports the index's distances (for IVF_PQ, approximate) when the index covers every
 * fragment and no refine is asked.
 */
case class IndexedDistance(rowId: Expression, rowIds: Seq[Long], distances: Seq[Float], index: String,
    lowerBound: Float = Float.NegativeInfinity, upperBound: Float = Float.PositiveInfinity) extends IndexFoundRows {

  override def dataType: DataType = FloatType
  override def nullable: Boolean = true
  override def prettyName: String = "vector_index_distance"

  @transient private[this] lazy val values: Array[Float] = distances.toArray

  override protected def nullSafeEval(id: Any): Any = {
    val p = position(id.asInstanceOf[Long])
    if (p < 0) null
    else {
      val f = values(p)
      if (f < lowerBound || f >= upperBound) null else f
    }
  }

  override protected def withNewChildInternal(newChild: Expression): IndexedDistance = copy(rowId = newChild)
}
