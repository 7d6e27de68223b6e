"""Row-level changes on 4M rows: DELETE of 1% of the rows and a MERGE of 100k rows (50k updates, 50k inserts),
through sparklance's SQL, against pylance doing the same on an identical copy of the table, in one run.

The table: id (int64), n (int32), x (double), s (string), written by pylance as Lance 2.2 in fragments of 1M rows.
Usage: python integration/bench/rowlevel_bench.py OUT_DIR
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


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/rowlevel")
    import lance
    import sparklance

    rng = np.random.default_rng(3)
    table = pa.table({"id": pa.array(np.arange(N, dtype=np.int64)), "n": pa.array(rng.integers(0, 1000, N, dtype=np.int32)),
                      "x": pa.array(rng.standard_normal(N)), "s": pa.array([f"user-{i % 100000:06d}" for i in range(N)])})
    src = pa.table({"id": pa.array(np.arange(N - 50_000, N + 50_000, dtype=np.int64)),
                    "n": pa.array(np.full(100_000, 7, dtype=np.int32)), "x": pa.array(np.zeros(100_000)),
                    "s": pa.array(["merged"] * 100_000)})
    wh = out / "wh"
    shutil.rmtree(out, ignore_errors=True)
    (wh / "db").mkdir(parents=True)
    ours, theirs = wh / "db" / "ours.lance", out / "theirs.lance"
    for p in (ours, theirs):
        lance.write_dataset(table, str(p), max_rows_per_file=1_000_000)

    spark = sparklance.session(warehouse=str(wh), **{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    src_path = out / "src.lance"
    lance.write_dataset(src, str(src_path))
    spark.read.format("lance").load(str(src_path)).createOrReplaceTempView("src")

    t0 = time.perf_counter()
    spark.sql("DELETE FROM lance.db.ours WHERE n < 10")
    t_delete = time.perf_counter() - t0
    t0 = time.perf_counter()
    lance.dataset(str(theirs)).delete("n < 10")
    t_delete_py = time.perf_counter() - t0

    t0 = time.perf_counter()
    spark.sql("MERGE INTO lance.db.ours t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET * "
              "WHEN NOT MATCHED THEN INSERT *")
    t_merge = time.perf_counter() - t0
    t0 = time.perf_counter()
    lance.dataset(str(theirs)).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(src)
    t_merge_py = time.perf_counter() - t0

    a, b = lance.dataset(str(ours)), lance.dataset(str(theirs))
    a.validate()
    assert a.count_rows() == b.count_rows(), (a.count_rows(), b.count_rows())
    print(f"row-level changes on {N:,} rows (this machine; Spark local[2]):")
    print(f"  DELETE 1% (n < 10)          sparklance {t_delete:6.2f} s   pylance {t_delete_py:6.2f} s   ratio {t_delete / t_delete_py:5.2f}")
    print(f"  MERGE 100k (50k upd, 50k ins) sparklance {t_merge:6.2f} s   pylance {t_merge_py:6.2f} s   ratio {t_merge / t_merge_py:5.2f}")
    print("  (no Parquet-backed Delta baseline: Delta Lake is not among this project's dependencies)")
    spark.stop()


if __name__ == "__main__":
    main()
