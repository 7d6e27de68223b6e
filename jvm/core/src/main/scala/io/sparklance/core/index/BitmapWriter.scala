package io.sparklance.core.index

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{FieldVector, VarBinaryVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.storage.Storage

/**
 * Builds a bitmap index ([[BitmapIndex]] describes the file) from the sorted runs a B-tree build also starts from:
 * one row per distinct key, null first, with the [[RowIdTreeMap]] of its rows.
 */
object BitmapWriter {
  private val KeysPerBatch = 1024

  /**
   * Merges the runs into the index file, with the keys and rows of an old index (`old`, for OPTIMIZE INDEX): a key
   * in both gets the union of their rows. For a label list, `nullLists` holds the rows whose list is null (by
   * fragment), kept in global buffer 1; the keys are then the lists' items. Runs `held` in memory are taken from
   * there, the others read from their files.
   */
  def merge(storage: Storage, runs: Seq[String], dir: String, keys: ArrowType, allocator: BufferAllocator,
      nullLists: Option[scala.collection.Map[Long, RoaringBitmap]] = None,
      old: Option[IndexAppend.Bitmaps] = None, held: Option[HeldRuns] = None): Seq[(String, Long)] = {
    val schema = new Schema(Seq(BTreeWriter.valuesField("keys", keys),
      new Field("bitmaps", FieldType.nullable(ArrowType.Binary.INSTANCE), null)).asJava)
    val batches = mutable.ArrayBuffer.empty[VectorSchemaRoot]
    try {
      var batch: VectorSchemaRoot = null
      var inBatch = 0
      var distinct = 0
      val rows = mutable.HashMap.empty[Long, RoaringBitmap]
      var order: KeyOrder = null
      def newBatch(): Unit = {
        batch = VectorSchemaRoot.create(schema, allocator)
        batch.getFieldVectors.asScala.foreach(_.allocateNew())
        batches += batch
        inBatch = 0
      }
      def flushKey(): Unit = if (rows.nonEmpty) {
        batch.getVector(1).asInstanceOf[VarBinaryVector].setSafe(inBatch - 1, RowIdTreeMap.encode(rows))
        rows.clear()
      }
      def startKey(values: FieldVector, row: Int): Unit = {
        flushKey()
        if (inBatch == KeysPerBatch) { finishBatch(batch, inBatch); newBatch() }
        batch.getVector(0).copyFromSafe(row, inBatch, values)
        inBatch += 1
        distinct += 1
      }
      def addRows(more: Map[Long, RoaringBitmap]): Unit = more.foreach { case (high, low) =>
        rows.getOrElseUpdate(high, new RoaringBitmap()).or(low)
      }
      // The old index's keys, in order: those before `values` at `row` (all, when null) go in as they are.
      var next = 0
      def oldKeysBefore(values: FieldVector, row: Int): Unit = old.foreach { o =>
        while (next < o.size && (values == null || order.compare(o.keys, o.key(next), values, row) < 0)) {
          val found = o.rows(next)
          if (found.nonEmpty) { startKey(o.keys, o.key(next)); addRows(found) }
          next += 1
        }
      }
      old.foreach { o => order = KeyOrder.of(o.keys); newBatch() }
      SortedRuns.merge(storage, runs, allocator, held) { (values: FieldVector, row: Int, id: Long) =>
        if (order == null) { order = KeyOrder.of(values); newBatch() }
        val keyVector = batch.getVector(0)
        val sameKey = inBatch > 0 && order.compare(keyVector, inBatch - 1, values, row) == 0
        if (!sameKey) {
          oldKeysBefore(values, row)
          startKey(values, row)
          old.foreach { o =>
            if (next < o.size && order.compare(o.keys, o.key(next), values, row) == 0) { addRows(o.rows(next)); next += 1 }
          }
        }
        rows.getOrElseUpdate(id >>> 32, new RoaringBitmap()).add((id & 0xFFFFFFFFL).toInt)
      }
      oldKeysBefore(null, 0)
      if (batch != null) { flushKey(); finishBatch(batch, inBatch) }
      val stats = Map("lance:index_stats" -> s"""{"num_bitmaps":$distinct}""")
      val size = BTreeWriter.writeFile(storage, Storage.join(dir, BitmapIndex.File), schema,
        stats ++ nullLists.map(_ => "lance:label_list_nulls" -> "1"), batches.iterator, nullLists.map(RowIdTreeMap.encode).toSeq)
      Seq(BitmapIndex.File -> size)
    } finally batches.foreach(_.close())
  }

  private def finishBatch(b: VectorSchemaRoot, n: Int): Unit = {
    b.setRowCount(n)
    b.getFieldVectors.asScala.foreach(_.setValueCount(n))
  }
}
