"""Catalog operations in a Lance Namespace (impl = dir) against the warehouse layout, and pylance's own directory
namespace as the peer: CREATE TABLE, SHOW TABLES, a count of one table, DROP TABLE, each repeated over N tables.
Prints wall time and the Spark JVM's CPU time per operation, and the ratios (docs/dev/namespaces.md). The Spark
columns include parsing and analysing each statement; pylance's are direct calls of its namespace API.

    .venv/bin/python integration/bench/namespace_bench.py [N]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))
sys.path.insert(0, str(HERE.parents[1] / "python"))

import lance_namespace as ln  # noqa: E402
import pyarrow as pa  # noqa: E402
from lance_namespace import CreateTableRequest, DropTableRequest, ListTablesRequest  # noqa: E402

from conftest import start_spark  # noqa: E402


def jvm_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(n: int) -> None:
    spark = start_spark("namespace-bench", tempfile.mkdtemp())
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    results = {}
    # The first round warms the JVM up (its numbers are overwritten by the second's).
    for mode in ("warehouse", "dir", "warehouse", "dir"):
        root = Path(tempfile.mkdtemp()) / "root"
        cat = f"b_{mode}_{len(results)}"
        spark.conf.set(f"spark.sql.catalog.{cat}", "io.sparklance.spark.LanceCatalog")
        if mode == "dir":
            spark.conf.set(f"spark.sql.catalog.{cat}.impl", "dir")
            spark.conf.set(f"spark.sql.catalog.{cat}.root", str(root))
        else:
            spark.conf.set(f"spark.sql.catalog.{cat}.warehouse", str(root))
        spark.sql(f"CREATE NAMESPACE {cat}.db")
        ops = {
            "create": lambda i: spark.sql(f"CREATE TABLE {cat}.db.t{i} (id BIGINT, s STRING)"),
            "show": lambda i: spark.sql(f"SHOW TABLES IN {cat}.db").collect(),
            "count": lambda i: spark.sql(f"SELECT count(*) FROM {cat}.db.t{i}").collect(),
            "drop": lambda i: spark.sql(f"DROP TABLE {cat}.db.t{i}"),
        }
        for op, run in ops.items():
            wall, cpu = time.perf_counter(), jvm_cpu_seconds(pid)
            for i in range(n):
                run(i)
            results[(mode, op)] = ((time.perf_counter() - wall) / n, (jvm_cpu_seconds(pid) - cpu) / n)
    spark.stop()

    root = Path(tempfile.mkdtemp()) / "root"
    ns = ln.connect("dir", {"root": str(root)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, pa.schema([("id", pa.int64()), ("s", pa.string())])) as w:
        w.write_table(pa.table({"id": pa.array([1], pa.int64()), "s": pa.array(["a"], pa.string())}))
    data = sink.getvalue().to_pybytes()
    ops = {
        "create": lambda i: ns.create_table(CreateTableRequest(id=[f"t{i}"]), data),
        "show": lambda i: ns.list_tables(ListTablesRequest(id=[])),
        "drop": lambda i: ns.drop_table(DropTableRequest(id=[f"t{i}"])),
    }
    for op, run in ops.items():
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(n):
            run(i)
        results[("pylance", op)] = ((time.perf_counter() - wall) / n, (time.process_time() - cpu) / n)

    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, N = {n}")
    print(f"{'op':8} {'warehouse ms':>14} {'dir ms':>14} {'pylance dir ms':>16} {'dir/warehouse':>14} {'dir/pylance':>12}")
    for op in ("create", "show", "count", "drop"):
        w, d = results[("warehouse", op)], results[("dir", op)]
        p = results.get(("pylance", op))
        cell = lambda r: f"{r[0] * 1e3:6.1f} ({r[1] * 1e3:5.1f})"  # noqa: E731 - wall (CPU)
        print(f"{op:8} {cell(w):>14} {cell(d):>14} {cell(p) if p else '-':>16} {d[0] / w[0]:14.2f} "
              f"{(d[0] / p[0]) if p else float('nan'):12.2f}")
    print("cells: wall ms per operation (CPU ms of the Spark JVM, or of the Python process for pylance)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
