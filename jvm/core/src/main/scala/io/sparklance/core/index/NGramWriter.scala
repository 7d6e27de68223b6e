package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{BigIntVector, FieldVector, UInt4Vector, VarBinaryVector, VectorSchemaRoot}
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.{CorruptFileException, FileVersion}
import io.sparklance.core.file.LanceFileWriter
import io.sparklance.core.schema.{ArrowSchemas, LanceSchema}
import io.sparklance.core.storage.Storage
import io.sparklance.proto.FileProtos

/**
 * Builds an NGRAM index ([[NGramIndex]] describes the file) as pylance 14 does: each task writes its fragment's
 * trigrams and their rows as a run in the index's own format, one row per token ascending; the driver merges the
 * runs (and, for OPTIMIZE INDEX, the old index's file) into `ngram_postings.lance`, the union of each token's rows.
 *
 * The merge holds every posting list in memory, as upstream's build does up to its spill threshold: an NGRAM index
 * has at most some 360,000 tokens, each with one bitmap of rows per 2³² row ids.
 */
object NGramWriter {
  /** Upstream's `write_index` copies the merged postings into the index file 64 rows at a time. */
  private val RowsPerBatch = 64

  /** One more than the largest token: three positions of at most 255 (an upper-case letter wraps, see [[NGramIndex]]). */
  private val Tokens = 255 * 37 * 37 + 255 * 37 + 255 + 1

  /** The file's schema (upstream `POSTINGS_SCHEMA`): the posting lists are stored uncompressed. */
  val schema: Schema = new Schema(Seq(
    new Field("tokens", FieldType.nullable(new ArrowType.Int(32, false)), null),
    new Field("posting_list", new FieldType(false, ArrowType.Binary.INSTANCE, null,
      Map("lance-encoding:compression" -> "none").asJava), null)).asJava)

  /**
   * The file's Lance schema as pylance 14 writes it: each field records its (v1) encoding, `plain` for the tokens and
   * `var_binary` for the posting lists, as upstream's conversion from Arrow sets them.
   */
  private val fileSchema: LanceSchema = LanceSchema.fromProtos("the NGRAM index schema",
    ArrowSchemas.fromArrow(schema).toProtos.map { f =>
      f.toBuilder.setEncoding(if (f.getName == "tokens") FileProtos.Encoding.PLAIN else FileProtos.Encoding.VAR_BINARY)
        .build()
    }, Map.empty)

  /**
   * The posting lists being built: by the upper 32 bits of the row ids, a bitmap of their lower 32 bits per token.
   * Row ids are added in any order; a row added twice for a token is there once.
   */
  final class Postings {
    private val byHigh = new java.util.TreeMap[java.lang.Long, Array[RoaringBitmap]]()
    private var lastHigh = -1L
    private var last: Array[RoaringBitmap] = _

    private def lists(high: Long): Array[RoaringBitmap] = {
      if (high != lastHigh) {
        last = byHigh.get(high)
        if (last == null) { last = new Array[RoaringBitmap](Tokens); byHigh.put(high, last) }
        lastHigh = high
      }
      last
    }

    def add(token: Int, rowId: Long): Unit = {
      val l = lists(rowId >>> 32)
      var b = l(token)
      if (b == null) { b = new RoaringBitmap(); l(token) = b }
      b.add((rowId & 0xFFFFFFFFL).toInt)
    }

    /** Adds the rows of a serialized treemap (a run's or an old index's posting list) of the upper halves `keep` takes. */
    def addAll(token: Int, rows: Map[Long, RoaringBitmap], keep: Long => Boolean): Unit = rows.foreach { case (high, low) =>
      if (keep(high)) {
        val l = lists(high)
        if (l(token) == null) l(token) = low else l(token).or(low)
      }
    }

    /** Writes the postings to `path` as an NGRAM index file; its size. */
    def write(storage: Storage, path: String, allocator: BufferAllocator): Long = {
      val highs = byHigh.asScala.toSeq.map(h => h._1.longValue -> h._2)
      var count = 0L
      var max = 0
      var t = 0
      while (t < Tokens) {
        if (highs.exists(_._2(t) != null)) { count += 1; max = t }
        t += 1
      }
      val batches = new Batches(highs, allocator)
      try {
        val options = LanceFileWriter.Options(bitpacking = bitpacksTokens(count, 32 - Integer.numberOfLeadingZeros(max)))
        val w = LanceFileWriter.create(storage, path, fileSchema, FileVersion.V2_2, options)
        try {
          batches.foreach(w.write)
          w.finish()
        } finally w.close()
      } finally batches.close()
    }
  }

