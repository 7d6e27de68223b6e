"""OPTIMIZE INDEX of full-text (INVERTED) indexes, proved against pylance 14's ``optimize_indices()``.

The same table is written several times by pylance (seeded texts; on some, stable row ids), indexed, appended to,
deleted from (scattered rows of old and new fragments), and its index brought up to date, by every pairing of
builders: pylance builds and pylance optimizes (the oracle), pylance builds and Spark optimizes, Spark builds and
Spark optimizes, Spark builds and pylance optimizes; then a second append and optimize. Every result must be read by
pylance (``list_indices``, ``validate()``, ``to_table(full_text_query=...)`` with the oracle's rows and ``_score``)
and by Spark (``lance_match`` with pylance's rows, fuzzy ones too; ``SEARCH`` with pylance's scores).

The same proof after compaction (pylance's ``compact_files`` or Spark's ``OPTIMIZE``, after deleting a whole
fragment) by every pairing of compactor and optimizer, and for indexes pylance keeps in several segments
(``optimize_indices(num_indices_to_merge=0)``), which Spark searches as they are and merges into one.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.query import FullTextOperator, MatchQuery

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402
from test_fts_index_build import random_query, random_text, sql_str  # noqa: E402
from test_ranked_search import assert_same_ranking  # noqa: E402

SEED = __import__("os").environ.get("SPARKLANCE_FUZZ_SEED", "20261126")
N = int(__import__("os").environ.get("SPARKLANCE_FUZZ_N", "1"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "fts_optimize_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-fts-optimize-tests", wh)
    yield session
    session.stop()


PAIRS = [("pylance", "pylance"), ("pylance", "spark"), ("spark", "spark"), ("spark", "pylance")]


def rows(rng: random.Random, start: int, n: int) -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "text": pa.array([random_text(rng) for _ in range(n)],
                                                                         pa.string())})


def build(spark, builder: str, name: str, path: Path) -> None:
    if builder == "pylance":
        lance.dataset(str(path)).create_scalar_index("text", "INVERTED", with_position=True)
    else:
        spark.sql(f"ALTER TABLE lance.db.{name} CREATE INDEX text_idx USING fts (text) WITH (with_position = true)")


def optimize(spark, optimizer: str, name: str, path: Path) -> None:
    if optimizer == "pylance":
        lance.dataset(str(path)).optimize.optimize_indices()
    else:
        spark.sql(f"ALTER TABLE lance.db.{name} OPTIMIZE INDEX text_idx").collect()


def hits(path: Path, query) -> dict:
    t = lance.dataset(str(path)).to_table(full_text_query=query, columns=["id", "_score"])
    return dict(zip(t.column("id").to_pylist(), t.column("_score").to_pylist()))


def spark_ids(spark, name: str, condition: str) -> set:
    return {r.id for r in spark.sql(f"SELECT id FROM lance.db.{name} WHERE {condition}").collect()}


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
def test_optimized_indexes_equal_pylance_optimized(spark, wh, stable):
    rng = random.Random(f"{SEED}-{stable}")
    first, second, third = rows(rng, 0, 300), rows(rng, 300, 120), rows(rng, 420, 90)
    tables = {}
    for builder, optimizer in PAIRS:
        name = f"t_{builder[0]}{optimizer[0]}{'_s' if stable else ''}"
        path = wh / "db" / f"{name}.lance"
        lance.write_dataset(first, str(path), max_rows_per_file=100, enable_stable_row_ids=stable)
        build(spark, builder, name, path)
        lance.write_dataset(second, str(path), mode="append", max_rows_per_file=60)
        lance.dataset(str(path)).delete("id % 13 = 4")
        optimize(spark, optimizer, name, path)
        lance.write_dataset(third, str(path), mode="append", max_rows_per_file=50)
        lance.dataset(str(path)).delete("id % 11 = 2")
        optimize(spark, optimizer, name, path)
        ds = lance.dataset(str(path))
        ds.validate()
        (index,) = [i for i in ds.list_indices() if i["name"] == "text_idx"]
        assert index["type"] == "Inverted" and index["fields"] == ["text"]
        assert sorted(index["fragment_ids"]) == sorted(f.fragment_id for f in ds.get_fragments())
        stats = ds.stats.index_stats("text_idx")
        assert stats["num_unindexed_fragments"] == 0 and stats["num_unindexed_rows"] == 0
        tables[(builder, optimizer)] = (name, path)
    oracle = tables[("pylance", "pylance")][1]
    assert_same_answers(spark, rng, tables, oracle, lambda i: (i % 13 == 4 and i < 420) or i % 11 == 2, rounds=12 * N)


def test_up_to_date_index_and_options(spark, wh):
    rng = random.Random(f"{SEED}-refusals")
    name = "t_refusals"
    path = wh / "db" / f"{name}.lance"
    lance.write_dataset(rows(rng, 0, 90), str(path), max_rows_per_file=30)
    build(spark, "spark", name, path)
    version = lance.dataset(str(path)).version
    spark.sql(f"ALTER TABLE lance.db.{name} OPTIMIZE INDEX text_idx").collect()
    assert lance.dataset(str(path)).version == version
    lance.write_dataset(rows(rng, 90, 30), str(path), mode="append")
    with pytest.raises(Exception, match="OPTIMIZE INDEX keeps the analysis it was built with"):
        spark.sql(f"ALTER TABLE lance.db.{name} OPTIMIZE INDEX text_idx WITH (stem = false)").collect()


def compact(spark, compactor: str, name: str, path: Path) -> None:
    if compactor == "pylance":
        lance.dataset(str(path)).optimize.compact_files(target_rows_per_fragment=10_000)
    else:
        spark.sql(f"OPTIMIZE lance.db.{name} WITH (target_rows_per_fragment = 10000)").collect()


def assert_same_answers(spark, rng, tables: dict, oracle: Path, deleted, rounds: int = 6 * N) -> None:
    """pylance's rows and ``_score``s over each table equal the oracle's, and so do Spark's ``lance_match`` and
    ``SEARCH`` (fuzzy ``lance_match`` answers as pylance does over the same table)."""
    for _ in range(rounds):
        q = random_query(rng)
        for op in ("OR", "AND"):
            expected = hits(oracle, MatchQuery(q, "text", operator=FullTextOperator(op)))
            assert not any(deleted(i) for i in expected)
            for key, (name, path) in tables.items():
                got = hits(path, MatchQuery(q, "text", operator=FullTextOperator(op)))
                assert got.keys() == expected.keys(), (key, op, q)
                assert all(got[k] == pytest.approx(s, rel=1e-5) for k, s in expected.items()), (key, op, q)
                assert spark_ids(spark, name, f"lance_match(text, {sql_str(q)}, 'operator={op}')") == set(expected), \
                    (key, op, q)
        k = rng.choice([1, 5, 20])
        t = lance.dataset(str(oracle)).to_table(full_text_query=q, columns=["id", "_score"], limit=k)
        expected = list(zip(t.column("id").to_pylist(), t.column("_score").to_pylist()))
        for key, (name, _) in tables.items():
            got = [(r["id"], r["_score"]) for r in spark.sql(
                f"SELECT id, _score FROM search(table => 'lance.db.{name}', query => {sql_str(q)}, "
                f"num_results => {k})").collect()]
            assert_same_ranking(got, expected, (key, q, k))
        fuzzy = random_query(rng, 2)
        for key, (name, path) in tables.items():
            expected = set(hits(path, MatchQuery(fuzzy, "text", fuzziness=1, max_expansions=50)))
            assert spark_ids(spark, name, f"lance_match(text, {sql_str(fuzzy)}, 'fuzziness=1,max_expansions=50')") \
                == expected, (key, fuzzy)


def assert_covers_all(path: Path) -> None:
    ds = lance.dataset(str(path))
    ds.validate()
    indexes = [i for i in ds.list_indices() if i["name"] == "text_idx"]
    assert all(i["type"] == "Inverted" and i["fields"] == ["text"] for i in indexes)
    covered = sorted(f for i in indexes for f in i["fragment_ids"])
    assert covered == sorted(f.fragment_id for f in ds.get_fragments())
    assert ds.stats.index_stats("text_idx")["num_unindexed_rows"] == 0


COMPACT_PAIRS = [("pylance", "pylance"), ("pylance", "spark"), ("spark", "spark"), ("spark", "pylance")]


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
def test_optimize_after_compaction_and_whole_fragment_deletes(spark, wh, stable):
    """Build (pylance or Spark, alternately), append, delete scattered rows and every row of one fragment, compact
    (pylance or Spark), optimize the index (pylance or Spark), then append, delete and optimize again: every pairing
    answers as pylance compacting and optimizing its own index. Between compaction and optimize, each table answers
    in Spark as pylance answers over the same table."""
    rng = random.Random(f"{SEED}-compact-{stable}")
    first, second, third = rows(rng, 0, 300), rows(rng, 300, 120), rows(rng, 420, 90)
    probes = [random_query(rng) for _ in range(4)]
    compacted = {}
    tables = {}
    for n, (compactor, optimizer) in enumerate(COMPACT_PAIRS):
        builder = "pylance" if n % 2 == 0 else "spark"
        name = f"c_{compactor[0]}{optimizer[0]}{'_s' if stable else ''}"
        path = wh / "db" / f"{name}.lance"
        lance.write_dataset(first, str(path), max_rows_per_file=60, enable_stable_row_ids=stable)
        build(spark, builder, name, path)
        lance.write_dataset(second, str(path), mode="append", max_rows_per_file=40)
        lance.dataset(str(path)).delete("id % 13 = 4 OR (id >= 60 AND id < 120)")
        compact(spark, compactor, name, path)
        lance.dataset(str(path)).validate()
        compacted[(compactor, optimizer)] = [hits(path, q) for q in probes]
        for q, found in zip(probes, compacted[(compactor, optimizer)]):
            assert spark_ids(spark, name, f"lance_match(text, {sql_str(q)})") == set(found), (compactor, q)
            got = [(r["id"], r["_score"]) for r in spark.sql(
                f"SELECT id, _score FROM search(table => 'lance.db.{name}', query => {sql_str(q)}, "
                f"num_results => 1000)").collect()]
            assert_same_ranking(got, sorted(found.items(), key=lambda h: (-h[1], h[0])), (compactor, q))
        if stable:
            # Both compactions keep the index and move it to the new fragments (the rows keep their ids), so the
            # scores are those after pylance's compaction. Without stable row ids both remap the index, but pylance's
            # remap keeps the documents of the fragment deleted whole before it (in its statistics, never returned),
            # which Spark's leaves out: the rows found are the same, their scores differ until OPTIMIZE INDEX
            # (test_compaction_remap.py proves equal scores when no fragment was deleted whole).
            for q, e, got in zip(probes, compacted[COMPACT_PAIRS[0]], compacted[(compactor, optimizer)]):
                assert got.keys() == e.keys() and all(got[k] == pytest.approx(v, rel=1e-5) for k, v in e.items()), q
        else:
            for q, e, got in zip(probes, compacted[COMPACT_PAIRS[0]], compacted[(compactor, optimizer)]):
                assert got.keys() == e.keys(), q
        optimize(spark, optimizer, name, path)
        assert_covers_all(path)
        lance.write_dataset(third, str(path), mode="append", max_rows_per_file=50)
        lance.dataset(str(path)).delete("id % 11 = 2")
        optimize(spark, optimizer, name, path)
        assert_covers_all(path)
        tables[(builder, compactor, optimizer)] = (name, path)
    oracle = tables[("pylance", "pylance", "pylance")][1]
    assert_same_answers(spark, rng, tables, oracle,
                        lambda i: (i % 13 == 4 and i < 420) or 60 <= i < 120 or i % 11 == 2)


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
def test_segments_are_searched_and_merged(spark, wh, stable):
    """pylance keeps an index in several segments when told not to merge them (``num_indices_to_merge=0``): Spark
    searches and ranks them all as pylance does, and its OPTIMIZE INDEX merges them into one index covering every
    fragment, answering as pylance's own optimize does."""
    rng = random.Random(f"{SEED}-segments-{stable}")
    parts = [rows(rng, 0, 150)] + [rows(rng, 150 + 40 * k, 40) for k in range(3)]
    tables = {}
    for optimizer in ("pylance", "spark"):
        name = f"seg_{optimizer[0]}{'_s' if stable else ''}"
        path = wh / "db" / f"{name}.lance"
        lance.write_dataset(parts[0], str(path), max_rows_per_file=50, enable_stable_row_ids=stable)
        build(spark, "pylance", name, path)
        for k, part in enumerate(parts[1:]):
            lance.write_dataset(part, str(path), mode="append", max_rows_per_file=20)
            lance.dataset(str(path)).delete(f"id % 17 = {k}")
            lance.dataset(str(path)).optimize.optimize_indices(num_indices_to_merge=0)
        assert len([i for i in lance.dataset(str(path)).list_indices() if i["name"] == "text_idx"]) == 4
        tables[optimizer] = (name, path)
    assert_same_answers(spark, rng, {"segments": tables["spark"]}, tables["pylance"][1], lambda i: False)
    last = rows(rng, 1000, 30)
    for optimizer, (name, path) in tables.items():
        lance.write_dataset(last, str(path), mode="append")
        optimize(spark, optimizer, name, path)
        assert_covers_all(path)
    indexes = [i for i in lance.dataset(str(tables["spark"][1])).list_indices() if i["name"] == "text_idx"]
    assert len(indexes) == 1
    assert_same_answers(spark, rng, tables, tables["pylance"][1], lambda i: False)
