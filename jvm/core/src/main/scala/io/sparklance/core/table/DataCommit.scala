package io.sparklance.core.table

import org.apache.arrow.vector.VectorSchemaRoot

import io.sparklance.core.{CommitStateUnknownException, FileVersion}
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.txn.{Committer, Operation, Transaction}
import io.sparklance.core.write.FragmentWriter
import io.sparklance.proto.TableProtos

/**
 * Data files written for a commit that has not happened yet: their fragments (protobuf bytes; ids are assigned at
 * commit) and the absolute paths of every file written. Plain data, so writers on any machine can hand it to the
 * one that commits.
 */
final case class WrittenFiles(fragments: Seq[Array[Byte]], files: Seq[String]) {
  private[table] def protos: Seq[TableProtos.DataFragment] = fragments.map(TableProtos.DataFragment.parseFrom)
}

object WrittenFiles {
  val empty: WrittenFiles = WrittenFiles(Nil, Nil)
}

/**
 * Writes rows into new data files of a table ([[Table.newDataWriter]]): Arrow batches whose columns are the
 * schema's top-level fields, in order. Not thread safe; one per task.
 */
final class DataWriter private[table] (files: FragmentWriter) extends AutoCloseable {

  def write(batch: VectorSchemaRoot): Unit = files.write(batch)

  /** Finishes the last file; what was written, for a commit. */
  def finish(): WrittenFiles = WrittenFiles(files.finish().map(_.toByteArray), files.files)

  /** Deletes every file written: for a write that will not be committed. */
  def abort(): Unit = files.abort()

  override def close(): Unit = files.close()
}

/**
 * Something that commits one new version of a table and may leave files behind if it does not: [[abort]] deletes
 * them, except after a commit whose outcome is unknown (the files may be part of the table then).
 */
abstract class PendingCommit private[table] (table: Table) {
  @volatile private var outcomeUnknown = false

  /**
   * The first part of the name of every data file written for this commit (pass it to [[Table.newDataWriter]]):
   * [[abort]] deletes the files so named too, so that files of writers whose results never arrived (a task that
   * finished after its job had failed) are not left behind.
   */
  val fileTag: String = java.util.UUID.randomUUID().toString.replace("-", "").take(16)

  /** Attempts at a new version when other writers commit first: the table's `commit_retries` property, else 20. */
  protected var commitRetries: Int = 20

  /** Takes the default number of attempts from the table properties of the version a change read. */
  protected final def retriesFrom(snapshot: Snapshot): Unit =
    commitRetries = snapshot.commitRetries

  /** Runs `commit`, remembering whether its outcome became unknown. */
  protected final def committing[T](commit: => T): T =
    try commit
    catch { case e: CommitStateUnknownException => outcomeUnknown = true; throw e }

  /**
   * Deletes `files` (written for this commit) and the data files named with [[fileTag]], unless a commit attempt's
   * outcome is unknown. Call it once no writer of this commit is running any more.
   */
  def abort(files: Seq[String]): Unit = if (!outcomeUnknown) { table.discard(files); table.discardTagged(fileTag) }
}

/** An append or an overwrite of the rows a [[DataWriter]] wrote ([[Table.newAppend]], [[Table.newOverwrite]]). */
final class DataCommit private[table] (table: Table, readVersion: Long, replace: Option[DataCommit.Replace])
    extends PendingCommit(table) {

  private var properties = Map.empty[String, String]
  private var rebases = true
  private var stableRowIds = Option.empty[Boolean]

  /**
   * Commits only as the version right after `readVersion`: if another writer commits first, the commit fails with
   * [[io.sparklance.core.CommitConflictException]] instead of being rebased (for a change computed from what it read).
   */
  def onlyAfterReadVersion(): DataCommit = { rebases = false; this }

  /** Attempts at a new version when other writers commit first (default 20). */
  def withCommitRetries(n: Int): DataCommit = { commitRetries = n; this }

  /**
   * Creates the table with stable row ids or without (pylance's `enable_stable_row_ids`; with them rows keep their row
   * id through updates and compaction). Replacing a table keeps what it has: asking for the other is refused.
   */
  def withStableRowIds(on: Boolean): DataCommit = { stableRowIds = Some(on); this }

  /** Properties stored in the version's transaction file ([[Table.committedProperties]] reads them back). */
  def withProperties(p: Map[String, String]): DataCommit = { properties = p; this }

  /** Commits the fragments of `written`, in order, as one new version; returns it. */
  def commit(written: Seq[WrittenFiles]): Long = committing {
    val fragments = written.flatMap(_.protos)
    val op = replace match {
      case Some(r) => Operation.Overwrite(fragments, r.schema.toProtos, r.schema.metadata, r.config, Some(r.version.toString))
      case None => Operation.Append(fragments)
    }
    val fileVersion = replace.map(_.version).getOrElse(FileVersion.V2_2)
    table.commit(Transaction.create(readVersion, op).copy(properties = properties),
      Committer.Options(maxRetries = commitRetries, newTableFileVersion = fileVersion.toString, rebases = rebases,
        stableRowIds = stableRowIds))
  }
}

object DataCommit {
  private[table] final case class Replace(schema: LanceSchema, version: FileVersion, config: Map[String, String])
}

/**
 * ALTER TABLE of a pinned version: columns added (nullable; rows already written read null), dropped, renamed or
 * made nullable, committed together as one version that changes the schema only (a Project transaction; data files
 * are untouched, field ids never reused).
 */
final class SchemaChange private[table] (table: Table, snapshot: Snapshot) extends PendingCommit(table) {
  private val edit = snapshot.schemaChanges
  retriesFrom(snapshot)

  /** Adds the fields of `column` under the struct at `parent` (Nil: top level). */
  def add(parent: Seq[String], column: LanceSchema): this.type = { edit.add(parent, column); this }

  def drop(path: Seq[String]): this.type = { edit.drop(path); this }

  def rename(path: Seq[String], newName: String): this.type = { edit.rename(path, newName); this }

  def setNullable(path: Seq[String], nullable: Boolean): this.type = { edit.setNullable(path, nullable); this }

  def commit(): Long = committing {
    table.commit(Transaction.create(snapshot.version, Operation.Project(edit.result)), Committer.Options(maxRetries = commitRetries))
  }
}
