"""Runtime filters: the ``IN`` of a broadcast join's keys that Spark's dynamic pruning hands a Lance scan when the
query runs (``SupportsRuntimeV2Filtering``), on any column, not only partition columns.

Random star schemas (``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` of them): a fact table written by pylance in
several fragments, rows deleted, nulls in every key column, keys of type int, long, string, date and decimal; a
dimension table in Parquet whose rows a filter selects. Each join must return the same rows as the same query over
a Parquet copy of the fact table and as the Lance read with ``runtime_filter_push_down = false``, and its executed
plan must hold a dynamic pruning filter that the Lance scan took (its description names it). Runtime filters are
off by default (``runtime_filter_push_down``). Also: a dimension
filter that selects no row, a query that holds the same pruned join twice (the subquery and exchange reused), and
the switch on a catalog.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import random
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import new_catalog, start_spark  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "2"))
KEYS = ("k_int", "k_long", "k_str", "k_date", "k_dec")
EPOCH = dt.date(2020, 1, 1)


def key_values(k: int) -> dict:
    return {"k_int": k, "k_long": k * 1_000_003 - 5_000_000_000, "k_str": f"key-{k:05d}",
            "k_date": EPOCH + dt.timedelta(days=k), "k_dec": decimal.Decimal(k * 37) / 100}


KEY_TYPES = {"k_int": pa.int32(), "k_long": pa.int64(), "k_str": pa.string(), "k_date": pa.date32(),
             "k_dec": pa.decimal128(12, 2)}


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("sparklance-runtime-filters", tmp_path_factory.mktemp("runtime_filters_wh"))
    yield session
    session.stop()


def star(spark, root: Path, seed: int):
    """Writes one star schema under ``root``; registers views fact_lance, fact_off, fact_pq, dim; returns the number
    of dimension categories and the fact table's live rows."""
    r = random.Random(seed)
    keys = r.randint(300, 3000)
    cats = r.randint(10, 60)
    rows = r.randint(20_000, 50_000)
    data = {c: [] for c in ("id",) + KEYS + ("v", "s")}
    for i in range(rows):
        k = r.randrange(keys + keys // 10)  # some keys no dimension row has
        values = key_values(k)
        data["id"].append(i)
        for c in KEYS:
            data[c].append(None if r.random() < 0.05 else values[c])
        data["v"].append(r.random())
        data["s"].append(f"s{r.randrange(5000)}")
    schema = pa.schema([("id", pa.int64())] + [(c, KEY_TYPES[c]) for c in KEYS] + [("v", pa.float64()), ("s", pa.string())])
    table = pa.table(data, schema=schema)
    path = str(root / f"fact{seed}.lance")
    split = rows * 3 // 4
    lance.write_dataset(table.slice(0, split), path, mode="overwrite", max_rows_per_file=max(1, split // 3))
    lance.write_dataset(table.slice(split), path, mode="append")
    deleted = r.randint(2, 13)
    lance.dataset(path).delete(f"id % {deleted} = 1")
    survivors = table.filter(pa.array([i % deleted != 1 for i in data["id"]]))
    pq.write_table(survivors, str(root / f"fact{seed}.parquet"))

    dim = {c: [] for c in KEYS + ("cat", "name")}
    for k in range(keys):
        values = key_values(k)
        for c in KEYS:
            dim[c].append(values[c])
        dim["cat"].append(r.randrange(cats))
        dim["name"].append(f"name{k}")
    pq.write_table(pa.table(dim, schema=pa.schema([(c, KEY_TYPES[c]) for c in KEYS] + [("cat", pa.int32()), ("name", pa.string())])),
                   str(root / f"dim{seed}.parquet"))

    spark.read.format("lance").option("runtime_filter_push_down", "true").load(path).createOrReplaceTempView("fact_lance")
    spark.read.format("lance").load(path).createOrReplaceTempView("fact_off")  # off by default
    spark.read.parquet(str(root / f"fact{seed}.parquet")).createOrReplaceTempView("fact_pq")
    spark.read.parquet(str(root / f"dim{seed}.parquet")).createOrReplaceTempView("dim")
    return cats, survivors.num_rows


def taken(spark, key: str, condition: str, rows: int) -> bool:
    """Whether the scan takes the runtime IN of the keys `condition` selects: at most 1 in 32 of its rows (the
    scan's RuntimeKeysRatio)."""
    keys = spark.sql(f"SELECT count(DISTINCT {key}) FROM dim d WHERE {condition}").first()[0]
    return keys * 32 <= rows


def executed(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def join(fact: str, key: str, condition: str) -> str:
    return (f"SELECT f.id, f.{key}, f.v, f.s, d.name FROM {fact} f JOIN dim d ON f.{key} = d.{key} "
            f"WHERE {condition}")


@pytest.mark.parametrize("seed", [SEED + i for i in range(N)])
def test_joins_pruned_at_run_time_return_the_rows_of_parquet_and_of_the_scan_without(spark, tmp_path, seed):
    cats, rows = star(spark, tmp_path, seed)
    r = random.Random(seed * 7)
    pruned = 0
    for key in KEYS:
        for _ in range(2):
            c = r.randrange(cats)
            condition = r.choice([f"d.cat = {c}", f"d.cat IN ({c}, {(c + 3) % cats})", f"d.cat < {max(1, c // 4)}"])
            lance_df = spark.sql(join("fact_lance", key, condition))
            got = sorted(lance_df.collect())
            plan = executed(lance_df)
            off_df = spark.sql(join("fact_off", key, condition))
            assert sorted(off_df.collect()) == got, (seed, key, condition)
            assert sorted(spark.sql(join("fact_pq", key, condition)).collect()) == got, (seed, key, condition)
            assert got, (seed, key, condition)  # every condition selects some dimension row that facts have
            assert "dynamicpruningexpression" in plan, plan
            assert (f"runtime filter In({key}, " in plan) == taken(spark, key, condition, rows), plan
            assert "dynamicpruning" not in executed(off_df)
            pruned += f"runtime filter In({key}, " in plan
    assert pruned >= len(KEYS), "too few joins took a runtime filter to test anything"


def test_an_in_of_too_many_keys_is_ignored(spark, tmp_path):
    _, rows = star(spark, tmp_path, SEED + 50)
    for key in ("k_long", "k_str"):
        condition = "d.cat >= 0"  # every dimension row: thousands of keys for tens of thousands of rows
        assert not taken(spark, key, condition, rows)
        df = spark.sql(join("fact_lance", key, condition))
        got = sorted(df.collect())
        plan = executed(df)
        assert "dynamicpruningexpression" in plan and "runtime filter" not in plan, plan
        assert got == sorted(spark.sql(join("fact_pq", key, condition)).collect())


def test_a_dimension_filter_that_selects_nothing_reads_nothing(spark, tmp_path):
    star(spark, tmp_path, SEED + 100)
    for key in KEYS:
        df = spark.sql(join("fact_lance", key, "d.cat = -1"))
        assert df.collect() == []
        assert spark.sql(join("fact_pq", key, "d.cat = -1")).collect() == []
    # Without AQE the scan runs although the broadcast is empty: Spark hands it an IN without a value.
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        df = spark.sql(join("fact_lance", "k_long", "d.cat = -1"))
        assert df.collect() == []
        plan = executed(df)
        assert "runtime filter In(k_long, []) (reads nothing)" in plan, plan
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")


def test_the_same_pruned_join_twice_reuses_the_subquery(spark, tmp_path):
    cats, _ = star(spark, tmp_path, SEED + 200)
    c = cats // 2
    query = (f"WITH j AS ({join('{fact}', 'k_str', f'd.cat = {c}')}) "
             "SELECT 'a' AS side, count(*) AS n, sum(v) AS v FROM j UNION ALL "
             "SELECT 'b', count(*), sum(v) FROM j WHERE v < 0.5")
    df = spark.sql(query.format(fact="fact_lance"))
    got = df.collect()
    plan = executed(df)
    assert plan.count("runtime filter In(k_str, ") >= 1, plan
    assert "Reused" in plan, plan
    want = spark.sql(query.format(fact="fact_pq")).collect()
    assert [(g.side, g.n) for g in got] == [(w.side, w.n) for w in want]
    assert all(abs(g.v - w.v) < 1e-6 for g, w in zip(got, want))
    assert got[0].n > 0


def test_a_catalog_turns_runtime_filters_on(spark, tmp_path):
    star(spark, tmp_path, SEED + 300)
    path = tmp_path / "wh"
    on = new_catalog(spark, "dpp_on", warehouse=str(path), runtime_filter_push_down="true")
    off = new_catalog(spark, "dpp_off", warehouse=str(path))
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {on}.db")
    spark.sql(f"CREATE TABLE {on}.db.fact AS SELECT * FROM fact_pq")
    query = join("{t}", "k_int", "d.cat = 1")
    with_filter = spark.sql(query.format(t=f"{on}.db.fact"))
    without = spark.sql(query.format(t=f"{off}.db.fact"))
    assert sorted(with_filter.collect()) == sorted(without.collect())
    assert "runtime filter In(k_int, " in executed(with_filter)
    assert "dynamicpruning" not in executed(without)
    # The read option wins over the catalog's.
    spark.read.option("runtime_filter_push_down", "false").table(f"{on}.db.fact").createOrReplaceTempView("fact_read_off")
    df = spark.sql(join("fact_read_off", "k_int", "d.cat = 1"))
    assert sorted(df.collect()) == sorted(without.collect())
    assert "dynamicpruning" not in executed(df)


def test_a_bad_catalog_value_is_an_error_naming_the_option(spark, tmp_path):
    bad = new_catalog(spark, "dpp_bad", warehouse=str(tmp_path), runtime_filter_push_down="sometimes")
    with pytest.raises(Exception, match=rf"Option spark.sql.catalog.{bad}.runtime_filter_push_down must be true or false, not 'sometimes'"):
        spark.sql(f"SHOW NAMESPACES IN {bad}").collect()
