package io.sparklance.core.index

import java.util.Locale

import io.sparklance.core.{InvalidArgumentException, UnsupportedFeatureException}

/**
 * A full-text query on one column, as Lance's `MatchQuery` and `PhraseQuery` define it, and which rows it selects.
 * The query text is analysed by the column's index ([[FtsParams]]), as the rows' texts are.
 *
 * A row (a text) matches
 *  - [[FtsQuery.Match]] with operator OR if it holds at least one of the query's tokens, with AND if it holds every
 *    one of them;
 *  - [[FtsQuery.Phrase]] with slop 0 if it holds the query's tokens at the same positions relative to each other
 *    as in the query (the exact phrase); with a slop above 0 if Lance's search of positions finds the i-th token (at
 *    position q_i in the query) at a position p_i with r_i = p_i - q_i non-decreasing and r_{i+1} - r_i at most
 *    `slop` (the slop bounds each gap, not their sum, and the order never changes). That search is greedy and misses
 *    some such choices, as pylance 14 does: see [[Matcher]]. Positions count the tokens a filter dropped, in the
 *    text as in the query: a stop word between two words is a gap, which the same stop word in the query fills.
 * A query with no token (empty, or only stop words) matches no row; nor does a null text or one with no token.
 * (With the raw base tokenizer an empty text is one empty token, which the empty query matches, as in pylance.)
 */
sealed trait FtsQuery {
  def text: String
}

object FtsQuery {
  sealed trait Operator
  case object Or extends Operator
  case object And extends Operator

  /** A match query; with `fuzzy`, each query token stands for the index's tokens within some edits of it. */
  final case class Match(text: String, operator: Operator, boost: Float, fuzzy: Option[Fuzzy] = None) extends FtsQuery {
    override def toString: String = s"match('$text', ${operator.toString.toUpperCase(Locale.ROOT)}" +
      fuzzy.fold("")(f => s", fuzziness ${f.fuzziness}") + ")"
  }

  /**
   * Fuzzy matching of a [[Match]] (Lance's `fuzziness`, `prefix_length`, `max_expansions`): `groups` holds, per query
   * token, the index's tokens it expands to ([[FuzzyExpansion]]), filled in when the query is planned on an index
   * (`FullTextIndexUse.expand`); a text matches if it holds a token of any group (OR) or of every group (AND).
   */
  final case class Fuzzy(fuzziness: Int, prefixLength: Int, maxExpansions: Int, groups: Seq[Seq[String]] = Nil)

  final case class Phrase(text: String, slop: Int) extends FtsQuery {
    if (slop < 0) throw new InvalidArgumentException(s"Phrase query '$text': slop is $slop; it must be 0 or more.")
    override def toString: String = s"phrase('$text', slop $slop)"
  }

  private val MatchOptions = Set("fuzziness", "operator", "boost", "prefix_length", "max_expansions")

