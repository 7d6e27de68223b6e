"""Writing 4M rows through Spark: sparklance (Lance file version 2.2) against Spark's own Parquet writer, with
pylance writing the same rows as Lance alongside, in one run. Reports rows/s and sizes on disk, and the ratio of
sparklance's files to pylance's for the same rows.

The rows (the read benchmark's): an id (int64), an int (int32), a double, a string, and a 32-float vector. Spark
generates them in the JVM (so that the write, not Python, is measured); pylance writes the same values from Arrow.
Each write runs twice after a warm-up; the best time is shown.
Usage: python integration/bench/spark_write_bench.py OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

N = 4_000_000


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def best(fn, rounds=2):
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/spark_write")
    out.mkdir(parents=True, exist_ok=True)
    import lance
    import sparklance

    spark = sparklance.session(**{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, N, 1, 4).selectExpr(
        "id", "cast(pmod(hash(id), 1000) as int) as n", "cast(id as double) / 7 as x",
        "concat('user-', lpad(cast(pmod(id, 100000) as string), 6, '0')) as s",
        "transform(sequence(0, 31), k -> cast(sin(id + k) as float)) as v")
    vec = {"arrow.fixed-size-list.size": 32}
    df = df.withColumn("v", df["v"].alias("v", metadata=vec))
    lance_dir, parquet_dir = out / "spark.lance", out / "spark.parquet"

    def lance_write():
        shutil.rmtree(lance_dir, ignore_errors=True)
        df.write.format("lance").save(str(lance_dir))

    def parquet_write():
        shutil.rmtree(parquet_dir, ignore_errors=True)
        df.write.parquet(str(parquet_dir))

    t_lance = best(lance_write)
    t_parquet = best(parquet_write)

    # pylance writes the same rows (materialized from the Spark-written table, outside the timing).
    table = lance.dataset(str(lance_dir)).to_table()
    py_dir = out / "pylance.lance"

    def pylance_write():
        shutil.rmtree(py_dir, ignore_errors=True)
        lance.write_dataset(table, str(py_dir), max_rows_per_file=1024 * 1024)

    t_py = best(pylance_write)
    lance.dataset(str(lance_dir)).validate()
    print(f"write {N:,} rows (id int64, n int32, x double, s string, v float[32]) on this machine:")
    for name, t, path in [("sparklance (Spark -> Lance 2.2)", t_lance, lance_dir), ("Spark -> Parquet", t_parquet, parquet_dir),
                          ("pylance (Arrow -> Lance 2.2)", t_py, py_dir)]:
        print(f"  {name:34s} {t:6.2f} s  {N / t / 1e6:5.2f} M rows/s  {size(path) / 2**20:8.1f} MiB")
    print(f"ratio sparklance/Parquet time: {t_lance / t_parquet:.2f} (target <= 1.0)")
    print(f"ratio sparklance/pylance file size: {size(lance_dir) / size(py_dir):.2f} (target <= 1.3)")
    spark.stop()


if __name__ == "__main__":
    main()
