package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector._
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.UnsupportedFeatureException
import io.sparklance.core.storage.Storage

/**
 * Builds a bloom filter index ([[BloomFilterIndex]] describes the file): each fragment's zones of `numberOfItems`
 * live rows get a split block bloom filter sized as upstream sizes them for that many items and `probability`
 * (docs/dev/scalar-indexes.md §6.2), computed where the fragment is read; the driver concatenates the runs.
 */
object BloomFilterWriter {
  val DefaultItems = 8192
  val DefaultProbability = 0.00057

  private val U64 = new ArrowType.Int(64, false)
  val schema: Schema = new Schema(Seq(BTreeWriter.idsField("fragment_id", U64), BTreeWriter.idsField("zone_start", U64),
    BTreeWriter.idsField("zone_length", U64), new Field("has_null", FieldType.notNullable(ArrowType.Bool.INSTANCE), null),
    new Field("bloom_filter_data", FieldType.notNullable(ArrowType.Binary.INSTANCE), null)).asJava)

  /** The file's schema metadata: the parameters as upstream prints them, and where the null rows are. */
  def metadata(items: Int, probability: Double): Map[String, String] = Map("bloomfilter_item" -> items.toString,
    "bloomfilter_probability" -> new java.math.BigDecimal(probability).round(java.math.MathContext.DECIMAL64)
      .stripTrailingZeros().toPlainString, "null_bitmap" -> "1")

  /** The filter size in bytes for `items` distinct values at false positive probability `fpp` (upstream's). */
  def filterBytes(items: Long, fpp: Double): Int = {
    var low = 0
    var high = 64
    while (high > low + 1) {
      val mid = (high + low) / 2
      if (falsePositiveProbability(items, mid) <= fpp) high = mid else low = mid
    }
    1 << math.max(5, math.min(27, high))
  }

  private lazy val logFactorial: Array[Double] = {
    val a = new Array[Double](751)
    var i = 1
    while (i < a.length) { a(i) = a(i - 1) + math.log(i.toDouble); i += 1 }
    a
  }

  /** Putze et al.'s estimate for a split block filter of 2^logBytes bytes holding `items` values (Parquet's). */
  private def falsePositiveProbability(items: Long, logBytes: Int): Double = {
    val bytes = math.pow(2, logBytes)
    val ndv = items.toDouble
    if (ndv == 0) return 0.0
    if (ndv / (bytes * 8) > 2.0) return 1.0
    val lam = 8 * 32 / ((bytes * 8) / ndv)
    val logLam = math.log(lam)
    var result = 0.0
    var i = 749
    while (i >= 0) {
      val logP = i * logLam - lam - logFactorial(i)
      val logInner = 8 * math.log(1.0 - math.pow(1.0 - 1.0 / 32, i))
      result += math.exp(logP + logInner)
      i -= 1
    }
    math.min(result, 1.0)
  }

  /** The bytes upstream hashes for the value at row `i` of `v` (not null): little-endian numbers, raw bytes. */
  def valueBytes(v: FieldVector, i: Int): Array[Byte] = {
    def le(x: Long, n: Int) = java.util.Arrays.copyOf(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(x).array(), n)
    v match {
      case b: BitVector => Array(b.get(i).toByte)
      case d: DateDayVector => le(d.get(i).toLong, 4)
      case t: TimeStampVector => le(t.get(i), 8)
      case f: Float4Vector => le(java.lang.Float.floatToRawIntBits(f.get(i)).toLong, 4)
      case f: Float8Vector => le(java.lang.Double.doubleToRawLongBits(f.get(i)), 8)
      case n: BaseIntVector => le(n.getValueAsLong(i), v.getField.getType.asInstanceOf[ArrowType.Int].getBitWidth / 8)
      case _: VarCharVector | _: VarBinaryVector | _: LargeVarCharVector | _: LargeVarBinaryVector => KeyOrder.bytes(v, i)
      case other => throw new UnsupportedFeatureException(s"Cannot hash values of type ${other.getField.getType} into a bloom filter.")
    }
  }

  /**
   * Writes the zones of one fragment's live rows (`keys`, at offsets `addresses` & 0xFFFFFFFF) to a run file at
   * `path`, and its null rows beside it ([[ZoneRuns]]).
   */
  def writeZones(storage: Storage, path: String, fragmentId: Long, keys: FieldVector, addresses: BigIntVector,
      items: Int, probability: Double, allocator: BufferAllocator): Unit = {
    val n = keys.getValueCount
    val zones = (n + items - 1) / items
    val bytes = filterBytes(items, probability)
    val root = VectorSchemaRoot.create(schema, allocator)
    val nulls = new org.roaringbitmap.RoaringBitmap()
    try {
      root.getFieldVectors.asScala.foreach { v => v.setInitialCapacity(math.max(zones, 1)); v.allocateNew() }
      var z = 0
      while (z < zones) {
        val from = z * items
        val to = math.min(n, from + items)
        val filter = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN)
        var hasNull = false
        var i = from
        while (i < to) {
          if (keys.isNull(i)) { hasNull = true; nulls.add((addresses.get(i) & 0xFFFFFFFFL).toInt) }
          else BloomFilterIndex.insert(filter, BloomFilterIndex.hash(valueBytes(keys, i)))
          i += 1
        }
        val first = addresses.get(from) & 0xFFFFFFFFL
        val last = addresses.get(to - 1) & 0xFFFFFFFFL
        root.getVector(0).asInstanceOf[UInt8Vector].set(z, fragmentId)
        root.getVector(1).asInstanceOf[UInt8Vector].set(z, first)
        root.getVector(2).asInstanceOf[UInt8Vector].set(z, last - first + 1)
        root.getVector(3).asInstanceOf[BitVector].set(z, if (hasNull) 1 else 0)
        root.getVector(4).asInstanceOf[VarBinaryVector].setSafe(z, filter.array())
        z += 1
      }
      ZoneRuns.write(storage, path, root, zones, fragmentId, nulls)
    } finally root.close()
  }

  /** Concatenates the runs (by fragment id) into the index file; returns it with its size. */
  def merge(storage: Storage, runs: Seq[(Long, String)], dir: String, items: Int, probability: Double,
      allocator: BufferAllocator): Seq[(String, Long)] =
    Seq(BloomFilterIndex.File -> ZoneRuns.concat(storage, runs, Storage.join(dir, BloomFilterIndex.File), schema,
      metadata(items, probability), allocator))
}
