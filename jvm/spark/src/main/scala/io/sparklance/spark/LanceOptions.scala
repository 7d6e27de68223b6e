package io.sparklance.spark

import org.slf4j.LoggerFactory

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}

/**
 * The rule for options of the `lance` source (docs/configuration.md, "How options are checked"): every option of a
 * read or a write is one of
 *  - an option of that kind of access, honoured ([[LanceOptions.Read]], [[LanceOptions.Write]]), including the
 *    other Lance connector's names that mean the same (`max_row_per_file`, `write_mode`, `pushDownFilters`, ...);
 *  - a Hadoop, file-system or sparklance setting for this access (`hadoop.<key>`, `fs.<key>`, `sparklance.<key>`;
 *    `sparklance.*` keys and values are checked with the session's in [[TableAccess.hadoopConf]]);
 *  - a tuning option of the other connector that has no meaning here (its caches, its write queue): accepted, with
 *    a warning in the log naming it, since it cannot change what is read or written;
 *  - an option of the other connector for something sparklance does not do: refused as not supported.
 * Anything else is refused with an error listing the accepted options: a misspelt `verison` never reads the
 * latest version silently. Keys are case-insensitive.
 */
object LanceOptions {
  private val log = LoggerFactory.getLogger(getClass)

  /** Options every access takes: where the table is. `paths` is Spark's own key for `load(p1, p2, ...)`. */
  private val Common = Set("path", "paths")

  /**
   * Read options. `versionAsOf` and `timestampAsOf` are Spark's own time-travel options (resolved by Spark for
   * tables of a catalog); `pushDownFilters` and `topN_push_down` are the other connector's switches for filter and
   * ORDER BY ... LIMIT pushdown.
   */
  val Read: Set[String] = Common ++ Set("version", "timestamp", "tag", "branch", "batch_size", "rows_per_partition",
    "columnar", "nanoseconds", "pushdownfilters", "versionasof", "timestampasof", "driver_lookup_rows",
    "startingversion", "skipchangecommits", "topn_push_down", "aggregate_push_down", "blob_handling",
    ReadOptions.EstimateKey, ReadOptions.RuntimeFilterKey)

  /**
   * Write options; `max_row_per_file`, `data_storage_version` and `write_mode` are the other connector's names.
   * `branch` writes a branch of the table (which must exist).
   */
  val Write: Set[String] = Common ++ Set("branch", "max_rows_per_file", "max_row_per_file", "max_page_bytes", "batch_rows",
    "batch_size", "commit_retries", "file_format_version", "data_storage_version", "write_mode", "invalid_utf8", "enable_stable_row_ids")

  private val NoEffectRead = Map(
    "block_size" -> "sparklance reads pages at the sizes the file records",
    "index_cache_size" -> "sparklance keeps no index cache",
    "metadata_cache_size" -> "sparklance keeps no metadata cache")

  private val NoEffectWrite = Map(
    "use_queued_write_buffer" -> "sparklance writes batches as its tasks produce them",
    "queue_depth" -> "sparklance writes batches as its tasks produce them",
    "max_rows_per_group" -> "Lance files of version 2 have no row groups (use max_page_bytes to size pages)")

  private val RefusedRead = Map(
    "nearest" -> ("a read takes no query vector (the other connector has removed this option too): search with the " +
      "VECTOR_SEARCH table function, e.g. SELECT * FROM VECTOR_SEARCH('lance.db.t', array(...), 10)"))

  private val RefusedWrite = Map(
    "tag" -> "a tag names a version, which cannot change: write to the branch it is on (option branch) or to main",
    "version" -> "a write always commits on top of the latest version: write without a version",
    "timestamp" -> "a write always commits on top of the latest version: write without a timestamp",
    "max_bytes_per_file" -> "data files are sized by rows: use max_rows_per_file",
    "use_large_var_types" -> "sparklance writes the string and binary types of the table's schema",
    "streamingqueryid" -> "it names the streaming query of a writeStream, and this is a batch write: leave it out",
    "__partition_columns" -> "Lance tables are not partitioned: write without partitionBy")

