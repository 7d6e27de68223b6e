"""Requests per scan on S3: Spark reading a Lance table on an S3 stand-in (moto's server on loopback), with the
coalesced ranged reads sparklance does by default and with coalescing turned off.

pylance writes 1M rows (id, an int, a double, a string, an 8-float vector) in 4 fragments at small pages, so that
each column has many pages. The requests of a scan are S3A's own count of the GET and HEAD requests it sent (its
storage statistics), not sparklance's calls. Times on loopback are shown but mean little.
Usage: python integration/bench/s3_read_bench.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from s3_support import Stand  # noqa: E402

N = 1_000_000
FRAGMENTS = 4
QUERIES = [
    ("aggregate over all columns", "SELECT sum(id), sum(n), sum(x), max(s), count(v) FROM t"),
    ("one-column projection", "SELECT sum(x) FROM t"),
    ("point filter", "SELECT * FROM t WHERE id = 777777"),
]

JOB = """
import time
fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI({path!r}), spark._jsc.hadoopConfiguration())
def counts():
    # S3A's own count of the HTTP requests it sent (executors share the driver's JVM and file system here).
    stats = fs.getStorageStatistics()
    return stats.getLong("action_http_get_request") or 0, stats.getLong("action_http_head_request") or 0
for label, gap in (("coalesced (default)", None), ("not coalesced", "-1")):
    reader = spark.read.format("lance")
    if gap is not None:
        reader = reader.option("sparklance.read.coalesce-gap-bytes", gap)
    reader.load({path!r}).createOrReplaceTempView("t")
    spark.sql("SELECT count(*) FROM t").collect()  # warm-up: session, classes
    for name, sql in {queries!r}:
        gets0, heads0 = counts()
        t0 = time.perf_counter()
        spark.sql(sql).collect()
        seconds = time.perf_counter() - t0
        gets1, heads1 = counts()
        emit([label, name, (gets1 - gets0) + (heads1 - heads0), gets1 - gets0, seconds])
"""


def main(out: Path) -> None:
    import lance

    out.mkdir(parents=True, exist_ok=True)
    stand = Stand(out)
    try:
        bucket = stand.bucket("bench")
        rng = np.random.default_rng(3)
        table = pa.table({
            "id": pa.array(np.arange(N, dtype=np.int64)),
            "n": pa.array(rng.integers(0, 1000, N, dtype=np.int32)),
            "x": pa.array(rng.standard_normal(N)),
            "s": pa.array([f"user-{i % 50000:05d}" for i in range(N)]),
            "v": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(N * 8, dtype=np.float32)), 8),
        })
        uri = f"s3://{bucket}/t.lance"
        lance.write_dataset(table, uri, storage_options=stand.storage_options, max_rows_per_file=N // FRAGMENTS,
                            data_storage_version="2.1")
        ds = lance.dataset(uri, storage_options=stand.storage_options)
        files = len(ds.get_fragments())
        results = stand.run_job(JOB.format(path=f"s3a://{bucket}/t.lance", queries=QUERIES),
                                warehouse=f"s3a://{bucket}/wh", conf=stand.spark_conf(**{"spark.hadoop.fs.s3a.input.stream.type": "classic"}), workdir=out)
    finally:
        stand.stop()
    print(f"\nS3 requests per scan ({N:,} rows, {files} fragments, moto on loopback)")
    print(f"{'query':<30} {'reads':<22} {'requests':>9} {'GETs':>6} {'per fragment':>13} {'seconds':>8}")
    for label, name, requests, gets, seconds in results:
        print(f"{name:<30} {label:<22} {requests:>9} {gets:>6} {requests / files:>13.1f} {seconds:>8.2f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bench" / "s3")
