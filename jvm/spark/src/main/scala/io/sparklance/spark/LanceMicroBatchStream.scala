package io.sparklance.spark

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{MicroBatchStream, Offset, ReadLimit, SupportsTriggerAvailableNow}
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException, table => lance}
import io.sparklance.core.table.{Snapshot, TimeTravel}

/**
 * A Lance table read as a stream (`spark.readStream.format("lance").load(path)`, `readStream.table(...)`): the rows
 * of the table's version when the query first starts, then the rows each later version appends, one micro-batch
 * reading every version committed since the last. An offset is a table version. Versions that change no rows
 * (compaction, index and config changes) add nothing; versions that change or remove existing rows (DELETE, UPDATE,
 * MERGE, overwrites, restores, column rewrites) stop the query, or with `skipChangeCommits` are skipped whole, as
 * Delta Lake's stream source does. A version whose schema is not the stream's stops it.
 */
final class LanceMicroBatchStream(root: String, conf: Configuration, schema: StructType, readSchema: StructType,
    options: ReadOptions, nanoseconds: SparkSchemas.NanosecondMapping)
    extends MicroBatchStream with SupportsTriggerAvailableNow {
  import LanceMicroBatchStream._

  // Trigger.AvailableNow: the latest version when the query started, which its batches read up to.
  @volatile private var availableNow: Option[Long] = None

  override def prepareForTriggerAvailableNow(): Unit =
    availableNow = Some(LanceSparkException.translate(table.latestVersion()))

  override def getDefaultReadLimit: ReadLimit = ReadLimit.allAvailable()

  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    availableNow.map(LanceOffset(_, snapshot = false)).getOrElse(latestOffset())

  private def table = lance.Table.forPath(root, conf)

  override def initialOffset(): Offset = options.stream.startingVersion match {
    case None => LanceOffset(0L, snapshot = true)
    case Some("latest") => LanceOffset(LanceSparkException.translate(table.latestVersion()), snapshot = false)
    case Some(v) =>
      val version = Try(v.toLong).toOption.filter(_ >= 1).getOrElse(throw new LanceSparkException(
        new InvalidArgumentException(s"Option startingVersion must be a table version (1 or more) or 'latest', not '$v'.")))
      LanceSparkException.translate(table.snapshot(TimeTravel.AtVersion(version)))
      LanceOffset(version - 1, snapshot = false)
  }

  override def latestOffset(): Offset = LanceOffset(LanceSparkException.translate(table.latestVersion()), snapshot = false)

  override def deserializeOffset(json: String): Offset = LanceOffset.parse(json)

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = LanceSparkException.translate {
    val (from, to) = (start.asInstanceOf[LanceOffset], end.asInstanceOf[LanceOffset])
    val t = table
    val scans =
      if (from.snapshot) Seq(scanOf(t.snapshot(TimeTravel.AtVersion(to.version)), None))
      else {
        // Each version's fragments are those the next one is compared with: every manifest is read once.
        var before =
          if (from.version >= 1) t.snapshot(TimeTravel.AtVersion(from.version)).fragmentIds.toSet else Set.empty[Long]
        (from.version + 1 to to.version).flatMap { v =>
          val s = t.snapshot(TimeTravel.AtVersion(v))
          val scan = appended(t, s, before)
          before = s.fragmentIds.toSet
          scan
        }
      }
    val broadcast = SparkSession.active.sparkContext.broadcast(new SerializableConfiguration(conf))
    scans.flatMap(_.planTasks(options.rowsPerPartition.getOrElse(lance.ReadSettings.DefaultRowsPerTask))).map(task => LancePartition(root, task, broadcast): InputPartition).toArray
  }

  /** The scan of the rows version `s` appended to the fragments `before` it had, or None when it appended none. */
  private def appended(t: lance.Table, s: Snapshot, before: Set[Long]): Option[lance.Scan] =
    t.operationOf(s) match {
      case Some(op) if op.equalsIgnoreCase("append") || op.equalsIgnoreCase("overwrite") && before.isEmpty =>
        // An overwrite of a table with no fragments (its creation, by pylance) only adds rows.
        val added = s.fragmentIds.filterNot(before.contains)
        if (added.isEmpty) None else Some(scanOf(s, Some(added)))
      case Some(op) if NoDataChange.contains(op.toLowerCase) => None
      case _ if options.stream.skipChangeCommits => None
      case op => throw new UnsupportedFeatureException(s"Version ${s.version} of $root changes existing rows " +
        s"(${op.getOrElse("an operation whose transaction file cannot be read")}); a stream of a Lance table reads " +
        "the rows versions append. Set option skipChangeCommits to true to skip such versions, or start a new query " +
        "(a new checkpoint) with startingVersion after it.")
    }

  private def scanOf(s: Snapshot, fragments: Option[Seq[Long]]): lance.Scan = {
    checkSchema(s)
    // A blob v2 column reads as its bytes, as a batch read shows it.
    val fields = readSchema.fieldNames.toSeq.map(n => BlobHandling.bytes(s.schema.field(n).get))
    val scan = s.newScan().withProjection(fields)
    fragments.fold(scan)(ids => scan.withFilters(Seq(lance.Predicate.In(io.sparklance.core.MetadataColumn.FragmentId.name, ids))))
  }

  private def checkSchema(s: Snapshot): Unit = {
    val now = SparkSchemas.toSpark(s.schema, nanoseconds)
    if (!PathWrites.sameType(now, schema)) {
      throw new UnsupportedFeatureException(s"The schema of $root changed at version ${s.version}: it is " +
        s"${now.toDDL}, and the stream reads ${schema.toDDL}. Start a new query (a new checkpoint) to read the new " +
        "schema.")
    }
  }

  override def createReaderFactory(): PartitionReaderFactory = LanceReaderFactory(readSchema, options.columnar)

  override def commit(end: Offset): Unit = ()

  override def stop(): Unit = ()

  override def toString: String = s"LanceMicroBatchStream($root)"
}

