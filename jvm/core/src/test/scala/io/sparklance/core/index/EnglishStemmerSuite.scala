package io.sparklance.core.index

import org.scalatest.funsuite.AnyFunSuite

/**
 * The rules of Snowball 3.1.1's English stemmer, one case each, above all those where it differs from Snowball 2.x
 * (Lucene's). tests/test_fts_stemming.py proves the stemmer equal to pylance 14's on 65,000 distinct words.
 */
class EnglishStemmerSuite extends AnyFunSuite {
  private def stems(pairs: (String, String)*): Unit =
    pairs.foreach { case (word, stem) => assert(EnglishStemmer.stem(word) == stem, word) }

  test("words of fewer than three letters and the exceptional forms keep or take their fixed stems") {
    stems("at" -> "at", "is" -> "is", "ski" -> "ski", "skis" -> "ski", "skies" -> "sky", "sky" -> "sky",
      "news" -> "news", "atlas" -> "atlas", "bias" -> "bias", "gently" -> "gentl", "early" -> "earli",
      "only" -> "onli")
  }

  test("plurals and possessives (step 1a)") {
    stems("caresses" -> "caress", "ponies" -> "poni", "ties" -> "tie", "cries" -> "cri", "gas" -> "gas",
      "gaps" -> "gap", "kiwis" -> "kiwi", "dog's" -> "dog", "dogs'" -> "dog", "'tis" -> "tis")
  }

  test("-ed and -ing: exceptions inside step 1b (Snowball 3), undoubling but not after a lone a, e or o") {
    stems("dying" -> "die", "lying" -> "lie", "vying" -> "vie", "inning" -> "inning", "evening" -> "evening",
      "proceed" -> "proceed", "exceed" -> "exceed", "succeed" -> "succeed", "agreed" -> "agre",
      "hopped" -> "hop", "added" -> "add", "egged" -> "egg", "hoped" -> "hope", "luxuriated" -> "luxuri")
  }

  test("R1 prefixes of Snowball 3 keep words apart that 2.x conflated") {
    stems("generously" -> "generous", "universe" -> "univers", "universal" -> "universal",
      "university" -> "universiti", "later" -> "later", "lateral" -> "lateral", "organ" -> "organ",
      "organic" -> "organic", "intern" -> "intern", "international" -> "internat", "interval" -> "interval")
    assert(EnglishStemmer.stem("past") != EnglishStemmer.stem("paste"))
    assert(EnglishStemmer.stem("pasted") == EnglishStemmer.stem("paste"))
  }

  test("-ogist joins -ogy; y after a vowel is a consonant; other letters are consonants") {
    stems("geologist" -> "geolog", "geology" -> "geolog", "sayings" -> "say", "cry" -> "cri", "yyyy" -> "yyyi",
      "café" -> "café", "naïvely" -> "naïv")
  }
}
