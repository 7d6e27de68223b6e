"""The JVM's text analysis against pylance 14's token dictionaries: pylance builds INVERTED indexes over a large
vocabulary, the JVM reads each index's dictionary (``_token_fst_bytes`` of ``part_0_tokens.lance``, an FST of the
Rust ``fst`` crate) and the token sets must be equal: the tokens of every text by the JVM analysis are exactly the
dictionary's keys.

The vocabulary is the English-like words of the venv's Python sources (docstrings, comments, names: tens of
thousands of distinct words, drawn from ``SPARKLANCE_FUZZ_SEED``) plus generated cases for the stemmer's rules:
suffixes added to stems (-ly, -ing, -ed, -ies, -sses, ...), y after vowels, the R1 prefixes (gener, commun, arsen,
past, univers, later, emerg, organ, inter), the exceptional forms, apostrophes, upper case and non-ASCII letters.
The other 17 languages pylance takes (their stemming and stop words) are checked the same way over the words of
tests/fixtures/fts_words, words recombined from them and probes of the rules Snowball 3.x changed (PROBES, below).
"""

from __future__ import annotations

import os
import random
import re
import sys
import sysconfig
from pathlib import Path
from typing import List, Set

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from py4j.java_gateway import get_field

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))

STEMS = ["gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ", "inter", "hop", "add", "egg",
         "off", "cry", "pony", "caress", "agree", "feed", "proc", "exc", "succ", "happy", "say", "play", "geolog",
         "luxuri", "sky", "ski", "die", "ly", "ty", "vy", "hy", "inn", "out", "cann", "herr", "earr", "even",
         "relat", "condition", "rational", "valen", "hesit", "digit", "conform", "radic", "differ", "vietnam",
         "analog", "sensitiv", "formal", "bright", "rate", "sens", "fer", "y", "yy", "ay", "oy", "eye", "bye"]
SUFFIXES = ["", "s", "es", "ies", "ied", "sses", "ss", "us", "'", "'s", "'s'", "ed", "eed", "edly", "eedly", "ing",
            "ingly", "ly", "ily", "y", "ity", "ogist", "ogy", "ogi", "al", "ance", "ence", "er", "ic", "able",
            "ible", "ant", "ement", "ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "tion", "sion",
            "ational", "tional", "enci", "anci", "abli", "entli", "izer", "ization", "ation", "ator", "alism",
            "aliti", "alli", "fulness", "ousli", "ousness", "iveness", "iviti", "biliti", "bli", "fulli", "lessli",
            "li", "alize", "icate", "iciti", "ical", "ful", "ness", "ative", "e", "l", "ll", "at", "bl", "iz"]
EXCEPTIONS = ["skis", "skies", "sky", "idly", "gently", "ugly", "early", "only", "singly", "news", "howe", "atlas",
              "cosmos", "bias", "andes", "dying", "lying", "tying", "vying", "hying", "inning", "outing", "canning",
              "herring", "earring", "evening", "proceed", "exceed", "succeed", "proceeding", "exceedingly", "'tis",
              "o'clock", "rock'n'roll", "y", "yy", "yyy", "yyyy", "Yay", "YELLOW", "ayyy", "i", "a", "s", "'"]
UNICODE = ["café", "cafés", "naïvely", "résumés", "Straße", "straßes", "über", "façades", "ﬁles", "İstanbul",
           "σοφίας", "数据s", "naïveties", "coöperation", "Émigrés", "ångströms"]


def vocabulary(rng: random.Random, limit: int = 60000) -> List[str]:
    """Words of the venv's Python sources (files in a seeded order), then the generated cases."""
    words: Set[str] = set()
    files = sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
    rng.shuffle(files)
    pattern = re.compile(r"[A-Za-z\u00C0-\u024F']+")
    for f in files:
        words.update(w for w in pattern.findall(f.read_text(encoding="utf-8", errors="ignore")) if len(w) > 1)
        if len(words) > limit:
            break
    words.update(stem + suffix for stem in STEMS for suffix in SUFFIXES)
    words.update(EXCEPTIONS + UNICODE)
    words.update(w.upper() for w in rng.sample(sorted(words), 500))
    return sorted(words)


