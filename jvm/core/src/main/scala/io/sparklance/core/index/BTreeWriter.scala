package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt4Vector, UInt8Vector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.FileVersion
import io.sparklance.core.file.LanceFileWriter
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
  def writeRun(storage: Storage, path: String, keys: FieldVector, addresses: UInt8Vector, allocator: BufferAllocator): Long = {
    val n = keys.getValueCount
    val perm = Array.tabulate(n)(identity)
    KeyOrder.of(keys).sort(keys, perm)
    val schema = new Schema(Seq(valuesField("values", keys.getField.getType), idsField("ids", U64)).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      val values = root.getVector(0)
      val ids = root.getVector(1).asInstanceOf[UInt8Vector]
      val copy = keys.makeTransferPair(values)
      values.setInitialCapacity(n)
      values.allocateNew()
      ids.allocateNew(n)
      var i = 0
      while (i < n) {
        copy.copyValueSafe(perm(i), i)
        ids.set(i, addresses.get(perm(i)))
        i += 1
      }
      root.setRowCount(n)
      writeFile(storage, path, schema, Map.empty, Iterator.single(root))
      n.toLong
    } finally root.close()
  }

  /**
   * Merges sorted runs into the B-tree's two files under `dir`, pages of `batchSize` rows; returns the files
   * written, by name, with their sizes.
   */
  def merge(storage: Storage, runs: Seq[String], dir: String, keys: ArrowType, batchSize: Int,
      allocator: BufferAllocator): Seq[(String, Long)] = {
    val lookupSchema = new Schema(Seq(valuesField("min", keys), valuesField("max", keys), idsField("null_count", U32),
      idsField("page_idx", U32)).asJava)
    val lookup = VectorSchemaRoot.create(lookupSchema, allocator)
    val dataSchema = new Schema(Seq(valuesField("values", keys), idsField("ids", U64)).asJava)
    val page = VectorSchemaRoot.create(dataSchema, allocator)
    val dataPath = Storage.join(dir, BTreeIndex.DataFile)
    val data = LanceFileWriter.create(storage, dataPath, ArrowSchemas.fromArrow(dataSchema), FileVersion.V2_2)
    try {
      var pages = 0
      var inPage = 0
      def startPage(): Unit = {
        page.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(batchSize); v.allocateNew() }
        inPage = 0
      }
      def flushPage(): Unit = if (inPage > 0) {
        page.setRowCount(inPage)
        page.getFieldVectors.asScala.foreach(_.setValueCount(inPage))
        data.write(page)
        val values = page.getVector(0)
        val nulls = (0 until inPage).count(values.isNull)
        lookup.getVector(0).copyFromSafe(0, pages, values)
        lookup.getVector(1).copyFromSafe(inPage - 1, pages, values)
        lookup.getVector(2).asInstanceOf[UInt4Vector].setSafe(pages, nulls)
        lookup.getVector(3).asInstanceOf[UInt4Vector].setSafe(pages, pages)
        pages += 1
        startPage()
      }
      lookup.getFieldVectors.asScala.foreach(_.allocateNew())
      startPage()
      val values = page.getVector(0)
      val ids = page.getVector(1).asInstanceOf[UInt8Vector]
      SortedRuns.merge(storage, runs, allocator) { (v, row, id) =>
        values.copyFromSafe(row, inPage, v)
        ids.setSafe(inPage, id)
        inPage += 1
        if (inPage == batchSize) flushPage()
      }
      flushPage()
      val dataSize = data.finish()
      lookup.setRowCount(pages)
      lookup.getFieldVectors.asScala.foreach(_.setValueCount(pages))
      val lookupPath = Storage.join(dir, BTreeIndex.LookupFile)
      val lookupSize = writeFile(storage, lookupPath, lookupSchema,
        Map("batch_size" -> batchSize.toString, "range_partitioned" -> "false"), Iterator.single(lookup))
      Seq(BTreeIndex.DataFile -> dataSize, BTreeIndex.LookupFile -> lookupSize)
    } finally {
      data.close()
      page.close()
      lookup.close()
    }
  }

  private[index] def writeFile(storage: Storage, path: String, schema: Schema, metadata: Map[String, String],
      batches: Iterator[VectorSchemaRoot], globalBuffers: Seq[Array[Byte]] = Nil): Long = {
    val lance = ArrowSchemas.fromArrow(schema)
    val w = LanceFileWriter.create(storage, path,
      lance.copy(metadata = metadata.map { case (k, v) => k -> v.getBytes(StandardCharsets.UTF_8) }), FileVersion.V2_2)
    try {
      batches.foreach(w.write)
      globalBuffers.foreach(w.addGlobalBuffer)
      w.finish()
    } finally w.close()
  }
}
