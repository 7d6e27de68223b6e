"""ORDER BY ... LIMIT and MIN/MAX through sparklance's pushdown, against Spark over Parquet and against sparklance with
the pushdown off, on the same 4M rows, in one session.

The rows: an id (int64, sorted), an int32 `n` (0-999), a double `x` (normal) and a string. pylance writes them as Lance
(4 fragments of 1M rows) twice: one copy with zone maps on `x` and `n`, one with B-trees on them (pylance's default
4096-row pages); pyarrow writes Parquet (1M-row row groups, so Spark's Parquet aggregate pushdown, on here, answers
MIN/MAX from row-group statistics). Each query runs 3 times after a warm-up, alternating the four; the best times are
shown, with each Lance time's ratio to Parquet's.
Usage: python integration/bench/topn_agg_bench.py OUT_DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

N = 4_000_000


def write(out: Path):
    lance_path, parquet_path, btree_path = out / "topn.lance", out / "topn.parquet", out / "topn_btree.lance"
    if lance_path.exists() and parquet_path.exists() and btree_path.exists():
        return str(lance_path), str(parquet_path), str(btree_path)
    import lance

    rng = np.random.default_rng(11)
    table = pa.table({
        "id": pa.array(np.arange(N, dtype=np.int64)),
        "n": pa.array(rng.integers(0, 1000, N, dtype=np.int32)),
        "x": pa.array(rng.standard_normal(N)),
        "s": pa.array([f"user-{i % 100000:06d}" for i in range(N)]),
    })
    out.mkdir(parents=True, exist_ok=True)
    lance.write_dataset(table, str(lance_path), max_rows_per_file=1_000_000)
    ds = lance.dataset(str(lance_path))
    ds.create_scalar_index("x", "ZONEMAP")
    ds.create_scalar_index("n", "ZONEMAP")
    lance.write_dataset(table, str(btree_path), max_rows_per_file=1_000_000)
    ds = lance.dataset(str(btree_path))
    ds.create_scalar_index("x", "BTREE")
    ds.create_scalar_index("n", "BTREE")
    pq.write_table(table, str(parquet_path), row_group_size=1_000_000)
    return str(lance_path), str(parquet_path), str(btree_path)


def best(fns, rounds=3):
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [min(ts) for ts in times]


if __name__ == "__main__":
    out = Path(sys.argv[1])
    lance_path, parquet_path, btree_path = write(out)
    import sparklance
    spark = sparklance.session(**{"spark.driver.memory": "3g", "spark.sql.parquet.aggregatePushdown": "true"})
    spark.sparkContext.setLogLevel("ERROR")
    parquet = spark.read.parquet(parquet_path)
    on = spark.read.format("lance").load(lance_path)
    btree = spark.read.format("lance").load(btree_path)
    off = spark.read.format("lance").option("topN_push_down", "false").option("aggregate_push_down", "false").load(lance_path)
    queries = {
        "ORDER BY x DESC LIMIT 10 (all columns)": lambda df: df.orderBy(df.x.desc()).limit(10).collect(),
        "ORDER BY n, id LIMIT 100 (all columns)": lambda df: df.orderBy("n", "id").limit(100).collect(),
        "MIN(x), MAX(x), COUNT(n)": lambda df: df.selectExpr("min(x)", "max(x)", "count(n)").collect(),
        "MIN(n), MAX(n), COUNT(*)": lambda df: df.selectExpr("min(n)", "max(n)", "count(*)").collect(),
    }
    print(f"{'query':42s} {'parquet':>8s} {'zonemap':>8s} {'ratio':>6s} {'b-tree':>8s} {'ratio':>6s} {'no push':>8s} {'ratio':>6s}")
    for name, q in queries.items():
        assert q(on) == q(off) == q(btree), name
        tp, tl, tb, to = best([lambda: q(parquet), lambda: q(on), lambda: q(btree), lambda: q(off)])
        print(f"{name:42s} {tp:8.3f} {tl:8.3f} {tl / tp:6.2f} {tb:8.3f} {tb / tp:6.2f} {to:8.3f} {to / tp:6.2f}")
    for df in (on, btree):
        print("plan:", df.orderBy(df.x.desc()).limit(10)._jdf.queryExecution().executedPlan().toString().splitlines()[-1])
        print("plan:", df.selectExpr("min(x)", "max(x)", "count(n)")._jdf.queryExecution().executedPlan().toString().splitlines()[-1])
    spark.stop()
