package io.sparklance.core.index

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{LargeVarBinaryVector, UInt4Vector, UInt8Vector}
import org.apache.arrow.vector.complex.ListVector

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * A Lance INVERTED (full-text) index as pylance 14 writes it (docs/dev/fts-index-format.md §1), read for searching:
 * its text analysis ([[FtsParams]]) and, per partition, the token dictionary (an FST, [[FstReader]]), the documents
 * (row ids and token counts) and, on demand, the posting list of each token searched ([[PostingList]]).
 *
 * Instances are shared through [[IndexCache]] (keyed by the index's directory, which Lance never rewrites) and are
 * safe for use from several threads.
 */
final class InvertedIndex private (val dir: String, val params: FtsParams, val partitions: IndexedSeq[InvertedIndex.Partition]) {

  /** The documents of every partition (rows with a text when the index was built, deleted ones included). */
  def numDocs: Long = partitions.map(_.numDocs.toLong).sum

  /** The tokens of every document of every partition. */
  def totalTokens: Long = partitions.map(_.totalTokens).sum

  /**
   * The BM25 score of every document holding any (`all = false`) or every (`all = true`) one of `tokens`, by row
   * id, as Lance scores a match query over its indexed documents (docs/dev/fts-index-format.md §3): k1 = 1.2,
   * b = 0.75; a token's idf is ln((N - n + 0.5) / (n + 0.5) + 1), with N the documents of every partition and n those
   * holding the token in any; a document's part is (k1 + 1) f / (f + k1 (1 - b + b len / avgdl)), with avgdl the
   * tokens of every document over N; the score sums the parts of the query's tokens in the query's order, a token
   * the query repeats counting as often (as pylance 14 scores it), times `boost`. Every step is pylance's float
   * arithmetic in its order, so the scores are pylance's to the bit ([[InvertedIndex.idf]], [[InvertedIndex.termWeight]]).
   */
  def scores(tokens: Seq[String], all: Boolean, boost: Float): java.util.HashMap[java.lang.Long, java.lang.Float] = {
    val out = new java.util.HashMap[java.lang.Long, java.lang.Float]()
    val distinct = tokens.distinct
    if (distinct.isEmpty) return out
    val order = tokens.map(t => distinct.indexOf(t)).toArray
    val avgdl = InvertedIndex.averageLength(totalTokens, numDocs)
    val perPartition = partitions.map(p => distinct.map(p.postings))
    val idf = distinct.indices.map(k => InvertedIndex.idf(numDocs, perPartition.map(_(k).map(_.size.toLong).getOrElse(0L)).sum))
    partitions.zip(perPartition).foreach { case (p, lists) =>
      if (!all || lists.forall(_.isDefined)) {
        val sums = new java.util.HashMap[Integer, Array[Float]]()
        order.indices.foreach { j =>
          val k = order(j)
          val first = order.indexOf(k) == j
          lists(k).foreach { l =>
            var i = 0
            while (i < l.size) {
              val doc = l.docs(i)
              val part = idf(k) * InvertedIndex.termWeight(l.frequencies(i), p.numTokens(doc), avgdl)
              val acc = sums.computeIfAbsent(doc, _ => new Array[Float](2))
              acc(0) += part
              if (first) acc(1) += 1
              i += 1
            }
          }
        }
        sums.forEach { (doc, acc) =>
          if (!all || acc(1) == distinct.size) out.put(p.rowId(doc), acc(0) * boost)
        }
      }
    }
    out
  }

  /** The documents of every partition holding `token`. */
  def documentFrequency(token: String): Long = partitions.map(_.postings(token).map(_.size.toLong).getOrElse(0L)).sum

  /**
   * The row ids (row addresses, or stable row ids on tables that have them) of the documents holding any of
   * `tokens` (`all = false`) or every one of them (`all = true`), passed to `found` partition by partition. No
   * token matches nothing.
   */
  def documentsWith(tokens: Seq[String], all: Boolean)(found: Long => Unit): Unit = if (tokens.nonEmpty) {
    partitions.foreach { p =>
      val lists = tokens.distinct.map(p.postings)
      if (all) {
        if (lists.forall(_.isDefined)) {
          val sorted = lists.flatten.sortBy(_.size)
          var docs = sorted.head.docs
          sorted.tail.foreach(l => docs = InvertedIndex.intersect(docs, l.docs))
          docs.foreach(d => found(p.rowId(d)))
        }
      } else {
        val seen = new org.roaringbitmap.RoaringBitmap()
        lists.flatten.foreach(l => seen.add(l.docs: _*))
        seen.forEach((d: Int) => found(p.rowId(d)))
      }
    }
  }
}

object InvertedIndex {
  /** BM25's parameters as Lance sets them (`scorer.rs`). */
  val K1 = 1.2f
  val B = 0.75f

  /**
   * A token's BM25 idf among `numDocs` documents, `holding` of which hold it, as pylance computes it: in float,
   * ln((N - n + 0.5) / (n + 0.5) + 1) with glibc's `logf` (which Rust's `f32::ln` calls on Linux).
   */
  def idf(numDocs: Long, holding: Long): Float =
    GlibcLogf.log((numDocs.toFloat - holding.toFloat + 0.5f) / (holding.toFloat + 0.5f) + 1.0f)

  /** The average tokens of a document, `totalTokens` over `numDocs` documents, in float as pylance divides them. */
  def averageLength(totalTokens: Long, numDocs: Long): Float = totalTokens.toFloat / numDocs.toFloat

  /**
   * The BM25 weight of a token `f` times in a document of `len` tokens, where documents average `avgdl` tokens, in
   * pylance's float operations and order: (k1 + 1) f / (f + k1 ((1 - b) + b len / avgdl)).
   */
  def termWeight(f: Int, len: Int, avgdl: Float): Float = {
    val freq = f.toFloat
    val norm = K1 * ((1.0f - B) + B * len.toFloat / avgdl)
    (K1 + 1.0f) * freq / (freq + norm)
  }

  val TokensFile = "part_%d_tokens.lance"
  val InvertFile = "part_%d_invert.lance"
  val DocsFile = "part_%d_docs.lance"

  /** The formats of pylance 14 this reader knows, by schema metadata key of `metadata.lance`. */
  private val Formats = Map("format_version" -> "2", "token_set_format" -> "fst", "posting_block_size" -> "128",
    "posting_tail_codec" -> "varint_delta_v1")

  /**
   * One partition: its dictionary, and its documents' row ids and token counts (document id = ordinal). Posting
   * lists are read when first searched and kept.
   */
  final class Partition private[InvertedIndex] (storage: Storage, val id: Int, tokens: FstReader, rowIds: Array[Long],
      val numTokens: Array[Int], val totalTokens: Long, invertPath: String) {
    private val lists = new ConcurrentHashMap[Long, PostingList]()
    private val listsBytes = new java.util.concurrent.atomic.AtomicLong()

    def numDocs: Int = rowIds.length

    def rowId(doc: Int): Long = {
      if (doc < 0 || doc >= rowIds.length) {
        throw new CorruptFileException(invertPath, s"a posting list holds document $doc; the partition has ${rowIds.length}")
      }
      rowIds(doc)
    }

    /** The id of `token` in this partition's dictionary, if it holds the token. */
    def tokenId(token: String): Option[Long] = Some(tokens.get(token)).filter(_ >= 0)

    /** The dictionary. */
    def dictionary: FstReader = tokens

    /** Every token of the dictionary, by token id (ids run from 0 to the number of tokens). */
    def tokensById(): Array[String] = {
      val n = tokens.size
      if (n > Int.MaxValue) throw new CorruptFileException(invertPath, s"the dictionary holds $n tokens")
      val out = new Array[String](n.toInt)
      tokens.forEach { (key: Array[Byte], length: Int, value: Long) =>
        if (value < 0 || value >= n) throw new CorruptFileException(invertPath, s"the dictionary gives token id $value of $n")
        out(value.toInt) = new String(key, 0, length, java.nio.charset.StandardCharsets.UTF_8)
      }
      out
    }

    /** The posting list of `token`, if the partition holds it. */
    def postings(token: String): Option[PostingList] = tokenId(token).map(postingsOf)

    /** The posting list of token `id`, read from `part_N_invert.lance` on first use. */
    def postingsOf(id: Long): PostingList = {
      val cached = lists.get(id)
      if (cached != null) cached
      else {
        val list = readPostings(id)
        // Lists read stay for the life of the partition, up to about a tenth of the cache's bound.
        if (listsBytes.addAndGet(list.size * 8L) < IndexCache.MaxBytes / 10) lists.put(id, list)
        list
      }
    }

    private def readPostings(id: Long): PostingList = IndexFiles.withReader(storage, invertPath) { reader =>
      if (id < 0 || id >= reader.numRows) {
        throw new CorruptFileException(invertPath, s"the dictionary gives token id $id; the file has ${reader.numRows} posting lists")
      }
      val allocator = new RootAllocator()
      try {
        val root = reader.take(IndexFiles.fields(reader, "_posting", "_length"), Array(id), allocator)
        try {
          val blocksVector = IndexFiles.column(invertPath, root, "_posting").asInstanceOf[ListVector]
          val length = IndexFiles.column(invertPath, root, "_length").asInstanceOf[UInt4Vector].getValueAsLong(0)
          val data = blocksVector.getDataVector.asInstanceOf[LargeVarBinaryVector]
          val from = blocksVector.getElementStartIndex(0)
          val to = blocksVector.getElementEndIndex(0)
          val blocks = Array.tabulate(to - from)(k => data.get(from + k))
          if (length > Int.MaxValue) throw new CorruptFileException(invertPath, s"a posting list has $length documents")
          PostingList.decode(blocks, length.toInt, invertPath)
        } finally root.close()
      } finally allocator.close()
    }
  }

  /** The index in `dir` (cached); `name` names it in errors. */
  /**
   * The segments of one index read as one: their partitions together, scored with the statistics of all (Lance
   * scores a query over an index's segments with their documents together; measured on pylance 14).
   */
  def union(segments: Seq[InvertedIndex]): InvertedIndex =
    if (segments.size == 1) segments.head
    else new InvertedIndex(segments.head.dir, segments.head.params, segments.flatMap(_.partitions).toIndexedSeq)

  def open(storage: Storage, dir: String, name: String): InvertedIndex =
    IndexCache.getOrLoad[InvertedIndex](("inverted", dir), (i: InvertedIndex) =>
      i.partitions.map(p => p.numDocs * 12L + p.dictionary.size * 16L).sum + 1024L) {
      load(storage, dir, name)
    }

  private def load(storage: Storage, dir: String, name: String): InvertedIndex = {
    val metadataPath = Storage.join(dir, FtsParams.MetadataFile)
    val (params, partitionIds) = IndexFiles.withReader(storage, metadataPath) { reader =>
      import IndexFiles.SchemaMetadata
      Formats.foreach { case (key, known) =>
        reader.schemaMetadataString(key).filter(_ != known).foreach { v =>
          throw new io.sparklance.core.UnsupportedFeatureException(s"Full-text index '$name' ($metadataPath) is " +
            s"written with $key '$v'; sparklance reads $key '$known' (pylance 14's). Search it with pylance.")
        }
      }
      val json = reader.schemaMetadataString("params").getOrElse(throw new CorruptFileException(metadataPath,
        "its schema metadata has no 'params' (the tokenizer settings of the full-text index)"))
      val ids = reader.schemaMetadataString("partitions").map { s =>
        try new ObjectMapper().readTree(s).elements().asScala.map(_.asInt()).toIndexedSeq
        catch { case e: java.io.IOException => throw new CorruptFileException(metadataPath, s"its 'partitions' is not JSON: ${e.getMessage}") }
      }.getOrElse(throw new CorruptFileException(metadataPath, "its schema metadata has no 'partitions'"))
      (FtsParams.parse(json, s"full-text index '$name'", metadataPath), ids)
    }
    new InvertedIndex(dir, params, partitionIds.map(readPartition(storage, dir, _)))
  }

  private def readPartition(storage: Storage, dir: String, id: Int): Partition = {
    val allocator = new RootAllocator()
    try {
      val tokensPath = Storage.join(dir, TokensFile.format(id))
      val fst = IndexFiles.withAll(storage, tokensPath, allocator) { (reader, root) =>
        if (root.getRowCount != 1) throw new CorruptFileException(tokensPath, s"it has ${root.getRowCount} rows, not 1")
        IndexFiles.fields(reader, "_token_fst_bytes")
        val bytes = IndexFiles.column(tokensPath, root, "_token_fst_bytes").asInstanceOf[LargeVarBinaryVector].get(0)
        new FstReader(bytes, tokensPath)
      }
      val docsPath = Storage.join(dir, DocsFile.format(id))
      val (rowIds, numTokens, total) = IndexFiles.withAll(storage, docsPath, allocator) { (_, root) =>
        val ids = IndexFiles.column(docsPath, root, "_rowid").asInstanceOf[UInt8Vector]
        val counts = IndexFiles.column(docsPath, root, "_num_tokens").asInstanceOf[UInt4Vector]
        val n = root.getRowCount
        val r = new Array[Long](n)
        val c = new Array[Int](n)
        var total = 0L
        var i = 0
        while (i < n) {
          r(i) = ids.get(i)
          c(i) = counts.get(i)
          total += counts.getValueAsLong(i)
          i += 1
        }
        (r, c, total)
      }
      new Partition(storage, id, fst, rowIds, numTokens, total, Storage.join(dir, InvertFile.format(id)))
    } finally allocator.close()
  }

  /** The ids in both ascending arrays. */
  private[index] def intersect(a: Array[Int], b: Array[Int]): Array[Int] = {
    val out = new Array[Int](math.min(a.length, b.length))
    var i = 0
    var j = 0
    var n = 0
    while (i < a.length && j < b.length) {
      if (a(i) < b(j)) i += 1
      else if (a(i) > b(j)) j += 1
      else { out(n) = a(i); n += 1; i += 1; j += 1 }
    }
    java.util.Arrays.copyOf(out, n)
  }
}
