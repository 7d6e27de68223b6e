package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types._

/**
 * The distance a vector index reported for a row (`rowId`: its `_rowid`), among the rows it found (`rowIds`, with
 * `distances`); null for a row it did not find, and outside `[lowerBound, upperBound)`, as [[VectorDistance]] is.
 * What a search served by the index alone returns: pylance reports the index's distances (for IVF_PQ, approximate)
 * when the index covers every fragment and no refine is asked. `index` names the index, for EXPLAIN.
 */
case class IndexedDistance(rowId: Expression, rowIds: Seq[Long], distances: Seq[Float], index: String,
    lowerBound: Float = Float.NegativeInfinity, upperBound: Float = Float.PositiveInfinity)
    extends UnaryExpression with CodegenFallback {

  override def child: Expression = rowId
  override def dataType: DataType = FloatType
  override def nullable: Boolean = true
  override def prettyName: String = "vector_index_distance"
  override def toString: String = s"$prettyName($rowId, $index, ${rowIds.size} rows)"
  override def sql: String = toString

  @transient private[this] lazy val byRow: java.util.HashMap[java.lang.Long, java.lang.Float] = {
    val m = new java.util.HashMap[java.lang.Long, java.lang.Float](rowIds.size * 2)
    rowIds.zip(distances).foreach { case (r, d) => m.put(r, d) }
    m
  }

  override protected def nullSafeEval(id: Any): Any = {
    val d = byRow.get(id.asInstanceOf[java.lang.Long])
    if (d == null) null
    else {
      val f = d.floatValue
      if (f < lowerBound || f >= upperBound) null else f
    }
  }

  override protected def withNewChildInternal(newChild: Expression): IndexedDistance = copy(rowId = newChild)
}

/**
 * Whether a row (`rowId`: its `_rowid`) is among those a vector index found (`rowIds`): the rows whose exact
 * distances a search measures when it refines the index's results or combines them with unindexed fragments.
 * `index` names the index, for EXPLAIN.
 */
case class IndexCandidate(rowId: Expression, rowIds: Seq[Long], index: String) extends UnaryExpression with CodegenFallback {
  override def child: Expression = rowId
  override def dataType: DataType = BooleanType
  override def nullable: Boolean = false
  override def prettyName: String = "vector_index_candidate"
  override def toString: String = s"$prettyName($rowId, $index, ${rowIds.size} rows)"
  override def sql: String = toString

  @transient private[this] lazy val ids: java.util.HashSet[java.lang.Long] = {
    val s = new java.util.HashSet[java.lang.Long](rowIds.size * 2)
    rowIds.foreach(r => s.add(r))
    s
  }

  override def eval(input: org.apache.spark.sql.catalyst.InternalRow): Any = {
    val id = rowId.eval(input)
    id != null && ids.contains(id.asInstanceOf[java.lang.Long])
  }

  override protected def withNewChildInternal(newChild: Expression): IndexCandidate = copy(rowId = newChild)
}