  /**
   * A match query from the other connector's options string (`'fuzziness=1,operator=AND,boost=2.0,...'`, keys
   * case-insensitive). A fuzziness above 0 makes it fuzzy ([[Fuzzy]], unexpanded until planned on an index), shaped by
   * `prefix_length` (0 by default) and `max_expansions` (50), which change nothing otherwise.
   */
  def matchWithOptions(text: String, options: String, function: String): Match = {
    val pairs = options.split(",").toSeq.map(_.trim).filter(_.nonEmpty).map { kv =>
      kv.split("=", 2) match {
        case Array(k, v) => k.trim.toLowerCase(Locale.ROOT) -> v.trim
        case _ => throw new InvalidArgumentException(s"$function: option '$kv' is not key=value (options are " +
          s"${MatchOptions.toSeq.sorted.mkString(", ")}).")
      }
    }
    pairs.map(_._1).filterNot(MatchOptions.contains).foreach { k =>
      throw new InvalidArgumentException(s"$function: unknown option '$k' (options are ${MatchOptions.toSeq.sorted.mkString(", ")}).")
    }
    val o = pairs.toMap
    def int(k: String, min: Int): Option[Int] = o.get(k).map { v =>
      scala.util.Try(v.toInt).toOption.filter(_ >= min).getOrElse(throw new InvalidArgumentException(
        s"$function: option $k is '$v'; it must be a whole number of at least $min."))
    }
    val fuzziness = int("fuzziness", 0).getOrElse(0)
    val prefixLength = int("prefix_length", 0).getOrElse(0)
    val maxExpansions = int("max_expansions", 1).getOrElse(DefaultMaxExpansions)
    val operator = o.get("operator").map(_.toUpperCase(Locale.ROOT)) match {
      case None | Some("OR") => Or
      case Some("AND") => And
      case Some(v) => throw new InvalidArgumentException(s"$function: option operator is '$v'; it must be AND or OR.")
    }
    val boost = o.get("boost").map { v =>
      scala.util.Try(v.toFloat).toOption.filterNot(_.isNaN).getOrElse(throw new InvalidArgumentException(
        s"$function: option boost is '$v', not a number."))
    }.getOrElse(1.0f)
    Match(text, operator, boost, if (fuzziness > 0) Some(Fuzzy(fuzziness, prefixLength, maxExpansions)) else None)
  }

  /** Lance's `max_expansions` when a fuzzy query gives none. */
  val DefaultMaxExpansions = 50

  /** The operator of `lance_multi_match`'s options (`'operator=AND'` or `'operator=OR'`). */
  def multiMatchOperator(options: String, function: String): Operator = {
    val parsed = matchWithOptions("", options, function)
    if (parsed.fuzzy.isDefined) throw new UnsupportedFeatureException(s"$function: fuzzy matching (fuzziness above " +
      "0) is not supported across several columns; use lance_match on each column, or search with pylance.")
    parsed.operator
  }

  /**
   * Whether `options` is an options string rather than a column name: it holds `=` and its first key is a known
   * option (the other connector's rule for `lance_multi_match`'s second argument).
   */
  def looksLikeOptions(options: String): Boolean = options.contains("=") &&
    MatchOptions.contains(options.split(",")(0).split("=", 2)(0).trim.toLowerCase(Locale.ROOT))

  /**
   * Which texts `query` selects under the analysis `tokenizer` makes. Not safe for use from several threads at
   * once (the tokenizer keeps state).
   */
  final class Matcher(query: FtsQuery, tokenizer: FtsTokenizer) {
    private val analysed = tokenizer.tokenize(query.text)
    private val queryTokens: Array[String] = analysed.texts
    private val distinct: Array[String] = queryTokens.distinct

    // A fuzzy query's tokens are its expansions' (its own analysis, stop words removed, does not count).
    private val fuzzy: Boolean = query match { case Match(_, _, _, Some(_)) => true; case _ => false }

    def matches(text: String): Boolean = {
      if (text == null || (queryTokens.isEmpty && !fuzzy)) return false
      val doc = tokenizer.tokenize(text)
      if (doc.size == 0) return false
      query match {
        case Match(_, op, _, Some(f)) =>
          if (op == Or) f.groups.exists(_.exists(t => contains(doc.texts, t)))
          else f.groups.nonEmpty && f.groups.forall(_.exists(t => contains(doc.texts, t)))
        case Match(_, Or, _, None) => distinct.exists(t => contains(doc.texts, t))
        case Match(_, And, _, None) => distinct.forall(t => contains(doc.texts, t))
        case Phrase(_, slop) => phrase(doc, slop)
      }
    }

    private def contains(texts: Array[String], t: String): Boolean = {
      var i = 0
      while (i < texts.length) {
        if (texts(i) == t) return true
        i += 1
      }
      false
    }

