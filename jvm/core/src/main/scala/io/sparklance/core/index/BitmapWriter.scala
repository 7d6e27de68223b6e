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
   * Merges the runs into the index file. For a label list, `nullLists` holds the rows whose list is null (by
   * fragment), kept in global buffer 1; the keys are then the lists' items.
   */
  def merge(storage: Storage, runs: Seq[String], dir: String, keys: ArrowType, allocator: BufferAllocator,
      nullLists: Option[scala.collection.Map[Long, RoaringBitmap]] = None): Seq[(String, Long)] = {
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
      SortedRuns.merge(storage, runs, allocator) { (values: FieldVector, row: Int, id: Long) =>
        if (order == null) { order = KeyOrder.of(values); newBatch() }
        val keyVector = batch.getVector(0)
        val sameKey = inBatch > 0 && order.compare(keyVector, inBatch - 1, values, row) == 0
        if (!sameKey) {
          flushKey()
          if (inBatch == KeysPerBatch) { finishBatch(batch, inBatch); newBatch() }
          batch.getVector(0).copyFromSafe(row, inBatch, values)
          inBatch += 1
          distinct += 1
        }
        rows.getOrElseUpdate(id >>> 32, new RoaringBitmap()).add((id & 0xFFFFFFFFL).toInt)
      }
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
