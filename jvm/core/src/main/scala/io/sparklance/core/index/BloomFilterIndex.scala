package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import net.jpountz.xxhash.XXHashFactory
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BitVector, UInt8Vector}
import org.apache.arrow.vector.types.{DateUnit, FloatingPointPrecision}
import org.apache.arrow.vector.types.pojo.ArrowType

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * A bloom filter index (docs/dev/scalar-indexes.md §6.2): `bloomfilter.lance` holds one row per zone of a
 * fragment's live rows (`fragment_id`, `zone_start`, `zone_length` as in a zone map), `has_null`, and
 * `bloom_filter_data`, a split block bloom filter (Parquet's: blocks of eight 32-bit words, XXH64 with seed 0 of
 * the value's little-endian bytes or UTF-8 bytes). Answers `=`, `IN` and `IS NULL` with every row of the zones
 * that may hold a match: not exact. Equality with NaN is not answered (a NaN key may have any bits).
 */
object BloomFilterIndex {
  val File = "bloomfilter.lance"

  private val Salt = Array(0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31)
  private val hasher = XXHashFactory.safeInstance().hash64()

  /** Whether a bloom filter answers `query` on keys of type `keys`: equality, IN and IS NULL. */
  def answers(query: IndexQuery, keys: ArrowType): Boolean = query match {
    case IndexQuery.IsNull => true
    case IndexQuery.In(vs) => vs.forall(v => bytesOf(keys, v).isDefined)
    case IndexQuery.Range(Some(l), Some(u)) if l == u && l.inclusive => bytesOf(keys, l.value).isDefined
    case _ => false
  }

  /** The hashes a zone holding a key equal to one of the query's values has one of. */
  private def hashesOf(query: IndexQuery, keys: ArrowType): Seq[Long] = query match {
    case IndexQuery.In(vs) => vs.flatMap(bytesOf(keys, _)).flatten.map(hash)
    case IndexQuery.Range(Some(l), _) => bytesOf(keys, l.value).toSeq.flatten.map(hash)
    case _ => Nil
  }

  def search(storage: Storage, dir: String, query: IndexQuery, keys: ArrowType, allocator: BufferAllocator): RowSelection = {
    val path = Storage.join(dir, File)
    val hashes = hashesOf(query, keys)
    val builder = new RowSelection.Builder(exact = false)
    IndexFiles.withAll(storage, path, allocator) { (_, root) =>
      val fragment = IndexFiles.column(path, root, "fragment_id").asInstanceOf[UInt8Vector]
      val start = IndexFiles.column(path, root, "zone_start").asInstanceOf[UInt8Vector]
      val length = IndexFiles.column(path, root, "zone_length").asInstanceOf[UInt8Vector]
      val hasNull = IndexFiles.column(path, root, "has_null").asInstanceOf[BitVector]
      val data = IndexFiles.column(path, root, "bloom_filter_data")
      var i = 0
      while (i < root.getRowCount) {
        val hit = query match {
          case IndexQuery.IsNull => hasNull.get(i) == 1
          case _ =>
            val filter = ByteBuffer.wrap(KeyOrder.bytes(data, i)).order(ByteOrder.LITTLE_ENDIAN)
            if (filter.remaining == 0 || filter.remaining % 32 != 0) {
              throw new CorruptFileException(path, s"the bloom filter of zone $i has ${filter.remaining} bytes, not a " +
                "positive multiple of 32")
            }
            hashes.exists(mayContain(filter, _))
        }
        if (hit) IndexFiles.addZone(path, i, fragment.get(i), start.get(i), length.get(i), builder)
        i += 1
      }
    }
    builder.result()
  }

  private[index] def hash(bytes: Array[Byte]): Long = hasher.hash(bytes, 0, bytes.length, 0L)

  /** Sets the 8 bits of hash `h` in its block of `filter` (little-endian words). */
  private[index] def insert(filter: ByteBuffer, h: Long): Unit = {
    val blocks = filter.capacity / 32
    val block = (((h >>> 32) * blocks) >>> 32).toInt
    val x = h.toInt
    var i = 0
    while (i < 8) {
      val at = block * 32 + 4 * i
      filter.putInt(at, filter.getInt(at) | (1 << ((x * Salt(i)) >>> 27)))
      i += 1
    }
  }

  private def mayContain(filter: ByteBuffer, h: Long): Boolean = {
    val blocks = filter.remaining / 32
    val block = (((h >>> 32) * blocks) >>> 32).toInt
    val x = h.toInt
    var i = 0
    while (i < 8) {
      val bit = (x * Salt(i)) >>> 27
      if ((filter.getInt(block * 32 + 4 * i) & (1 << bit)) == 0) return false
      i += 1
    }
    true
  }

  /**
   * The bytes upstream hashes for each stored key equal to `value` in a column of type `keys` (none when no key can
   * equal it), if it hashes such values: integers, dates and timestamps as their stored number's little-endian
   * bytes; floats as their IEEE bits, both zeros for a zero (SQL's -0.0 equals 0.0), but not NaN, whose keys may
   * have any bits; strings as UTF-8.
   */
  private def bytesOf(keys: ArrowType, value: Any): Option[Seq[Array[Byte]]] = {
    def little(n: Long, bytes: Int) = java.util.Arrays.copyOf(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array(), bytes)
    val integral = value match {
      case n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte) => Some(n.asInstanceOf[Number].longValue())
      case _ => None
    }
    (keys, value) match {
      case (i: ArrowType.Int, _) => integral.map(n => Seq(little(n, i.getBitWidth / 8)))
      case (d: ArrowType.Date, _) if d.getUnit == DateUnit.DAY =>
        integral.map(n => if (n.toInt == n) Seq(little(n, 4)) else Nil)
      case (_: ArrowType.Date | _: ArrowType.Timestamp, _) => integral.map(n => Seq(little(n, 8)))
      case (f: ArrowType.FloatingPoint, n: java.lang.Number) if !java.lang.Double.isNaN(n.doubleValue()) =>
        val d = n.doubleValue()
        f.getPrecision match {
          case FloatingPointPrecision.DOUBLE =>
            Some((if (d == 0.0) Seq(0.0, -0.0) else Seq(d)).map(x => little(java.lang.Double.doubleToRawLongBits(x), 8)))
          case FloatingPointPrecision.SINGLE =>
            if (d.toFloat.toDouble != d) Some(Nil)
            else Some((if (d == 0.0) Seq(0.0f, -0.0f) else Seq(d.toFloat)).map(x => little(java.lang.Float.floatToRawIntBits(x).toLong, 4)))
          case _ => None
        }
      case (_: ArrowType.Utf8 | _: ArrowType.LargeUtf8, s: String) => Some(Seq(s.getBytes(StandardCharsets.UTF_8)))
      case _ => None
    }
  }

  /** The options the bloom filter in `dir` was built with (`number_of_items`, `probability`), as far as recorded. */
  def parameters(storage: Storage, dir: String): Map[String, String] = {
    import IndexFiles.SchemaMetadata
    IndexFiles.withReader(storage, Storage.join(dir, File)) { r =>
      (r.schemaMetadataString("bloomfilter_item").map("number_of_items" -> _) ++
        r.schemaMetadataString("bloomfilter_probability").map("probability" -> _)).toMap
    }
  }
}
