package io.sparklance.core.index

import java.nio.ByteBuffer

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, UInt8Vector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.FileVersion
import io.sparklance.core.file.{LanceFileReader, LanceFileWriter, RowCopier}
import io.sparklance.core.schema.ArrowSchemas
import io.sparklance.core.storage.Storage

/**
 * The rows an existing index holds, as inputs of a new index of the same kind over more fragments: what upstream's
 * `optimize_indices` does with a scalar index (`rust/lance/src/index/append.rs`), which merges the old index's
 * sorted data with the keys of the fragments appended since (B-tree, bitmap, label list) or appends their zones
 * (zone map, bloom filter), reading only the new fragments' column.
 *
 * Each method turns one segment's files (in `dir`) into what the build's merge takes, the sorted runs or zone runs
 * [[IndexBuild]]'s tasks write for new fragments, leaving out rows of fragments no longer in the table (`keep`, by
 * fragment id). The old files are only read.
 */
object IndexAppend {
  private val ChunkRows = 1 << 16

  /**
   * Whether the segment in `dir` has the layout a merge of `kind` with keys of type `keys` reads; false sends the
   * caller to a full rebuild (an index written by another writer version, or on a column of another type).
   */
  def mergeable(storage: Storage, dir: String, kind: IndexKind, keys: ArrowType): Boolean = {
    def hasColumns(file: String, expected: Seq[(String, Option[ArrowType])]): Boolean =
      IndexFiles.withReader(storage, Storage.join(dir, file)) { r =>
        val fields = r.metadata.schema.fields
        fields.size == expected.size && expected.zip(fields).forall { case ((name, t), f) =>
          f.name == name && t.forall(_ == LanceFileReader.readField(f).getType)
        }
      }
    val u64 = Some(new ArrowType.Int(64, false))
    kind match {
      case IndexKind.BTree => hasColumns(BTreeIndex.DataFile, Seq("values" -> Some(keys), "ids" -> u64))
      case IndexKind.Bitmap | IndexKind.LabelList => hasColumns(BitmapIndex.File, Seq("keys" -> Some(keys), "bitmaps" -> None))
      case IndexKind.ZoneMap => hasColumns(ZoneMapIndex.File, ZoneMapWriter.schema(keys).getFields.asScala.toSeq
        .map(f => f.getName -> Some(f.getType))) && globalBuffers(storage, Storage.join(dir, ZoneMapIndex.File)) > 1
      case IndexKind.BloomFilter => hasColumns(BloomFilterIndex.File, BloomFilterWriter.schema.getFields.asScala.toSeq
        .map(f => f.getName -> Some(f.getType))) && globalBuffers(storage, Storage.join(dir, BloomFilterIndex.File)) > 1
      case IndexKind.NGram => hasColumns(NGramIndex.File, Seq("tokens" -> Some(new ArrowType.Int(32, false)),
        "posting_list" -> Some(ArrowType.Binary.INSTANCE)))
      case IndexKind.RTree => hasColumns(RTreeWriter.PagesFile, Seq("bbox" -> None, "id" -> u64))
      case _ => false
    }
  }

  private def globalBuffers(storage: Storage, path: String): Int =
    IndexFiles.withReader(storage, path)(_.metadata.globalBuffers.size)

  /**
   * A B-tree segment's sorted rows: its `page_data.lance` is a sorted run as it is (`values`, `ids`, sorted by key
   * then address), which [[BTreeWriter.merge]] filters by fragment.
   */
  def btreeRun(dir: String): String = Storage.join(dir, BTreeIndex.DataFile)

