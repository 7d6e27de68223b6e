package io.sparklance.spark

import io.sparklance.core.{InvalidArgumentException, table => lance}

/**
 * Read options of the `lance` source (keys are case-insensitive; resolved by the core's `Settings`). `batch_size`, `rows_per_partition` and
 * `columnar` may also be table properties (the table's config), which is how statements that take no options
 * (DELETE, UPDATE, MERGE) are tuned; precedence: read option > table property > default.
 *  - `version`, `timestamp`, `tag`: which version to read (at most one; default the latest);
 *  - `batch_size`: rows per columnar batch (default 8192);
 *  - `rows_per_partition`: the largest number of rows one Spark partition reads; larger fragments are split by
 *    row ranges. Without it, partitions are sized by the bytes of data files, as Spark sizes those of its file
 *    sources ([[LanceScan.taskSizing]]);
 *  - `columnar`: hand Spark columnar batches (default true) or rows (false);
 *  - `nanoseconds`: `truncate` (default) or `long`, how nanosecond values map to Spark types (read when the
 *    table is resolved, since it shapes the schema: [[ReadOptions.nanoseconds]]);
 *  - `pushDownFilters` (the other Lance connector's name): `false` keeps Spark's filters out of the scan;
 *  - `topN_push_down` (the other connector's name): `false` keeps ORDER BY ... LIMIT out of the scan;
 *  - `aggregate_push_down`: `false` keeps COUNT, MIN and MAX out of the scan (always read and aggregated by Spark),
 *    as `spark.sql.parquet.aggregatePushdown` does for Parquet;
 *  - `estimate_filtered_rows`: `false` reports a filtered scan's rows to Spark's planner as all it reads, not those its
 *    filters keep by a sample ([[io.sparklance.core.table.Scan.filterSelectivity]]); also a catalog option, below the
 *    read option and above the table property;
 *  - `runtime_filter_push_down`: `true` takes runtime filters (the `IN` of a broadcast join's keys that Spark's
 *    dynamic pruning hands a scan when the query runs: [[LanceScan.filter]]); off by default, since on TPC-H SF1
 *    they made the queries that take them slower (docs/reading.md); also a catalog option, below the read option
 *    and above the table property;
 *  - `driver_lookup_rows`: a scan whose rows an index selects and that reads at most this many rows is read on the
 *    driver, without a Spark job, when the SQL extensions are on ([[DriverLookups]]; default 4096, 0 never);
 *  - `startingVersion`, `skipChangeCommits` (Delta Lake's names): a streaming read's start and how it treats
 *    versions that change existing rows ([[LanceMicroBatchStream]]); refused by batch reads.
 * Which option names are accepted at all is decided by [[LanceOptions]].
 */
final case class ReadOptions(batchSize: Int, rowsPerPartition: Option[Long], columnar: Boolean = true,
    pushDownFilters: Boolean = true, driverLookupRows: Long = ReadOptions.DriverLookupRows,
    stream: LanceMicroBatchStream.Options = LanceMicroBatchStream.Options(), pushDownTopN: Boolean = true,
    pushDownAggregates: Boolean = true, estimateFilteredRows: Boolean = true, runtimeFilters: Boolean = false)

object ReadOptions {
  val DriverLookupRows = 4096L

  /** The option (and catalog option) that turns runtime filters on. */
  val RuntimeFilterKey = "runtime_filter_push_down"
  val EstimateKey = "estimate_filtered_rows"

  /** The read options a catalog may also set for its tables (below a read option, above a table property). */
  val CatalogKeys: Seq[String] = Seq(EstimateKey, RuntimeFilterKey)

  def nanoseconds(options: Map[String, String]): SparkSchemas.NanosecondMapping =
    LanceOptions.value(options, "nanoseconds").map(_.toLowerCase) match {
      case None | Some("truncate") => SparkSchemas.NanosecondMapping.TruncateToMicros
      case Some("long") => SparkSchemas.NanosecondMapping.AsLong
      case Some(other) => throw new LanceSparkException(new InvalidArgumentException(
        s"Option nanoseconds must be 'truncate' or 'long', not '$other'."))
    }

  def apply(options: Map[String, String], tableConfig: Map[String, String]): ReadOptions = LanceSparkException.translate {
    val settings = lance.Settings.of(options, tableConfig)
    val core = lance.ReadSettings(settings)
    ReadOptions(core.batchRows, core.rowsPerTask, settings.flag(default = true, "columnar"),
      settings.flag(default = true, "pushdownfilters"), settings.count(DriverLookupRows, "driver_lookup_rows"),
      LanceMicroBatchStream.Options(options), settings.flag(default = true, "topn_push_down"),
      settings.flag(default = true, "aggregate_push_down"), settings.flag(default = true, EstimateKey),
      settings.flag(default = false, RuntimeFilterKey))
  }
}
