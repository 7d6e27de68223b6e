package io.sparklance.core.index

import org.scalatest.funsuite.AnyFunSuite

/**
 * sparklance's Snowball 3.1.1 stemmers (the subclasses of SnowballMachine) on words where pylance 14's index and
 * Lucene's Snowball 2.x stemmers disagree: each expected stem is the token pylance 14 indexed for the word.
 * tests/test_fts_stemming.py proves each stemmer equal to pylance's over seeded vocabularies of each language.
 */
class SnowballStemmerSuite extends AnyFunSuite {
  private def stems(language: String, pairs: (String, String)*): Unit = {
    val stemmer = FtsStemmer.of(language)
    pairs.foreach { case (word, stem) => assert(stemmer.stem(word) == stem, s"$language $word") }
  }

  test("Danish: undoubling of listed consonants only, R1 after an apostrophe, trailing apostrophe") {
    stems("Danish", "blivvv" -> "blivvv", "mihh" -> "mihh", "blevv" -> "blevv", "pc'get" -> "pc'g",
      "fiskerne" -> "fisk", "hus'" -> "hus", "xy" -> "xy")
  }

  test("Dutch: Kraaij-Pohlmann (ge- prefixes and infixes, vowel lengthening, the exceptions of 3.x)") {
    stems("Dutch", "ditgemaakt" -> "ditmaak", "zwaar" -> "zwaar", "geledf" -> "ledf", "dezeleven" -> "dezeleef",
      "teft" -> "tef", "gevallen" -> "geval", "geëxploiteerd" -> "exploiteer", "heden" -> "heed", "innig" -> "innig",
      "kinderen" -> "kinder", "schilderij" -> "schilder")
  }

  test("Finnish: apostrophes in illatives, -hön after ø, fallback to the genitive") {
    stems("Finnish", "ethön" -> "ethö", "varmastihon" -> "varmastiho", "kun'hon" -> "kun", "ovhän" -> "ovh",
      "taloissa" -> "talo")
  }

  test("French: elisions, -aise(s), -oux, RV exceptions (ni, par), ë and ï") {
    stems("French", "hommaise" -> "homm", "d'ce" -> "ce", "joux" -> "jou", "niant" -> "niant",
      "niaiment" -> "niai", "noël" -> "noël", "continuellement" -> "continuel")
  }

  test("German: ae, oe, ue as umlauts (not after q), -et, -erin, -ln, apostrophe suffixes") {
    stems("German", "oemich" -> "omich", "soeine" -> "soin", "jedoeinem" -> "jedoin", "aufeinanderfolgenden" ->
      "aufeinanderfolg", "quelle" -> "quell")
  }

  test("Greek: case and accents folded by the algorithm's table, ισα, the stems after -ανε") {
    stems("Greek", "ισα" -> "ισ", "ίσα" -> "ισ", "μεανε" -> "μαν", "γιανε" -> "γαν", "τηανε" -> "τηαν",
      "ανθρώπους" -> "ανθρωπ", "κρέατα" -> "κρε", "Αθήνα" -> "αθην", "ΐα" -> "ηα", "ϊσα" -> "",
      "αιθουσα" -> "αιθουσ", "μουσα" -> "μουσ")
  }

  test("Italian: elided articles and pronouns, divano") {
    stems("Italian", "gl'rante" -> "rant", "quell'llo" -> "llo", "v're" -> "re", "divano" -> "divan",
      "abbandonata" -> "abbandon")
  }

  test("Norwegian: -ers kept after listed endings, new vowels") {
    stems("Norwegian", "sværlters" -> "sværlters", "viers" -> "viers", "uteammers" -> "uteammers",
      "hers" -> "hers", "havnedistriktene" -> "havnedistrikt")
  }

  test("Romanian: cedilla letters read as comma-below ones") {
    stems("Romanian", "ţptembrie" -> "țptembr", "saţiuni" -> "sațiun", "ţle" -> "țle")
  }

  test("Spanish: unaccented -acion and -ucion") {
    stems("Spanish", "cosasacion" -> "cosas", "eresucion" -> "eresu", "chicas" -> "chic")
  }

  test("Swedish: -et, -öst after more letters") {
    stems("Swedish", "inköst" -> "inkös", "allaitet" -> "allait", "vaket" -> "vak", "behövet" -> "behöv",
      "klokheten" -> "klok")
  }

  test("a code point above U+FFFF is one character, as in Snowball") {
    stems("French", "5n\ud835\udc00ier" -> "5n\ud835\udc00i", "3e\ud840\udc00rs" -> "3e\ud840\udc00r")
    stems("Spanish", "4\ud840\udc00ás" -> "4\ud840\udc00as", "bla\ud835\udfcedo" -> "bla\ud835\udfced")
    stems("German", "ar\ud835\udc00er" -> "ar\ud835\udc00", "da\ud835\udc00te" -> "da\ud835\udc00t")
  }
}
