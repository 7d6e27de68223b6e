"""ORDER BY ... LIMIT (TopN) and COUNT/MIN/MAX pushed to the scan, against the same queries with both pushdowns off
(read options ``topN_push_down`` and ``aggregate_push_down``, the first the other Lance connector's name).

Random tables (``SPARKLANCE_FUZZ_SEED``, ``SPARKLANCE_FUZZ_N`` tables) written by pylance in several fragments, with
nulls, NaN, -0.0 and infinities in the floats, zone map indexes built by pylance or by Spark on some columns, then
fragments appended after the indexes (not covered) and rows deleted, in a random order. Every TopN query must return
the same sort keys in the same order as with pushdown off (rows tied on every key may differ, so ``id`` is the last
key of half of them and then the rows must be the same), and its plan must show the top-N in the scan; every
aggregate must equal the one Spark computes from the rows. The zone maps must skip zones in some of the TopN
queries and answer some of the aggregates (or the test fails: it would prove nothing).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
import sys
from pathlib import Path
from typing import List

import lance
import pyarrow as pa
import pytest
from lance.indices.builder import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
COLUMNS = ("i64", "i32", "f64", "f32", "s", "d", "ts", "b")
INDEXABLE = ("i64", "i32", "f64", "s", "d", "ts")


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "topn_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-topn-tests", wh)
    yield session
    session.stop()


def random_batch(r: random.Random, first_id: int, n: int, nan_share: float) -> pa.Table:
    def maybe(v):
        return None if r.random() < 0.15 else v

    def floaty():
        x = r.random()
        if x < nan_share:
            return float("nan")
        if x < nan_share + 0.03:
            return r.choice([float("inf"), float("-inf"), -0.0, 0.0])
        return round(r.uniform(-1000, 1000), r.choice([0, 2]))

    # Narrow ranges of keys, so that many rows tie on the first key of a sort.
    return pa.table({
        "id": pa.array(range(first_id, first_id + n), pa.int64()),
        # Clustered by id (zones of it are narrow and a zone map can skip them), with wide outliers.
        "i64": pa.array([maybe((first_id + j) * 10**6 + r.randint(-3, 3) * 10**7 if r.random() < 0.95 else
                               r.randint(-50, 50) * 10**12) for j in range(n)], pa.int64()),
        "i32": pa.array([maybe(r.randint(-300, 300)) for _ in range(n)], pa.int32()),
        "f64": pa.array([maybe(floaty()) for _ in range(n)], pa.float64()),
        "f32": pa.array([maybe(floaty()) for _ in range(n)], pa.float32()),
        "s": pa.array([maybe("".join(r.choice("abcé€z") for _ in range(r.randint(0, 4)))) for _ in range(n)], pa.string()),
        "d": pa.array([maybe(dt.date(2020, 1, 1) + dt.timedelta(days=r.randint(-400, 400))) for _ in range(n)], pa.date32()),
        "ts": pa.array([maybe(dt.datetime(2024, 1, 1) + dt.timedelta(seconds=r.randint(-10**6, 10**6), microseconds=r.randint(0, 999999)))
                        for _ in range(n)], pa.timestamp("us")),
        "b": pa.array([maybe(r.random() < 0.5) for _ in range(n)], pa.bool_()),
    })


def build_table(spark, r: random.Random, path: str, steps: List[str]) -> None:
    """A table of 2-4 pylance fragments, zone maps on some columns, then appends and deletes in a random order."""
    nan_share = r.choice([0.0, 0.0, 0.05])
    rows = r.randint(300, 1200)
    per_file = r.choice([97, 150, 400])
    lance.write_dataset(random_batch(r, 0, rows, nan_share), path, max_rows_per_file=per_file)
    steps.append(f"pylance writes {rows} rows, {per_file} per fragment, NaN share {nan_share}")
    next_id = rows
    indexed = r.sample(INDEXABLE, r.randint(2, len(INDEXABLE)))
    for c in indexed:
        zone = r.choice([16, 64])
        if r.random() < 0.5:
            lance.dataset(path).create_scalar_index(
                c, IndexConfig(index_type="zonemap", parameters={"rows_per_zone": zone}), name=f"{c}_zones")
            steps.append(f"pylance builds a zone map on {c}, {zone} rows per zone")
        else:
            LanceTable.for_path(spark, path).create_index(c, "zonemap", name=f"{c}_zones", rows_per_zone=zone)
            steps.append(f"Spark builds a zone map on {c}, {zone} rows per zone")
    for _ in range(r.randint(0, 2)):
        if r.random() < 0.5:
            n = r.randint(20, 200)
            lance.write_dataset(random_batch(r, next_id, n, nan_share), path, mode="append")
            steps.append(f"pylance appends {n} rows (not indexed)")
            next_id += n
        else:
            m = r.choice([7, 11, 13])
            lance.dataset(path).delete(f"id % {m} = 3")
            steps.append(f"pylance deletes id % {m} = 3")


def norm(v):
    """A value comparable with ==: NaN as a string (Spark sorts every NaN as one value, above all others)."""
    return "NaN" if isinstance(v, float) and math.isnan(v) else v


def read(spark, path: str, pushed: bool):
    flag = "true" if pushed else "false"
    return spark.read.format("lance").option("topN_push_down", flag).option("aggregate_push_down", flag).load(path)


def plan_of(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def test_topn_and_aggregates_against_no_pushdown(spark, wh):
    failures: List[str] = []
    stats = dict.fromkeys(["topn", "zones skipped", "aggregates", "from metadata"], 0)
    for i in range(N):
        r = random.Random(f"{SEED}/topn/{i}")
        path = str(wh / "db" / f"topn_{i}.lance")
        steps: List[str] = []
        build_table(spark, r, path, steps)
        lance.dataset(path).validate()
        where = f"case {i} (SPARKLANCE_FUZZ_SEED={SEED}): " + "; ".join(steps)
        for q in range(8):
            keys = r.sample(COLUMNS, r.randint(1, 3))
            with_id = r.random() < 0.5
            k = r.choice([1, 5, 40, 300])
            orders = []
            for c in keys:
                col = F.col(c)
                asc = r.random() < 0.5
                first = r.random() < 0.5
                orders.append((col.asc_nulls_first() if first else col.asc_nulls_last()) if asc else
                              (col.desc_nulls_first() if first else col.desc_nulls_last()))
            keys_text = ", ".join(keys)
            if with_id:
                orders.append(F.col("id").asc())
            columns = list(keys) + ["id"]
            got_df = read(spark, path, True).orderBy(*orders).limit(k).select(*columns)
            want_df = read(spark, path, False).orderBy(*orders).limit(k).select(*columns)
            plan = plan_of(got_df)
            stats["topn"] += 1
            if f"top {k} by" not in plan:
                failures.append(f"{where}\n  ORDER BY {keys_text} LIMIT {k}: the plan shows no top-N in the scan:\n{plan}")
            if "skips" in plan and "zone map" in plan:
                stats["zones skipped"] += 1
            if f"top {k} by" in plan_of(want_df):
                failures.append(f"{where}\n  topN_push_down=false still pushes: {plan_of(want_df)}")
            got = [tuple(norm(x) for x in row) for row in got_df.collect()]
            want = [tuple(norm(x) for x in row) for row in want_df.collect()]
            if [g[:len(keys)] for g in got] != [w[:len(keys)] for w in want] or (with_id and got != want):
                failures.append(f"{where}\n  ORDER BY {orders} LIMIT {k}:\n  pushed     {got[:12]}\n  not pushed {want[:12]}")
        # Five random draws, then COUNT(*) alone, which the manifest always answers: five draws on a table whose
        # appended fragments leave its zone maps short of every fragment may all need the rows (seed 20261127, N=2:
        # each of the ten named an unindexed column or an appended fragment).
        for q in range(6):
            aggs, names = [], []
            for _ in range(r.randint(1, 4) if q < 5 else 0):
                f, c = r.choice(["min", "max", "count", "countstar"]), r.choice(COLUMNS)
                aggs.append(F.count(F.lit(1)) if f == "countstar" else getattr(F, f)(F.col(c)))
                names.append("count(*)" if f == "countstar" else f"{f}({c})")
            if q == 5:
                aggs, names = [F.count(F.lit(1))], ["count(*)"]
            fragments = r.random() < 0.3 if q < 5 else False
            def query(pushed):
                df = read(spark, path, pushed)
                return (df.where("_fragid IN (0, 1)") if fragments else df).agg(*aggs)
            got_df, want_df = query(True), query(False)
            plan = plan_of(got_df)
            stats["aggregates"] += 1
            if "LanceAggregateScan" in plan:
                stats["from metadata"] += 1
            elif q == 5:
                failures.append(f"{where}\n  COUNT(*) was not answered from the manifest:\n  {plan}")
            if "LanceAggregateScan" in plan_of(want_df):
                failures.append(f"{where}\n  aggregate_push_down=false still pushes {names}")
            got = [norm(x) for x in got_df.collect()[0]]
            want = [norm(x) for x in want_df.collect()[0]]
            if got != want:
                failures.append(f"{where}\n  {names}{' of fragments 0, 1' if fragments else ''}:\n  pushed {got}\n  "
                                f"not pushed {want}\n  plan {plan}")
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:6])
    assert stats["zones skipped"] > 0, stats
    assert stats["from metadata"] > 0, stats


def aggregate_check(spark, path: str, exprs: List[str], from_metadata: bool) -> None:
    """The aggregates read with pushdown equal those without; the plan answers them from metadata or not."""
    got_df = read(spark, path, True).selectExpr(*exprs)
    plan = plan_of(got_df)
    assert ("LanceAggregateScan" in plan) == from_metadata, (exprs, plan)
    if from_metadata:
        named = ", ".join(e.split("(")[0].upper() + "(" + e.split("(", 1)[1] for e in exprs)  # MIN(i32), COUNT(*)
        assert f"{named} from metadata" in plan, plan
    got = [norm(x) for x in got_df.collect()[0]]
    want = [norm(x) for x in read(spark, path, False).selectExpr(*exprs).collect()[0]]
    assert got == want, (exprs, got, want)


def test_when_metadata_answers_and_when_not(spark, wh):
    """MIN/MAX/COUNT come from zone maps only while they cover every fragment read, no fragment has deleted rows and
    no zone holds a NaN; COUNT(*) always comes from the manifest. Each answer equals Spark's over the rows."""
    r = random.Random(f"{SEED}/aggs")
    path = str(wh / "db" / "aggs.lance")
    lance.write_dataset(random_batch(r, 0, 600, 0.0), path, max_rows_per_file=200)
    lance.dataset(path).create_scalar_index("i32", IndexConfig(index_type="zonemap", parameters={"rows_per_zone": 32}))
    LanceTable.for_path(spark, path).create_index("f64", "zonemap", name="f64_zones", rows_per_zone=50)
    aggregate_check(spark, path, ["min(i32)", "max(i32)", "count(i32)", "count(*)"], True)
    aggregate_check(spark, path, ["min(f64)", "max(f64)", "count(f64)"], True)
    aggregate_check(spark, path, ["min(s)"], False)  # no index on s
    aggregate_check(spark, path, ["min(i32)", "sum(i32)"], False)  # SUM is not answered from metadata
    lance.write_dataset(random_batch(r, 600, 50, 0.0), path, mode="append")
    aggregate_check(spark, path, ["min(i32)"], False)  # the appended fragment is not covered
    aggregate_check(spark, path, ["count(*)"], True)

    deleted = str(wh / "db" / "aggs_deleted.lance")
    lance.write_dataset(random_batch(r, 0, 400, 0.0), deleted, max_rows_per_file=200)
    lance.dataset(deleted).create_scalar_index("i32", "ZONEMAP")
    aggregate_check(spark, deleted, ["max(i32)", "count(i32)"], True)
    lance.dataset(deleted).delete("id = 5")
    aggregate_check(spark, deleted, ["max(i32)"], False)  # rows deleted since the zone map was built

    nan = str(wh / "db" / "aggs_nan.lance")
    lance.write_dataset(random_batch(r, 0, 400, 0.2), nan, max_rows_per_file=200)
    lance.dataset(nan).create_scalar_index("f64", "ZONEMAP")
    aggregate_check(spark, nan, ["max(f64)"], False)  # zones with NaN are not bounded in SQL's order


