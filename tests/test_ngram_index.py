"""NGRAM indexes against pylance 14, both ways.

pylance builds: an NGRAM index over seeded random strings (ASCII and non-ASCII, short, empty, null) and Spark's
substring filters (``contains(col, 'x')``, ``col LIKE '%x%'``, ``LIKE 'x%'``, ``endswith``) read only the rows the
index selects and still return exactly the rows that hold the needle; EXPLAIN names the index when the needle holds a
trigram of ASCII letters and digits, and not otherwise.

Spark builds (``CREATE INDEX ... USING ngram``, ``LanceTable.create_index(col, "ngram")``, OPTIMIZE INDEX): over
seeded random texts mixing ASCII, Latin-1, Greek, Cyrillic, CJK, combining marks, emoji and the characters whose
lower case or folding changes length (``ß``, ``ﬁ``, ``½``, ``İ``, ``ᴬ``), the index file is byte for byte the one
pylance builds over a copy of the table; pylance lists it, ``validate()`` passes, and pylance's and Spark's
substring filters through it return what a full scan returns.

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
from lance.file import LanceFileReader

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

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


def test_spark_refuses_ngram_on_other_columns_and_options(spark, wh):
    path = str(wh / "db" / "refused.lance")
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int64()), "content": ["abc"]}), path)
    with lance_raises(sparklance.UnsupportedFeatureError, match="NGRAM index on column 'id' .*not a string"):
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX x USING ngram (id)")
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown option .*tokenizer for a NGRAM index; it takes none"):
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX x USING ngram (content) WITH (tokenizer = 'simple')")
    # The other connector's build option is accepted and unused.
    spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX x USING ngram (content) WITH (num_segments = 8)")
    assert [(i["name"], i["type"]) for i in lance.dataset(path).list_indices()] == [("x", "NGram")]


# Scripts whose lower case or ASCII folding matters: Latin-1 (folds), Greek with final sigma, Cyrillic, CJK, a
# combining acute, emoji, and the characters a fold or lower case lengthens or turns upper-case (ß, ﬁ, ½, İ, ᴬ, Ⓐ).
SCRIPTS = ["abcxyz0129", "ABCXYZ", "éÉàÀçÇñÑöÖüÜøØæÆåÅ", "αβγΣσςΑΩ", "абвгдЖЁ", "日本語中文", "\u0301\u0308",
           "😀👍", "ßẞﬁﬂ½¼²³", "İıĲ", "ᴬᴮᵃᴀʙ", "ⒶⓐＡｂ１", " -.!\t"]


def mixed_text(r: random.Random) -> Optional[str]:
    if r.random() < 0.06:
        return None
    pools = r.sample(SCRIPTS, r.choice([1, 2, 3]))
    pool = "".join(pools) + "abc"
    return "".join(r.choice(pool) for _ in range(r.choice([0, 2, 3, 5, 8, 13, 30])))


def postings(path: Path) -> List[tuple]:
    t = LanceFileReader(str(path)).read_all().to_table()
    return list(zip(t.column("tokens").to_pylist(), t.column("posting_list").to_pylist()))


def index_version(path: str, name: str) -> str:
    """The index's `index_version` as the manifest records it."""
    sys.path.insert(0, str(HERE.parent / "integration"))
    import contextlib
    import io
    import re

    import dump_scalar_indexes

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        dump_scalar_indexes.print_index_section(path, name)
    return re.search(r"index_version \(#7, wt0\): (\d+)", out.getvalue()).group(1)


def index_file(path: str, name: str) -> Path:
    [uuid] = [i["uuid"] for i in lance.dataset(path).list_indices() if i["name"] == name]
    return Path(path) / "_indices" / uuid / "ngram_postings.lance"


def same_as_pylance(ours: str, twin: str, name: str, context: str) -> None:
    """Index `name` of `ours` holds what pylance's of `twin` holds: the same rows (every token and its posting list,
    byte for byte), schema with its field metadata, and index version; whether the file is pylance's byte for byte.
    The pages may differ: on larger indexes pylance may leave out a page dictionary of posting lists that sparklance
    takes."""
    a, b = index_file(ours, name), index_file(twin, name)
    x, y = (LanceFileReader(str(f)).read_all().to_table() for f in (a, b))
    if not x.equals(y):
        p, q = postings(a), postings(b)
        diff = [(t, l) for t, l in p if (t, l) not in q][:5], [(t, l) for t, l in q if (t, l) not in p][:5]
        raise AssertionError(f"{context}: ngram_postings.lance holds other rows than pylance's ({len(p)} rows, "
                             f"pylance's {len(q)}; ours only {diff[0]}, pylance's only {diff[1]})")
    assert x.schema.equals(y.schema, check_metadata=True), f"{context}: schema {x.schema}, pylance's {y.schema}"
    assert index_version(ours, name) == index_version(twin, name), context
    return a.read_bytes() == b.read_bytes()


