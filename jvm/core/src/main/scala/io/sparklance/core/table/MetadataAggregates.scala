package io.sparklance.core.table

import scala.collection.mutable
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, VectorSchemaRoot}

import io.sparklance.core.file.LanceFileReader
import io.sparklance.core.format.Fragment
import io.sparklance.core.index.{IndexKind, ZoneMapIndex}
import io.sparklance.core.schema.LanceField

/** An aggregate over a scan's rows that the table's metadata may answer without reading data files. */
sealed trait Aggregate

object Aggregate {
  /** The number of rows (SQL's `COUNT(*)`). */
  case object CountRows extends Aggregate { override def toString: String = "COUNT(*)" }
  /** The number of rows where `column` is not null. */
  final case class Count(column: String) extends Aggregate { override def toString: String = s"COUNT($column)" }
  /** The smallest value of `column` in SQL's order (NaN above all), null when it has none. */
  final case class Min(column: String) extends Aggregate { override def toString: String = s"MIN($column)" }
  /** The largest value of `column` in SQL's order (NaN above all), null when it has none. */
  final case class Max(column: String) extends Aggregate { override def toString: String = s"MAX($column)" }
}

/**
 * Aggregates of a scan's rows that the table's metadata answered ([[Scan.aggregateFromMetadata]]): one row with a
 * column per aggregate, in order (counts as int64, MIN and MAX in the column's type), owned by the caller, and what
 * answered them (`manifest`, `zone map 'x_zones'`, `b-tree 'x_idx'`), for a plan to show.
 */
final class AggregateAnswer(val row: VectorSchemaRoot, val sources: Seq[String]) extends AutoCloseable {
  override def close(): Unit = row.close()
}

/**
 * Aggregates of a scan's rows answered from the manifest and scalar indexes, only where that is exact:
 *  - `COUNT(*)`: the fragments' live rows (physical rows less deleted rows, from the manifest);
 *  - `COUNT(c)`, `MIN(c)`, `MAX(c)`: from a zone map index on `c` (docs/dev/scalar-indexes.md §6.1) when it covers
 *    every fragment the scan reads, none of them has a deletion file (zones count rows deleted since), the zones of
 *    each span all of its physical rows, and no zone holds a NaN (upstream's bounds of such a zone are not SQL's
 *    order): the zones' non-null rows summed, their smallest `min` and largest `max`;
 *  - else from a B-tree index on `c` that covers every fragment the scan reads ([[BTreeOrder.columnStats]]): its
 *    first and last live entries (deleted rows skipped, NaN as SQL orders it) and its live nulls.
 * Anything else, and any scan with filters on data, is not answered: the caller reads the rows.
 */