  /**
   * Whether pylance 14 bit-packs a page of `count` tokens whose largest needs `width` bits: unless they fit one block
   * of 1024 values and that block, packed, would take at least their flat bytes (lance-encoding
   * `try_bitpack_for_mini_block`, "too small").
   */
  private def bitpacksTokens(count: Long, width: Int): Boolean = count > 1024 || (1024L * width + 7) / 8 < 4 * count

  /** The rows of the index file, tokens ascending, [[RowsPerBatch]] at a time; each batch is closed by the next. */
  private final class Batches(highs: Seq[(Long, Array[RoaringBitmap])], allocator: BufferAllocator)
      extends Iterator[VectorSchemaRoot] with AutoCloseable {
    private var token = 0
    private var current: VectorSchemaRoot = _
    private def skipAbsent(): Unit = while (token < Tokens && !highs.exists(_._2(token) != null)) token += 1
    skipAbsent()

    def hasNext: Boolean = token < Tokens

    def next(): VectorSchemaRoot = {
      close()
      current = VectorSchemaRoot.create(schema, allocator)
      val tokens = current.getVector(0).asInstanceOf[UInt4Vector]
      val lists = current.getVector(1).asInstanceOf[VarBinaryVector]
      tokens.allocateNew(RowsPerBatch)
      lists.allocateNew()
      var n = 0
      while (n < RowsPerBatch && token < Tokens) {
        tokens.set(n, token)
        lists.setSafe(n, encodeTreemap(highs.flatMap { case (high, l) => Option(l(token)).map(high -> _) }))
        n += 1
        token += 1
        skipAbsent()
      }
      current.setRowCount(n)
      current
    }

    def close(): Unit = if (current != null) { current.close(); current = null }
  }

  /**
   * Writes the trigrams of `texts` (strings) as a run at `path`: each row's id (`ids`: row addresses or stable row
   * ids) under each of its trigrams' tokens, the null rows under token 0.
   */
  def writeRun(storage: Storage, path: String, texts: FieldVector, ids: BigIntVector, allocator: BufferAllocator): Unit = {
    val postings = new Postings
    var row = 0
    val n = texts.getValueCount
    while (row < n) {
      val id = ids.get(row)
      if (texts.isNull(row)) postings.add(0, id)
      else NGramIndex.trigrams(new String(KeyOrder.bytes(texts, row), StandardCharsets.UTF_8), postings.add(_, id))
      row += 1
    }
    postings.write(storage, path, allocator)
  }

  /**
   * Merges run files (or old index files) into the index's `ngram_postings.lance` in `dir`; the file and its size.
   * Of the runs in `old`, only the rows whose upper 32 bits `keep` takes are kept.
   */
  def merge(storage: Storage, runs: Seq[String], old: Set[String], keep: Long => Boolean, dir: String,
      allocator: BufferAllocator): Seq[(String, Long)] = {
    val postings = new Postings
    runs.foreach { run =>
      val keeping: Long => Boolean = if (old.contains(run)) keep else _ => true
      IndexFiles.withAll(storage, run, allocator) { (_, root) =>
        val tokens = IndexFiles.column(run, root, "tokens") match {
          case u: UInt4Vector => u
          case other => throw new CorruptFileException(run, s"column tokens has type ${other.getField.getType}, not uint32")
        }
        val lists = IndexFiles.column(run, root, "posting_list")
        var i = 0
        while (i < root.getRowCount) {
          if (tokens.isNull(i) || lists.isNull(i)) throw new CorruptFileException(run, s"row $i has a null token or posting list")
          val token = tokens.get(i)
          if (token < 0 || token >= Tokens) throw new CorruptFileException(run, s"token $token is not a trigram's")
          postings.addAll(token, NGramIndex.decodeTreemap(run, ByteBuffer.wrap(KeyOrder.bytes(lists, i))), keeping)
          i += 1
        }
      }
    }
    val path = Storage.join(dir, NGramIndex.File)
    Seq(NGramIndex.File -> postings.write(storage, path, allocator))
  }

  /**
   * A Roaring treemap as upstream's `RoaringTreemap::serialize_into` writes it: the number of bitmaps (u64 LE), then
   * for each upper half ascending its value (u32 LE) and the portable serialization of the bitmap of lower halves.
   * Bitmaps are not run-optimized, as upstream's are not.
   */
  private[index] def encodeTreemap(maps: Seq[(Long, RoaringBitmap)]): Array[Byte] = {
    val b = ByteBuffer.allocate(8 + maps.map(4 + _._2.serializedSizeInBytes()).sum).order(ByteOrder.LITTLE_ENDIAN)
    b.putLong(maps.size.toLong)
    maps.foreach { case (high, low) =>
      b.putInt(high.toInt)
      low.serialize(b)
    }
    b.array()
  }
}
