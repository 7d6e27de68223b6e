package io.sparklance.core.index

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core.{CorruptFileException, InvalidArgumentException, UnsupportedFeatureException}

/**
 * The analysis and matching rules of full-text search on cases that show one rule each (pylance is the oracle of
 * tests/test_full_text_search.py; these pin what tantivy's filters do, read from its source).
 */
class FullTextSuite extends AnyFunSuite {
  private def params(json: String): FtsParams = FtsParams.parse(json, "index 'i'", "metadata.lance")
  /** Parameters with stemming off (refused when on) and `json`'s settings. */
  private def unstemmed(json: String): String = if (json == "{}") """{"stem":false}""" else json.replaceFirst("\\{", """{"stem":false,""")
  private def tokens(json: String, text: String): Seq[(String, Int)] = {
    val t = params(unstemmed(json)).tokenizer().tokenize(text)
    t.texts.toSeq.zip(t.positions.toSeq)
  }

  test("defaults but stemming: simple split, lower case, stop words removed, positions keep gaps") {
    assert(tokens("{}", "The Running foxes, and THE dogs!") ==
      Seq("running" -> 1, "foxes" -> 2, "dogs" -> 5))
  }

  test("stemming (Snowball 3.1.1 English) runs after lower case and before stop words and folding") {
    val t = params("""{"with_position":true}""").tokenizer().tokenize("Having RUNNING dogs, yourselves Cafés")
    assert(t.texts.toSeq.zip(t.positions.toSeq) == Seq("run" -> 1, "dog" -> 2, "yourselv" -> 3, "cafe" -> 4))
  }

  test("simple splits on every code point that is neither Alphabetic nor a number; whitespace on ASCII whitespace only") {
    assert(tokens("""{"stem":false,"remove_stop_words":false}""", "don't e-mail x2 ½ 数据\u00A0検索").map(_._1) ==
      Seq("don", "t", "e", "mail", "x2", "12", "数据", "検索"))
    assert(tokens("""{"base_tokenizer":"whitespace","stem":false,"remove_stop_words":false}""", "don't e-mail\u00A0x\tY").map(_._1) ==
      Seq("don't", "e-mail x", "y"))
    // The no-break space stays in the token, which folding (pylance's, the default) turns into a space.
    assert(tokens("""{"base_tokenizer":"whitespace","stem":false,"ascii_folding":false}""", "e-mail\u00A0x").map(_._1) ==
      Seq("e-mail\u00A0x"))
  }

  test("remove-long drops tokens of max_token_length UTF-8 bytes or more, before lower-casing") {
    val p = """{"max_token_length":4,"stem":false,"remove_stop_words":false}"""
    assert(tokens(p, "abc abcd éa éab").map(_._1) == Seq("abc", "ea"))
    assert(tokens("""{"max_token_length":null,"stem":false}""", "a" * 100).map(_._1) == Seq("a" * 100))
  }

  test("letters of Unicode versions newer than the JVM's, lower case and folding are pylance 14's (Unicode 17)") {
    val plain = """{"stem":false,"remove_stop_words":false,"ascii_folding":false}"""
    // U+0870 (Unicode 14) and U+31350 (17) are letters; U+2C2F (Ⱟ, 14) lower-cases to U+2C5F; ª, ℓ, Ⅽ, ① fold, ƀ does not.
    assert(tokens(plain, "a\u0870b \ud884\udf50 \u2c2f").map(_._1) == Seq("a\u0870b", "\ud884\udf50", "\u2c5f"))
    assert(tokens("""{"stem":false,"remove_stop_words":false}""", "ªb ℓ Ⅽ ① ƀ İ").map(_._1) ==
      Seq("ab", "l", "c", "1", "ƀ", "i\u0307"))
  }

  test("lower case maps each code point alone (no final sigma), folding comes last") {
    assert(tokens("""{"stem":false}""", "ΣΟΦΙΑΣ Straße CAFÉ").map(_._1) == Seq("σοφιασ", "strasse", "cafe"))
    assert(tokens("""{"stem":false,"ascii_folding":false}""", "CAFÉ").map(_._1) == Seq("café"))
    assert(tokens("""{"lower_case":false,"stem":false,"remove_stop_words":false}""", "The Cat").map(_._1) == Seq("The", "Cat"))
  }

  test("raw keeps the whole text as one token; custom stop words replace the English ones") {
    assert(tokens("""{"base_tokenizer":"raw","stem":false}""", "Deep Networks") == Seq("deep networks" -> 0))
    assert(tokens("""{"custom_stop_words":["deep"],"stem":false}""", "the deep sea").map(_._1) == Seq("the", "sea"))
  }