def check_searches(spark, r: random.Random, path: str, name: str, texts: List[Optional[str]], context: str) -> None:
    """pylance's and Spark's substring filters through index `name` return what a full scan returns."""
    live = {row["id"]: row["content"] for row in lance.dataset(path).to_table().to_pylist()}
    present = [t for t in texts if t]
    for _ in range(10):
        if present and r.random() < 0.8:
            t = r.choice(present)
            start = r.randrange(len(t))
            needle = t[start:start + r.choice([3, 4, 6])]
        else:
            needle = "".join(r.choice("abcxyzABC") for _ in range(3))
        if any(c in needle for c in "'\\%_\t"):
            continue
        want = sorted(i for i, t in live.items() if t is not None and needle in t)
        where = f"contains(content, {sql_string(needle)})"
        got, plan = spark_ids(spark, path, where)
        assert got == want, f"{context}: Spark {where}"
        assert (f"index '{name}' on content contains" in plan) == has_ascii_trigram(needle), f"{context}\n{plan}"
        pylance = sorted(lance.dataset(path).to_table(filter=where, columns=["id"]).column("id").to_pylist())
        assert pylance == want, f"{context}: pylance {where}"


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_spark_builds_pylance_reads(spark, wh, stable_row_ids):
    """Random tables of mixed scripts: Spark's index file is pylance's, byte for byte; pylance lists and validates it;
    both engines' substring filters through it equal a full scan."""
    r = random.Random(f"{SEED}/spark-builds/{stable_row_ids}")
    same_bytes = 0
    for case in range(N):
        path = str(wh / "db" / f"ours_{stable_row_ids}_{case}.lance")
        twin = path.replace(".lance", "_pylance.lance")
        n = r.choice([30, 200, 600])
        texts = [mixed_text(r) for _ in range(n)]
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(twin, ignore_errors=True)
        lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "content": pa.array(texts, pa.string())}),
                            path, max_rows_per_file=r.choice([25, 100, 1000]), enable_stable_row_ids=stable_row_ids)
        if r.random() < 0.5:
            lance.dataset(path).delete(f"id % {r.choice([3, 7])} = 1")
        shutil.copytree(path, twin)
        context = f"case {case} (SPARKLANCE_FUZZ_SEED={SEED}), {path}"
        if r.random() < 0.5:
            made = LanceTable.for_path(spark, path).create_index("content", "ngram", name="ng")
            assert (made["name"], made["type"], made["columns"]) == ("ng", "NGRAM", ["content"])
        else:
            spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX ng USING ngram (content) WITH (num_segments = 4)")
        lance.dataset(twin).create_scalar_index("content", "NGRAM", name="ng")
        same_bytes += same_as_pylance(path, twin, "ng", context)
        ds = lance.dataset(path)
        ds.validate()
        [x] = [x for x in ds.describe_indices() if x.name == "ng"]
        assert (x.field_names, x.num_rows_indexed, x.type_url) == (["content"], ds.count_rows(),
                                                                      "/lance.table.NGramIndexDetails"), context
        check_searches(spark, r, path, "ng", texts, context)
    print(f"{same_bytes} of {N} index files byte for byte pylance's")


def test_small_index_file_is_pylance_bytes(spark, wh):
    """Small indexes (fewer than 100 trigrams: one page, no page dictionary) are pylance's files byte for byte."""
    for n, words in ((12, ["Hello World", "héllo wörld", "ab", "", None, "abc abc", "x-y_z!", "ABCD"]),
                     (300, ["apple pie", "Straße", "½ cup", "ﬁne", "İstanbul", "ᴬbc", "日本 abc", None])):
        path = str(wh / "db" / f"small_{n}.lance")
        twin = path.replace(".lance", "_pylance.lance")
        texts = [words[i % len(words)] for i in range(n)]
        for p in (path, twin):
            shutil.rmtree(p, ignore_errors=True)
            lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "content": pa.array(texts, pa.string())}),
                                p, max_rows_per_file=100)
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX ng USING ngram (content)")
        lance.dataset(twin).create_scalar_index("content", "NGRAM", name="ng")
        assert same_as_pylance(path, twin, "ng", path), f"{path}: other bytes than pylance's"


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_spark_optimizes_as_pylance_does(spark, wh, stable_row_ids):
    """OPTIMIZE INDEX after appends merges the new fragments' trigrams into the index, as pylance's
    optimize_indices does: the same file, byte for byte, and searches through it equal a full scan."""
    r = random.Random(f"{SEED}/optimize/{stable_row_ids}")
    path = str(wh / "db" / f"optimize_{stable_row_ids}.lance")
    twin = path.replace(".lance", "_pylance.lance")
    texts = [mixed_text(r) for _ in range(120)]
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(twin, ignore_errors=True)
    lance.write_dataset(pa.table({"id": pa.array(range(120), pa.int64()), "content": pa.array(texts, pa.string())}),
                        path, max_rows_per_file=50, enable_stable_row_ids=stable_row_ids)
    lance.dataset(path).create_scalar_index("content", "NGRAM", name="ng")
    for k in range(2):
        more = [mixed_text(r) for _ in range(40)]
        start = len(texts)
        lance.write_dataset(pa.table({"id": pa.array(range(start, start + 40), pa.int64()),
                                      "content": pa.array(more, pa.string())}), path, mode="append")
        texts += more
    lance.dataset(path).delete("id % 5 = 2")
    shutil.copytree(path, twin)
    spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX ng")
    lance.dataset(twin).optimize.optimize_indices(index_names=["ng"])
    context = f"SPARKLANCE_FUZZ_SEED={SEED}, {path}"
    same_as_pylance(path, twin, "ng", context)
    ds = lance.dataset(path)
    ds.validate()
    assert [sorted(i["fragment_ids"]) for i in ds.list_indices() if i["name"] == "ng"] == \
        [sorted(f.fragment_id for f in ds.get_fragments())]
    check_searches(spark, r, path, "ng", texts, context)


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
