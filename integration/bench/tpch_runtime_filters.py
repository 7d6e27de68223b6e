"""TPC-H with and without runtime filters: Lance scans given the IN of a broadcast join's keys (dynamic pruning).

Takes the table sets `tpch_bench.py` left under OUT_DIR/sf<SF> (nothing in them is written; the directories may be
symbolic links). The Lance sets are read through two catalogs over the same warehouse: `lance` with
`runtime_filter_push_down = true` and `lance_off` with the default (off). For each query: the runtime filters the Lance scans
of our tables took in the final plan (column and number of keys), and the best of N rounds of Parquet, our tables
and pylance's, each with and without, in turn per round so that all see the same machine. Results must be equal.
Usage: python integration/bench/tpch_runtime_filters.py OUT_DIR [SF] [--rounds N] [--queries 9,17]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_queries import TABLES, query  # noqa: E402

SETS = {"parquet": "spark_catalog.tpch_parquet", "ours": "lance.tpch_ours", "ours_off": "lance_off.tpch_ours",
        "pylance": "lance.tpch_pylance", "pylance_off": "lance_off.tpch_pylance"}


def runtime_filters(df) -> list:
    """The runtime filters the Lance scans of a run query's final plan took, e.g. `In(l_partkey, 2044 values)`."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    final = plan.split("\n+- == Initial Plan ==")[0]
    return re.findall(r"runtime filter (In\([^)]*\)(?: \(reads nothing\))?)", final)


def main():
    args = argparse.ArgumentParser()
    args.add_argument("out")
    args.add_argument("sf", nargs="?", type=float, default=1.0)
    args.add_argument("--rounds", type=int, default=3)
    args.add_argument("--queries", default="")
    a = args.parse_args()
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    out = Path(a.out).resolve() / f"sf{sf}"
    numbers = [int(q) for q in a.queries.split(",") if q] or list(range(1, 23))
    import sparklance

    warehouse = out / "warehouse"
    spark = sparklance.session(warehouse=str(warehouse), **{
        "spark.driver.memory": "8g", "spark.sql.warehouse.dir": str(out / "spark-warehouse"),
        "spark.sql.catalog.lance.runtime_filter_push_down": "true",
        "spark.sql.catalog.lance_off": "io.sparklance.spark.LanceCatalog",
        "spark.sql.catalog.lance_off.warehouse": str(warehouse),
})
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS spark_catalog.tpch_parquet")
    for t in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.tpch_parquet.{t}")
        spark.sql(f"CREATE TABLE spark_catalog.tpch_parquet.{t} USING parquet LOCATION '{out / 'spark-parquet' / t}'")

    print(f"{'query':<6}{'runtime filters (ours)':<60}" + "".join(f"{s:>12}" for s in SETS) +
          f"{'ours on/off':>13}{'pylance on/off':>16}", flush=True)
    ratios = {"ours": [], "pylance": []}
    for n in numbers:
        sql = query(n, sf)
        results, best, filters = {}, {s: math.inf for s in SETS}, []
        for s, ns in SETS.items():  # warm-up, and the results to compare
            spark.sql(f"USE {ns}")
            df = spark.sql(sql)
            results[s] = sorted(map(tuple, df.collect()), key=repr)
            if s == "ours":
                filters = runtime_filters(df)
        for s in SETS:
            if results[s] != results["parquet"]:
                raise SystemExit(f"q{n}: {s} gives other results than Parquet:\n{results[s][:5]}\nvs\n{results['parquet'][:5]}")
        for _ in range(a.rounds):
            for s, ns in SETS.items():
                spark.sql(f"USE {ns}")
                t0 = time.perf_counter()
                spark.sql(sql).collect()
                best[s] = min(best[s], time.perf_counter() - t0)
        for s in ratios:
            ratios[s].append(best[s] / best[f"{s}_off"])
        print(f"q{n:<5}{'; '.join(filters) or '-':<60}" + "".join(f"{best[s]:>11.2f}s" for s in SETS) +
              f"{ratios['ours'][-1]:>13.2f}{ratios['pylance'][-1]:>16.2f}", flush=True)
    spark.stop()
    for s, rs in ratios.items():
        print(f"geometric mean {s} on/off: {math.exp(sum(map(math.log, rs)) / len(rs)):.3f}")


if __name__ == "__main__":
    main()