  test("settings sparklance does not implement are refused by name") {
    def refused(json: String) = intercept[UnsupportedFeatureException](params(json)).getMessage
    assert(refused("""{"base_tokenizer":"ngram"}""").contains("base_tokenizer 'ngram'"))
    assert(refused("""{"base_tokenizer":"jieba/default"}""").contains("base_tokenizer 'jieba/default'"))
    assert(refused("""{"lance_tokenizer":"json"}""").contains("lance_tokenizer 'json'"))
    assert(refused("""{"language":"french","stem":false}""").contains("language 'french', which pylance 14 does not take"))
    assert(refused("""{"split_identifiers":true,"preserve_original":false}""").contains("split_identifiers = true"))
    params("""{"language":"French","stem":false,"remove_stop_words":false}""")
    params("""{"language":"French","stem":false,"custom_stop_words":["le"]}""")
    assert(intercept[CorruptFileException](params("{")).getMessage.contains("not JSON"))
  }

  test("other languages: Snowball stemmers and each language's stop words, stop words matched after stemming") {
    def stemmed(language: String, text: String) =
      params(s"""{"language":"$language"}""").tokenizer().tokenize(text).texts.toSeq
    assert(stemmed("Russian", "Книгами и бегущий") == Seq("книг", "бегущ"))
    assert(stemmed("Portuguese", "Correndo com as meninas") == Seq("corr", "menin"))
    assert(stemmed("Turkish", "kitapların ve evlerimizden") == Seq("kitap", "ev"))
    assert(stemmed("Hungarian", "a házakban") == Seq("haz"))
    // The simple tokenizer splits Tamil at each virama (not alphanumeric), as pylance's does; whitespace keeps words.
    assert(params("""{"language":"Tamil","base_tokenizer":"whitespace"}""").tokenizer().tokenize("புத்தகங்கள்")
      .texts.toSeq == Seq("புத்தகம்"))
    assert(FtsStopWords.of("French").contains("les") && !FtsStopWords.of("French").contains("the"))
    assert(params("""{"language":"French","stem":false}""").tokenizer().tokenize("les chats").texts.toSeq == Seq("chats"))
  }

  test("Turkish cuts a proper noun's suffix at an apostrophe from the third letter on, as Snowball 3.1.1 does") {
    import FtsStemmer.removeProperNounSuffix
    assert(removeProperNounSuffix("türkiye'dir") == "türkiye")
    assert(removeProperNounSuffix("''ankara'da'") == "ankara")
    assert(removeProperNounSuffix("o'connor") == "o'connor" && removeProperNounSuffix("l'entrée") == "l'entrée")
    assert(removeProperNounSuffix("ab'c'd") == "ab" && removeProperNounSuffix("ab'") == "ab")
    assert(removeProperNounSuffix("'''") == "" && removeProperNounSuffix("a") == "a")
    // Two code points before the apostrophe, one of them above U+FFFF (two UTF-16 units), still cut; one is not.
    assert(removeProperNounSuffix("\ud835\udc00a'da") == "\ud835\udc00a")
    assert(removeProperNounSuffix("\ud835\udc00'da") == "\ud835\udc00'da")
    val turkish = FtsStemmer.of("Turkish")
    assert(turkish.stem("kitapların'da") == turkish.stem("kitapların") && turkish.stem("kitapların") == "kitap")
    // A word the rest of the algorithm leaves alone (one syllable) still loses its suffix.
    assert(turkish.stem("ev'de") == "ev")
    assert(params("""{"language":"Turkish","base_tokenizer":"whitespace"}""").tokenizer()
      .tokenize("Ankara'dan evlerimizden").texts.toSeq == Seq(turkish.stem("ankara"), "ev"))
  }

  test("a code point above U+FFFF counts as one character in the stemmer, as in Snowball") {
    // Lucene's program alone would see two UTF-16 units and strip the -a of "\ud835\udc00ia" (Snowball 3.1.1 keeps it).
    assert(FtsStemmer.of("Portuguese").stem("\ud835\udc00ia") == "\ud835\udc00ia")
    assert(FtsStemmer.of("Portuguese").stem("\ud835\udc00\ue000menin\ud835\udc00as") == "\ud835\udc00\ue000menin\ud835\udc00")
  }

  private def matches(q: FtsQuery, text: String, json: String = """{"with_position":true}"""): Boolean =
    new FtsQuery.Matcher(q, params(unstemmed(json)).tokenizer()).matches(text)

  test("match: OR needs one query token, AND every one; no token, null or empty text matches nothing") {
    assert(matches(FtsQuery.Match("machine deep", FtsQuery.Or, 1f), "machine learning"))
    assert(!matches(FtsQuery.Match("machine deep", FtsQuery.And, 1f), "machine learning"))
    assert(matches(FtsQuery.Match("Learning MACHINE", FtsQuery.And, 1f), "machine learning"))
    assert(!matches(FtsQuery.Match("machines", FtsQuery.Or, 1f), "machine learning"))
    assert(!matches(FtsQuery.Match("the of", FtsQuery.Or, 1f), "the of"))
    assert(!matches(FtsQuery.Match("x", FtsQuery.Or, 1f), null))
    assert(!matches(FtsQuery.Match("x", FtsQuery.Or, 1f), ""))
  }

