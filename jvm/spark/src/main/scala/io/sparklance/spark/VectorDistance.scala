package io.sparklance.spark

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.types._

import io.sparklance.core.InvalidArgumentException
import io.sparklance.core.index.Distance

/**
 * Lance's distance between a vector column's value (`vector`: an array of float or double, or of smallint (uint8) for
 * hamming) and a query vector
 * (`query`: an array of double), as float, the type of Lance's `_distance`. Null when the row has no vector, when the
 * vector holds a null, or when the distance is NaN (a NaN value, or a zero vector under cosine): Lance leaves such
 * rows out of a search, and [[VectorSearch]] does too. Null also outside `[lowerBound, upperBound)`, the range of
 * distances a search keeps (an infinite distance is in range when no upper bound is given). A vector of another length than the query is an error naming
 * the column.
 */
case class VectorDistance(vector: Expression, query: Expression, metric: Distance, column: String,
    lowerBound: Float = Float.NegativeInfinity, upperBound: Float = Float.PositiveInfinity)
    extends BinaryExpression with CodegenFallback {

  override def left: Expression = vector
  override def right: Expression = query
  override def dataType: DataType = FloatType
  override def nullable: Boolean = true
  override def prettyName: String = s"${metric.lanceName()}_distance"

  override def checkInputDataTypes(): TypeCheckResult = (vector.dataType, query.dataType) match {
    case (ArrayType(FloatType | DoubleType, _), ArrayType(DoubleType, _)) => TypeCheckResult.TypeCheckSuccess
    case (ArrayType(ShortType, _), ArrayType(DoubleType, _)) if metric == Distance.HAMMING => TypeCheckResult.TypeCheckSuccess
    case (t, ArrayType(DoubleType, _)) =>
      TypeCheckResult.TypeCheckFailure(s"vector_column '$column' is ${t.catalogString}; a vector column is an array of float or double")
    case (_, t) => TypeCheckResult.TypeCheckFailure(s"the query vector is ${t.catalogString}, not an array of numbers")
  }

  private[this] lazy val elementType = vector.dataType.asInstanceOf[ArrayType].elementType
  // A literal query (a single search) is converted once; a query per row (a batch search) on every row.
  @transient private[this] lazy val fixedQuery: Array[Double] =
    if (query.foldable) Option(query.eval().asInstanceOf[ArrayData]).map(_.toDoubleArray()).orNull else null
  @transient private[this] var fbuf: Array[Float] = _
  @transient private[this] var dbuf: Array[Double] = _

  override protected def nullSafeEval(v: Any, qv: Any): Any = {
    val values = v.asInstanceOf[ArrayData]
    val q = if (fixedQuery != null) fixedQuery else qv.asInstanceOf[ArrayData].toDoubleArray()
    val n = values.numElements()
    if (n != q.length) throw new LanceSparkException(new InvalidArgumentException(
      s"vector_column '$column' holds a vector of $n values; the query vector has ${q.length}."))
    var i = 0
    while (i < n) { if (values.isNullAt(i)) return null; i += 1 }
    val d =
      if (elementType == FloatType) {
        if (fbuf == null || fbuf.length != n) fbuf = new Array[Float](n)
        i = 0
        while (i < n) { fbuf(i) = values.getFloat(i); i += 1 }
        metric.between(q, fbuf, 0)
      } else if (elementType == ShortType) {
        if (fbuf == null || fbuf.length != n) fbuf = new Array[Float](n)
        i = 0
        while (i < n) { fbuf(i) = values.getShort(i).toFloat; i += 1 }
        metric.between(q, fbuf, 0)
      } else {
        if (dbuf == null || dbuf.length != n) dbuf = new Array[Double](n)
        i = 0
        while (i < n) { dbuf(i) = values.getDouble(i); i += 1 }
        metric.between(q, dbuf)
      }
    val f = d.toFloat
    // An infinite distance (a vector holding an infinity) is kept unless an upper bound is given, as in Lance.
    if (f.isNaN || f < lowerBound || (f >= upperBound && upperBound != Float.PositiveInfinity)) null else f
  }

  override protected def withNewChildrenInternal(newLeft: Expression, newRight: Expression): VectorDistance =
    copy(vector = newLeft, query = newRight)
}
