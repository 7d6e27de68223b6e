"""ORDER BY ... LIMIT (TopN) and MIN/MAX/COUNT answered from B-tree indexes, against the same queries with pushdown
off (``topN_push_down``, ``aggregate_push_down``) and against pylance's rows.

Random tables (``SPARKLANCE_FUZZ_SEED``, ``SPARKLANCE_FUZZ_N`` tables) written by pylance in several fragments, with
nulls in every column, NaNs of both signs, -0.0 and infinities in the floats, B-trees built by pylance or by Spark
(pages of a few rows to pylance's default 4096) on columns of every orderable type, then fragments appended after
the build (not covered) and rows deleted after it, in a random order. Every TopN whose first key has a B-tree must
say so in its plan (``b-tree 'c_idx' selects n rows``) and return the same sort keys in the same order as with
pushdown off and as pylance's rows sorted in Spark's order (NaN above all, -0.0 equal to 0.0; ``id`` as the last key
of half of them, then whole rows must be equal); every aggregate must equal Spark's over the rows read and the
one of pylance's rows, and some must come from a B-tree (``from metadata (b-tree 'c_idx')``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import random
import struct
import sys
from pathlib import Path
from typing import List

import lance
import pyarrow as pa
import pytest
from lance.dataset import ColumnOrdering
from lance.indices.builder import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
# Every type a scan orders by; sparklance builds no B-tree on decimals (pylance does).
ORDERABLE = ("i64", "i32", "f64", "f32", "s", "bin", "d", "ts", "b", "dec")
SIGNED_NAN = struct.unpack("<d", bytes.fromhex("000000000000f8ff"))[0]


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "topn_btree_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-topn-btree-tests", wh)
    yield session
    session.stop()


def random_batch(r: random.Random, first_id: int, n: int, specials: List[float]) -> pa.Table:
    def maybe(v):
        return None if r.random() < 0.12 else v

    def floaty():
        if specials and r.random() < 0.1:
            return r.choice(specials)
        return r.randint(-400, 400) / 4

    # Narrow ranges of keys, so that many rows tie on the first key of a sort.
    return pa.table({
        "id": pa.array(range(first_id, first_id + n), pa.int64()),
        "i64": pa.array([maybe(r.randint(-200, 200) * 10**9) for _ in range(n)], pa.int64()),
        "i32": pa.array([maybe(r.randint(-300, 300)) for _ in range(n)], pa.int32()),
        "f64": pa.array([maybe(floaty()) for _ in range(n)], pa.float64()),
        "f32": pa.array([maybe(floaty()) for _ in range(n)], pa.float32()),
        "s": pa.array([maybe("".join(r.choice("abé€z") for _ in range(r.randint(0, 3)))) for _ in range(n)], pa.string()),
        "bin": pa.array([maybe(bytes(r.randint(0, 255) for _ in range(r.randint(0, 2)))) for _ in range(n)], pa.binary()),
        "d": pa.array([maybe(dt.date(2020, 1, 1) + dt.timedelta(days=r.randint(-300, 300))) for _ in range(n)], pa.date32()),
        "ts": pa.array([maybe(dt.datetime(2024, 1, 1) + dt.timedelta(seconds=r.randint(-10**5, 10**5))) for _ in range(n)],
                       pa.timestamp("us")),
        "b": pa.array([maybe(r.random() < 0.5) for _ in range(n)], pa.bool_()),
        "dec": pa.array([maybe(decimal.Decimal(r.randint(-5000, 5000)).scaleb(-2)) for _ in range(n)], pa.decimal128(12, 2)),
    })


def build_table(spark, r: random.Random, path: str, steps: List[str]) -> List[str]:
    """A table of 2-4 pylance fragments with B-trees on some columns, then appends and deletes; the indexed columns."""
    specials = r.choice([[], [float("nan"), SIGNED_NAN, -0.0, 0.0, float("inf"), float("-inf")], [SIGNED_NAN, -0.0]])
    rows = r.randint(400, 1500)
    per_file = r.choice([150, 400, 700])
    lance.write_dataset(random_batch(r, 0, rows, specials), path, max_rows_per_file=per_file)
    steps.append(f"pylance writes {rows} rows, {per_file} per fragment, float specials {specials}")
    next_id = rows
    if r.random() < 0.3:
        lance.dataset(path).delete("id % 5 = 1")
        steps.append("pylance deletes id % 5 = 1 before the build")
    indexed = r.sample(ORDERABLE, r.randint(3, 6))
    for c in indexed:
        page = r.choice([4, 64, None])
        if r.random() < 0.5 or c == "dec":
            config = IndexConfig(index_type="btree", parameters={"zone_size": page}) if page else "BTREE"
            lance.dataset(path).create_scalar_index(c, config, name=f"{c}_idx")
            steps.append(f"pylance builds a B-tree on {c}, pages of {page or 4096} rows")
        else:
            options = {"zone_size": page} if page else {}
            LanceTable.for_path(spark, path).create_index(c, "btree", name=f"{c}_idx", **options)
            steps.append(f"Spark builds a B-tree on {c}, pages of {page or 4096} rows")
    for _ in range(r.randint(0, 2)):
        if r.random() < 0.4:
            n = r.randint(20, 200)
            lance.write_dataset(random_batch(r, next_id, n, specials), path, mode="append")
            steps.append(f"pylance appends {n} rows (not indexed)")
            next_id += n
        else:
            m = r.choice([7, 11, 13])
            lance.dataset(path).delete(f"id % {m} = 3")
            steps.append(f"pylance deletes id % {m} = 3")
    return indexed


def norm(v):
    """A value comparable with ==: NaN as a string (Spark sorts every NaN as one value, above all others), -0.0 as
    0.0, binaries as bytes."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, float) and v == 0.0:
        return 0.0
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def model_sorted(rows: List[dict], keys: List[tuple]) -> List[dict]:
    """pylance's rows sorted in Spark's order: each key (column, descending, nulls first), NaN above all numbers."""
    out = list(rows)
    for column, desc, nulls_first in reversed(keys):
        def key(row, column=column, desc=desc, nulls_first=nulls_first):
            v = norm(row[column])
            if v is None:
                return (0,) if nulls_first != desc else (2,)
            return (1, (1, 0) if v == "NaN" else (0, v))
        out.sort(key=key, reverse=desc)
    return out


