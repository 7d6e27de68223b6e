package io.sparklance.core.table

import java.util.UUID

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.vector.VectorSchemaRoot

import io.sparklance.core.{FileVersion, InconsistentTableException}
import io.sparklance.core.file.LanceFileWriter
import io.sparklance.core.format.DataFile
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.Storage
import io.sparklance.core.txn.{Committer, Operation, Transaction}

/**
 * Data evolution ([[Table.newColumns]]): new columns with values, written as one new data file per fragment beside
 * the fragment's files (no other column is rewritten), and committed with the new schema as one Merge transaction.
 * Each new file holds one row per physical row of its fragment, in order (deleted rows included), so that it lines
 * up with the fragment's other files row for row.
 */
final class NewColumns private[table] (table: Table, snapshot: Snapshot, columns: Seq[LanceSchema])
    extends PendingCommit(table) {

  private val edit = snapshot.schemaChanges
  columns.foreach(edit.add(Nil, _))
  retriesFrom(snapshot)

  /** The added fields, with their new ids, as a schema of their own: what the new files hold. */
  val schema: LanceSchema = edit.addedSince(snapshot.manifest.proto.getFieldsList.asScala.toSeq)

  /** What the writers of the new files need, as plain data. */
  def spec: NewColumns.Spec = NewColumns.Spec.of(schema, snapshot, fileTag)

  /** Commits the new files (one per fragment; fragments without one read the new columns as null). */
  def commit(files: Seq[NewColumns.File]): Long = committing {
    val byFragment = files.map(f => f.fragmentId -> f).toMap
    val fragments = snapshot.fragments.map { f =>
      byFragment.get(f.id).map(n => f.proto.toBuilder.addFiles(io.sparklance.proto.TableProtos.DataFile.parseFrom(n.dataFile))
        .build()).getOrElse(f.proto)
    }
    table.commit(Transaction.create(snapshot.version, Operation.Merge(fragments, edit.result)),
      Committer.Options(maxRetries = commitRetries))
  }
}

object NewColumns {
  /**
   * The new columns' schema (bytes), the file version to write, each fragment's physical rows, and the commit's
   * [[PendingCommit.fileTag]] to name the files with.
   */
  final case class Spec(schemaBytes: Array[Byte], fileVersion: String, physicalRows: Map[Long, Long], fileTag: String) {
    def schema: LanceSchema = LanceSchema.fromBytes("the new columns' schema", schemaBytes)
    def version: FileVersion = FileVersion.parse(fileVersion).get
  }

  object Spec {
    /** The spec of files holding `schema` for the fragments of `snapshot`, in its file version, named with `fileTag`. */
    def of(schema: LanceSchema, snapshot: Snapshot, fileTag: String): Spec =
      Spec(schema.toBytes, snapshot.fileVersion.toString, snapshot.fragments.map(f => f.id -> f.physicalRows).toMap,
        fileTag)
  }

  /** The new data file of one fragment (a `DataFile` protobuf) and its absolute path. */
  final case class File(fragmentId: Long, dataFile: Array[Byte], path: String)

  /**
   * Writes the new files of some fragments, one fragment after the other: [[startFragment]], then batches holding
   * exactly that fragment's physical rows in order, then the next fragment or [[finish]]. Not thread safe.
   */
  final class Writer private[table] (storage: Storage, root: String, spec: Spec) extends AutoCloseable {
    /** The new columns' fields: what each batch holds, in order. */
    val schema: LanceSchema = spec.schema
    private val version = spec.version
    private var file: LanceFileWriter = _
    private var fragment = -1L
    private val done = ArrayBuffer.empty[File]

    /** The physical rows of `fragment`: how many rows its new file must hold. */
    def physicalRows(fragment: Long): Long = spec.physicalRows.getOrElse(fragment,
      throw new InconsistentTableException(root, s"fragment $fragment is not in the version the new columns are added to"))

    /** Finishes the current fragment's file and starts one for `id`. */
    def startFragment(id: Long): Unit = {
      finishFile()
      physicalRows(id)
      fragment = id
      file = LanceFileWriter.create(storage, Storage.join(root, s"data/${spec.fileTag}-${UUID.randomUUID()}.lance"), schema, version)
    }

    /** Rows of the current fragment, continuing where the last batch ended; columns are the new columns in order. */
    def write(batch: VectorSchemaRoot): Unit = file.write(batch)

    private def finishFile(): Unit = if (file != null) {
      val expected = spec.physicalRows(fragment)
      if (file.numRows != expected) {
        throw new IllegalStateException(s"the new file of fragment $fragment holds ${file.numRows} rows, not its " +
          s"$expected physical rows")
      }
      val size = file.finish()
      done += File(fragment, DataFile.entry(Storage.fileName(file.path), file.fieldColumns, version, size).toByteArray,
        file.path)
      file = null
    }

    /** Finishes the last file; the files written. */
    def finish(): Seq[File] = { finishFile(); done.toSeq }

    /** Deletes every file written: for new columns that will not be committed. */
    def abort(): Unit = {
      val open = Option(file).map { f => try f.close() catch { case NonFatal(_) => () }; f.path }
      file = null
      (open.toSeq ++ done.map(_.path)).foreach(p => try storage.delete(p) catch { case NonFatal(_) => () })
    }

    override def close(): Unit = if (file != null) file.close()
  }
}