object LanceMicroBatchStream {
  /** Refuses the streaming options in a batch read of `table`. */
  def refuseInBatch(options: ReadOptions, table: String): Unit =
    options.stream.named.headOption.foreach { k =>
      throw new LanceSparkException(new InvalidArgumentException(s"Option $k applies to a stream of $table " +
        "(spark.readStream), not to a batch read. Leave it out, or read with readStream."))
    }

  /** The stream of `table`, reading the columns of `readSchema` (all of them: Spark prunes none for a stream). */
  def of(table: LanceTable, readSchema: StructType, options: ReadOptions): LanceMicroBatchStream = {
    options.stream.pinning.headOption.foreach { k =>
      throw new LanceSparkException(new InvalidArgumentException(s"Option $k does not apply to a stream of " +
        s"${table.name()}: a stream reads the versions committed after it starts. Use startingVersion to start " +
        "from an earlier version."))
    }
    if (table.blobHandling == BlobHandling.Descriptions && table.snapshot.schema.fields.exists(_.isBlobV2)) {
      throw new LanceSparkException(new UnsupportedFeatureException(s"A stream of ${table.name()} reading blob " +
        s"columns as descriptors (${BlobHandling.Key} = blobs_descriptions) is not supported: read the stream with " +
        s"${BlobHandling.Key} = all_binary (the default)."))
    }
    new LanceMicroBatchStream(table.snapshot.root, table.hadoopConf, table.schema, readSchema, options, table.nanoseconds)
  }

  /** Operations that change no row: compaction, index, config, reserved fragment ids, base paths. */
  private val NoDataChange = Set("rewrite", "create_index", "update_config", "reserve_fragments", "update_bases")

  /**
   * A stream's position: the table version read up to; `snapshot` marks the start of a stream that first reads
   * the whole table as of the end of its first batch.
   */
  final case class LanceOffset(version: Long, snapshot: Boolean) extends Offset {
    override def json(): String = s"""{"version":$version,"snapshot":$snapshot}"""
  }

  object LanceOffset {
    private val Json = """\{"version":(\d+),"snapshot":(true|false)\}""".r

    def parse(json: String): LanceOffset = json.trim match {
      case Json(v, s) => LanceOffset(v.toLong, s.toBoolean)
      case other => throw new LanceSparkException(new InvalidArgumentException(s"'$other' is not an offset of a " +
        "Lance stream (the checkpoint was written by another source): use a new checkpoint location."))
    }
  }

  /**
   * The options of a streaming read ([[ReadOptions]]); `named` names those given (batch reads refuse them), and
   * `pinning` the options choosing a version, which a stream refuses.
   */
  final case class Options(startingVersion: Option[String] = None, skipChangeCommits: Boolean = false,
      named: Seq[String] = Nil, pinning: Seq[String] = Nil)

  object Options {
    def apply(options: Map[String, String]): Options = {
      def get(name: String) = options.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => k -> v.trim }
      val start = get("startingVersion")
      val skip = get("skipChangeCommits")
      val skipping = skip.map(_._2.toLowerCase).map {
        case "true" => true
        case "false" => false
        case other => throw new LanceSparkException(new InvalidArgumentException(
          s"Option skipChangeCommits must be true or false, not '$other'."))
      }
      val pinning = options.keys.toSeq.sorted.filter(k => Set("version", "timestamp", "tag", "branch").contains(k.toLowerCase))
      Options(start.map(_._2.toLowerCase), skipping.getOrElse(false), (start.toSeq ++ skip.toSeq).map(_._1), pinning)
    }
  }
}