  test("phrase: in order, relative positions within slop, a dropped stop word is a gap") {
    assert(matches(FtsQuery.Phrase("machine learning", 0), "deep machine learning"))
    assert(!matches(FtsQuery.Phrase("learning machine", 0), "machine learning"))
    assert(!matches(FtsQuery.Phrase("learning machine", 5), "machine learning"))
    assert(!matches(FtsQuery.Phrase("machine learning", 0), "machine the learning"))
    assert(matches(FtsQuery.Phrase("machine learning", 1), "machine the learning"))
    assert(!matches(FtsQuery.Phrase("machine the learning", 0), "machine learning"))
    assert(matches(FtsQuery.Phrase("machine the learning", 0), "machine a learning"))
    assert(matches(FtsQuery.Phrase("deep networks", 2), "deep convolutional neural networks"))
    assert(!matches(FtsQuery.Phrase("deep networks", 1), "deep convolutional neural networks"))
    // The first choice of position for "a" is not the one that works.
    assert(matches(FtsQuery.Phrase("a b c", 0), "a x a b c", """{"with_position":true,"remove_stop_words":false}"""))
    assert(intercept[InvalidArgumentException](FtsQuery.Phrase("a", -1)).getMessage.contains("slop is -1"))
  }

  test("phrase with slop: pylance 14's greedy search of positions, which misses some matches (pylance's answers)") {
    val json = """{"with_position":true,"remove_stop_words":false}"""
    def phrase(q: String, slop: Int, text: String) = matches(FtsQuery.Phrase(q, slop), text, json)
    // Each gap is bounded by the slop, not their sum, and the order never changes.
    assert(phrase("a b c", 1, "a x b x c") && !phrase("b a", 1, "a b") && !phrase("b a", 3, "a b"))
    // A query token that also occurs before the phrase: pylance finds the exact phrase with slop 0 only (the
    // rows of issue #18: 'U.S.A. ΣΟΦΙΑ ...' in 'a naïve vector - U.S.A. ΣΟΦΙΑ ...' with slop 1).
    assert(phrase("a b c", 0, "c a b c") && !phrase("a b c", 1, "c a b c") && !phrase("a b c", 1, "a c b c"))
    assert(!phrase("a b c", 1, "a b b x c") && phrase("a b c", 2, "a b b x c"))
    // Moving every cursor forward together finds a match a first choice hid, or moves past one (a repeated token).
    assert(phrase("a b c", 1, "b a c b c") && !phrase("a b a", 1, "a b x a") && phrase("a b a", 0, "a b a"))
  }

  test("phrase matching never finds more than a brute-force search over position choices, and equals it at slop 0 (seeded)") {
    val rnd = new Random(7)
    val vocab = Seq("red", "green", "blue", "black")
    val json = """{"with_position":true,"remove_stop_words":false}"""
    var missed = 0
    (0 until 400).foreach { _ =>
      val doc = Seq.fill(rnd.nextInt(8))(vocab(rnd.nextInt(vocab.size)))
      val q = Seq.fill(1 + rnd.nextInt(3))(vocab(rnd.nextInt(vocab.size)))
      val slop = rnd.nextInt(3)
      // Every query word is kept (no stop words), so query token i is at position i.
      def brute(i: Int, prev: Option[Int]): Boolean = i == q.size || doc.indices.exists { p =>
        doc(p) == q(i) && prev.forall(r => r <= p - i && p - i <= r + slop) && brute(i + 1, Some(p - i))
      }
      val found = matches(FtsQuery.Phrase(q.mkString(" "), slop), doc.mkString(" "), json)
      if (slop == 0 || found) assert(found == brute(0, None), (q, doc, slop))
      else if (brute(0, None)) missed += 1
    }
    assert(missed > 0)
  }

  test("the other connector's options: operator, boost, fuzziness with its prefix and expansions, known keys") {
    assert(FtsQuery.matchWithOptions("q", "operator=and, boost=2.5", "f") == FtsQuery.Match("q", FtsQuery.And, 2.5f))
    assert(FtsQuery.matchWithOptions("q", "fuzziness=0,prefix_length=2,max_expansions=5", "f") ==
      FtsQuery.Match("q", FtsQuery.Or, 1.0f))
    assert(FtsQuery.matchWithOptions("q", "fuzziness=2,prefix_length=1", "f").fuzzy ==
      Some(FtsQuery.Fuzzy(2, 1, FtsQuery.DefaultMaxExpansions)))
    assert(intercept[UnsupportedFeatureException](FtsQuery.multiMatchOperator("fuzziness=1", "f"))
      .getMessage.contains("not supported across several columns"))
    assert(intercept[InvalidArgumentException](FtsQuery.matchWithOptions("q", "slop=1", "f")).getMessage.contains("unknown option 'slop'"))
    assert(intercept[InvalidArgumentException](FtsQuery.matchWithOptions("q", "boost=x", "f")).getMessage.contains("boost is 'x'"))
    assert(FtsQuery.looksLikeOptions("operator=AND") && !FtsQuery.looksLikeOptions("body") && !FtsQuery.looksLikeOptions("a=b"))
  }
}
