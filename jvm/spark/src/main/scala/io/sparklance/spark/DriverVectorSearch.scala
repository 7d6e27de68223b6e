package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSeq, BindReferences, Expression, GenericInternalRow, InterpretedPredicate, JoinedRow, Literal}
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.sources
import org.apache.spark.sql.types.{ArrayType, DoubleType, FloatType, IntegerType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.core.MetadataColumn
import io.sparklance.core.index.{Distance, IvfIndex}

/**
 * A vector search served by its index and small enough to finish here, on the driver, as a [[LocalRelation]] of its
 * rows: the index search (done by the caller, in the core), the rows it found and the rows of the fragments it does
 * not cover taken by row id (Lance's take, through the scan [[DriverLookups]] reads on the driver), their distances
 * (the index's, or measured exactly for refine and unindexed fragments, by [[VectorDistance]]), the nearest kept,
 * the filter after the search, the offset. The rows are those the distributed plan of [[VectorSearch]] gives: each
 * step is that plan's, evaluated by the same expressions, in the same order. A DataFrame over them costs no job and
 * almost no planning to collect.
 *
 * [[rows]] declines (None) when the take would not be a driver lookup ([[LanceScan.isDriverLookup]]: more rows than
 * `driver_lookup_rows`, or too many bytes), so that large searches keep the distributed plan.
 */
private[spark] object DriverVectorSearch {

  /**
   * One search to finish. `table` and `options` are the relation's; `columns` its table columns, `rowId` and
   * `fragmentId` its metadata columns; `queries` with `founds` (each query's rows by the index, nearest first);
   * `unindexed` the fragments the index does not cover; `exact` whether the rows are measured again exactly;
   * `postfilter` a condition (analysed over `columns`, `rowId`, `fragmentId` and `distance`) applied after the nearest
   * are chosen; `wanted` the columns returned.
   */
  final case class Request(table: LanceTable, options: CaseInsensitiveStringMap, columns: Seq[Attribute],
      rowId: Attribute, fragmentId: Attribute, distance: Attribute, vectorColumn: String, metric: Distance,
      queries: Seq[Array[Double]], founds: Seq[IvfIndex.Found], unindexed: Seq[Long], exact: Boolean,
      postfilter: Option[Expression], k: Int, offset: Int, lower: Float, upper: Float, wanted: Seq[Attribute],
      withRowId: Boolean, batch: Boolean)

  /** The search's rows as a local relation, or None when its take is not a driver lookup. */
  def rows(r: Request): Option[LocalRelation] = {
    val vector = r.columns.find(_.name == r.vectorColumn)
    val filterColumns = r.postfilter.toSeq.flatMap(_.references.toSeq)
    val read = r.columns.filter(c => r.wanted.exists(_.exprId == c.exprId) || filterColumns.exists(_.exprId == c.exprId) ||
      (r.exact && vector.exists(_.exprId == c.exprId)))
    val input = read ++ Seq(r.rowId, r.fragmentId)
    val ids = r.founds.flatMap(_.rowIds).distinct
    val taken: Option[Array[InternalRow]] =
      if (ids.isEmpty && r.unindexed.isEmpty) Some(Array.empty)
      else {
        val builder = r.table.newScanBuilder(r.options).asInstanceOf[LanceScanBuilder]
        val byId: Seq[sources.Filter] = if (ids.isEmpty) Nil else Seq(sources.In(MetadataColumn.RowId.name, ids.map(Long.box).toArray))
        val byFragment: Seq[sources.Filter] =
          if (r.unindexed.isEmpty) Nil else Seq(sources.In(MetadataColumn.FragmentId.name, r.unindexed.map(Long.box).toArray))
        builder.pushFilters(Array((byId ++ byFragment).reduce[sources.Filter](sources.Or(_, _))))
        builder.pruneColumns(StructType(input.map(a => StructField(a.name, a.dataType, a.nullable, a.metadata))))
        val scan = builder.build().asInstanceOf[LanceScan]
        if (!scan.isDriverLookup) None
        else {
          require(scan.readSchema.fieldNames.toSeq == input.map(_.name), s"${scan.readSchema} is not $input")
          val out = ArrayBuffer.empty[InternalRow]
          scan.foreachRowOnDriver(row => out += row.copy())
          Some(out.toArray)
        }
      }
    taken.map(rows => LanceSparkException.translate(relation(r, input, rows)))
  }

  private def relation(r: Request, input: Seq[Attribute], rows: Array[InternalRow]): LocalRelation = {
    val rowIdAt = input.size - 2
    val fragmentAt = input.size - 1
    val unindexed = r.unindexed.toSet
    val keep = r.postfilter.map { c =>
      val p = InterpretedPredicate(BindReferences.bindReference(c, input :+ r.distance))
      p.initialize(0)
      p
    }
    val wantedAt = r.wanted.map(w => input.indexWhere(_.exprId == w.exprId))
    val queryIndex = AttributeReference("query_index", IntegerType, nullable = false)()
    val output = (if (r.batch) Seq(queryIndex) else Nil) ++ r.wanted.map(_.newInstance()) ++
      Seq(r.distance.newInstance()) ++ (if (r.withRowId) Seq(r.rowId.newInstance()) else Nil)
    val result = ArrayBuffer.empty[InternalRow]
    r.queries.indices.foreach { q =>
      val found = r.founds(q)
      // Each candidate row with its distance: the index's, or measured exactly (null: never returned).
      val measured: Array[(InternalRow, Float)] =
        if (!r.exact) {
          val at = found.rowIds.zipWithIndex.toMap
          rows.flatMap { row =>
            at.get(row.getLong(rowIdAt)).map(found.distances).filter(d => d >= r.lower && d < r.upper).map(row -> _)
          }
        } else {
          val mine = found.rowIds.toSet
          val query = Literal.create(new GenericArrayData(r.queries(q).map(Double.box)), ArrayType(DoubleType, containsNull = false))
          val vectorAt = input.indexWhere(_.name == r.vectorColumn)
          val distance = VectorDistance(BindReferences.bindReference(input(vectorAt): Expression, input), query, r.metric,
            r.vectorColumn, r.lower, r.upper)
          rows.flatMap { row =>
            if (!unindexed.contains(row.getLong(fragmentAt)) && !mine.contains(row.getLong(rowIdAt))) None
            else Option(distance.eval(row)).map(d => row -> d.asInstanceOf[Float])
          }
        }
      // Nearest first, ties by row id, as Spark's sort orders floats and longs; then the filter, then the offset.
      val nearest = measured.sortWith { case ((ra, da), (rb, db)) =>
        val c = if (da == db) 0 else java.lang.Float.compare(da, db)
        c < 0 || (c == 0 && ra.getLong(rowIdAt) < rb.getLong(rowIdAt))
      }.take(r.k)
      val filtered = keep.fold(nearest)(p => nearest.filter { case (row, d) => p.eval(new JoinedRow(row, InternalRow(d))) })
      filtered.drop(r.offset).foreach { case (row, d) =>
        val values = (if (r.batch) Seq[Any](q) else Nil) ++ wantedAt.zip(r.wanted).map { case (i, a) => row.get(i, a.dataType) } ++
          Seq[Any](d) ++ (if (r.withRowId) Seq[Any](row.getLong(rowIdAt)) else Nil)
        result += new GenericInternalRow(values.toArray)
      }
    }
    LocalRelation(output, result.toSeq)
  }

  /** The `_distance` column of a search's result. */
  def distanceColumn(): Attribute = AttributeReference("_distance", FloatType, nullable = true)()
}
