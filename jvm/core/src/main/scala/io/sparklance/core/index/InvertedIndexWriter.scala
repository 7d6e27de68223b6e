package io.sparklance.core.index

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.google.protobuf.{ByteString, CodedOutputStream}
import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.{Float4Vector, LargeVarBinaryVector, UInt4Vector, UInt8Vector, VarBinaryVector, VectorSchemaRoot}
import org.apache.arrow.vector.complex.ListVector
import org.apache.arrow.vector.types.FloatingPointPrecision
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}

import io.sparklance.core.storage.Storage

/**
 * Writes an INVERTED (full-text) index in pylance 14's layout (docs/dev/fts-index-format.md §1): each partition's
 * documents, token dictionary and posting lists ([[Partition]], [[writePartition]]), then `metadata.lance` naming the
 * partitions ([[writeMetadata]]). A partition is built from the texts of some rows, analysed with the index's
 * [[FtsParams]]; its token ids are given in order of first occurrence, its document ids in the order rows are added.
 */
object InvertedIndexWriter {
  private val U32 = new ArrowType.Int(32, false)
  private val U64 = new ArrowType.Int(64, false)
  private val LargeBinary = ArrowType.LargeBinary.INSTANCE

  private def field(name: String, t: ArrowType): Field = new Field(name, FieldType.notNullable(t), null)

  private def listOf(name: String, t: ArrowType): Field =
    new Field(name, FieldType.notNullable(ArrowType.List.INSTANCE), Seq(new Field("item", FieldType.nullable(t), null)).asJava)

  /** The codec keys every file of the index records, as pylance 14 writes them. */
  private def codecs(withPosition: Boolean): Map[String, String] =
    Map("format_version" -> "2", "posting_block_size" -> "128", "posting_tail_codec" -> "varint_delta_v1") ++
      (if (withPosition) Map("positions_codec" -> "packed_delta_v1", "positions_layout" -> "shared_stream_v2") else Map.empty)

  /** A growable array of ints. */
  private final class Ints {
    var values = new Array[Int](4)
    var size = 0
    def add(v: Int): Unit = {
      if (size == values.length) values = java.util.Arrays.copyOf(values, size * 2)
      values(size) = v
      size += 1
    }
  }

  /** One token's postings: documents, frequencies and (with positions) every occurrence's position. */
  private final class Postings(withPosition: Boolean) {
    val docs = new Ints
    val freqs = new Ints
    val positions: Ints = if (withPosition) new Ints else null
  }

  /** The documents and postings of one partition, as rows are added. */
  final class Partition(params: FtsParams) {
    private val tokenizer = params.tokenizer()
    private val ids = new java.util.HashMap[String, Integer]()
    private val tokens = scala.collection.mutable.ArrayBuffer.empty[String]
    private val postings = scala.collection.mutable.ArrayBuffer.empty[Postings]
    private val rowIds = new scala.collection.mutable.ArrayBuilder.ofLong
    private val lengths = new Ints
    private var totalTokens = 0L

    /** The documents added: rows whose text has at least one token after analysis. */
    def numDocs: Int = lengths.size

    /** Adds the row `rowId` with `text`; a null text, or one without tokens, is no document (as pylance skips it). */
    def add(rowId: Long, text: String): Unit = if (text != null) {
      val t = tokenizer.tokenize(text)
      if (t.size > 0) {
        val doc = lengths.size
        // The document's tokens by id, in order of first occurrence, with their positions.
        val inDoc = new java.util.LinkedHashMap[Integer, Ints]()
        var i = 0
        while (i < t.size) {
          val token = t.texts(i)
          var id = ids.get(token)
          if (id == null) {
            id = tokens.length
            ids.put(token, id)
            tokens += token
            postings += new Postings(params.withPosition)
          }
          inDoc.computeIfAbsent(id, _ => new Ints).add(t.positions(i))
          i += 1
        }
        inDoc.forEach { (id, at) =>
          val p = postings(id)
          p.docs.add(doc)
          p.freqs.add(at.size)
          if (p.positions != null) { var k = 0; while (k < at.size) { p.positions.add(at.values(k)); k += 1 } }
        }
        rowIds += rowId
        lengths.add(t.size)
        totalTokens += t.size
      }
    }

    /**
     * Writes the partition's three files into `dir` as partition `id`; returns their names and sizes. Fails on an
     * empty partition, which pylance never writes.
     */
    def write(storage: Storage, dir: String, id: Int, allocator: BufferAllocator): Seq[(String, Long)] = {
      require(numDocs > 0, "an INVERTED index partition needs at least one document")
      Seq(writeDocs(storage, dir, id, allocator), writeTokens(storage, dir, id, allocator),
        writeInvert(storage, dir, id, allocator))
    }