def texts_of(words: List[str], rng: random.Random) -> List[str]:
    shuffled = list(words)
    rng.shuffle(shuffled)
    return [" ".join(shuffled[i:i + 100]) for i in range(0, len(shuffled), 100)]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("sparklance-fts-stem-tests", warehouse_with(tmp_path_factory, "fts_stem_wh", "db"))
    yield session
    session.stop()


@pytest.fixture(scope="module")
def texts() -> List[str]:
    rng = random.Random(SEED)
    return texts_of(vocabulary(rng), rng)


def index_dir(path: Path) -> Path:
    ds = lance.dataset(str(path))
    return path / "_indices" / ds.list_indices()[0]["uuid"]


def build(tmp_path: Path, texts: List[str], **params) -> Path:
    path = tmp_path / "t.lance"
    ds = lance.write_dataset(pa.table({"id": list(range(len(texts))), "text": texts}), str(path))
    ds.create_scalar_index("text", "INVERTED", **params)
    return index_dir(path)


def dictionary(spark, index: Path) -> List[str]:
    """The keys of the index's token dictionary, read by the JVM; checks the ids are 0..n-1 as the file says."""
    tokens = LanceFileReader(str(index / "part_0_tokens.lance")).read_all().to_table()
    fst = tokens.column("_token_fst_bytes")[0].as_py()
    entries = spark._jvm.io.sparklance.core.index.TokenFst.read(bytearray(fst), str(index))
    keys = list(get_field(entries, "keys"))
    assert sorted(get_field(entries, "values")) == list(range(tokens.column("_token_next_id")[0].as_py()))
    assert sum(len(k.encode()) for k in keys) == tokens.column("_token_total_length")[0].as_py()
    return keys


def jvm_tokens(spark, index: Path, texts: List[str]) -> Set[str]:
    params = LanceFileReader(str(index / "metadata.lance")).metadata().schema.metadata[b"params"].decode()
    tokenizer = spark._jvm.io.sparklance.core.index.FtsParams.parse(params, "test", "test").tokenizer()
    out: Set[str] = set()
    for text in texts:
        out.update(get_field(tokenizer.tokenize(text), "texts"))
    return out


# pylance's default analysis (simple, lower case, stem, stop words, folding, 40 bytes), and stemming alone on the
# whitespace tokenizer's tokens (apostrophes, upper case and accents reach the stemmer).
SETTINGS = [dict(), dict(base_tokenizer="whitespace", lower_case=False, remove_stop_words=False, ascii_folding=False,
                         max_token_length=None)]


@pytest.mark.parametrize("settings", range(len(SETTINGS)), ids=["defaults", "stem_only"])
def test_stemmed_tokens_equal_pylance(spark, texts, tmp_path, settings):
    index = build(tmp_path, texts, stem=True, **SETTINGS[settings])
    theirs = dictionary(spark, index)
    assert len(theirs) > 30000
    ours = jvm_tokens(spark, index, texts)
    assert len(set(theirs)) == len(theirs)
    assert ours == set(theirs), (sorted(ours - set(theirs))[:20], sorted(set(theirs) - ours)[:20])