def read(spark, path: str, pushed: bool):
    flag = "true" if pushed else "false"
    return spark.read.format("lance").option("topN_push_down", flag).option("aggregate_push_down", flag).load(path)


def plan_of(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def sql_min(values):
    vs = [norm(v) for v in values if v is not None]
    numbers = [v for v in vs if v != "NaN"]
    return min(numbers) if numbers else ("NaN" if vs else None)


def sql_max(values):
    vs = [norm(v) for v in values if v is not None]
    return "NaN" if "NaN" in vs else (max(vs) if vs else None)


def test_topn_and_aggregates_from_btrees(spark, wh):
    failures: List[str] = []
    stats = dict.fromkeys(["topn", "b-tree topn", "pylance order_by", "aggregates", "from b-tree"], 0)
    for i in range(N):
        r = random.Random(f"{SEED}/btree/{i}")
        path = str(wh / "db" / f"btree_{i}.lance")
        steps: List[str] = []
        indexed = build_table(spark, r, path, steps)
        ds = lance.dataset(path)
        ds.validate()
        pylance_rows = ds.to_table().to_pylist()
        in_01 = {x.id for x in read(spark, path, False).where("_fragid IN (0, 1)").select("id").collect()}
        where = f"case {i} (SPARKLANCE_FUZZ_SEED={SEED}): " + "; ".join(steps)
        for _ in range(10):
            first = r.choice(indexed)
            keys = [first] + r.sample([c for c in ORDERABLE if c != first], r.randint(0, 2))
            spec = [(c, r.random() < 0.5, r.random() < 0.5) for c in keys]
            with_id = r.random() < 0.5
            k = r.choice([1, 3, 25, 200])
            orders = [(F.col(c).desc_nulls_first() if nf else F.col(c).desc_nulls_last()) if desc else
                      (F.col(c).asc_nulls_first() if nf else F.col(c).asc_nulls_last()) for c, desc, nf in spec]
            if with_id:
                orders.append(F.col("id").asc())
                spec.append(("id", False, True))
            columns = keys + ["id"]
            got_df = read(spark, path, True).orderBy(*orders).limit(k).select(*columns)
            want_df = read(spark, path, False).orderBy(*orders).limit(k).select(*columns)
            plan = plan_of(got_df)
            stats["topn"] += 1
            if f"b-tree '{first}_idx' selects" in plan:
                stats["b-tree topn"] += 1
            else:
                failures.append(f"{where}\n  ORDER BY {spec} LIMIT {k}: the B-tree on {first} is not used:\n{plan}")
            got = [tuple(norm(x) for x in row) for row in got_df.collect()]
            want = [tuple(norm(x) for x in row) for row in want_df.collect()]
            model = [tuple(norm(row[c]) for c in columns) for row in model_sorted(pylance_rows, spec)[:k]]
            n = len(keys)
            for name, other in (("not pushed", want), ("pylance's rows", model)):
                if [g[:n] for g in got] != [w[:n] for w in other] or (with_id and got != other):
                    failures.append(f"{where}\n  ORDER BY {spec} LIMIT {k}:\n  pushed     {got[:10]}\n  {name} {other[:10]}")
            # pylance's own TopN, where its order is SQL's (it sorts floats in IEEE total order: NaN with the sign first).
            if not any(c in ("f64", "f32") for c in keys):
                ordering = [ColumnOrdering(c, ascending=not desc, nulls_first=nf) for c, desc, nf in spec]
                theirs = ds.scanner(columns=columns, order_by=ordering, limit=k).to_table().to_pylist()
                theirs = [tuple(norm(row[c]) for c in columns) for row in theirs]
                stats["pylance order_by"] += 1
                if [g[:n] for g in got] != [t[:n] for t in theirs] or (with_id and got != theirs):
                    failures.append(f"{where}\n  ORDER BY {spec} LIMIT {k}:\n  pushed  {got[:10]}\n  pylance {theirs[:10]}")
        for _ in range(6):
            columns = r.sample(indexed, r.randint(1, min(3, len(indexed))))
            exprs = [f"{f}({c})" for c in columns for f in r.sample(["min", "max", "count"], r.randint(1, 3))]
            fragments = r.random() < 0.3
            def query(pushed):
                df = read(spark, path, pushed)
                return (df.where("_fragid IN (0, 1)") if fragments else df).selectExpr(*exprs)
            got_df, want_df = query(True), query(False)
            plan = plan_of(got_df)
            stats["aggregates"] += 1
            if "from metadata" in plan and "b-tree" in plan:
                stats["from b-tree"] += 1
            got = [norm(x) for x in got_df.collect()[0]]
            want = [norm(x) for x in want_df.collect()[0]]
            mine = [row for row in pylance_rows if not fragments or row["id"] in in_01]
            model = []
            for e in exprs:
                f, c = e[:-1].split("(")
                values = [row[c] for row in mine]
                model.append({"min": sql_min, "max": sql_max, "count": lambda vs: sum(v is not None for v in vs)}[f](values))
            if c_ts := [j for j, e in enumerate(exprs) if "(ts)" in e]:
                model = [got[j] if j in c_ts else m for j, m in enumerate(model)]  # Spark's time zone shifts them
            if got != want or got != model:
                failures.append(f"{where}\n  {exprs}{' of fragments 0, 1' if fragments else ''}:\n  pushed {got}\n  "
                                f"not pushed {want}\n  pylance's rows {model}\n  plan {plan}")
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:6])
    assert stats["from b-tree"] > 0, stats


