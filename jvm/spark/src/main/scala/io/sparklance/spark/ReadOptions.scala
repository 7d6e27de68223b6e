package io.sparklance.spark

import io.sparklance.core.InvalidArgumentException

/**
 * Read options of the `lance` source (keys are case-insensitive):
 *  - `version`, `timestamp`, `tag`: which version to read (at most one; default the latest);
 *  - `batch_size`: rows per columnar batch (default 8192);
 *  - `rows_per_partition`: the largest number of rows one Spark partition reads (default 1048576); larger
 *    fragments are split by row ranges;
 *  - `columnar`: hand Spark columnar batches (default true) or rows (false);
 *  - `nanoseconds`: `truncate` (default) or `long`, how nanosecond values map to Spark types (read when the
 *    table is resolved, since it shapes the schema: [[ReadOptions.nanoseconds]]).
 */
final case class ReadOptions(batchSize: Int, rowsPerPartition: Long, columnar: Boolean = true)

object ReadOptions {
  val DefaultBatchSize = 8192
  val DefaultRowsPerPartition: Long = 1L << 20

  def nanoseconds(options: Map[String, String]): SparkSchemas.NanosecondMapping =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase("nanoseconds") => v.trim.toLowerCase } match {
      case None | Some("truncate") => SparkSchemas.NanosecondMapping.TruncateToMicros
      case Some("long") => SparkSchemas.NanosecondMapping.AsLong
      case Some(other) => throw new LanceSparkException(new InvalidArgumentException(
        s"Option nanoseconds must be 'truncate' or 'long', not '$other'."))
    }

  def apply(options: Map[String, String]): ReadOptions = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    def positive(key: String, default: Long): Long = o.get(key) match {
      case None => default
      case Some(v) => v.trim.toLongOption.filter(_ > 0).getOrElse(
        throw new LanceSparkException(new InvalidArgumentException(s"Option $key must be a positive number, not '$v'.")))
    }
    val columnar = o.get("columnar").map(_.trim.toLowerCase) match {
      case None | Some("true") => true
      case Some("false") => false
      case Some(other) => throw new LanceSparkException(new InvalidArgumentException(
        s"Option columnar must be true or false, not '$other'."))
    }
    ReadOptions(positive("batch_size", DefaultBatchSize).min(Int.MaxValue / 2).toInt,
      positive("rows_per_partition", DefaultRowsPerPartition), columnar)
  }
}