    private def writeDocs(storage: Storage, dir: String, id: Int, allocator: BufferAllocator): (String, Long) = {
      val name = InvertedIndex.DocsFile.format(id)
      val schema = new Schema(Seq(field("_rowid", U64), field("_num_tokens", U32)).asJava)
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        val r = root.getVector(0).asInstanceOf[UInt8Vector]
        val n = root.getVector(1).asInstanceOf[UInt4Vector]
        val ids = rowIds.result()
        r.allocateNew(numDocs)
        n.allocateNew(numDocs)
        var i = 0
        while (i < numDocs) { r.set(i, ids(i)); n.set(i, lengths.values(i)); i += 1 }
        root.setRowCount(numDocs)
        name -> BTreeWriter.writeFile(storage, Storage.join(dir, name), schema, Map("total_tokens" -> totalTokens.toString),
          Iterator.single(root))
      } finally root.close()
    }

    private def writeTokens(storage: Storage, dir: String, id: Int, allocator: BufferAllocator): (String, Long) = {
      val name = InvertedIndex.TokensFile.format(id)
      val keys = tokens.zipWithIndex.map { case (t, i) => t.getBytes(StandardCharsets.UTF_8) -> i }
        .sortWith((a, b) => java.util.Arrays.compareUnsigned(a._1, b._1) < 0)
      val fst = new FstWriter()
      keys.foreach { case (k, v) => fst.add(k, v.toLong) }
      val bytes = fst.finish()
      val schema = new Schema(Seq(field("_token_fst_bytes", LargeBinary), field("_token_next_id", U32),
        field("_token_total_length", U64)).asJava)
      val root = VectorSchemaRoot.create(schema, allocator)
      try {
        root.getVector(0).asInstanceOf[LargeVarBinaryVector].setSafe(0, bytes)
        root.getVector(1).asInstanceOf[UInt4Vector].setSafe(0, tokens.length)
        root.getVector(2).asInstanceOf[UInt8Vector].setSafe(0, keys.map(_._1.length.toLong).sum)
        root.setRowCount(1)
        name -> BTreeWriter.writeFile(storage, Storage.join(dir, name), schema, Map.empty, Iterator.single(root))
      } finally root.close()
    }

    private def writeInvert(storage: Storage, dir: String, id: Int, allocator: BufferAllocator): (String, Long) = {
      val name = InvertedIndex.InvertFile.format(id)
      val withPosition = params.withPosition
      val fields = Seq(listOf("_posting", LargeBinary), field("_max_score", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        field("_length", U32), listOf("_impacts", LargeBinary)) ++
        (if (withPosition) Seq(field("_compressed_position", LargeBinary), listOf("_position_block_offset", U32)) else Nil)
      val schema = new Schema(fields.asJava)
      val avgdl = totalTokens.toFloat / numDocs.toFloat
      val docLengths = java.util.Arrays.copyOf(lengths.values, numDocs)
      // Rows are written in batches, each freed before the next is built.
      val batch = 4096
      val batches = Iterator.range(0, tokens.length, batch).map { from =>
        val to = math.min(tokens.length, from + batch)
        val root = VectorSchemaRoot.create(schema, allocator)
        val posting = root.getVector(0).asInstanceOf[ListVector]
        val blocks = posting.addOrGetVector[LargeVarBinaryVector](FieldType.nullable(LargeBinary)).getVector
        val maxScore = root.getVector(1).asInstanceOf[Float4Vector]
        val length = root.getVector(2).asInstanceOf[UInt4Vector]
        val impacts = root.getVector(3).asInstanceOf[ListVector]
        val impactData = impacts.addOrGetVector[LargeVarBinaryVector](FieldType.nullable(LargeBinary)).getVector
        val positions = if (withPosition) root.getVector(4).asInstanceOf[LargeVarBinaryVector] else null
        val offsets = if (withPosition) root.getVector(5).asInstanceOf[ListVector] else null
        val offsetData = if (withPosition) offsets.addOrGetVector[UInt4Vector](FieldType.nullable(U32)).getVector else null
        root.getFieldVectors.asScala.foreach(_.allocateNew())
        var blockAt = 0
        var impactAt = 0
        var offsetAt = 0
        var row = 0
        while (row < to - from) {
          val p = postings(from + row)
          val w = PostingWriter.encode(p.docs.values, p.freqs.values, p.docs.size,
            if (p.positions == null) null else p.positions.values, docLengths, numDocs, avgdl)
          posting.startNewValue(row)
          w.blocks.foreach { b => blocks.setSafe(blockAt, b); blockAt += 1 }
          posting.endValue(row, w.blocks.length)
          maxScore.setSafe(row, w.maxScore)
          length.setSafe(row, p.docs.size)
          impacts.startNewValue(row)
          w.impacts.foreach { b => impactData.setSafe(impactAt, b); impactAt += 1 }
          impacts.endValue(row, w.impacts.length)
          if (withPosition) {
            positions.setSafe(row, w.positions)
            offsets.startNewValue(row)
            w.positionBlockOffsets.foreach { o => offsetData.setSafe(offsetAt, o); offsetAt += 1 }
            offsets.endValue(row, w.positionBlockOffsets.length)
          }
          row += 1
        }
        blocks.setValueCount(blockAt)
        impactData.setValueCount(impactAt)
        if (withPosition) { offsetData.setValueCount(offsetAt); positions.setValueCount(row); offsets.setValueCount(row) }
        posting.setValueCount(row)
        impacts.setValueCount(row)
        maxScore.setValueCount(row)
        length.setValueCount(row)
        root.setRowCount(row)
        root
      }
      // Each batch is closed once the writer has taken it.
      val closing = new Iterator[VectorSchemaRoot] {
        private var previous: VectorSchemaRoot = null
        def hasNext: Boolean = { if (previous != null) { previous.close(); previous = null }; batches.hasNext }
        def next(): VectorSchemaRoot = { previous = batches.next(); previous }
      }
      try name -> BTreeWriter.writeFile(storage, Storage.join(dir, name), schema, codecs(withPosition), closing)
      finally closing.hasNext
    }
  }

