package io.sparklance.spark

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, LogicalWriteInfo, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.types.StructType
import org.slf4j.LoggerFactory

import io.sparklance.core.{InvalidArgumentException, table => lance}

/**
 * The sink of a streaming query (`writeStream.format("lance")`, `toTable`). Each micro-batch's files are committed as
 * one version on top of the latest: an append, or in complete output mode an overwrite of every row; a table that
 * does not exist yet is created by the first batch, with the stream's schema. The version's transaction records the
 * query's id and the batch's id (`spark.sql.streaming.queryId`, `spark.sql.streaming.epochId`, as Iceberg's sink
 * records them), and a batch the query has already committed is not committed again: after a failure between the
 * table's commit and the query's checkpoint, Spark runs that batch again on restart, and its files are discarded.
 * The query's last batch is found by reading versions back from the latest, as far as the query's last commit.
 */
final class LanceStreamingWrite(spec: WriteSpec, sparkSchema: StructType, queryId: String, complete: Boolean,
    created: Option[NewTable], lookback: Option[Int]) extends StreamingWrite {
  import LanceStreamingWrite._

  // The last batch this query committed: read from the table at the first commit, then kept.
  private var lastEpoch: Option[Option[Long]] = None
  // Commits attempted for a batch, so that its abort leaves the files of a commit whose outcome is unknown.
  private val attempted = mutable.Map.empty[Long, lance.DataCommit]

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new LanceStreamingWriterFactory(spec, sparkSchema)

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit = synchronized {
    val written = LanceBatchWrite.written(messages)
    val table = spec.table
    val latest = LanceSparkException.translate(table.latestIfExists())
    val last = lastEpoch.getOrElse(latest.flatMap(_ => lastCommitted(table)))
    if (last.exists(_ >= epochId)) {
      log.info(s"Batch $epochId of streaming query $queryId is already committed to ${spec.root} (its last batch " +
        s"there is ${last.get}); the files written for it again are discarded.")
      table.discard(written.flatMap(_.files))
      lastEpoch = Some(last)
    } else if (latest.isDefined && !complete && written.forall(_.fragments.isEmpty)) {
      lastEpoch = Some(last) // nothing to append: no version
    } else {
      val readVersion = latest.map(_.version).getOrElse(0L)
      val pending = (latest, created) match {
        case (None, Some(t)) => t.overwrite(table, 0L, t.version)
        case (None, None) => throw new LanceSparkException(new io.sparklance.core.NotATableException(spec.root,
          "it was removed while the streaming query was writing to it"))
        case (Some(_), _) if complete => table.newOverwrite(readVersion, spec.schema, spec.version, Map.empty)
        case (Some(_), _) => table.newAppend(readVersion)
      }
      attempted(epochId) = pending
      LanceSparkException.translate(pending.withCommitRetries(spec.options.commitRetries)
        .withProperties(Map(QueryIdProperty -> queryId, EpochIdProperty -> epochId.toString,
          UpstreamQueryIdProperty -> queryId, UpstreamEpochIdProperty -> epochId.toString)).commit(written))
      attempted.remove(epochId)
      lastEpoch = Some(Some(epochId))
    }
  }

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = synchronized {
    val files = LanceBatchWrite.written(messages).flatMap(_.files)
    attempted.remove(epochId) match {
      case Some(pending) => pending.abort(files)
      case None => spec.table.discard(files)
    }
  }

  /** The last batch this query committed to the table, from the newest version that records the query. */
  private def lastCommitted(table: lance.Table): Option[Long] = LanceSparkException.translate {
    val versions = table.committedProperties()
    lookback.fold(versions)(versions.take).collectFirst {
      case (_, p) if p.get(QueryIdProperty).contains(queryId) => p.get(EpochIdProperty)
      case (_, p) if p.get(UpstreamQueryIdProperty).contains(queryId) => p.get(UpstreamEpochIdProperty)
    }.flatten.flatMap(e => scala.util.Try(e.toLong).toOption)
  }

  override def toString: String = s"LanceStreamingWrite(${spec.root}, query $queryId${if (complete) ", complete" else ""})"
}

object LanceStreamingWrite {
  private val log = LoggerFactory.getLogger(classOf[LanceStreamingWrite])

