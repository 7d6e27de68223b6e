package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BaseFixedWidthVector, BaseIntVector, BitVector, FieldVector, UInt4Vector, UInt8Vector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.FileVersion
import io.sparklance.core.file.{LanceFileWriter, RowCopier}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage

/**
 * Builds a B-tree index ([[BTreeIndex]] describes the files) in two steps, so that the costly one runs in parallel:
 * each fragment's keys and row addresses are sorted into a run file ([[writeRun]], anywhere), then the runs are
 * merged into `page_data.lance` and `page_lookup.lance` ([[merge]], one process, streaming: memory holds a chunk
 * of each run and one page).
 */
object BTreeWriter {
  private val U64 = new ArrowType.Int(64, false)
  private val U32 = new ArrowType.Int(32, false)

  /** The Arrow type of the `values` column (and of a run's keys) for a column of type `keys`. */
  private[index] def valuesField(name: String, keys: ArrowType): Field = new Field(name, FieldType.nullable(keys), null)

  private[index] def idsField(name: String, t: ArrowType): Field = new Field(name, FieldType.notNullable(t), null)

  /**
   * Writes `keys` (a column's values) and `addresses` (their row addresses), sorted by key then address, to a run
   * file at `path` of file version 2.2. Returns the rows written.
   */
  def writeRun(storage: Storage, path: String, keys: FieldVector, addresses: BaseIntVector, allocator: BufferAllocator): Long = {
    val root = sortRun(keys, addresses, allocator)
    try writeRunFile(storage, path, root) finally root.close()
  }

  /**
   * The run of [[writeRun]], held in this JVM's memory for a merge in the same process (the build's `held` runs), or
   * written to its file at `path` when the held runs' budget is spent. Returns the rows of the run.
   */
  def holdRun(storage: Storage, path: String, keys: FieldVector, addresses: BaseIntVector, held: HeldRuns): Long = {
    val root = sortRun(keys, addresses, held.allocator)
    val rows = root.getRowCount.toLong
    if (!held.hold(path, root)) {
      try writeRunFile(storage, path, root) finally root.close()
    }
    rows
  }

  /** `keys` and their `addresses` sorted by key then address, as the `values` and `ids` of a run. */
  private def sortRun(keys: FieldVector, addresses: BaseIntVector, allocator: BufferAllocator): VectorSchemaRoot = {
    val n = keys.getValueCount
    val perm = new Array[Int](n)
    var r = 0
    while (r < n) { perm(r) = r; r += 1 }
    KeyOrder.of(keys).sort(keys, perm)
    var inOrder = true
    r = 0
    while (inOrder && r < n) { inOrder = perm(r) == r; r += 1 }
    // Keys already in order (a sorted or clustered column's fragment) are copied as blocks, not row by row.
    val blocks = inOrder && keys.isInstanceOf[BaseFixedWidthVector] && !keys.isInstanceOf[BitVector] &&
      addresses.isInstanceOf[BaseFixedWidthVector] &&
      addresses.asInstanceOf[BaseFixedWidthVector].getTypeWidth == 8
    val sorted = if (blocks) {
      val v = keys.getField.createVector(allocator).asInstanceOf[BaseFixedWidthVector]
      try {
        v.allocateNew(n)
        RowCopier.copyRange(keys, 0, n, v, 0)
        v.setValueCount(n)
        v
      } catch {
        case NonFatal(e) => v.close(); throw e
      }
    } else RowCopier.select(keys, perm, n, allocator)
    val ids = new UInt8Vector(idsField("ids", U64), allocator)
    val root = new VectorSchemaRoot(Seq[FieldVector](sorted, ids).asJava)
    try {
      ids.allocateNew(n)
      if (blocks) RowCopier.copyRange(addresses.asInstanceOf[FieldVector], 0, n, ids, 0)
      else {
        var i = 0
        while (i < n) { ids.set(i, addresses.getValueAsLong(perm(i))); i += 1 }
      }
      ids.setValueCount(n)
      root.setRowCount(n)
      root
    } catch {
      case NonFatal(e) => root.close(); throw e
    }
  }

  private def writeRunFile(storage: Storage, path: String, root: VectorSchemaRoot): Long = {
    val schema = new Schema(Seq(valuesField("values", root.getVector(0).getField.getType), root.getVector(1).getField).asJava)
    // A run is read once, by the merge: stored flat and without dictionaries (its ids are all distinct), it is
    // quicker to write and to read.
    writeFile(storage, path, schema, Map.empty, Iterator.single(root),
      options = LanceFileWriter.Options(bitpacking = false, dictionaries = false))
    root.getRowCount.toLong
  }

