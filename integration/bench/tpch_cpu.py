"""Executor CPU of TPC-H queries per stage, over the three table sets `tpch_bench.py` leaves, and of their scans alone.

Wall-clock times mean little on a shared machine; the CPU time Spark's executors spend per task does not depend
on how many other processes share the cores (much). In one Spark session (local[2], as `tpch_bench.py`), with
Spark's event log on, each query runs once per set to warm up, then ROUNDS rounds over the sets in turn, each run
under a job group of its own. From the event log it prints, per query and set, the executor CPU of the best round
(the sum over its tasks), and that of each stage that scans a table, named by the tables it scans.

With `--scans`, each table scan of the queries is also run alone (`spark.table(t).where(filters).select(columns)`
written to Spark's `noop` sink): the CPU of reading, filtering and handing Spark the rows, without the query's
aggregates and joins. The scans are taken from the query's optimized plan (the columns and filters pushed to
each relation), so they are the query's own, not hand-written.

With `--jfr FILE` (an absolute path), a Flight Recorder profile of the driver JVM (which runs the executors in local mode) is taken
while the rounds run, after the warm-ups (`jcmd JFR.start`/`JFR.stop`); `--sets` chooses what it profiles.

Usage: python integration/bench/tpch_cpu.py OUT_DIR [SF] [--queries 1,4,17,18] [--rounds N] [--sets parquet,ours,pylance]
           [--scans] [--no-queries] [--tasks] [--jfr FILE]
OUT_DIR is the directory `tpch_bench.py` wrote (its sf<SF>/ holds the sets); nothing in the sets is written.
The JVM runs the jar `sparklance.jar_path()` finds (`SPARKLANCE_JAR` to pick another).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_queries import TABLES, query  # noqa: E402

SETS = ("parquet", "ours", "pylance")
NAMESPACE = {"parquet": "spark_catalog.tpch_parquet", "ours": "lance.tpch_ours", "pylance": "lance.tpch_pylance"}


def scans_of(spark, sql):
    """(table, columns, filter SQL) of each relation the optimized plan of `sql` reads, from the Parquet set's plan."""
    plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan()
    out = []

    def visit(node, parent, used):
        name = node.nodeName()
        used = used | {a.name() for a in _seq(node.references().toSeq())}
        if name in ("LogicalRelation", "DataSourceV2Relation", "HiveTableRelation"):
            cols = [a.name() for a in _seq(node.output()) if a.name() in used]
            table = None
            cat = node.catalogTable() if name == "LogicalRelation" else None
            if cat is not None and cat.isDefined():
                table = cat.get().identifier().table()
            cond = None
            if parent is not None and parent.nodeName() == "Filter":
                # Unqualified, so the same condition reads any set's table.
                cond = parent.condition().sql().replace(f"spark_catalog.tpch_parquet.{table}.", "")
            out.append((table, cols, cond))
        for c in _seq(node.children()):
            visit(c, node, used)

    visit(plan, None, set())
    return out


def _seq(s):
    it = s.iterator()
    items = []
    while it.hasNext():
        items.append(it.next())
    return items


def read_events(log_dir: Path):
    """Per job group: {stage id: (executor CPU ns, [(task CPU ns, task ms, rows read)], scopes)} from the event log."""
    groups = {}
    stage_group = {}
    stage_scopes = {}
    cpu = defaultdict(int)
    tasks = defaultdict(list)
    for f in sorted(p for p in log_dir.rglob("*") if p.is_file()):
        with open(f) as fh:
            for line in fh:
                e = json.loads(line)
                kind = e["Event"]
                if kind == "SparkListenerJobStart":
                    g = (e.get("Properties") or {}).get("spark.jobGroup.id")
                    for s in e["Stage IDs"]:
                        stage_group[s] = g
                elif kind == "SparkListenerStageSubmitted":
                    info = e["Stage Info"]
                    names = set()
                    for r in info.get("RDD Info", []):
                        scope = r.get("Scope")
                        if scope:
                            n = json.loads(scope).get("name", "")
                            if "Scan" in n:
                                names.add(n)
                    stage_scopes[info["Stage ID"]] = names
                elif kind == "SparkListenerTaskEnd":
                    m = e.get("Task Metrics") or {}
                    cpu[e["Stage ID"]] += m.get("Executor CPU Time", 0)
                    info = e["Task Info"]
                    tasks[e["Stage ID"]].append((m.get("Executor CPU Time", 0), info["Finish Time"] - info["Launch Time"],
                                                 (m.get("Input Metrics") or {}).get("Records Read", 0)))
    for s, ns in cpu.items():
        g = stage_group.get(s)
        if g is None:
            continue
        groups.setdefault(g, {})[s] = (ns, tasks[s], stage_scopes.get(s, set()))
    return groups