def test_english_stop_words_equal_pylance(spark, texts, tmp_path):
    """pylance 14's English stop words are the tokens its index drops with stop words on and keeps with them off,
    over the vocabulary plus the JVM's list, Lucene's and Snowball's English stop words."""
    jvm_list = list(spark._jvm.io.sparklance.core.index.FtsTokenizer.ENGLISH_STOP_WORDS)
    snowball = ("i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her "
                "hers herself it its itself they them their theirs themselves what which who whom this that these "
                "those am is are was were be been being have has had having do does did doing would should could "
                "ought i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd she'd we'd "
                "they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't weren't hasn't haven't hadn't "
                "doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's "
                "who's what's here's there's when's where's why's how's a an the and but if or because as until while "
                "of at by for with about against between into through during before after above below to from up "
                "down in out on off over under again further then once here there when where why how all any both "
                "each few more most other some such no nor not only own same so than too very").split()
    lucene = ("a an and are as at be but by for if in into is it no not of on or such that the their then there "
              "these they this to was will with").split()
    words = sorted({w.lower() for t in texts for w in t.split()} | set(jvm_list) | set(snowball) | set(lucene))
    rng = random.Random(SEED + 1)
    candidates = texts_of(words, rng)
    on = set(dictionary(spark, build(tmp_path / "on", candidates, stem=False, base_tokenizer="whitespace")))
    off = set(dictionary(spark, build(tmp_path / "off", candidates, stem=False, base_tokenizer="whitespace",
                                      remove_stop_words=False)))
    assert off - on == set(jvm_list)


# Other languages: the JVM stems those of FtsStemmer.LANGUAGES as pylance does, and removes every language's stop
# words. The words are tests/fixtures/fts_words (from wordfreq, integration/fts_word_lists.py) and words recombined
# from them (a prefix of one and a suffix of another, drawn from SPARKLANCE_FUZZ_SEED: endings the lists lack),
# some in upper case and some with letters above U+FFFF; `make test` (N = 1) takes 1,500 listed and 3,000
# recombined words a language, `make fuzz` (N of 4 or more) every listed word and 12,000 recombined per N.
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
WORDS = HERE / "fixtures" / "fts_words"
STEMMED = ["Arabic", "Hungarian", "Portuguese", "Russian", "Tamil", "Turkish", "Danish", "Dutch", "Finnish", "French",
           "German", "Greek", "Italian", "Norwegian", "Romanian", "Spanish", "Swedish"]
LANGUAGES = ["Arabic", "Danish", "Dutch", "English", "Finnish", "French", "German", "Greek", "Hungarian", "Italian",
             "Norwegian", "Portuguese", "Romanian", "Russian", "Spanish", "Swedish", "Tamil", "Turkish"]


def listed_words(language: str) -> List[str]:
    return (WORDS / f"{language}.txt").read_text(encoding="utf-8").split()


def language_vocabulary(language: str, rng: random.Random) -> List[str]:
    listed = listed_words(language)
    words = set(listed if N >= 4 else rng.sample(listed, 1500))
    for _ in range(3000 * N if N < 4 else 12000 * N):
        a, b = rng.choice(listed), rng.choice(listed)
        words.add(a[:rng.randint(1, len(a))] + b[rng.randint(0, len(b) - 1):])
    supplementary = ["\U0001D400", "\U00020000", "\U0001D7CE"]  # a mathematical letter, a CJK ideograph, a digit
    for w in rng.sample(sorted(words), 200):
        at = rng.randint(0, len(w))
        words.add(w[:at] + rng.choice(supplementary) + w[at:])
    words.update(w.upper() for w in rng.sample(sorted(words), 300))
    words.update(probe_words(language, listed, random.Random(rng.random())))
    return sorted(words)