    private def phrase(doc: FtsTokenizer.Tokens, slop: Int): Boolean =
      if (slop == 0) exactPhrase(doc) else sloppyPhrase(doc, slop)

    /** Whether the text holds every query token i at position s + q_i for one s (r_i all equal). */
    private def exactPhrase(doc: FtsTokenizer.Tokens): Boolean = {
      var reachable = relativePositions(doc, queryTokens(0), analysed.positions(0))
      var i = 1
      while (i < queryTokens.length && reachable.nonEmpty) {
        val rs = relativePositions(doc, queryTokens(i), analysed.positions(i))
        reachable = reachable.filter(r => rs.contains(r))
        i += 1
      }
      reachable.nonEmpty
    }

    /**
     * pylance 14's search of positions for a phrase with a slop above 0 (its `check_positions`, found equal to
     * pylance on every text of up to 7 tokens over a 4-word vocabulary, for phrases of 2 to 4 tokens, repeated or
     * not, slops 1 to 3). Each query token has a cursor on its positions in the text, at first its first position.
     * A round looks at the relative positions r_i of the cursors pair by pair, in query order, up to the first pair
     * with not (r_i <= r_{i+1} <= r_i + slop); if there is none, the text matches. Otherwise every cursor moves to
     * its first position with r at least the largest of the pairs' targets looked at (r_i if r_i > r_{i+1}, else
     * max(r_i + 1, r_{i+1} - slop)); a cursor past its last position means no match. The target grows from the
     * second round on, so the search ends. It misses matches: a query token that also occurs before the phrase
     * (`a b c` with slop 1 in `c a b c`) or a first choice that moves the search past the one that works
     * (`a b c` with slop 1 in `a c b c`).
     */
    private def sloppyPhrase(doc: FtsTokenizer.Tokens, slop: Int): Boolean = {
      val n = queryTokens.length
      val positions = new Array[Array[Int]](n)
      val cursor = new Array[Int](n)
      var i = 0
      while (i < n) {
        positions(i) = positionsOf(doc, queryTokens(i))
        if (positions(i).isEmpty) return false
        i += 1
      }
      var matched = false
      var exhausted = false
      while (!matched && !exhausted) {
        var target = Int.MinValue
        var ok = true
        i = 0
        while (ok && !exhausted && i + 1 < n) {
          if (cursor(i) >= positions(i).length || cursor(i + 1) >= positions(i + 1).length) {
            exhausted = true
          } else {
            val last = positions(i)(cursor(i)) - analysed.positions(i)
            val next = positions(i + 1)(cursor(i + 1)) - analysed.positions(i + 1)
            target = math.max(target, if (last > next) last else math.max(last + 1, next - slop))
            ok = last <= next && next <= last + slop
          }
          i += 1
        }
        if (ok && !exhausted) {
          matched = true
        } else if (!exhausted) {
          i = 0
          while (i < n) {
            cursor(i) = firstAtLeast(positions(i), target + analysed.positions(i))
            i += 1
          }
        }
      }
      matched
    }

    private def firstAtLeast(sorted: Array[Int], least: Int): Int = {
      var lo = 0
      var hi = sorted.length
      while (lo < hi) {
        val mid = (lo + hi) >>> 1
        if (sorted(mid) < least) lo = mid + 1 else hi = mid
      }
      lo
    }

    private def positionsOf(doc: FtsTokenizer.Tokens, token: String): Array[Int] = {
      val out = Array.newBuilder[Int]
      var k = 0
      while (k < doc.texts.length) {
        if (doc.texts(k) == token) out += doc.positions(k)
        k += 1
      }
      out.result()
    }

    private def relativePositions(doc: FtsTokenizer.Tokens, token: String, at: Int): Array[Int] = {
      val out = Array.newBuilder[Int]
      var k = 0
      while (k < doc.texts.length) {
        if (doc.texts(k) == token) out += doc.positions(k) - at
        k += 1
      }
      out.result()
    }
  }
}