  /**
   * Merges sorted runs into the B-tree's two files under `dir`, pages of `batchSize` rows; returns the files
   * written, by name, with their sizes. With `keep`, only rows whose fragment (an address's upper 32 bits) it
   * takes are kept: an old index's pages merged with new fragments' runs leave out fragments no longer in the table.
   * Runs `held` in memory are taken from there, the others read from their files.
   */
  def merge(storage: Storage, runs: Seq[String], dir: String, keys: ArrowType, batchSize: Int,
      allocator: BufferAllocator, keep: Option[Long => Boolean] = None, held: Option[HeldRuns] = None): Seq[(String, Long)] = {
    val lookupSchema = new Schema(Seq(valuesField("min", keys), valuesField("max", keys), idsField("null_count", U32),
      idsField("page_idx", U32)).asJava)
    val lookup = VectorSchemaRoot.create(lookupSchema, allocator)
    val dataSchema = new Schema(Seq(valuesField("values", keys), idsField("ids", U64)).asJava)
    val dataPath = Storage.join(dir, BTreeIndex.DataFile)
    val data = LanceFileWriter.create(storage, dataPath, ArrowSchemas.fromArrow(dataSchema), FileVersion.V2_2)
    // Pages are encoded on a thread of their own while the runs are merged into the next ones.
    val writer = new Background.PageWriter(data, PagesPending)
    var page: VectorSchemaRoot = null
    try {
      var pages = 0
      var inPage = 0
      def startPage(): Unit = {
        page = VectorSchemaRoot.create(dataSchema, allocator)
        page.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(batchSize); v.allocateNew() }
        inPage = 0
      }
      def flushPage(): Unit = if (inPage > 0) {
        page.setRowCount(inPage)
        page.getFieldVectors.asScala.foreach(_.setValueCount(inPage))
        val values = page.getVector(0)
        lookup.getVector(0).copyFromSafe(0, pages, values)
        lookup.getVector(1).copyFromSafe(inPage - 1, pages, values)
        lookup.getVector(2).asInstanceOf[UInt4Vector].setSafe(pages, values.getNullCount)
        lookup.getVector(3).asInstanceOf[UInt4Vector].setSafe(pages, pages)
        pages += 1
        val full = page
        page = null
        writer.write(full)
        startPage()
      }
      lookup.getFieldVectors.asScala.foreach(_.allocateNew())
      startPage()
      def copy(v: FieldVector, runIds: UInt8Vector, from: Int, to: Int): Unit = {
        var at = from
        while (at < to) {
          val n = math.min(to - at, batchSize - inPage)
          RowCopier.copyRange(v, at, n, page.getVector(0), inPage)
          RowCopier.copyRange(runIds, at, n, page.getVector(1), inPage)
          inPage += n
          at += n
          if (inPage == batchSize) flushPage()
        }
      }
      SortedRuns.mergeRanges(storage, runs, allocator, held) { (v, runIds, from, to) =>
        keep match {
          case None => copy(v, runIds, from, to)
          case Some(k) =>
            // The kept rows, in ranges.
            var at = from
            while (at < to) {
              while (at < to && !k(runIds.get(at) >>> 32)) at += 1
              val start = at
              while (at < to && k(runIds.get(at) >>> 32)) at += 1
              if (at > start) copy(v, runIds, start, at)
            }
        }
      }
      flushPage()
      val dataSize = writer.finish()
      lookup.setRowCount(pages)
      lookup.getFieldVectors.asScala.foreach(_.setValueCount(pages))
      val lookupPath = Storage.join(dir, BTreeIndex.LookupFile)
      val lookupSize = writeFile(storage, lookupPath, lookupSchema,
        Map("batch_size" -> batchSize.toString, "range_partitioned" -> "false"), Iterator.single(lookup))
      Seq(BTreeIndex.DataFile -> dataSize, BTreeIndex.LookupFile -> lookupSize)
    } finally {
      writer.close()
      data.close()
      if (page != null) page.close()
      lookup.close()
    }
  }

  /** Pages of the B-tree waiting to be encoded while the merge goes on (each holds `batchSize` keys and ids). */
  private val PagesPending = 64

  private[index] def writeFile(storage: Storage, path: String, schema: Schema, metadata: Map[String, String],
      batches: Iterator[VectorSchemaRoot], globalBuffers: Seq[Array[Byte]] = Nil,
      options: LanceFileWriter.Options = LanceFileWriter.Options()): Long = {
    val lance = ArrowSchemas.fromArrow(schema)
    val w = LanceFileWriter.create(storage, path,
      lance.copy(metadata = metadata.map { case (k, v) => k -> v.getBytes(StandardCharsets.UTF_8) }), FileVersion.V2_2,
      options)
    try {
      batches.foreach(w.write)
      globalBuffers.foreach(w.addGlobalBuffer)
      w.finish()
    } finally w.close()
  }
}