# What Snowball 3.1.1 changed against 2.x in each language, as prefixes, suffixes and whole words put onto listed
# words: the lists seldom hold them (wordfreq's words have no apostrophes, few misspellings, no cedilla Romanian).
PROBES = {
    "Danish": (["pc'", "ep'", "tv'"],
               ["'", "'en", "'erne", "'s", "bb", "cc", "dd", "ff", "gg", "hh", "jj", "kk", "ll", "mm", "nn", "pp", "rr",
                "ss", "tt", "vv", "zz", "løst", "igst", "elig", "els", "gd", "dt", "hedens", "erets"], ["buzz", "pc'en"]),
    "Dutch": (["ge", "gege", "vge", "ver", "onge"],
              ["'s", "ies", "es", "és", "aus", "en", "nde", "je", "'tje", "etje", "rntje", "inkje", "mpje", "'je", "ge",
               "lijke", "ische", "de", "te", "se", "re", "le", "ene", "ieve", "atie", "iteit", "heid", "sel", "ster",
               "rder", "ing", "isme", "erij", "arij", "fie", "gie", "tst", "dst", "ioneel", "atief", "baar", "naar",
               "laar", "raar", "tant", "lijker", "lijkst", "achtig", "achtiger", "achtigst", "eriger", "erigst", "erig",
               "end", "iger", "igst", "ig", "kt", "ft", "pt", "bb", "nn", "v", "z", "ë", "ï", "eë", "ië", "ij", "ijs"],
              ["geëxploiteerd", "gevallen", "geval", "geeft", "gevaar", "gevaren", "innig", "innen", "geïnd", "geënt",
               "schilderij", "schild", "ge", "gegeven", "ingegeven", "heden", "kinderen"]),
    "Finnish": ([], ["hän", "hön", "høn", "hun", "han", "hen", "hin", "hon", "'n", "'hin", "'hon", "'ta", "'a", "'",
                     "siin", "seen", "den", "tten", "kse", "kseni", "mpi", "impi", "eja", "t", "at", "ssaan", "lleen"],
                ["bodøhön", "talo'on"]),
    "French": (["l'", "d'", "qu'", "j'", "c'", "n'", "s'", "m'", "t'", "jusqu'", "lorsqu'", "h'"],
               ["aise", "aises", "ais", "oux", "eux", "euse", "ë", "ï", "ëe", "ïs", "amment", "emment", "ment", "ements",
                "ité", "ités", "ives", "issement", "y", "yé", "quer", "ier", "ière", "ion"],
               ["paris", "colis", "tapis", "niais", "nier", "nié", "mauvais", "palais", "malais", "déplais", "noël",
                "naïf", "naïve", "haïr", "bijoux", "choux", "genoux", "française", "françaises", "aujourd'hui"]),
    "German": (["ue", "ae", "oe", "qu", "aeu"],
               ["em", "system", "systemen", "erin", "erinnen", "ln", "lns", "et", "ets", "'s", "'sch", "'", "ae", "oe",
                "ue", "aes", "ueber", "quelle", "ß", "ung", "heit", "keit", "lich", "ig", "isch", "st", "est"],
               ["internet", "planet", "ticket", "untergeordnet", "vertreter", "abgebildet", "müller", "mueller"]),
    "Greek": ([], ["ανε", "ετε", "ικα", "ικο", "ια", "ιου", "αδες", "εδες", "ουδες", "εως", "αγαμε", "αμε", "ησετε",
                   "οντας", "ομαστε", "ιεστε", "εστε", "ηθηκα", "ηκα", "ουσα", "αγα", "ησε", "ηστε", "ουνε", "ουμε",
                   "ματα", "εστερ", "οτατ", "ιζω", "ωθηκα", "ισα", "ισω", "ιστος", "ισμος", "ακι", "αρακι", "ιτσα",
                   "ιδιο", "ισκος", "ς", "ΐ", "ϊα", "ΰς"],
              ["ισα", "ίσα", "μεανε", "γιανε", "αγαμε", "τηανε", "κρέατα", "ΐα", "ϊσα"]),
    "Italian": (["l'", "d'", "m'", "s'", "t'", "v'", "all'", "dall'", "dell'", "gl'", "nell'", "quell'", "quest'",
                 "sull'", "tutt'", "un'", "c'", "po'"],
                ["'", "ano", "ani", "quo", "quì", "á", "é", "í", "ó", "ú"], ["divano", "divani", "divan", "diva", "l'"]),
    "Norwegian": (["pc'", "ep'"],
                  ["ers", "kkers", "lters", "ammers", "givers", "havers", "skapers", "kapers", "s", "rs", "ks", "kks",
                   "ert", "erte", "'", "'en", "dt", "vt", "ê", "ò", "ó", "ô", "hetslov"], ["skjers", "hers"]),
    "Romanian": (["ş", "ţ"], ["ş", "ţ", "aţie", "aţia", "ţiune", "işti", "eşti", "ăşte", "ităţi", "iuni", "ţiuni"],
                 ["naţiune", "ştiinţă", "ţară", "şcoală"]),
    "Spanish": ([], ["acion", "aciones", "ucion", "uciones", "ación", "ución", "yendo", "iéndolo", "ándose", "guen",
                     "gue"], ["nacion", "solucion"]),
    "Turkish": (["'", "''", "o'", "l'"], ["'", "'da", "'de", "'nin", "'dir", "'ın", "'ye", "'lar'ı", "''", "'s"],
                ["türkiye'dir", "ankara'da", "'ankara'da'", "o'connor", "l'entrée", "a'b", "ab'", "'", "''", "'a'b'c",
                 "i̇stanbul'un", "ğ'ş"]),
    "Swedish": ([], ["et", "ets", "het", "iet", "itet", "fabet", "komet", "raket", "paket", "staket", "öst", "löst",
                     "köst", "fullt", "dd", "nn", "tt", "gd"], ["frihet", "societet", "alfabet", "jobbet", "huset"]),
}


