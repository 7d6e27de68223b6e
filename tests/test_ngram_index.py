"""NGRAM indexes against pylance 14: pylance builds an NGRAM index over seeded random strings (ASCII and non-ASCII,
short, empty, null) and Spark's substring filters (``contains(col, 'x')``, ``col LIKE '%x%'``, ``LIKE 'x%'``,
``endswith``) read only the rows the index selects and still return exactly the rows that hold the needle; EXPLAIN names the index when the needle
holds a trigram of ASCII letters and digits, and not otherwise. Spark does not build NGRAM indexes yet: CREATE INDEX
... USING ngram is refused.

``SPARKLANCE_FUZZ_SEED`` seeds the strings and needles; ``SPARKLANCE_FUZZ_N`` is the number of random tables.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402

pytestmark = [cross_version,
              pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))

# No quote, backslash, '%' or '_': the needles go into SQL literals and LIKE patterns as they are.
ALPHABET = "abcxyzABCXYZ019 -.!éÉßöÖæø日本ﬁ😀"


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "ngram_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-ngram-index-tests", wh)
    yield session
    session.stop()


def random_text(r: random.Random) -> Optional[str]:
    if r.random() < 0.08:
        return None
    n = r.choice([0, 1, 2, 3, 4, 6, 9, 14, 20])
    # Few distinct characters per table, so that trigrams repeat across rows and needles hit.
    return "".join(r.choice(ALPHABET[:r.choice([6, 12, len(ALPHABET)])]) for _ in range(n))


def random_needle(r: random.Random, texts: List[Optional[str]]) -> str:
    present = [t for t in texts if t]
    if present and r.random() < 0.7:
        t = r.choice(present)
        start = r.randrange(len(t))
        return t[start:start + r.choice([1, 2, 3, 4, 5, 8])]
    return "".join(r.choice(ALPHABET) for _ in range(r.choice([2, 3, 4, 6])))


def sql_string(s: str) -> str:
    """A SQL literal of `s`, which holds no quote or backslash (a pattern may hold '%')."""
    assert "'" not in s and "\\" not in s
    return f"'{s}'"


def spark_ids(spark, path: str, where: str):
    df = spark.read.format("lance").load(path).where(where).select("id")
    plan = df._jdf.queryExecution().executedPlan().toString()
    return sorted(r.id for r in df.collect()), plan


def has_ascii_trigram(needle: str) -> bool:
    run = 0
    for c in needle:
        run = run + 1 if c.isascii() and c.isalnum() else 0
        if run >= 3:
            return True
    return False


def random_table(r: random.Random, path: str, stable_row_ids: bool) -> List[Optional[str]]:
    n = r.choice([40, 150, 400])
    texts = [random_text(r) for _ in range(n)]
    shutil.rmtree(path, ignore_errors=True)
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "content": pa.array(texts, pa.string())}),
                        path, max_rows_per_file=r.choice([30, 100, 1000]), enable_stable_row_ids=stable_row_ids)
    return texts


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_pylance_builds_spark_reads(spark, wh, stable_row_ids):
    """Random tables: every needle's rows through the index are the rows that hold it, in Spark and in pylance."""
    r = random.Random(SEED + stable_row_ids)
    for case in range(N):
        path = str(wh / "db" / f"random_{stable_row_ids}_{case}.lance")
        texts = random_table(r, path, stable_row_ids)
        ds = lance.dataset(path)
        if r.random() < 0.5:
            ds.delete(f"id % {r.choice([3, 7])} = 1")
        ds = lance.dataset(path)
        ds.create_scalar_index("content", "NGRAM", name="content_ngram")
        live = {row["id"]: row["content"] for row in lance.dataset(path).to_table().to_pylist()}
        for _ in range(12):
            needle = random_needle(r, texts)
            op, where = r.choice([
                ("in", f"contains(content, {sql_string(needle)})"), ("in", f"content LIKE {sql_string('%' + needle + '%')}"),
                ("starts", f"content LIKE {sql_string(needle + '%')}"), ("ends", f"endswith(content, {sql_string(needle)})")])
            holds = {"in": lambda t: needle in t, "starts": lambda t: t.startswith(needle),
                     "ends": lambda t: t.endswith(needle)}[op]
            want = sorted(i for i, t in live.items() if t is not None and holds(t))
            got, plan = spark_ids(spark, path, where)
            context = f"case {case} (SPARKLANCE_FUZZ_SEED={SEED}), {path}, {where}"
            assert got == want, context
            assert ("index 'content_ngram' on content contains" in plan) == has_ascii_trigram(needle), f"{context}\n{plan}"
            if op == "in":
                pylance = sorted(lance.dataset(path).to_table(filter=f"contains(content, {sql_string(needle)})",
                                                              columns=["id"]).column("id").to_pylist())
                assert pylance == want, context