  /** `OPTIMIZE t WITH (...)` options: the other Lance connector's names, which are pylance's `compact_files` ones. */
  val Optimize: Set[String] = Set("target_rows_per_fragment", "materialize_deletions", "materialize_deletions_threshold",
    "max_source_fragments", "batch_size")

  private val NoEffectOptimize = Map(
    "num_threads" -> "sparklance rewrites the fragments of a compaction one after the other on the driver",
    "defer_index_remap" -> ("sparklance never remaps indexes: they keep covering the fragments that remain, and " +
      "ALTER TABLE ... OPTIMIZE INDEX covers the new ones"),
    "max_rows_per_group" -> "Lance files of version 2 have no row groups")

  private val RefusedOptimize = Map(
    "max_bytes_per_file" -> "fragments are sized by rows: use target_rows_per_fragment",
    "compaction_mode" -> "sparklance compacts by rewriting whole fragments only")

  /** `VACUUM t WITH (...)` options: the other Lance connector's names, which are upstream's cleanup policy's. */
  val Vacuum: Set[String] = Set("before_version", "before_timestamp_millis", "delete_unverified",
    "error_if_tagged_old_versions")

  private val SettingPrefixes = Seq("hadoop.", "fs.", "sparklance.")

  /** Checks the options of a read; `where` names the table for errors. */
  def checkRead(options: Map[String, String], where: String): Unit =
    check(options, where, "read", Read, NoEffectRead, RefusedRead)

  /** Checks the options of a write; `where` names the table for errors. */
  def checkWrite(options: Map[String, String], where: String): Unit =
    check(options, where, "write", Write, NoEffectWrite, RefusedWrite)

  /**
   * Checks the options of a streaming write: the write options, Spark's `checkpointLocation`, and the other Lance
   * connector's `streamingQueryId` and `lance.streaming.dedupe.lookback.versions`.
   */
  def checkStreamingWrite(options: Map[String, String], where: String): Unit =
    check(options, where, "streaming write", Write ++ Set("checkpointlocation", "streamingqueryid",
      "lance.streaming.dedupe.lookback.versions"), NoEffectWrite, RefusedWrite)

  /** The value of option `name` (keys are case-insensitive), trimmed. */
  def value(options: Map[String, String], name: String): Option[String] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v.trim }

  /** Checks the options of an OPTIMIZE (compaction); `where` names the table for errors. */
  def checkOptimize(options: Map[String, String], where: String): Unit =
    check(options, where, "compaction", Optimize, NoEffectOptimize, RefusedOptimize)

  /** Checks the options of a VACUUM (cleanup); `where` names the table for errors. */
  def checkVacuum(options: Map[String, String], where: String): Unit =
    check(options, where, "cleanup", Vacuum, Map.empty, Map.empty)

  private def check(options: Map[String, String], where: String, kind: String, known: Set[String],
      noEffect: Map[String, String], refused: Map[String, String]): Unit = {
    val unknown = options.keys.toSeq.sorted.flatMap { key =>
      val k = key.toLowerCase
      if (known.contains(k) || SettingPrefixes.exists(k.startsWith)) None
      else if (noEffect.contains(k)) {
        log.warn(s"Option $key of this $kind of $where has no effect: ${noEffect(k)}.")
        None
      } else if (refused.contains(k) && !offSwitch(k, options(key))) {
        throw new LanceSparkException(new UnsupportedFeatureException(s"Option $key of this $kind of $where is not " +
          s"supported: ${refused(k)}."))
      } else if (refused.contains(k)) None
      else Some(key)
    }
    if (unknown.nonEmpty) {
      throw new LanceSparkException(new InvalidArgumentException(s"Unknown ${plural(unknown.size, "option")} " +
        s"${unknown.mkString(", ")} for a $kind of $where. The $kind options are: " +
        s"${(known -- Common - "versionasof" - "timestampasof").toSeq.sorted.mkString(", ")}; settings go as " +
        "hadoop.<key>, fs.<key> or sparklance.<key> (docs/configuration.md)."))
    }
  }

  /** `false` of a refused boolean switch asks for what sparklance does anyway. */
  private def offSwitch(key: String, value: String): Boolean =
    key == "use_large_var_types" && value.trim.equalsIgnoreCase("false")

  private def plural(n: Int, word: String): String = if (n == 1) word else word + "s"
}
