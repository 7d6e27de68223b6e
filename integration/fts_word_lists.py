"""The word lists of tests/test_fts_stemming.py (tests/fixtures/fts_words/<Language>.txt), drawn from the
``wordfreq`` package's per-language frequency lists.

The tests run with no network and no wordfreq in the venv, so the words are kept in the repo: for each language
pylance takes but English, 6,000 words drawn with a fixed seed from the 40,000 most frequent (the stemming and
stop word tests). Fetch wordfreq with
``pip download --no-deps wordfreq`` (and ``msgpack``), unpack both outside the venv and run

  python integration/fts_word_lists.py UNPACKED_DIR     (the directory holding ``wordfreq/`` and ``msgpack/``)
"""

from __future__ import annotations

import gzip
import random
import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "fts_words"

CODES = {"Arabic": "ar", "Danish": "da", "Dutch": "nl", "English": "en", "Finnish": "fi", "French": "fr",
         "German": "de", "Greek": "el", "Hungarian": "hu", "Italian": "it", "Norwegian": "nb", "Portuguese": "pt",
         "Romanian": "ro", "Russian": "ru", "Spanish": "es", "Swedish": "sv", "Tamil": "ta", "Turkish": "tr"}
STEMMED = [l for l in CODES if l != "English"]


def words_of(data: Path, code: str) -> List[str]:
    """The language's words, most frequent first (wordfreq's lists are frequency buckets after a header)."""
    import msgpack

    path = data / f"large_{code}.msgpack.gz"
    if not path.exists():
        path = data / f"small_{code}.msgpack.gz"
    buckets = msgpack.load(gzip.open(path), raw=False)[1:]
    return [w for bucket in buckets for w in bucket if w.strip() and not any(c.isspace() for c in w)]


def main(unpacked: str) -> None:
    sys.path.insert(0, unpacked)
    data = Path(unpacked) / "wordfreq" / "data"
    OUT.mkdir(parents=True, exist_ok=True)
    for language, code in CODES.items():
        if language == "English":
            continue
        words = words_of(data, code)
        if language in STEMMED:
            chosen = sorted(random.Random(20261126).sample(words[:40000], 6000))
        else:
            chosen = words[:300]
        (OUT / f"{language}.txt").write_text("\n".join(chosen) + "\n", encoding="utf-8")
        print(language, len(chosen))


if __name__ == "__main__":
    main(sys.argv[1])