def test_scan_reads_only_the_rows_the_index_selects(spark, wh):
    """With another table's posting lists in place of its own, the scan loses the rows the index leaves out: the
    index, not a full read, decides which rows are read."""
    base, other = str(wh / "db" / "narrow.lance"), str(wh / "db" / "narrow_other.lance")
    for path, word in ((base, "apple"), (other, "grape")):
        lance.write_dataset(pa.table({"id": pa.array(range(6), pa.int64()),
                                      "content": [f"{word} {i}" for i in range(6)]}), path, max_rows_per_file=3)
        lance.dataset(path).create_scalar_index("content", "NGRAM", name="content_ngram")
    assert spark_ids(spark, base, "contains(content, 'apple')")[0] == list(range(6))

    def postings(path: str) -> Path:
        [uuid] = [i["uuid"] for i in lance.dataset(path).list_indices()]
        return Path(path) / "_indices" / uuid / "ngram_postings.lance"

    shutil.copyfile(postings(other), postings(base))
    got, plan = spark_ids(spark, base, "contains(content, 'apple')")
    assert "index 'content_ngram' on content contains 'apple'" in plan
    assert got == []
    # A needle in both tables: the borrowed lists select every row, which the filter keeps.
    assert spark_ids(spark, base, "contains(content, ' 4')")[0] == [4]


def test_fragments_the_index_does_not_cover_are_read_whole(spark, wh):
    path = str(wh / "db" / "appended.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(4), pa.int64()), "content": ["abcd", "bcde", "x", None]}), path)
    lance.dataset(path).create_scalar_index("content", "NGRAM")
    lance.write_dataset(pa.table({"id": pa.array([4, 5], pa.int64()), "content": ["zabcz", "ABC"]}), path, mode="append")
    got, plan = spark_ids(spark, path, "content LIKE '%abc%'")
    assert "NGRAM index 'content_idx' on content contains 'abc'" in plan
    assert got == [0, 4]
    assert spark_ids(spark, path, "content LIKE 'abc%'")[0] == [0]


def test_spark_does_not_build_or_optimize_ngram_indexes(spark, wh):
    path = str(wh / "db" / "refused.lance")
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int64()), "content": ["abc"]}), path)
    with lance_raises(sparklance.UnsupportedFeatureError, match="does not build NGRAM indexes"):
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX x USING ngram (content)")
    lance.dataset(path).create_scalar_index("content", "NGRAM", name="content_ngram")
    lance.write_dataset(pa.table({"id": pa.array([2], pa.int64()), "content": ["zabc"]}), path, mode="append")
    with lance_raises(sparklance.UnsupportedFeatureError,
                      match="index 'content_ngram' .*which sparklance does not build. Optimize it with pylance"):
        spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX content_ngram")
    assert spark_ids(spark, path, "contains(content, 'abc')")[0] == [1, 2]


def test_stable_row_ids_after_compaction(spark, wh):
    """With stable row ids, pylance's compaction keeps the index (its posting lists hold row ids, no longer the rows'
    addresses): the scan maps them to the new addresses."""
    path = str(wh / "db" / "stable_compacted.lance")
    texts = [f"w{i % 7} apple{i % 5}" if i % 9 else None for i in range(60)]
    lance.write_dataset(pa.table({"id": pa.array(range(60), pa.int64()), "content": texts}), path,
                        max_rows_per_file=10, enable_stable_row_ids=True)
    lance.dataset(path).delete("id % 4 = 0")
    lance.dataset(path).create_scalar_index("content", "NGRAM", name="ng")
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=25)
    ds = lance.dataset(path)
    assert min(f.fragment_id for f in ds.get_fragments()) >= 6
    for needle in ["apple3", "w2 app", "ple1"]:
        got, plan = spark_ids(spark, path, f"contains(content, '{needle}')")
        assert "index 'ng' on content" in plan
        assert got == sorted(i for i, t in enumerate(texts) if t and needle in t and i % 4), needle