def scan_label(scopes):
    tables = set()
    for n in scopes:
        # "BatchScan lance.tpch_ours.lineitem" or "Scan parquet spark_catalog.tpch_parquet.lineitem"
        t = n.split()[-1].split(".")[-1]
        tables.add(t)
    return "+".join(sorted(tables))


def main():
    args = argparse.ArgumentParser()
    args.add_argument("out")
    args.add_argument("sf", nargs="?", type=float, default=1.0)
    args.add_argument("--queries", default="1,4,17,18")
    args.add_argument("--rounds", type=int, default=3)
    args.add_argument("--sets", default=",".join(SETS))
    args.add_argument("--scans", action="store_true")
    args.add_argument("--no-queries", action="store_true", help="with --scans, only the scans")
    args.add_argument("--jfr", default="")
    args.add_argument("--tasks", action="store_true", help="print each scanning stage's tasks")
    a = args.parse_args()
    sets = [s for s in a.sets.split(",") if s]
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    out = Path(a.out).resolve() / f"sf{sf}"
    numbers = [int(q) for q in a.queries.split(",") if q]
    log_dir = Path(tempfile.mkdtemp(prefix="tpch-cpu-events-"))
    import sparklance

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{
        "spark.driver.memory": "8g", "spark.sql.warehouse.dir": str(out / "spark-warehouse"),
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(log_dir),
        "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    print(f"jar: {sparklance.jar_path()}", flush=True)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS spark_catalog.tpch_parquet")
    for t in TABLES:
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.tpch_parquet.{t}")
        spark.sql(f"CREATE TABLE spark_catalog.tpch_parquet.{t} USING parquet LOCATION '{out / 'spark-parquet' / t}'")
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    sc = spark.sparkContext

    def jfr(cmd):
        if a.jfr:
            subprocess.run(["jcmd", str(pid)] + cmd, check=True, stdout=subprocess.DEVNULL)

    def run(group, sql_or_df, s):
        sc.setJobGroup(group, group)
        spark.sql(f"USE {NAMESPACE[s]}")
        if isinstance(sql_or_df, str):
            spark.sql(sql_or_df).collect()
        else:
            sql_or_df().write.format("noop").mode("overwrite").save()

    work = []
    for n in numbers:
        sql = query(n, sf)
        if not a.no_queries:
            work.append((f"q{n}", sql))
        if a.scans:
            spark.sql(f"USE {NAMESPACE['parquet']}")
            for i, (table, cols, cond) in enumerate(scans_of(spark, sql)):
                def df(table=table, cols=cols, cond=cond):
                    d = spark.table(table)
                    if cond:
                        d = d.where(cond)
                    return d.select(*cols)
                work.append((f"q{n}-scan{i}-{table}", df))
                print(f"q{n} scan {i}: {table} {cols} WHERE {cond}", flush=True)
    for name, w in work:
        for s in sets:
            run(f"warm:{name}:{s}", w, s)
    jfr(["JFR.start", "name=scan", "settings=profile"])
    for name, w in work:
        for r in range(a.rounds):
            for s in sets:
                run(f"{name}:{s}:{r}", w, s)
    jfr(["JFR.stop", "name=scan", f"filename={a.jfr}"])
    spark.stop()

    groups = read_events(log_dir)
    shutil.rmtree(log_dir, ignore_errors=True)
    print(f"\nexecutor CPU, best of {a.rounds} rounds (seconds; per scanning stage: CPU/tasks)")
    for name, _ in work:
        for s in sets:
            best, best_r = math.inf, None
            for r in range(a.rounds):
                g = groups.get(f"{name}:{s}:{r}", {})
                total = sum(v[0] for v in g.values())
                if g and total < best:
                    best, best_r = total, g
            if best_r is None:
                continue
            stages = sorted(best_r.items())
            scans = "  ".join(f"{scan_label(sc_)}={ns / 1e9:.3f}/{len(t)}" for _, (ns, t, sc_) in stages if sc_)
            others = sum(ns for _, (ns, t, sc_) in stages if not sc_)
            print(f"{name:28} {s:8} total {best / 1e9:6.3f}  [{scans}]  other stages {others / 1e9:.3f}", flush=True)
            if a.tasks:
                for sid, (ns, t, sc_) in stages:
                    if sc_:
                        print(f"    {scan_label(sc_)} tasks (CPU s, wall s, rows): " + ", ".join(
                            f"({c / 1e9:.3f}, {w / 1e3:.3f}, {r})" for c, w, r in sorted(t, reverse=True)))


if __name__ == "__main__":
    main()
