"""Branches: creating one (CREATE BRANCH against pylance's create_branch) on a table of many fragments, and
appending to a branch against appending to main, in one run. Wall and CPU time, median of REPEAT runs each.

The table: id (int64), s (string), written by pylance in FRAGMENTS fragments, with a B-tree index on id. CPU time
is the JVM process's CPU time (/proc) for sparklance (driver and executors in local mode) and the Python process's for
pylance (its Rust threads run in it).
Usage: python integration/bench/branch_bench.py OUT_DIR
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

FRAGMENTS = 2000
ROWS_PER_FRAGMENT = 100
REPEAT = 9


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/branch")
    import lance
    import sparklance

    n = FRAGMENTS * ROWS_PER_FRAGMENT
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([f"s{i % 977}" for i in range(n)])})
    wh = out / "wh"
    shutil.rmtree(out, ignore_errors=True)
    (wh / "db").mkdir(parents=True)
    path = str(wh / "db" / "t.lance")
    lance.write_dataset(table, path, max_rows_per_file=ROWS_PER_FRAGMENT)
    lance.dataset(path).create_scalar_index("id", "BTREE")

    spark = sparklance.session(warehouse=str(wh))
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = spark.sparkContext._gateway.proc.pid  # spark-submit execs the JVM in this process

    def jvm_cpu() -> float:
        with open(f"/proc/{jvm_pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def jvm(f):
        c0, t0 = jvm_cpu(), time.perf_counter()
        f()
        return time.perf_counter() - t0, jvm_cpu() - c0

    def py(f):
        c0, t0 = time.process_time(), time.perf_counter()
        f()
        return time.perf_counter() - t0, time.process_time() - c0

    def median(runs):
        return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)

    for i in range(3):
        spark.sql(f"ALTER TABLE lance.db.t CREATE BRANCH w{i}")
    ours = median([jvm(lambda i=i: spark.sql(f"ALTER TABLE lance.db.t CREATE BRANCH o{i}")) for i in range(REPEAT)])
    theirs = median([py(lambda i=i: lance.dataset(path).create_branch(f"p{i}", lance.dataset(path).version))
                     for i in range(REPEAT)])

    rows = spark.createDataFrame([(n + i, "new") for i in range(1000)], "id long, s string").cache()
    rows.count()
    rows.write.format("lance").mode("append").option("branch", "w0").save(path)
    on_main = median([jvm(lambda: rows.write.format("lance").mode("append").save(path)) for _ in range(REPEAT)])
    on_branch = median([jvm(lambda: rows.write.format("lance").mode("append").option("branch", "o0").save(path))
                        for _ in range(REPEAT)])
    load = os.getloadavg()
    print(f"fragments {FRAGMENTS}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"create branch   ours {ours[0]:.3f}s wall {ours[1]:.3f}s cpu   pylance {theirs[0]:.3f}s wall "
          f"{theirs[1]:.3f}s cpu   ratio (wall) {ours[0] / theirs[0]:.2f}")
    print(f"append 1000 rows  main {on_main[0]:.3f}s wall {on_main[1]:.3f}s cpu   branch {on_branch[0]:.3f}s wall "
          f"{on_branch[1]:.3f}s cpu   ratio (wall) {on_branch[0] / on_main[0]:.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
