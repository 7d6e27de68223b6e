package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._

import io.sparklance.core.index.IvfIndex

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

/**
 * For a row (`rowId`: its `_rowid`) a batch's index search found, the queries that found it and the index's distance
 * to each, as an array of `(query_index, _distance)` structs (empty for a row no query found): what a batch served by
 * the index alone returns, each query's rows paired with it by one pass over the rows taken. `founds` are the
 * queries' rows, nearest first; distances outside `[lowerBound, upperBound)` are left out, then each query's first
 * `skip` rows (the offset, when no filter after the search decides which rows it skips). `index` names the index,
 * for EXPLAIN.
 */
case class IndexedMatches(rowId: Expression, founds: Seq[IvfIndex.Found], skip: Int, lowerBound: Float,
    upperBound: Float, index: String) extends UnaryExpression with CodegenFallback {

  override def child: Expression = rowId
  override def dataType: DataType = ArrayType(IndexedMatches.Match, containsNull = false)
  override def nullable: Boolean = false
  override def prettyName: String = "vector_index_matches"
  override def toString: String = s"$prettyName($rowId, $index, ${founds.size} queries)"
  override def sql: String = toString

  /** Every query's kept rows as (row id, query, distance), by row id then query. */
  @transient private[this] lazy val table: (Array[Long], Array[Int], Array[Float]) = {
    val rows = founds.zipWithIndex.flatMap { case (found, q) =>
      found.rowIds.indices.filter { i =>
        val d = found.distances(i)
        d >= lowerBound && d < upperBound
      }.drop(skip).map(i => (found.rowIds(i), q, found.distances(i)))
    }.sortBy(r => (r._1, r._2))
    (rows.map(_._1).toArray, rows.map(_._2).toArray, rows.map(_._3).toArray)
  }

  override def eval(input: InternalRow): Any = {
    val value = rowId.eval(input)
    val (ids, queries, distances) = table
    if (value == null) new GenericArrayData(Array.empty[Any])
    else {
      new GenericArrayData(IndexedMatches.positionsOf(ids, value.asInstanceOf[Long])
        .map(i => InternalRow(queries(i), distances(i))).toArray[Any])
    }
  }

  override protected def nullSafeEval(input: Any): Any = throw new IllegalStateException("eval is overridden")

  override protected def withNewChildInternal(newChild: Expression): IndexedMatches = copy(rowId = newChild)
}

object IndexedMatches {
  val Match: StructType = StructType(Seq(StructField("query_index", IntegerType, nullable = false),
    StructField("_distance", FloatType, nullable = false)))

  /** The first position of the sorted `ids` holding `id` or more. */
  private[spark] def firstAtLeast(ids: Array[Long], id: Long): Int = {
    var (lo, hi) = (0, ids.length)
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (ids(mid) < id) lo = mid + 1 else hi = mid
    }
    lo
  }

  /** The positions `[from, until)` of the sorted `ids` that hold `id`. */
  private[spark] def positionsOf(ids: Array[Long], id: Long): Range = {
    val from = firstAtLeast(ids, id)
    var until = from
    while (until < ids.length && ids(until) == id) until += 1
    from until until
  }
}

/**
 * For a row taken for a batch that measures the rows found again exactly (`refine_factor`, or fragments the index
 * does not cover), the queries to measure it against, as an array of `(query_index, query vector)` structs: those
 * whose index search found it (`found`: each query's row ids), or every query for a row of a fragment the index does
 * not cover (`unindexed`, by fragment id). `index` names the index, for EXPLAIN.
 */
case class IndexCandidates(rowId: Expression, fragmentId: Expression, found: Seq[Array[Long]], unindexed: Seq[Long],
    queries: Seq[Array[Double]], index: String) extends BinaryExpression with CodegenFallback {

  override def left: Expression = rowId
  override def right: Expression = fragmentId
  override def dataType: DataType = ArrayType(StructType(Seq(StructField("query_index", IntegerType, nullable = false),
    StructField("query", ArrayType(DoubleType, containsNull = false), nullable = false))), containsNull = false)
  override def nullable: Boolean = false
  override def prettyName: String = "vector_index_candidates"
  override def toString: String = s"$prettyName($rowId, $index, ${queries.size} queries)"
  override def sql: String = toString

  /** Each query found, as (row id, query), by row id then query. */
  @transient private[this] lazy val table: (Array[Long], Array[Int]) = {
    val rows = found.zipWithIndex.flatMap { case (ids, q) => ids.map(id => (id, q)) }.sortBy(identity)
    (rows.map(_._1).toArray, rows.map(_._2).toArray)
  }
  @transient private[this] lazy val vectors: Array[GenericArrayData] =
    queries.map(q => new GenericArrayData(q.map(Double.box).toArray[Any])).toArray
  @transient private[this] lazy val everyQuery: GenericArrayData =
    new GenericArrayData(vectors.indices.map(q => InternalRow(q, vectors(q))).toArray[Any])
  @transient private[this] lazy val unindexedSet: Set[Long] = unindexed.toSet

  override def eval(input: InternalRow): Any = {
    val fragment = fragmentId.eval(input)
    if (fragment != null && unindexedSet.contains(fragment.asInstanceOf[Long])) everyQuery
    else {
      val value = rowId.eval(input)
      val (ids, qs) = table
      if (value == null) new GenericArrayData(Array.empty[Any])
      else {
        new GenericArrayData(IndexedMatches.positionsOf(ids, value.asInstanceOf[Long])
          .map(i => InternalRow(qs(i), vectors(qs(i)))).toArray[Any])
      }
    }
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): IndexCandidates =
    copy(rowId = newLeft, fragmentId = newRight)
}