def aggregate_plan(spark, path: str, exprs: List[str]) -> str:
    got_df = read(spark, path, True).selectExpr(*exprs)
    got = [norm(x) for x in got_df.collect()[0]]
    want = [norm(x) for x in read(spark, path, False).selectExpr(*exprs).collect()[0]]
    assert got == want, (exprs, got, want)
    return plan_of(got_df)


def test_btree_answers_through_deletes_and_topn_through_appends(spark, wh):
    """A B-tree answers MIN/MAX/COUNT after rows are deleted (zone maps cannot), not once a fragment it does not
    cover is appended (the scan reads); a TopN still uses it for the fragments it covers and reads the new one whole.
    Ascending and descending, the signed NaN counts as the largest value."""
    path = str(wh / "db" / "btree_life.lance")
    x = [float(v % 97) for v in range(1000)]
    x[10], x[500], x[20] = SIGNED_NAN, float("nan"), None
    lance.write_dataset(pa.table({"id": pa.array(range(1000), pa.int64()), "x": pa.array(x, pa.float64())}), path,
                        max_rows_per_file=250)
    lance.dataset(path).create_scalar_index("x", IndexConfig(index_type="btree", parameters={"zone_size": 16}))
    plan = aggregate_plan(spark, path, ["min(x)", "max(x)", "count(x)", "count(*)"])
    assert "MIN(x), MAX(x), COUNT(x), COUNT(*) from metadata (manifest, b-tree 'x_idx')" in plan, plan
    lance.dataset(path).delete("id IN (0, 97, 500)")  # a min of 0.0 and a NaN gone
    plan = aggregate_plan(spark, path, ["min(x)", "max(x)", "count(x)"])
    assert "from metadata (b-tree 'x_idx')" in plan, plan
    top = read(spark, path, True).orderBy(F.col("x").desc_nulls_last()).limit(1)
    assert "b-tree 'x_idx' selects 1 rows of 1 fragments" in plan_of(top), plan_of(top)
    assert [row.id for row in top.collect()] == [10]  # the NaN with the sign bit, first in the index
    lance.dataset(path).delete("id = 10")  # no NaN left: the max is 96.0
    assert [norm(v) for v in read(spark, path, True).selectExpr("max(x)").collect()[0]] == [96.0]
    lance.write_dataset(pa.table({"id": pa.array([1000, 1001], pa.int64()), "x": pa.array([-5.0, float("nan")])}), path,
                        mode="append")
    plan = aggregate_plan(spark, path, ["min(x)", "max(x)"])
    assert "LanceAggregateScan" not in plan, plan
    for order, want in ((F.col("x").asc_nulls_last(), [-5.0, 0.0, 0.0]), (F.col("x").desc_nulls_first(), [None, "NaN", 96.0])):
        df = read(spark, path, True).orderBy(order, "id").limit(3)
        plan = plan_of(df)
        assert "b-tree 'x_idx' selects" in plan, plan
        got = [norm(row.x) for row in df.collect()]
        assert got == want, (order, got)
        assert got == [norm(row.x) for row in read(spark, path, False).orderBy(order, "id").limit(3).collect()]


