"""The JVM's text analysis against pylance 14's, character by character (integration/fts_analysis_sweep.py): which
code points split tokens, their lower case and their ASCII folding, under the settings that isolate each rule and
pylance's defaults on the simple and whitespace tokenizers. jvm/core FtsCharacters.java holds these facts as tables
generated from pylance; this checks them, and the analysis that uses them, against pylance again.

The budget: `make test` (SPARKLANCE_FUZZ_N = 1) analyses a seeded sample of 40,000 code points and the ones known
to have differed; `make fuzz` (N of 12 or more) every code point from U+0080 to U+10FFFF (about 30 s). Texts of
several characters drawn from the same kinds check that tokens are analysed code point by code point. Full-text
queries with such characters select pylance's rows through the posting lists.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import List

import lance
import pyarrow as pa
from lance.query import MatchQuery, PhraseQuery

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE.parent / "integration"))

from fts_analysis_sweep import all_code_points, analyses, differences  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))

# Characters the JVM's analysis (Java 17's Unicode 13 and Lucene's folding table) once made otherwise than pylance:
# folded by pylance only (ª, ½, modifier letters, ℓ, roman numerals, ①, ㎞), folded otherwise (ƀ), letters of
# Unicode 14-17 (U+0870, Ⱟ, Ꟁ, U+1E4D0, U+31350), lower case of newer letters, dotted capital I, Kelvin sign.
KNOWN = [0xAA, 0xBD, 0x1D43, 0x2113, 0x216D, 0x2460, 0x338F, 0x180, 0x870, 0x88E, 0x2C2F, 0xA7C0, 0x1E4D0, 0x31350,
         0x33479, 0x130, 0x212A, 0x1E9E, 0x3A3, 0x17F, 0xFB01, 0x2153, 0xA0, 0x3000, 0x1F130]


def sample_code_points() -> List[int]:
    everything = all_code_points()
    if N >= 12:
        return everything
    return sorted(set(random.Random(SEED).sample(everything, 40_000 * N)) | set(KNOWN))


def test_every_code_point_analysed_as_pylance(spark, tmp_path):
    strings = [chr(c) for c in sample_code_points()]
    found = differences(strings, analyses(spark, tmp_path, strings))
    assert {name: rows[:5] for name, rows in found.items() if rows} == {}
    assert len(strings) >= 40_000


def test_texts_of_several_characters_analysed_as_pylance(spark, tmp_path):
    """Tokens of 1-6 code points mixing ASCII, folded, case-mapped, newer and separating characters: the analysis
    maps each code point alone (no context: no final sigma, no composition)."""
    rng = random.Random(SEED + 1)
    pool = (KNOWN + [ord(c) for c in "AEIOUaeiou019éÉßΣσςİıǅ数가\u0301\u0308-.'·\u200d"]
            + rng.sample(all_code_points(), 200))
    strings = ["".join(chr(rng.choice(pool)) for _ in range(rng.randint(1, 6))) for _ in range(3_000 * N)]
    # A line feed or ASCII whitespace would start a token without the row's marker.
    strings = [s for s in strings if not any(ch in " \t\n\r\f" for ch in s)]
    found = differences(strings, analyses(spark, tmp_path, strings))
    assert {name: rows[:5] for name, rows in found.items() if rows} == {}


def test_queries_with_such_characters_select_pylances_rows(spark, tmp_path):
    """Queries whose tokens hold characters the JVM once analysed otherwise select pylance's rows through the
    index's posting lists (there is no fallback to tokenizing every row any more), in indexed and appended rows."""
    rng = random.Random(SEED + 2)
    words = ["ªb", "½", "Ⅽ", "ℓ", "ᵃx", "ƀ", "\u0870\u0871", "Ⱟ", "ⰿ", "Ꟁ", "café", "①", "㎞", "İx", "K", "σοφία"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(200)]
    path = tmp_path / "t.lance"
    lance.write_dataset(pa.table({"id": list(range(200)), "text": texts}), str(path), max_rows_per_file=80)
    ds = lance.dataset(str(path))
    ds.create_scalar_index("text", "INVERTED", with_position=True, stem=False)
    more = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(40)]
    lance.write_dataset(pa.table({"id": list(range(200, 240)), "text": more}), str(path), mode="append")
    ds = lance.dataset(str(path))
    df = spark.read.format("lance").load(str(path))
    queries = ["a", "12", "c", "l", "ax", "b", "Ⱟ", "ⱟ", "ꟁ", "cafe", "1", "km", "ix", "k", "ΣΟΦΙΑ"] + words
    for q in queries:
        where = f"lance_match(text, '{q}')"
        selected = df.where(where)
        assert "using INVERTED index" in selected._jdf.queryExecution().executedPlan().toString()
        theirs = set(ds.to_table(full_text_query=MatchQuery(q, "text"), columns=["id", "_score"]).column("id").to_pylist())
        assert {r.id for r in selected.select("id").collect()} == theirs, q
    for q in ("ªb ½", "Ⅽ ℓ", "\u0870\u0871 Ⱟ"):
        theirs = set(ds.to_table(full_text_query=PhraseQuery(q, "text", slop=1), columns=["id", "_score"]).column("id").to_pylist())
        assert {r.id for r in df.where(f"lance_match_phrase(text, '{q}', 1)").select("id").collect()} == theirs, q