  /**
   * The transaction properties naming the streaming query and the batch a version commits, under Iceberg's names and
   * under the other Lance connector's, so that a query moved from one connector to the other finds its batches.
   */
  val QueryIdProperty = "spark.sql.streaming.queryId"
  val EpochIdProperty = "spark.sql.streaming.epochId"
  val UpstreamQueryIdProperty = "lance.streaming.queryId"
  val UpstreamEpochIdProperty = "lance.streaming.epochId"

  /** The other connector's options: the query's id for its batches, and how many versions back to look for them. */
  private val QueryIdOption = "streamingQueryId"
  private val LookbackOption = "lance.streaming.dedupe.lookback.versions"

  private def queryId(passed: Map[String, String], info: LogicalWriteInfo): String =
    LanceOptions.value(passed, QueryIdOption).filter(_.nonEmpty).getOrElse(info.queryId())

  private def lookback(passed: Map[String, String]): Option[Int] = LanceOptions.value(passed, LookbackOption).map { v =>
    scala.util.Try(v.toInt).toOption.filter(_ > 0).getOrElse(throw new LanceSparkException(new InvalidArgumentException(
      s"Option $LookbackOption must be a number of versions (1 or more), not '$v'.")))
  }

  /** The sink for an existing table: the stream's columns must be the table's, in its order. */
  def forTable(table: LanceTable, info: LogicalWriteInfo, complete: Boolean): LanceStreamingWrite = {
    val passed = options(info, table.tableName, complete)
    val s = table.snapshot
    checkColumns(info.schema(), SparkSchemas.toSpark(s.schema), table.tableName)
    val writeOptions = WriteOptions(passed, s.config)
    writeOptions.checkKeeps(s.fileVersion, s.hasStableRowIds, table.tableName)
    new LanceStreamingWrite(WriteSpec(s.root, s.schema, s.fileVersion, writeOptions, table.hadoopConf), info.schema(),
      queryId(passed, info), complete, None, lookback(passed))
  }

  /** The sink for a path with no table yet: the first batch creates it with the stream's schema. */
  def forNewTable(path: String, info: LogicalWriteInfo, complete: Boolean): LanceStreamingWrite = {
    val passed = options(info, path, complete)
    LanceOptions.value(passed, "branch").filter(_ != "main").foreach { b =>
      throw new LanceSparkException(new io.sparklance.core.NotATableException(path, s"there is no table to stream " +
        s"into branch '$b' of: create the table, then the branch (ALTER TABLE ... CREATE BRANCH)"))
    }
    val conf = TableAccess.hadoopConf(SparkSession.active, passed, s"the stream into $path")
    val root = TableAccess.qualify(conf, path)
    LanceSparkException.translate(lance.Table.checkCanCreate(root, conf))
    val table = NewTable(root, SparkSchemas.asNullable(info.schema()), passed)
    new LanceStreamingWrite(WriteSpec(root, table.schema, table.version, WriteOptions(passed, Map.empty), conf),
      info.schema(), queryId(passed, info), complete, Some(table), lookback(passed))
  }

  private def options(info: LogicalWriteInfo, where: String, complete: Boolean): Map[String, String] = {
    val passed = info.options().asCaseSensitiveMap().asScala.toMap
    LanceOptions.checkStreamingWrite(passed, where)
    WriteOptions.checkWriteMode(passed, if (complete) "overwrite" else "append", where)
    passed
  }

  /**
   * Spark hands a sink the stream's rows as they are, whatever the table's schema: the stream's columns must be the
   * table's, by name (case-insensitively) and type, in the table's order.
   */
  private def checkColumns(stream: StructType, table: StructType, where: String): Unit = {
    val matches = stream.length == table.length && stream.fields.zip(table.fields).forall { case (s, t) =>
      s.name.equalsIgnoreCase(t.name) && PathWrites.sameType(s.dataType, t.dataType)
    }
    if (!matches) {
      throw new LanceSparkException(new InvalidArgumentException(s"Cannot stream into $where: the stream's columns " +
        s"(${stream.toDDL}) are not the table's (${table.toDDL}). Select and cast the stream's columns to the " +
        "table's names, types and order before writeStream."))
    }
  }
}

/** The writers of one micro-batch's tasks: the same as a batch write's. */
final class LanceStreamingWriterFactory(spec: WriteSpec, sparkSchema: StructType) extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new LanceDataWriter(spec, sparkSchema)
}
