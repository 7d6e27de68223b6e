"""OPTIMIZE INDEX of full-text (INVERTED) indexes, proved against pylance 14's ``optimize_indices()``.

The same table is written several times by pylance (seeded texts; on some, stable row ids), indexed, appended to,
deleted from (scattered rows of old and new fragments), and its index brought up to date, by every pairing of
builders: pylance builds and pylance optimizes (the oracle), pylance builds and Spark optimizes, Spark builds and
Spark optimizes, Spark builds and pylance optimizes; then a second append and optimize. Every result must be read by
pylance (``list_indices``, ``validate()``, ``to_table(full_text_query=...)`` with the oracle's rows and ``_score``)
and by Spark (``lance_match`` with pylance's rows, fuzzy ones too; ``SEARCH`` with pylance's scores).
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
    for _ in range(12 * N):
        q = random_query(rng)
        for op in ("OR", "AND"):
            expected = hits(oracle, MatchQuery(q, "text", operator=FullTextOperator(op)))
            assert not any((i % 13 == 4 and i < 420) or i % 11 == 2 for i in expected)
            for pair, (name, path) in tables.items():
                got = hits(path, MatchQuery(q, "text", operator=FullTextOperator(op)))
                assert got.keys() == expected.keys(), (pair, op, q)
                assert all(got[k] == pytest.approx(s, rel=1e-5) for k, s in expected.items()), (pair, op, q)
                assert spark_ids(spark, name, f"lance_match(text, {sql_str(q)}, 'operator={op}')") == set(expected), \
                    (pair, op, q)
        k = rng.choice([1, 5, 20])
        t = lance.dataset(str(oracle)).to_table(full_text_query=q, columns=["id", "_score"], limit=k)
        expected = list(zip(t.column("id").to_pylist(), t.column("_score").to_pylist()))
        for pair, (name, _) in tables.items():
            got = [(r["id"], r["_score"]) for r in spark.sql(
                f"SELECT id, _score FROM search(table => 'lance.db.{name}', query => {sql_str(q)}, "
                f"num_results => {k})").collect()]
            assert_same_ranking(got, expected, (pair, q, k))
        fuzzy = random_query(rng, 2)
        for pair, (name, path) in tables.items():
            expected = set(hits(path, MatchQuery(fuzzy, "text", fuzziness=1, max_expansions=50)))
            assert spark_ids(spark, name, f"lance_match(text, {sql_str(fuzzy)}, 'fuzziness=1,max_expansions=50')") \
                == expected, (pair, fuzzy)


def test_up_to_date_index_and_refusals(spark, wh):
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
    lance.dataset(str(path)).delete("id < 30")
    with pytest.raises(Exception, match="it covers fragment 0 that the table no longer holds"):
        spark.sql(f"ALTER TABLE lance.db.{name} OPTIMIZE INDEX text_idx").collect()
    assert sorted(lance.dataset(str(path)).list_indices()[0]["fragment_ids"]) == [0, 1, 2]