def test_btree_on_a_null_only_column(spark, wh):
    """A B-tree of nulls only: MIN and MAX are null and COUNT is 0 from the index; a TopN takes its rows from the nulls."""
    path = str(wh / "db" / "btree_nulls.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()), "v": pa.array([None] * 300, pa.int32())}), path,
                        max_rows_per_file=100)
    lance.dataset(path).create_scalar_index("v", "BTREE")
    lance.dataset(path).delete("id < 5")
    plan = aggregate_plan(spark, path, ["min(v)", "max(v)", "count(v)", "count(*)"])
    assert "from metadata (manifest, b-tree 'v_idx')" in plan, plan
    assert [tuple(row) for row in read(spark, path, True).selectExpr("min(v)", "max(v)", "count(v)").collect()] == [(None, None, 0)]
    for order in (F.col("v").asc_nulls_first(), F.col("v").desc_nulls_last()):
        df = read(spark, path, True).orderBy(order, "id").limit(4)
        assert "b-tree 'v_idx' selects" in plan_of(df), plan_of(df)
        assert [row.id for row in df.collect()] == [5, 6, 7, 8]


def test_stable_row_ids_read_without_the_btree(spark, wh):
    """On a table with stable row ids the B-tree is not walked (not done yet): TopN and aggregates read the rows, with
    the same answers as with pushdown off."""
    path = str(wh / "db" / "btree_stable.lance")
    r = random.Random(f"{SEED}/stable")
    lance.write_dataset(random_batch(r, 0, 400, [float("nan")]), path, max_rows_per_file=100, enable_stable_row_ids=True)
    lance.dataset(path).create_scalar_index("i32", "BTREE")
    lance.dataset(path).delete("id % 9 = 2")
    assert lance.dataset(path).has_stable_row_ids
    plan = aggregate_plan(spark, path, ["min(i32)", "max(i32)", "count(i32)"])
    assert "LanceAggregateScan" not in plan, plan
    order = [F.col("i32").desc_nulls_first(), F.col("id")]
    df = read(spark, path, True).orderBy(*order).limit(7)
    assert "top 7 by" in plan_of(df) and "b-tree" not in plan_of(df), plan_of(df)
    want = read(spark, path, False).orderBy(*order).limit(7).collect()
    assert [tuple(norm(v) for v in x) for x in df.collect()] == [tuple(norm(v) for v in x) for x in want]
