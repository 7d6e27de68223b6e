"""The sparklance demo: a local Spark pipeline over a Lance warehouse.

Usage: python integration/demo.py WAREHOUSE_DIR

pylance creates two tables in the warehouse (an events table with four versions, a tag and deleted rows, and a
small lookup table); then Spark, through sparklance's catalog, lists them, aggregates, travels back in time, joins
the two tables and shows the metadata columns. ``sparklance inspect`` prints the events table's history first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]


def make_table(path: Path) -> None:
    """Four versions: create, append, delete some rows, add a computed column; tag version 2 as 'launch'."""
    events = pa.table({
        "id": pa.array(range(1000), pa.int64()),
        "kind": pa.array(["click", "view", "buy", "share"] * 250),
        "score": pa.array([i * 0.5 for i in range(1000)], pa.float64()),
        "embedding": pa.array([[float(i), float(i) / 2, 0.0, 1.0] for i in range(1000)], pa.list_(pa.float32(), 4)),
    })
    ds = lance.write_dataset(events, str(path), max_rows_per_file=400)
    more = events.slice(0, 200).set_column(0, "id", pa.array(range(1000, 1200), pa.int64()))
    ds = lance.write_dataset(more, str(path), mode="append")
    ds.tags.create("launch", 2)
    ds.delete("kind = 'share' AND id < 600")
    ds.add_columns({"double_score": "score * 2"})


def make_lookup(path: Path) -> None:
    kinds = pa.table({"kind": ["click", "view", "buy", "share"], "label": ["Clicked", "Viewed", "Bought", "Shared"],
                      "weight": pa.array([1, 1, 5, 3], pa.int32())})
    lance.write_dataset(kinds, str(path))


def run_spark(warehouse: Path) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    import sparklance

    spark = sparklance.session(warehouse=str(warehouse))
    spark.sparkContext.setLogLevel("ERROR")

    def show(title: str, sql: str) -> None:
        print(f"-- {title}\n{sql}", flush=True)
        spark.sql(sql).show(truncate=False)

    show("tables in the warehouse", "SHOW TABLES IN lance.demo")
    show("events by kind (latest version)",
         "SELECT kind, count(*) AS events, round(avg(score), 2) AS avg_score FROM lance.demo.events "
         "GROUP BY kind ORDER BY kind")
    show("time travel: rows per version",
         "SELECT 'v1' AS version, count(*) AS rows FROM lance.demo.events VERSION AS OF 1 UNION ALL "
         "SELECT 'launch (tag)', count(*) FROM lance.demo.events VERSION AS OF 'launch' UNION ALL "
         "SELECT 'latest', count(*) FROM lance.demo.events")
    show("join with the lookup table",
         "SELECT k.label, sum(k.weight * e.double_score) AS weighted FROM lance.demo.events e "
         "JOIN lance.demo.kinds k ON e.kind = k.kind GROUP BY k.label ORDER BY weighted DESC")
    show("metadata columns and vectors",
         "SELECT _rowid, _fragid, id, embedding FROM lance.demo.events WHERE id IN (0, 401, 1199) ORDER BY id")
    spark.stop()


def inspect(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [sys.executable, "-m", "sparklance", "inspect", *args]
    print(f"$ sparklance inspect {' '.join(args)}", flush=True)
    subprocess.run(cmd, check=True, env=env)
    print(flush=True)


def main() -> int:
    warehouse = Path(sys.argv[1] if len(sys.argv) > 1 else "build/demo-warehouse").resolve()
    table = warehouse / "demo" / "events.lance"
    if table.exists():
        shutil.rmtree(table)
    table.parent.mkdir(parents=True, exist_ok=True)
    make_table(table)
    lookup = warehouse / "demo" / "kinds.lance"
    if lookup.exists():
        shutil.rmtree(lookup)
    make_lookup(lookup)
    print(f"pylance wrote {table} ({len(lance.dataset(str(table)).versions())} versions) and {lookup}\n", flush=True)
    inspect(str(table))
    run_spark(warehouse)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
