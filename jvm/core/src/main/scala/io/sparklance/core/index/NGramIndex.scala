package io.sparklance.core.index

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.arrow.memory.BufferAllocator
import org.apache.arrow.vector.UInt4Vector
import org.roaringbitmap.RoaringBitmap

import io.sparklance.core.CorruptFileException
import io.sparklance.core.storage.Storage

/**
 * An NGRAM index (docs/dev/scalar-indexes.md §12): `ngram_postings.lance` holds one row per trigram, `tokens`
 * (uint32, ascending; token 0 holds the null rows) and `posting_list`, the rows whose text holds the trigram as a
 * serialized Roaring treemap (u64 count, then per fragment ascending a u32 fragment id and a portable Roaring
 * bitmap of its row offsets). Upstream lower-cases and ASCII-folds each whole text, cuts it into every
 * three-character window, and keeps the windows made of ASCII letters and digits only ([[trigrams]]); a trigram's
 * token is `37² p(c0) + 37 p(c1) + p(c2)` with `p` = 1..10 for '0'..'9' and 11..36 for 'a'..'z'.
 *
 * A search for the rows whose text contains a needle uses only the trigrams of the needle's runs of ASCII letters
 * and digits (lower-cased): those runs appear unchanged in any text holding the needle, whatever the folding does
 * to the characters around them, so every such trigram is in the posting lists of every row that matches. The
 * rows found are a superset (not exact): the caller's filter decides.
 */
object NGramIndex {
  val File = "ngram_postings.lance"

  private val Span = 37

  /**
   * Hands `visit` the token of each trigram upstream indexes for `text`, in text order, repeats included: the text
   * lower-cased and then ASCII-folded code point by code point ([[FtsTokenizer]]'s tables of pylance 14, so `ß` gives
   * `ss`, `½` gives `12`, and `İ` gives `i` and a combining dot), then each window of three code points that are all
   * ASCII letters or digits. A fold may yield an upper-case ASCII letter (`ᴬ` gives `A`); upstream's
   * `ngram_to_token` computes its position in wrapping 8-bit arithmetic (`A` is 235, `V` 0), and so does this.
   */
  def trigrams(text: String, visit: Int => Unit): Unit = {
    val folded = FtsTokenizer.fold(FtsTokenizer.lowerCase(text))
    var p0 = 0
    var p1 = 0
    var run = 0
    var i = 0
    while (i < folded.length) {
      val c = folded.charAt(i)
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        val p = if (c <= '9') c - '0' + 1 else (c - 'a' + 11) & 0xFF
        run += 1
        if (run >= 3) visit(p0 * Span * Span + p1 * Span + p)
        p0 = p1
        p1 = p
      } else run = 0
      i += 1
    }
  }

  /** The tokens of the trigrams every text containing `needle` holds, as upstream indexes them (none: cannot narrow). */
  def needleTokens(needle: String): Array[Int] = {
    val out = scala.collection.mutable.ArrayBuffer.empty[Int]
    var run = 0
    var i = 0
    val p = new Array[Int](needle.length)
    while (i < needle.length) {
      val c = needle.charAt(i)
      val pos = position(c)
      if (pos == 0) run = 0
      else {
        p(i) = pos
        run += 1
        if (run >= 3) out += p(i - 2) * Span * Span + p(i - 1) * Span + pos
      }
      i += 1
    }
    out.distinct.sorted.toArray
  }

  /** The alphabet position of an ASCII letter or digit (either case), 0 for any other character. */
  private def position(c: Char): Int =
    if (c >= '0' && c <= '9') c - '0' + 1
    else if (c >= 'a' && c <= 'z') c - 'a' + 11
    else if (c >= 'A' && c <= 'Z') c - 'A' + 11
    else 0

  /**
   * The rows of the index in `dir` whose text may contain every trigram of `tokens` (non-empty): the intersection of
   * their posting lists, empty when one of them is not in the index. Values are the posting lists' own (row
   * addresses, or stable row ids for index version 0 on tables that have them).
   */
  def search(storage: Storage, dir: String, tokens: Array[Int], allocator: BufferAllocator): RowSelection = {
    require(tokens.nonEmpty, "an ngram search needs at least one trigram")
    val path = Storage.join(dir, File)
    val builder = new RowSelection.Builder(exact = false)
    IndexFiles.withReader(storage, path) { reader =>
      val fields = IndexFiles.fields(reader, "tokens", "posting_list")
      val rows = {
        val keys = reader.read(Seq(fields(0)), 0, reader.numRows, allocator)
        try {
          val k = keys.getVector(0) match {
            case u: UInt4Vector => u
            case other => throw new CorruptFileException(path, s"column tokens has type ${other.getField.getType}, not uint32")
          }
          val at = new java.util.HashMap[Int, Long]()
          var i = 0
          while (i < keys.getRowCount) { if (!k.isNull(i)) at.put(k.get(i), i.toLong); i += 1 }
          tokens.map(t => if (at.containsKey(t)) at.get(t) else -1L)
        } finally keys.close()
      }
      if (!rows.contains(-1L)) {
        val lists = reader.take(Seq(fields(1)), rows, allocator)
        try {
          val b = lists.getVector(0)
          val found = (0 until lists.getRowCount).map { i =>
            if (b.isNull(i)) throw new CorruptFileException(path, s"the posting list of token ${tokens(i)} is null")
            decodeTreemap(path, ByteBuffer.wrap(KeyOrder.bytes(b, i)))
          }
          found.reduce { (a, b) =>
            a.keys.filter(b.contains).map(f => f -> RoaringBitmap.and(a(f), b(f))).filter(!_._2.isEmpty).toMap
          }.foreach { case (fragment, offsets) => builder.addAll(fragment, offsets) }
        } finally lists.close()
      }
    }
    builder.result()
  }

  /** A serialized Roaring treemap (upstream `RoaringTreemap::serialize_into`) by fragment id (upper 32 bits). */
  private[index] def decodeTreemap(path: String, bytes: ByteBuffer): Map[Long, RoaringBitmap] = {
    val b = bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    def need(n: Int, what: String): Unit = if (b.remaining < n) {
      throw new CorruptFileException(path, s"a posting list ends inside its $what")
    }
    need(8, "map count")
    val count = b.getLong()
    if (count < 0 || count > b.remaining / 4) throw new CorruptFileException(path, s"a posting list claims $count maps")
    val out = Map.newBuilder[Long, RoaringBitmap]
    var e = 0L
    while (e < count) {
      need(4, "fragment id")
      val fragment = b.getInt() & 0xFFFFFFFFL
      val rows = new RoaringBitmap()
      try rows.deserialize(b.slice()) catch {
        case ex: Exception => throw new CorruptFileException(path, s"the posting list of fragment $fragment is not a " +
          s"valid Roaring bitmap: ${ex.getMessage}", ex)
      }
      b.position(b.position() + rows.serializedSizeInBytes())
      out += fragment -> rows
      e += 1
    }
    out.result()
  }
}