  /**
   * Writes `metadata.lance`: one row holding an empty bitmap of deleted fragments, and in its schema metadata the
   * analysis `params`, the `partitions` and the codecs; returns its name and size.
   */
  def writeMetadata(storage: Storage, dir: String, params: FtsParams, partitions: Seq[Int],
      allocator: BufferAllocator): (String, Long) = {
    val schema = new Schema(Seq(field("deleted_fragments", ArrowType.Binary.INSTANCE)).asJava)
    val root = VectorSchemaRoot.create(schema, allocator)
    try {
      val empty = new java.io.ByteArrayOutputStream()
      new org.roaringbitmap.RoaringBitmap().serialize(new java.io.DataOutputStream(empty))
      root.getVector(0).asInstanceOf[VarBinaryVector].setSafe(0, empty.toByteArray)
      root.setRowCount(1)
      val metadata = codecs(params.withPosition) ++ Map("params" -> paramsJson(params),
        "partitions" -> partitions.mkString("[", ",", "]"), "token_set_format" -> "fst")
      FtsParams.MetadataFile -> BTreeWriter.writeFile(storage, Storage.join(dir, FtsParams.MetadataFile), schema,
        metadata, Iterator.single(root))
    } finally root.close()
  }

  /** `params` as pylance 14 records it: every setting, in its order, the n-gram ones at their defaults. */
  def paramsJson(p: FtsParams): String = {
    val json = new ObjectMapper()
    val node = json.createObjectNode()
      .put("lance_tokenizer", "text").put("base_tokenizer", p.baseTokenizer).put("language", p.language)
      .put("with_position", p.withPosition)
    p.maxTokenLength match {
      case Some(n) => node.put("max_token_length", n)
      case None => node.putNull("max_token_length")
    }
    node.put("lower_case", p.lowerCase).put("stem", p.stem).put("remove_stop_words", p.removeStopWords)
    p.customStopWords match {
      case Some(words) => val a = node.putArray("custom_stop_words"); words.foreach(a.add)
      case None => node.putNull("custom_stop_words")
    }
    node.put("ascii_folding", p.asciiFolding).put("min_ngram_length", 3).put("max_ngram_length", 3)
      .put("prefix_only", false).put("block_size", 128).put("split_identifiers", false)
      .put("split_on_numerics", false).put("preserve_original", false).put("index_operators", false)
    json.writeValueAsString(node)
  }

  /**
   * `InvertedIndexDetails` as pylance 14 records it in the index's metadata (observed, field by field): 1 base
   * tokenizer, 2 language (as a JSON string), 3 with_position, 4 max_token_length, 5 lower_case, 6 stem,
   * 7 remove_stop_words, 8 ascii_folding, 9 and 10 the n-gram lengths (3), 12 the block size (128), 15 the format
   * version (2); false flags and an absent length are left out.
   */
  def details(p: FtsParams): ByteString = {
    val b = ByteString.newOutput()
    val out = CodedOutputStream.newInstance(b)
    out.writeString(1, p.baseTokenizer)
    out.writeString(2, new ObjectMapper().writeValueAsString(p.language))
    if (p.withPosition) out.writeBool(3, true)
    p.maxTokenLength.foreach(n => out.writeUInt32(4, n))
    if (p.lowerCase) out.writeBool(5, true)
    if (p.stem) out.writeBool(6, true)
    if (p.removeStopWords) out.writeBool(7, true)
    if (p.asciiFolding) out.writeBool(8, true)
    out.writeUInt32(9, 3)
    out.writeUInt32(10, 3)
    out.writeUInt32(12, 128)
    out.writeUInt32(15, 2)
    out.flush()
    b.toByteString
  }
}
