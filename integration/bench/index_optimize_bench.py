"""OPTIMIZE INDEX after an append: sparklance's merge (the old index with the appended fragments' keys) against a
rebuild over every fragment (CREATE INDEX ... WITH (replace = true), what OPTIMIZE INDEX did before it merged) and
against pylance's optimize_indices, on the same table.

The table: N rows in fragments of N/10 rows (int64 `k` with N/8 distinct values, a string `s` of 20 distinct
values), a B-tree on `k` and a bitmap on `s`, then an append of N/20 rows in one fragment. Each round starts from a
copy of that table. Wall time and the CPU time of the Spark JVM (local[2]: driver and executors are one process)
or of the Python process for pylance; best of ROUNDS. The load average is printed beside them.
Usage: python integration/bench/index_optimize_bench.py OUT_DIR [N] [ROUNDS]
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))


def table(path: Path, n: int) -> None:
    import lance
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    words = np.array([f"w{i:02d}" for i in range(20)], dtype=object)

    def rows(first: int, count: int) -> pa.Table:
        return pa.table({"id": pa.array(np.arange(first, first + count), pa.int64()),
                         "k": pa.array(rng.integers(0, n // 8, count), pa.int64()),
                         "s": pa.array(words[rng.integers(0, 20, count)], pa.string())})
    lance.write_dataset(rows(0, n), str(path), max_rows_per_file=n // 10)
    ds = lance.dataset(str(path))
    ds.create_scalar_index("k", "BTREE", name="k_idx")
    ds.create_scalar_index("s", "BITMAP", name="s_idx")
    lance.write_dataset(rows(n, n // 20), str(path), mode="append")


def jvm_cpu(spark) -> float:
    """CPU seconds the Spark JVM has used (user + system), from /proc."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/index_optimize").resolve()
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    base = out / "base.lance"
    table(base, n)
    import lance
    import sparklance

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{"spark.driver.memory": "3g"})
    spark.sparkContext.setLogLevel("ERROR")

    def fresh() -> str:
        path = out / "round.lance"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(base, path)
        return str(path)

    def measure(run, cpu):
        best = None
        for _ in range(rounds):
            path = fresh()
            c0, t0 = cpu(), time.perf_counter()
            run(path)
            wall, used = time.perf_counter() - t0, cpu() - c0
            best = (wall, used) if best is None or wall < best[0] else best
        return best

    spark_cpu = lambda: jvm_cpu(spark)  # noqa: E731
    py_cpu = lambda: time.process_time()  # noqa: E731
    print(f"{n} rows in 10 fragments + an append of {n // 20} rows; load average {os.getloadavg()}")
    print(f"{'index':<8}{'merge s (cpu)':>16}{'rebuild s (cpu)':>18}{'pylance s (cpu)':>18}{'rebuild/merge':>15}")
    for name, column, kind in (("k_idx", "k", "btree"), ("s_idx", "s", "bitmap")):
        merge = measure(lambda p: spark.sql(f"ALTER TABLE lance.`{p}` OPTIMIZE INDEX {name}").collect(), spark_cpu)
        rebuild = measure(lambda p: spark.sql(f"ALTER TABLE lance.`{p}` CREATE INDEX {name} USING {kind} ({column}) "
                                              "WITH (replace = true)").collect(), spark_cpu)
        theirs = measure(lambda p: lance.dataset(p).optimize.optimize_indices(index_names=[name]), py_cpu)
        print(f"{kind:<8}{merge[0]:>8.2f} ({merge[1]:>5.2f}){rebuild[0]:>10.2f} ({rebuild[1]:>5.2f})"
              f"{theirs[0]:>10.2f} ({theirs[1]:>5.2f}){rebuild[0] / merge[0]:>15.2f}")
    print(f"load average after {os.getloadavg()}")
    spark.stop()


if __name__ == "__main__":
    main()
