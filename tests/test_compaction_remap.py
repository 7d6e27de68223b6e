"""Compaction keeps indexes whole on tables without stable row ids, as pylance 14's ``compact_files`` does: the
Rewrite remaps each B-tree, bitmap, label list, NGRAM, full-text and vector index covering the rewritten fragments
(``rewritten_indices``), so that the new fragments are indexed and full-text scores do not change. Zone maps and
bloom filters are left naming the old fragments, as pylance leaves them.

Proved both ways on seeded tables: one table with every kind (built by pylance or by Spark) is copied, Spark's
``OPTIMIZE`` compacts one copy and pylance's ``compact_files`` the other; pylance must then list the same indexes over
the same fragments, validate both, plan the same index searches and answer every filter, full-text query (scores)
and nearest-neighbour query (row ids, distances) alike on both. Spark reads pylance's remapped indexes and answers as
pylance does. ``SPARKLANCE_FUZZ_SEED`` and ``SPARKLANCE_FUZZ_N`` drive the random part.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.query import FullTextOperator, MatchQuery

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402
from test_fts_index_build import random_query, random_text, sql_str  # noqa: E402

from sparklance import LanceTable  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
DIM = 8
TAGS = ["red", "green", "blue", "x"]
# Each index: (column, pylance's kind, Spark's kind and options).
INDEXES = {
    "k_idx": ("k", "BTREE", ("btree", {"zone_size": 16})),
    "c_idx": ("c", "BITMAP", ("bitmap", {})),
    "tags_idx": ("tags", "LABEL_LIST", ("label_list", {})),
    "s_idx": ("s", "NGRAM", ("ngram", {})),
    "id_idx": ("id", "ZONEMAP", ("zonemap", {})),
    "text_idx": ("text", "INVERTED", ("fts", {"with_position": True})),
    "vec_idx": ("vec", "IVF_PQ", ("ivf_pq", {"num_partitions": 2, "num_sub_vectors": 4})),
}
NOT_REMAPPED = {"id_idx"}


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "compaction_remap_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-compaction-remap-tests", wh)
    yield session
    session.stop()


def rows(rng: random.Random, n: int, first: int = 0) -> pa.Table:
    vectors = np.array([rng.random() for _ in range(n * DIM)], dtype=np.float32)
    return pa.table({
        "id": pa.array(range(first, first + n), pa.int64()),
        "k": pa.array([None if rng.random() < 0.05 else rng.randrange(30) for _ in range(n)], pa.int64()),
        "c": pa.array([rng.choice(["a", "b", "c", "dd", None]) for _ in range(n)], pa.string()),
        "tags": pa.array([rng.sample(TAGS, rng.randrange(3)) for _ in range(n)], pa.list_(pa.string())),
        "s": pa.array([rng.choice(["apple pie", "pineapple", "grape", "Apfel", "pear"]) for _ in range(n)]),
        "text": pa.array([random_text(rng) for _ in range(n)], pa.string()),
        "vec": pa.FixedSizeListArray.from_arrays(pa.array(vectors), DIM),
    })


def build(spark, builder: str, path: Path) -> None:
    ds = lance.dataset(str(path))
    for name, (column, kind, (ours, options)) in INDEXES.items():
        if builder == "spark":
            LanceTable.for_path(spark, str(path)).create_index(column, ours, name=name, **options)
        elif kind == "IVF_PQ":
            ds.create_index(column, kind, name=name, num_partitions=2, num_sub_vectors=4)
        elif kind == "INVERTED":
            ds.create_scalar_index(column, kind, name=name, with_position=True)
        else:
            ds.create_scalar_index(column, kind, name=name)
        ds = lance.dataset(str(path))


def indexes(path: Path) -> dict:
    return {i["name"]: (i["type"], sorted(i["fragment_ids"]), i["uuid"]) for i in lance.dataset(str(path)).list_indices()}


def conditions(rng: random.Random):
    k = rng.randrange(30)
    c = rng.choice(["a", "b", "dd"])
    return [f"k = {k}", f"k < {k}", "k IS NULL", f"c = '{c}'", f"c IN ('{c}', 'a')", "c IS NULL",
            f"array_has_any(tags, ['{rng.choice(TAGS)}'])", "contains(s, 'apple')", f"id < {rng.randrange(300)}"]


def filtered(path: Path, where: str):
    return sorted(lance.dataset(str(path)).to_table(filter=where, columns=["id"]).column("id").to_pylist())


def plan(path: Path, where: str) -> str:
    return re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<uuid>", lance.dataset(str(path)).scanner(
        filter=where, columns=["id"]).explain_plan()).replace(path.name, "<table>")


def hits(path: Path, query) -> dict:
    t = lance.dataset(str(path)).to_table(full_text_query=query, columns=["id", "_score"])
    return dict(zip(t.column("id").to_pylist(), t.column("_score").to_pylist()))


def nearest(path: Path, q) -> list:
    t = lance.dataset(str(path)).to_table(nearest={"column": "vec", "q": q, "k": 10, "nprobes": 2},
                                          columns=["id", "_distance"])
    return list(zip(t.column("id").to_pylist(), t.column("_distance").to_pylist()))


def assert_same_answers(rng: random.Random, ours: Path, theirs: Path) -> None:
    for _ in range(N):
        for where in conditions(rng):
            assert filtered(ours, where) == filtered(theirs, where), where
            assert plan(ours, where) == plan(theirs, where), where
        for op in ("OR", "AND"):
            q = MatchQuery(random_query(rng), "text", operator=FullTextOperator(op))
            expected = hits(theirs, q)
            got = hits(ours, q)
            assert got.keys() == expected.keys(), q
            assert all(got[i] == pytest.approx(s, rel=1e-5) for i, s in expected.items()), q
        v = np.array([rng.random() for _ in range(DIM)], dtype=np.float32)
        got, expected = nearest(ours, v), nearest(theirs, v)
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert [d for _, d in got] == pytest.approx([d for _, d in expected], rel=1e-5)


@pytest.mark.parametrize("builder", ["pylance", "spark"])
def test_our_compaction_remaps_indexes_as_pylance_does(spark, wh, builder):
    """Spark's OPTIMIZE and pylance's compact_files of copies of one table (fragments the indexes cover, then two
    appended since, which both compactions rewrite apart): the same versions, fragments and index coverage, new
    uuids for the remapped indexes, the same plans and answers; both validate."""
    rng = random.Random(f"{SEED}-{builder}")
    base = wh / "db" / f"remap_base_{builder}.lance"
    # pylance trains no vector index on fewer than 256 rows (it commits one covering nothing).
    lance.write_dataset(rows(rng, 320), str(base), max_rows_per_file=80)
    build(spark, builder, base)
    lance.write_dataset(rows(rng, 80, 320), str(base), mode="append", max_rows_per_file=40)
    lance.dataset(str(base)).delete("id % 7 = 3 OR (id >= 80 AND id < 120) OR id = 380")
    before = indexes(base)
    ours, theirs = wh / "db" / f"remap_ours_{builder}.lance", wh / "db" / f"remap_theirs_{builder}.lance"
    shutil.copytree(base, ours)
    shutil.copytree(base, theirs)
    LanceTable.for_path(spark, str(ours)).optimize(target_rows_per_fragment=10_000).collect()
    lance.dataset(str(theirs)).optimize.compact_files(target_rows_per_fragment=10_000)
    for path in (ours, theirs):
        lance.dataset(str(path)).validate()
    assert lance.dataset(str(ours)).version == lance.dataset(str(theirs)).version == lance.dataset(str(base)).version + 2
    fragments = [f.fragment_id for f in lance.dataset(str(theirs)).get_fragments()]
    assert [f.fragment_id for f in lance.dataset(str(ours)).get_fragments()] == fragments == [6, 7]
    got, expected = indexes(ours), indexes(theirs)
    assert {n: i[:2] for n, i in got.items()} == {n: i[:2] for n, i in expected.items()}
    for name, (_, covered, uuid) in got.items():
        if name in NOT_REMAPPED:
            assert uuid == before[name][2] and covered == before[name][1], name
        else:
            # The new fragment of the indexed rows is covered, the one of the rows appended since is not.
            assert uuid != before[name][2] and covered == [6], name
        unindexed = [lance.dataset(str(p)).stats.index_stats(name)["num_unindexed_rows"] for p in (ours, theirs)]
        assert unindexed[0] == unindexed[1], (name, unindexed)
    assert_same_answers(rng, ours, theirs)


def test_spark_reads_indexes_pylance_remapped(spark, wh):
    """After pylance's compaction, Spark's filters and full-text matches go through the remapped indexes and
    answer as pylance does."""
    rng = random.Random(f"{SEED}-read")
    path = wh / "db" / "remap_read.lance"
    lance.write_dataset(rows(rng, 300), str(path), max_rows_per_file=50)
    build(spark, "pylance", path)
    lance.dataset(str(path)).delete("id % 5 = 1")
    lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=120)
    df = spark.read.format("lance").load(str(path))
    for _ in range(N):
        for where in conditions(rng)[:6]:
            got = df.where(where).select("id")
            assert sorted(r.id for r in got.collect()) == filtered(path, where), where
            assert "index '" in got._jdf.queryExecution().executedPlan().toString(), where
        q = random_query(rng)
        found = {r.id for r in df.where(f"lance_match(text, {sql_str(q)})").select("id").collect()}
        assert found == set(hits(path, MatchQuery(q, "text"))), q
