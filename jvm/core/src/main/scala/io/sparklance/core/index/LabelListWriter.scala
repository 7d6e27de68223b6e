package io.sparklance.core.index

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, UInt8Vector}
import org.apache.arrow.vector.complex.{BaseRepeatedValueVector, LargeListVector, ListVector}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.storage.Storage

/**
 * Builds a label list index (docs/dev/scalar-indexes.md §5): a bitmap index over the items of a list column, whose
 * key null holds the rows with a null item, and whose global buffer 1 holds the rows whose list is null (empty
 * lists are nowhere). Each fragment's items are sorted into a run as for a bitmap, its null lists beside it
 * (`.nulls`, a [[RowIdTreeMap]]); the driver merges them with [[BitmapWriter]]. Rows are row addresses, or row ids
 * on tables with stable row ids, as upstream keeps them.
 */
object LabelListWriter {

  /** The item type of a label list column's lists. */
  def items(list: FieldVector): FieldVector = list match {
    case l: ListVector => l.getDataVector
    case l: LargeListVector => l.getDataVector
    case other => throw new UnsupportedFeatureException(s"A LABEL_LIST index takes a list column, not ${other.getField.getType}.")
  }

  def writeRun(storage: Storage, path: String, lists: FieldVector, addresses: BigIntVector, allocator: BufferAllocator): Unit = {
    val values = items(lists)
    def bounds(i: Int): (Long, Long) = lists match {
      case l: LargeListVector => (l.getElementStartIndex(i), l.getElementEndIndex(i))
      case l: BaseRepeatedValueVector => (l.getOffsetBuffer.getInt(i.toLong * 4).toLong, l.getOffsetBuffer.getInt((i + 1).toLong * 4).toLong)
      case other => throw new UnsupportedFeatureException(s"A LABEL_LIST index takes a list column, not ${other.getField.getType}.")
    }
    val n = lists.getValueCount
    var total = 0L
    var i = 0
    while (i < n) { if (!lists.isNull(i)) { val (a, b) = bounds(i); total += b - a }; i += 1 }
    val keys = values.getField.createVector(allocator)
    val ids = new UInt8Vector("ids", allocator)
    // Row addresses, or row ids on tables with stable row ids: by their upper 32 bits, as a RowIdTreeMap holds them.
    val nullLists = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap]
    try {
      keys.setInitialCapacity(total.toInt)
      keys.allocateNew()
      ids.allocateNew(total.toInt)
      val copy = values.makeTransferPair(keys)
      var k = 0
      i = 0
      while (i < n) {
        val address = addresses.get(i)
        if (lists.isNull(i)) nullLists.getOrElseUpdate(address >>> 32, new RoaringBitmap()).add((address & 0xFFFFFFFFL).toInt)
        else {
          val (a, b) = bounds(i)
          var j = a
          while (j < b) { copy.copyValueSafe(j.toInt, k); ids.set(k, address); k += 1; j += 1 }
        }
        i += 1
      }
      keys.setValueCount(k)
      ids.setValueCount(k)
      BTreeWriter.writeRun(storage, path, keys, ids, allocator)
      ZoneRuns.writeNulls(storage, path, nullLists)
    } finally {
      keys.close()
      ids.close()
    }
  }

  /** Merges the runs (by fragment id) into the index file, with the items and null lists of an old index. */
  def merge(storage: Storage, runs: Seq[(Long, String)], dir: String, allocator: BufferAllocator,
      itemType: org.apache.arrow.vector.types.pojo.ArrowType, old: Option[IndexAppend.Bitmaps] = None): Seq[(String, Long)] = {
    val nulls = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap] ++= ZoneRuns.readNulls(storage, runs.map(_._2))
    old.foreach(_.nullLists.foreach { case (high, low) => nulls.getOrElseUpdate(high, new RoaringBitmap()).or(low) })
    BitmapWriter.merge(storage, runs.map(_._2), dir, itemType, allocator, Some(nulls), old)
  }
}