private[table] object MetadataAggregates {

  def answer(snapshot: Snapshot, fragments: Seq[Fragment], dataFilters: Seq[Predicate], aggregates: Seq[Aggregate],
      allocator: BufferAllocator): Option[AggregateAnswer] = {
    val columns = aggregates.collect {
      case Aggregate.Count(c) => c
      case Aggregate.Min(c) => c
      case Aggregate.Max(c) => c
    }.distinct
    if (aggregates.isEmpty || dataFilters.nonEmpty) None
    else {
      val stats = mutable.LinkedHashMap.empty[String, ColumnStats]
      try {
        val all = columns.forall { c =>
          val s = columnStats(snapshot, fragments, c, allocator)
          s.foreach(stats(c) = _)
          s.isDefined
        }
        if (!all) None
        else {
          val vectors = aggregates.zipWithIndex.map { case (a, i) =>
            val name = s"_$i"
            a match {
              case Aggregate.CountRows => count(name, fragments.map(_.numRows).sum, allocator)
              case Aggregate.Count(c) => count(name, stats(c).values, allocator)
              case Aggregate.Min(c) => copy(stats(c).min, name, allocator)
              case Aggregate.Max(c) => copy(stats(c).max, name, allocator)
            }
          }
          val sources = (if (aggregates.contains(Aggregate.CountRows)) Seq("manifest") else Nil) ++ stats.values.map(_.source)
          Some(new AggregateAnswer(new VectorSchemaRoot(vectors.map(_.getField).asJava, vectors.asJava, 1), sources.distinct))
        }
      } finally stats.values.foreach(_.close())
    }
  }

  private def count(name: String, n: Long, allocator: BufferAllocator): FieldVector = {
    val v = new BigIntVector(name, allocator)
    v.allocateNew(1)
    v.set(0, n)
    v.setValueCount(1)
    v
  }

  private def copy(from: FieldVector, name: String, allocator: BufferAllocator): FieldVector = {
    val f = from.getField
    val out = new org.apache.arrow.vector.types.pojo.Field(name, f.getFieldType, f.getChildren).createVector(allocator)
    out.allocateNew()
    out.copyFromSafe(0, 0, from)
    out.setValueCount(1)
    out
  }

  /** A column's non-null rows and its smallest and largest values (one-row vectors, null when it has no value). */
  private final class ColumnStats(val values: Long, val min: FieldVector, val max: FieldVector, val source: String)
      extends AutoCloseable {
    override def close(): Unit = { min.close(); max.close() }
  }

  private def columnStats(snapshot: Snapshot, fragments: Seq[Fragment], column: String,
      allocator: BufferAllocator): Option[ColumnStats] = for {
    field <- snapshot.schema.field(column) if !column.contains('.') && field.children.isEmpty
    arrow = LanceFileReader.readField(field)
    order <- ValueOrder.of(arrow.getType)
    stats <- fromZoneMaps(snapshot, fragments, field, arrow, order, allocator).orElse(
      BTreeOrder.columnStats(snapshot, fragments, field, order, allocator).map { case (values, min, max, index) =>
        new ColumnStats(values, min, max, s"b-tree '${index.name}'")
      })
  } yield stats

  private def fromZoneMaps(snapshot: Snapshot, fragments: Seq[Fragment], field: LanceField,
      arrow: org.apache.arrow.vector.types.pojo.Field, order: ValueOrder, allocator: BufferAllocator): Option[ColumnStats] = {
    val indexes = snapshot.indexes.filter(i => i.kind == IndexKind.ZoneMap && i.fieldIds == Seq(field.id))
    if (indexes.isEmpty || fragments.exists(_.deletionFile.nonEmpty) || !fragments.forall(f => indexes.exists(_.covers(f.id)))) None
    else fromZones(snapshot, fragments, field, arrow, order, indexes, allocator)
  }

  private def fromZones(snapshot: Snapshot, fragments: Seq[Fragment], field: LanceField,
      arrow: org.apache.arrow.vector.types.pojo.Field, order: ValueOrder,
      indexes: Seq[io.sparklance.core.index.IndexMetadata], allocator: BufferAllocator): Option[ColumnStats] = {
    val min = arrow.createVector(allocator)
    val max = arrow.createVector(allocator)
    try {
      Seq(min, max).foreach { v => v.allocateNew(); v.setValueCount(1) } // all null: validity starts zeroed
      val spanned = mutable.Map.empty[Long, Long]
      var values = 0L
      var exact = true
      val byId = fragments.map(f => f.id -> f).toMap
      val remaining = mutable.Set(fragments.map(_.id): _*)
      indexes.foreach { index =>
        val mine = remaining.filter(index.covers).toSet
        if (exact && mine.nonEmpty) ZoneMapIndex.withZones(snapshot.storage, snapshot.indexDir(index), allocator) { z =>
          var i = 0
          while (exact && i < z.count) {
            val id = z.fragmentId(i)
            if (mine.contains(id)) {
              val length = z.zoneLength(i)
              val nulls = z.nullCount(i)
              if (z.nanCount(i) != 0 || length < nulls || (length > nulls && (z.min.isNull(i) || z.max.isNull(i)))) exact = false
              else {
                spanned(id) = spanned.getOrElse(id, 0L) + length
                values += length - nulls
                if (length > nulls) {
                  if (min.isNull(0) || order.compare(z.min, i, min, 0) < 0) min.copyFromSafe(i, 0, z.min)
                  if (max.isNull(0) || order.compare(z.max, i, max, 0) > 0) max.copyFromSafe(i, 0, z.max)
                }
              }
            }
            i += 1
          }
        }
        remaining --= mine
      }
      val covered = fragments.forall(f => spanned.getOrElse(f.id, 0L) == byId(f.id).physicalRows)
      if (exact && covered && remaining.isEmpty) Some(new ColumnStats(values, min, max, s"zone map '${indexes.head.name}'"))
      else { min.close(); max.close(); None }
    } catch {
      case NonFatal(e) =>
        min.close(); max.close()
        log.warn(s"Not answering aggregates of ${field.name} in ${snapshot.root}@${snapshot.version} from zone maps: ${e.getMessage}")
        None
    }
  }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
}
