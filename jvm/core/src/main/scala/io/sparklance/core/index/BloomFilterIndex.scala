package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import net.jpountz.xxhash.XXHashFactory
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BitVector, UInt8Vector}
import org.apache.arrow.vector.types.pojo.ArrowType

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * A bloom filter index (docs/dev/scalar-indexes.md §6.2): `bloomfilter.lance` holds one row per zone of a
 * fragment's live rows (`fragment_id`, `zone_start`, `zone_length` as in a zone map), `has_null`, and
 * `bloom_filter_data`, a split block bloom filter (Parquet's: blocks of eight 32-bit words, XXH64 with seed 0 of
 * the value's little-endian bytes or UTF-8 bytes). Answers `=`, `IN` and `IS NULL` with every row of the zones
 * that may hold a match: not exact.
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

  def search(storage: Storage, dir: String, query: IndexQuery, keys: ArrowType, allocator: BufferAllocator): RowSelection = {
    val path = Storage.join(dir, File)
    val hashes: Seq[Long] = query match {
      case IndexQuery.In(vs) => vs.flatMap(bytesOf(keys, _)).map(hash)
      case IndexQuery.Range(Some(l), _) => bytesOf(keys, l.value).map(hash).toSeq
      case _ => Nil
    }
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

  /** The bytes upstream hashes for `value` in a column of type `keys`, if it hashes such values. */
  private def bytesOf(keys: ArrowType, value: Any): Option[Array[Byte]] = (keys, value) match {
    case (i: ArrowType.Int, n: java.lang.Number) if !value.isInstanceOf[java.lang.Double] && !value.isInstanceOf[java.lang.Float] =>
      val b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n.longValue()).array()
      Some(java.util.Arrays.copyOf(b, i.getBitWidth / 8))
    case (_: ArrowType.Utf8 | _: ArrowType.LargeUtf8, s: String) => Some(s.getBytes(StandardCharsets.UTF_8))
    case _ => None
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
