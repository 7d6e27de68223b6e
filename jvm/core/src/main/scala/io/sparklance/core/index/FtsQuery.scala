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
 *  - [[FtsQuery.Phrase]] if it holds the query's tokens in order, the i-th (at position q_i in the query) at
 *    position p_i, with r_i = p_i - q_i non-decreasing and r_{i+1} - r_i at most `slop` (Lance's
 *    `check_positions`: slop 0 is the exact phrase). Positions count the tokens a filter dropped, in the text as in
 *    the query: a stop word between two words is a gap, which the same stop word in the query fills.
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

  final case class Match(text: String, operator: Operator, boost: Float) extends FtsQuery {
    override def toString: String = s"match('$text', ${operator.toString.toUpperCase(Locale.ROOT)})"
  }
  final case class Phrase(text: String, slop: Int) extends FtsQuery {
    if (slop < 0) throw new InvalidArgumentException(s"Phrase query '$text': slop is $slop; it must be 0 or more.")
    override def toString: String = s"phrase('$text', slop $slop)"
  }

  private val MatchOptions = Set("fuzziness", "operator", "boost", "prefix_length", "max_expansions")

  /**
   * A match query from the other connector's options string (`'fuzziness=1,operator=AND,boost=2.0,...'`, keys
   * case-insensitive). Fuzzy matching (a fuzziness above 0) is refused: it is not implemented. `prefix_length` and
   * `max_expansions` only shape fuzzy matching, so without it they change nothing.
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
    int("fuzziness", 0).filter(_ > 0).foreach { f =>
      throw new UnsupportedFeatureException(s"$function: fuzziness=$f (fuzzy matching) is not supported by " +
        "sparklance's full-text search yet; use fuzziness=0 or leave it out, or search with pylance.")
    }
    int("prefix_length", 0)
    int("max_expansions", 1)
    val operator = o.get("operator").map(_.toUpperCase(Locale.ROOT)) match {
      case None | Some("OR") => Or
      case Some("AND") => And
      case Some(v) => throw new InvalidArgumentException(s"$function: option operator is '$v'; it must be AND or OR.")
    }
    val boost = o.get("boost").map { v =>
      scala.util.Try(v.toFloat).toOption.filterNot(_.isNaN).getOrElse(throw new InvalidArgumentException(
        s"$function: option boost is '$v', not a number."))
    }.getOrElse(1.0f)
    Match(text, operator, boost)
  }

  /** The operator of `lance_multi_match`'s options (`'operator=AND'` or `'operator=OR'`). */
  def multiMatchOperator(options: String, function: String): Operator =
    matchWithOptions("", options, function).operator

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

    def matches(text: String): Boolean = {
      if (text == null || queryTokens.isEmpty) return false
      val doc = tokenizer.tokenize(text)
      if (doc.size == 0) return false
      query match {
        case Match(_, Or, _) => distinct.exists(t => contains(doc.texts, t))
        case Match(_, And, _) => distinct.forall(t => contains(doc.texts, t))
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

    /**
     * Whether some choice of positions p_i (the i-th query token's, in the text) has r_i = p_i - q_i
     * non-decreasing with steps of at most `slop`: the reachable r_i are carried forward token by token.
     */
    private def phrase(doc: FtsTokenizer.Tokens, slop: Int): Boolean = {
      var reachable: Array[Int] = null
      var i = 0
      while (i < queryTokens.length) {
        val rs = relativePositions(doc, queryTokens(i), analysed.positions(i))
        val next = if (reachable == null) rs else rs.filter(r => reachable.exists(f => f <= r && r <= f + slop))
        if (next.isEmpty) return false
        reachable = next
        i += 1
      }
      true
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