  /**
   * Writes the rows of a bitmap or label list segment as a sorted run at `run` (its keys ascending in [[KeyOrder]],
   * each key's rows ascending), the rows of fragments `keep` refuses left out; for a label list, its null lists
   * (global buffer 1) beside it as [[LabelListWriter]]'s runs keep them. `rowIds`: the bitmaps hold stable row ids
   * (whose upper bits are no fragment id); only those it holds (by their upper 32 bits) are kept. `physicalRows`
   * sizes an entry that holds a whole fragment.
   */
  def bitmapRun(storage: Storage, dir: String, run: String, labelList: Boolean, rowIds: Option[RowIds], keep: Long => Boolean,
      physicalRows: Long => Long, allocator: BufferAllocator): String = {
    val path = Storage.join(dir, BitmapIndex.File)
    IndexFiles.withReader(storage, path) { reader =>
      val fields = IndexFiles.fields(reader, "keys", "bitmaps")
      val keys = reader.read(Seq(fields.head), 0, reader.numRows, allocator)
      try {
        val k = keys.getVector(0)
        val perm = Array.tabulate(keys.getRowCount)(identity)
        KeyOrder.of(k).sort(k, perm)
        val keyType = k.getField.getType
        val schema = new Schema(Seq(BTreeWriter.valuesField("values", keyType),
          BTreeWriter.idsField("ids", new ArrowType.Int(64, false))).asJava)
        val out = LanceFileWriter.create(storage, run, ArrowSchemas.fromArrow(schema), FileVersion.V2_2,
          LanceFileWriter.Options(bitpacking = false))
        val chunk = VectorSchemaRoot.create(schema, allocator)
        try {
          chunk.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(ChunkRows); v.allocateNew() }
          val values = chunk.getVector(0)
          val ids = chunk.getVector(1).asInstanceOf[UInt8Vector]
          var rows = 0
          def flush(): Unit = if (rows > 0) {
            chunk.setRowCount(rows)
            chunk.getFieldVectors.asScala.foreach(_.setValueCount(rows))
            out.write(chunk)
            chunk.getFieldVectors.asScala.foreach { v => v.clear(); v.setInitialCapacity(ChunkRows); v.allocateNew() }
            rows = 0
          }
          def add(key: FieldVector, i: Int, id: Long): Unit = {
            values.copyFromSafe(i, rows, key)
            ids.setSafe(rows, id)
            rows += 1
            if (rows == ChunkRows) flush()
          }
          var from = 0
          while (from < perm.length) {
            val to = math.min(perm.length, from + 1024)
            val bitmaps = reader.take(Seq(fields(1)), perm.slice(from, to).map(_.toLong), allocator)
            try {
              val b = bitmaps.getVector(0)
              var j = 0
              while (j < to - from) {
                if (!b.isNull(j)) {
                  val found = new RowSelection.Builder(exact = true)
                  RowIdTreeMap.decodeInto(path, ByteBuffer.wrap(KeyOrder.bytes(b, j)), found, physicalRows)
                  kept(found.result().byFragment, rowIds, keep).toSeq.sortBy(_._1).foreach { case (high, low) =>
                    val it = low.getIntIterator
                    while (it.hasNext) add(k, perm(from + j), (high << 32) | (it.next() & 0xFFFFFFFFL))
                  }
                }
                j += 1
              }
            } finally bitmaps.close()
            from = to
          }
          flush()
          out.finish()
        } finally {
          chunk.close()
          out.close()
        }
        if (labelList) ZoneRuns.writeNulls(storage, run, kept(nullRows(reader), rowIds, keep))
      } finally keys.close()
    }
    run
  }

  /**
   * The keys of a bitmap or label list segment in [[KeyOrder]] and each key's rows, read in that order as a merge
   * reaches them ([[BitmapWriter.merge]]): the merge unions them with the new fragments' rows key by key, so the
   * old rows are never expanded. Rows of fragments `keep` refuses are left out; bitmaps of stable row ids keep
   * only the row ids `rowIds` holds. `physicalRows` sizes an entry that holds a whole fragment.
   */
  final class Bitmaps(storage: Storage, dir: String, rowIds: Option[RowIds], keep: Long => Boolean,
      physicalRows: Long => Long, allocator: BufferAllocator) extends AutoCloseable {
    private val path = Storage.join(dir, BitmapIndex.File)
    private val reader = LanceFileReader.open(storage, path)
    private val fields = IndexFiles.fields(reader, "keys", "bitmaps")
    private var chunk: VectorSchemaRoot = _
    private var chunkFrom = 0

    /** The keys, in file order; `key(i)` is the row of the i-th key in [[KeyOrder]]. */
    val keys: FieldVector = try reader.read(Seq(fields.head), 0, reader.numRows, allocator).getVector(0)
      catch { case e: Exception => reader.close(); throw e }
    private val perm = Array.tabulate(keys.getValueCount)(identity)
    KeyOrder.of(keys).sort(keys, perm)

    def size: Int = perm.length

    def key(i: Int): Int = perm(i)

    /** The rows of the i-th key in [[KeyOrder]]; i must not go back. */
    def rows(i: Int): Map[Long, RoaringBitmap] = {
      if (chunk == null || i >= chunkFrom + chunk.getRowCount) {
        if (chunk != null) chunk.close()
        chunk = null
        chunkFrom = i
        chunk = reader.take(Seq(fields(1)), perm.slice(i, math.min(perm.length, i + 1024)).map(_.toLong), allocator)
      }
      val b = chunk.getVector(0)
      val j = i - chunkFrom
      if (b.isNull(j)) Map.empty
      else {
        val found = new RowSelection.Builder(exact = true)
        RowIdTreeMap.decodeInto(path, ByteBuffer.wrap(KeyOrder.bytes(b, j)), found, physicalRows)
        kept(found.result().byFragment, rowIds, keep)
      }
    }

    /** A label list's null lists (global buffer 1), by their upper 32 bits. */
    def nullLists: Map[Long, RoaringBitmap] = kept(nullRows(reader), rowIds, keep)

    override def close(): Unit = {
      try if (chunk != null) chunk.close() finally try keys.close() finally reader.close()
    }
  }

  /**
   * Writes the zones of a zone map or bloom filter segment (`file` in `dir`) of the fragments `keep` takes as one
   * zone run at `run`, with their null rows (the file's global buffer 1) beside it, as [[ZoneRuns]] keeps them.
   */
  def zoneRun(storage: Storage, dir: String, file: String, run: String, keep: Long => Boolean,
      allocator: BufferAllocator): String = {
    IndexFiles.withAll(storage, Storage.join(dir, file), allocator) { (reader, root) =>
      val fragment = IndexFiles.column(reader.path, root, "fragment_id").asInstanceOf[UInt8Vector]
      val rows = (0 until root.getRowCount).filter(i => keep(fragment.get(i))).toArray
      val selected = root.getFieldVectors.asScala.map(v => RowCopier.select(v, rows, rows.length, allocator): FieldVector)
      val zones = new VectorSchemaRoot(selected.asJava)
      try {
        zones.setRowCount(rows.length)
        BTreeWriter.writeFile(storage, run, zones.getSchema, Map.empty, Iterator.single(zones))
      } finally zones.close()
      ZoneRuns.writeNulls(storage, run, kept(nullRows(reader), None, keep))
    }
    run
  }

  /** The rows of a file's global buffer 1 (a [[RowIdTreeMap]]), by their upper 32 bits. */
  private def nullRows(reader: LanceFileReader): Map[Long, RoaringBitmap] =
    if (reader.metadata.globalBuffers.size < 2) Map.empty
    else {
      val rows = new RowSelection.Builder(exact = true)
      RowIdTreeMap.decodeInto(reader.path, reader.globalBuffer(1), rows, _ => 0L)
      rows.result().byFragment
    }

  /**
   * Stable row ids by their upper 32 bits: those live in the fragments an old index covers. Upstream's merge keeps
   * an old bitmap's row ids only there: a row deleted since is dropped, and a row an update moved to a new fragment
   * (under its row id) is indexed again from there, with its new value, not kept under its old one.
   */
  type RowIds = Map[Long, RoaringBitmap]

  private def kept(rows: Map[Long, RoaringBitmap], rowIds: Option[RowIds], keep: Long => Boolean): Map[Long, RoaringBitmap] =
    rowIds match {
      case Some(live) => rows.flatMap { case (high, low) =>
        live.get(high).map(l => high -> RoaringBitmap.and(low, l)).filter(!_._2.isEmpty)
      }
      case None => rows.filter { case (fragment, _) => keep(fragment) }
    }
}