def probe_words(language: str, listed: List[str], rng: random.Random) -> Set[str]:
    if language not in PROBES:
        return set()
    prefixes, suffixes, whole = PROBES[language]
    words = set(whole)
    for _ in range(150 * N):
        w = rng.choice(listed)
        if prefixes:
            words.add(rng.choice(prefixes) + w[rng.randint(0, len(w) - 1):])
        words.add(w[:rng.randint(1, len(w))] + rng.choice(suffixes))
    if language == "Romanian":
        words.update(w.replace("ș", "ş").replace("ț", "ţ") for w in rng.sample(listed, 200))
    return words


def test_stemmed_languages_are_the_jvms(spark):
    """The JVM stems every language pylance 14 takes."""
    assert list(spark._jvm.io.sparklance.core.index.FtsStemmer.LANGUAGES) == ["English"] + STEMMED
    assert sorted(["English"] + STEMMED) == LANGUAGES


@pytest.mark.parametrize("language", STEMMED)
@pytest.mark.parametrize("settings", range(len(SETTINGS)), ids=["defaults", "stem_only"])
def test_other_languages_stemmed_as_pylance(spark, tmp_path, language, settings):
    """Each language's tokens by the JVM equal pylance's dictionary: with pylance's defaults (stop words of the
    language, folding) and stemming alone on the whitespace tokenizer's tokens (upper case, punctuation and
    apostrophes reach the stemmer; Snowball 3.1.1's Turkish cuts a proper noun's suffix after one)."""
    rng = random.Random(SEED + 100 + LANGUAGES.index(language))
    texts = texts_of(language_vocabulary(language, rng), rng)
    index = build(tmp_path, texts, language=language, stem=True, **SETTINGS[settings])
    theirs = set(dictionary(spark, index))
    ours = jvm_tokens(spark, index, texts)
    assert len(theirs) > 2000
    assert ours == theirs, (sorted(ours - theirs)[:20], sorted(theirs - ours)[:20])


@pytest.mark.parametrize("language", LANGUAGES)
def test_stop_words_of_each_language_equal_pylance(spark, tmp_path, language):
    """pylance 14's stop words of a language are the tokens its index drops with stop words on and keeps with them
    off, over the JVM's lists of every language and the language's listed words."""
    lists = {l: list(spark._jvm.io.sparklance.core.index.FtsStopWords.of(l)) for l in LANGUAGES}
    words = {w for ws in lists.values() for w in ws}
    if language != "English":
        words.update(w.lower() for w in listed_words(language))
    rng = random.Random(SEED + 200 + LANGUAGES.index(language))
    candidates = texts_of(sorted(words), rng)
    settings = dict(language=language, stem=False, base_tokenizer="whitespace", ascii_folding=False)
    on = set(dictionary(spark, build(tmp_path / "on", candidates, **settings)))
    off = set(dictionary(spark, build(tmp_path / "off", candidates, remove_stop_words=False, **settings)))
    assert off - on == set(lists[language])
