"""Spark reading Lance (through sparklance) against Spark reading Parquet, on the same 4M rows, in one session.

The rows: an id (int64), an int (int32), a double, a string, and a 32-float vector. pylance writes them as Lance
(file version 2.2, 4 fragments of 1M rows), pyarrow as Parquet (snappy, 1M-row row groups). Each query runs 5 times
after a warm-up, alternating Parquet and Lance; the best times are shown.

The selective queries have no index to use: a point and a 1% range on the sorted id (which Parquet's row-group
statistics narrow to one row group), and filters on unsorted columns (which neither can narrow). Queries returning
many rows run into Spark's no-op sink rather than collect(), which would time PySpark's row conversion instead.
Usage: python integration/bench/spark_read_bench.py OUT_DIR [QUERY-NAME-PART ...]
"""

from __future__ import annotations

import os
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
    lance_path, parquet_path = out / "bench.lance", out / "bench.parquet"
    if lance_path.exists() and parquet_path.exists():
        return str(lance_path), str(parquet_path)
    import lance

    rng = np.random.default_rng(7)
    table = pa.table({
        "id": pa.array(np.arange(N, dtype=np.int64)),
        "n": pa.array(rng.integers(0, 1000, N, dtype=np.int32)),
        "x": pa.array(rng.standard_normal(N)),
        "s": pa.array([f"user-{i % 100000:06d}" for i in range(N)]),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(N * 32, dtype=np.float32)), 32),
    })
    out.mkdir(parents=True, exist_ok=True)
    lance.write_dataset(table, str(lance_path), max_rows_per_file=1_000_000)
    pq.write_table(table, str(parquet_path), row_group_size=1_000_000)
    return str(lance_path), str(parquet_path)


def best_of_both(parquet, lance, rounds=5):
    """Best times of the two, measured alternately so that both see the same machine state (this machine is noisy)."""
    parquet()
    lance()
    tp, tl = [], []
    for _ in range(rounds):
        for fn, times in ((parquet, tp), (lance, tl)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return min(tp), min(tl)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/spark")
    lance_path, parquet_path = write(out)
    import sparklance

    spark = sparklance.session(**{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.format("lance").load(lance_path).createOrReplaceTempView("l")
    spark.read.parquet(parquet_path).createOrReplaceTempView("p")
    def collect(q):
        return lambda: spark.sql(q).collect()

    def noop(q):
        return lambda: spark.sql(q).write.format("noop").mode("overwrite").save()

    queries = {
        "aggregate, all columns": ("SELECT count(id), sum(n), avg(x), max(s), sum(size(v)) FROM {t}", collect),
        "projection, one column": ("SELECT sum(x) FROM {t}", collect),
        "COUNT(*)": ("SELECT count(*) FROM {t}", collect),
        "point filter": ("SELECT * FROM {t} WHERE id = 3999999", collect),
        "1% range (noop sink)": ("SELECT * FROM {t} WHERE id BETWEEN 2000000 AND 2039999", noop),
        "unsorted int and double": ("SELECT * FROM {t} WHERE n = 7 AND x > 2", collect),
        "unsorted string equality": ("SELECT * FROM {t} WHERE s = 'user-000042'", collect),
    }
    wanted = sys.argv[2:]
    print(f"{'query':<26}{'Parquet s':>11}{'Lance s':>10}{'Lance/Parquet':>15}")
    for name, (q, run) in queries.items():
        if wanted and not any(w in name for w in wanted):
            continue
        tp, tl = best_of_both(run(q.format(t="p")), run(q.format(t="l")))
        print(f"{name:<26}{tp:>11.3f}{tl:>10.3f}{tl / tp:>15.2f}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
