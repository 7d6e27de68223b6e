"""TPC-H join strategies: the joins Spark plans for each query over Parquet and over the two Lance table sets.

Takes the table sets `tpch_bench.py` left under OUT_DIR/sf<SF> (nothing in them is written). For each query and set it
prints the joins of the plan before execution (the planner's choice from the scans' statistics) and of the final
adaptive plan after one run, and, with `--sizes`, the size the optimizer gives each side of each join. A query
whose joins differ from Parquet's on a Lance set is marked with `*`.
Usage: python integration/bench/tpch_plans.py OUT_DIR [SF] [--queries 7,10] [--sizes] [--planned-only]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_bench import NAMESPACE, SETS  # noqa: E402
from tpch_queries import TABLES, query  # noqa: E402

JOINS = ("BroadcastHashJoin", "SortMergeJoin", "ShuffledHashJoin", "BroadcastNestedLoopJoin", "CartesianProduct")


def joins(plan: str) -> str:
    """The joins of a plan's text, counted by kind, e.g. `BHJ x3, SMJ x1`."""
    kinds = Counter(j for line in plan.splitlines() for j in JOINS if re.search(rf"\b{j}\b", line))
    short = {"BroadcastHashJoin": "BHJ", "SortMergeJoin": "SMJ", "ShuffledHashJoin": "SHJ",
             "BroadcastNestedLoopJoin": "BNLJ", "CartesianProduct": "CP"}
    return ", ".join(f"{short[k]} x{n}" for k, n in sorted(kinds.items())) or "none"


def tables(node) -> str:
    """The TPC-H tables a logical plan reads, as `lineitem+orders`."""
    leaves = node.collectLeaves()
    names = []
    for i in range(leaves.size()):
        m = re.search(r"tpch_\w+\.(\w+)", leaves.apply(i).simpleString(20))
        names.append(m.group(1) if m else "?")
    return "+".join(names)


def join_sides(df) -> list[str]:
    """Each join of the optimized plan with the size (and rows, where known) the optimizer gives each side."""
    out = []

    def size(n):
        st = n.stats()
        rows = st.rowCount()
        return f"{int(str(st.sizeInBytes())) / 1e6:9.2f} MB" + (f" ({rows.get()} rows)" if rows.isDefined() else "")

    def walk(n):
        if n.nodeName() == "Join":
            left, right = n.children().apply(0), n.children().apply(1)
            out.append(f"{str(n.joinType()):<10} {tables(left)} {size(left)}  x  {tables(right)} {size(right)}")
        children = n.children()
        for i in range(children.size()):
            walk(children.apply(i))

    walk(df._jdf.queryExecution().optimizedPlan())
    return out


def main():
    args = argparse.ArgumentParser()
    args.add_argument("out")
    args.add_argument("sf", nargs="?", type=float, default=1.0)
    args.add_argument("--queries", default="")
    args.add_argument("--sizes", action="store_true")
    args.add_argument("--planned-only", action="store_true", help="do not run the queries (no final plans)")
    a = args.parse_args()
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    out = Path(a.out).resolve() / f"sf{sf}"
    numbers = [int(q) for q in a.queries.split(",") if q] or list(range(1, 23))
    import sparklance

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{
        "spark.driver.memory": "8g", "spark.sql.warehouse.dir": str(out / "spark-warehouse")})
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS spark_catalog.tpch_parquet")
    for t in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.tpch_parquet.{t}")
        spark.sql(f"CREATE TABLE spark_catalog.tpch_parquet.{t} USING parquet LOCATION '{out / 'spark-parquet' / t}'")
    differ = 0
    for n in numbers:
        found = {}
        for s in SETS:
            spark.sql(f"USE {NAMESPACE[s]}")
            df = spark.sql(query(n, sf))
            before = joins(df._jdf.queryExecution().executedPlan().toString())
            if a.sizes:
                print(f"q{n} {s} joins:\n  " + "\n  ".join(join_sides(df)))
            final = "not run"
            if not a.planned_only:
                df.collect()
                # An adaptive plan prints its final plan, then the initial one.
                final = joins(df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0])
            found[s] = (before, final)
        marks = {s: "*" if found[s] != found["parquet"] else " " for s in SETS}
        differ += any(m == "*" for m in marks.values())
        print(f"q{n:<3}" + "   ".join(f"{s}{marks[s]} planned [{found[s][0]}] final [{found[s][1]}]" for s in SETS),
              flush=True)
    print(f"queries whose joins differ from Parquet's on a Lance set: {differ} of {len(numbers)}")
    spark.stop()


if __name__ == "__main__":
    main()