def test_topn_skips_zones_of_a_sorted_column(spark, wh):
    """ORDER BY a column whose zone map bounds it tightly reads a few zones: the plan says how many were skipped and
    the rows equal those read with pushdown off, ascending and descending, nulls first and last."""
    path = str(wh / "db" / "sorted.lance")
    n = 2000
    v = [None if i % 500 == 499 else i * 3 for i in range(n)]  # a null at the end of each fragment
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array(v, pa.int64())}), path,
                        max_rows_per_file=500)
    lance.dataset(path).create_scalar_index("v", IndexConfig(index_type="zonemap", parameters={"rows_per_zone": 100}))
    read(spark, path, False).createOrReplaceTempView("sorted_off")
    v_col = F.col("v")
    # Nulls first, the zones holding one (4) must be read too.
    orders = {"v ASC NULLS LAST": (v_col.asc_nulls_last(), 19), "v DESC NULLS LAST": (v_col.desc_nulls_last(), 19),
              "v ASC NULLS FIRST": (v_col.asc_nulls_first(), 15), "v DESC NULLS FIRST": (v_col.desc_nulls_first(), 16)}
    for order, (column, skipped) in orders.items():
        got_df = read(spark, path, True).orderBy(column).limit(7)
        plan = plan_of(got_df)
        assert f"top 7 by {order}" in plan, plan
        # The 7 rows are in one zone of 100 rows (and the 4 nulls); the zones that cannot hold one are not read.
        assert f"zone map 'v_idx' skips {skipped} of 20 zones" in plan, plan
        want = spark.sql(f"SELECT * FROM sorted_off ORDER BY {order} LIMIT 7")
        assert [tuple(x) for x in got_df.collect()] == [tuple(x) for x in want.collect()], order
