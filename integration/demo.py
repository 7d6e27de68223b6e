"""The sparklance demo: a local Spark pipeline over a Lance warehouse.

Usage: python integration/demo.py WAREHOUSE_DIR

pylance creates an events table in the warehouse (four versions, a tag and deleted rows); Spark, through
sparklance's catalog, creates a lookup table with CREATE TABLE + INSERT, appends a batch of events, lists the
tables, aggregates, travels back in time, joins the two tables, writes a daily summary with CREATE TABLE AS SELECT
and shows the metadata columns. pylance then reads what Spark wrote. ``sparklance inspect`` prints the events
table's history first.
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


def run_spark(warehouse: Path) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    import sparklance

    spark = sparklance.session(warehouse=str(warehouse))
    spark.sparkContext.setLogLevel("ERROR")

    def show(title: str, sql: str) -> None:
        print(f"-- {title}\n{sql}", flush=True)
        spark.sql(sql).show(truncate=False)

    def run(title: str, sql: str) -> None:
        print(f"-- {title}\n{sql}\n", flush=True)
        spark.sql(sql)

    run("Spark creates the lookup table", "CREATE TABLE lance.demo.kinds (kind STRING, label STRING, weight INT)")
    run("and fills it", "INSERT INTO lance.demo.kinds VALUES ('click', 'Clicked', 1), ('view', 'Viewed', 1), "
        "('buy', 'Bought', 5), ('share', 'Shared', 3)")
    print("-- Spark appends 300 events (df.write.format('lance').mode('append'))\n", flush=True)
    spark.range(1200, 1500).selectExpr(
        "id", "element_at(array('click', 'view', 'buy', 'share'), cast(id % 4 + 1 as int)) AS kind",
        "cast(id * 0.5 AS DOUBLE) AS score", "array(cast(id as float), cast(id / 2 as float), 0f, 1f) AS embedding",
        "cast(id AS DOUBLE) AS double_score").write.format("lance").mode("append").save(str(warehouse / "demo" / "events.lance"))
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
         "SELECT _rowid, _fragid, id, embedding FROM lance.demo.events WHERE id IN (0, 401, 1199, 1499) ORDER BY id")
    run("a summary table (CREATE TABLE AS SELECT)",
        "CREATE TABLE lance.demo.summary AS SELECT k.label, count(*) AS events FROM lance.demo.events e "
        "JOIN lance.demo.kinds k ON e.kind = k.kind GROUP BY k.label")
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
    for name in ("kinds", "summary"):
        if (warehouse / "demo" / f"{name}.lance").exists():
            shutil.rmtree(warehouse / "demo" / f"{name}.lance")
    print(f"pylance wrote {table} ({len(lance.dataset(str(table)).versions())} versions)\n", flush=True)
    inspect(str(table))
    run_spark(warehouse)
    summary = lance.dataset(str(warehouse / "demo" / "summary.lance"))
    summary.validate()
    events = lance.dataset(str(table))
    print(f"pylance reads what Spark wrote: events at version {events.version} with {events.count_rows()} rows; "
          f"summary {sorted((r['label'], r['events']) for r in summary.to_table().to_pylist())}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
