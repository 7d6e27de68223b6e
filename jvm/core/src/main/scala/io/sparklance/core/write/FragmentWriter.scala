package io.sparklance.core.write

import java.util.UUID

import scala.util.control.NonFatal

import org.apache.arrow.vector.VectorSchemaRoot

import io.sparklance.core.FileVersion
import io.sparklance.core.file.LanceFileWriter
import io.sparklance.core.schema.LanceSchema
import io.sparklance.core.storage.Storage
import io.sparklance.proto.TableProtos

/**
 * Writes rows into new data files under a table's `data/` directory, one fragment per file, starting a new file
 * every `maxRowsPerFile` rows. The fragments it returns have no ids yet: the commit assigns them
 * (shared/spec/table-format.md, "Fragment"). Nothing it writes is part of the table until committed; [[abort]]
 * deletes the files of an uncommitted write.
 */
final class FragmentWriter(storage: Storage, root: String, schema: LanceSchema, version: FileVersion,
    options: FragmentWriter.Options = FragmentWriter.Options()) extends AutoCloseable {

  private var current: Option[LanceFileWriter] = None
  private val done = IndexedSeq.newBuilder[TableProtos.DataFragment]
  private val written = scala.collection.mutable.ArrayBuffer.empty[String]

  /** Absolute paths of every file written (finished or not). */
  def files: Seq[String] = written.toSeq

  /** Appends a batch whose columns are the schema's top-level fields, in order. */
  def write(batch: VectorSchemaRoot): Unit = {
    var from = 0
    val n = batch.getRowCount
    while (from < n) {
      val w = current.getOrElse(open())
      val room = options.maxRowsPerFile - w.numRows
      val take = math.min(room, (n - from).toLong).toInt
      if (from == 0 && take == n) w.write(batch)
      else {
        val slice = batch.slice(from, take)
        try w.write(slice) finally slice.close()
      }
      from += take
      if (w.numRows >= options.maxRowsPerFile) finishFile()
    }
  }

  /** Finishes the last file and returns the new fragments (ids unassigned), in the order written. */
  def finish(): Seq[TableProtos.DataFragment] = {
    finishFile()
    done.result()
  }

  /** Deletes every file this writer created (blob sidecars too): for a write that will not be committed. */
  def abort(): Unit = {
    current.foreach(_.close())
    current = None
    written.foreach { p =>
      try storage.delete(p) catch { case NonFatal(_) => }
      io.sparklance.core.file.BlobSidecars.deleteAll(storage, p)
    }
  }

  override def close(): Unit = current.foreach(_.close())

  private def open(): LanceFileWriter = {
    val name = if (options.fileTag.isEmpty) s"${UUID.randomUUID()}.lance" else s"${options.fileTag}-${UUID.randomUUID()}.lance"
    val path = Storage.join(root, s"data/$name")
    written += path
    val w = LanceFileWriter.create(storage, path, schema, version, LanceFileWriter.Options(options.maxPageBytes))
    current = Some(w)
    w
  }

  private def finishFile(): Unit = current.foreach { w =>
    current = None
    if (w.numRows == 0) {
      w.close()
      storage.delete(w.path)
      written -= w.path
    } else {
      val size = w.finish()
      val file = io.sparklance.core.format.DataFile.entry(Storage.fileName(w.path), w.fieldColumns, version, size)
      done += TableProtos.DataFragment.newBuilder().addFiles(file).setPhysicalRows(w.numRows).build()
    }
  }
}

object FragmentWriter {
  /**
   * `maxRowsPerFile`: rows per data file (pylance's default, 1Mi); `maxPageBytes`: the page size columns aim at;
   * `fileTag`: when given, the first part of each file's name, shared by every file of one write, so that an abort
   * finds files whose writers' results never reached it ([[io.sparklance.core.table.PendingCommit.fileTag]]).
   */
  final case class Options(maxRowsPerFile: Long = 1024L * 1024, maxPageBytes: Long = 8L << 20, fileTag: String = "") {
    require(maxRowsPerFile > 0, "maxRowsPerFile must be positive")
  }
}
