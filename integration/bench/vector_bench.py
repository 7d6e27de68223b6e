"""Exact nearest-neighbour search: sparklance's vector_search (Spark, local[2]) against pylance's flat search
(``to_table(nearest=...)`` without an index), on the same table, with equal results checked.

The rows: 1M float32 vectors of 128 values drawn around 256 centres (clustered, as embeddings are), written by
pylance (4 fragments), with an IVF_PQ index pylance builds (256 partitions, 16 sub-vectors, l2). Measured, best of 3
after a warm-up: one query's exact top 10 (l2; sparklance with bypass_vector_index, pylance with use_index=False), a
batch of 10 queries' exact top 10 (pylance: one call per query), one query's top 10 through the IVF_PQ index
with nprobes=20 (issue #17's bar: within 2x of pylance), and a batch of 1,000 queries through it (one ``search`` call;
pylance: one call per query, as it has no batch search), its throughput in queries per second; each with equal
results checked (the 1,000-query batch on every 50th query). Then one IVF_PQ query warm, through each Python API
(``search(...).collect()``, ``to_table(nearest=...)``) against pylance's ``to_table(nearest=...)``: the median wall
time and CPU time per query (the driver JVM's and this Python process's) over WARM queries after WARMUP of warm-up
(the JVM's compiler still compiles for the first thousand or so), with the load average.
Usage: python integration/bench/vector_bench.py OUT_DIR [--latency] (--latency: the warm latencies alone)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_write_bench import best  # noqa: E402

ROWS, DIM, CENTRES, K, BATCH, MANY, WARM, WARMUP = 1_000_000, 128, 256, 10, 10, 1000, 300, 1500
PARTITIONS, SUB_VECTORS, NPROBES = 256, 16, 20


def write(out: Path, rows: int = ROWS) -> str:
    path = out / ("vectors.lance" if rows == ROWS else f"vectors-{rows}.lance")
    if path.exists():
        return str(path)
    import lance

    rng = np.random.default_rng(17)
    centres = rng.normal(0, 4, (CENTRES, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, CENTRES, rows)] + rng.normal(0, 1, (rows, DIM)).astype(np.float32)
    out.mkdir(parents=True, exist_ok=True)
    lance.write_dataset(pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                                  "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)}),
                        str(path), max_rows_per_file=rows // 4)
    return str(path)


def indexed(path: str):
    """The table with its IVF_PQ index on emb, built by pylance on first use."""
    import lance

    ds = lance.dataset(path)
    if not ds.list_indices():
        ds.create_index("emb", index_type="IVF_PQ", num_partitions=PARTITIONS, num_sub_vectors=SUB_VECTORS)
    return lance.dataset(path)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0] if args else "build/bench/vector").resolve()
    path = write(out)
    import lance
    import sparklance
    from sparklance import LanceTable

    ds = indexed(path)
    rng = np.random.default_rng(5)
    queries = rng.normal(0, 4, (BATCH, DIM)).astype(np.float32)
    many_queries = rng.normal(0, 4, (MANY, DIM)).astype(np.float32)
    spark = sparklance.session(warehouse=str(out / "warehouse"), **{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    table = LanceTable.for_path(spark, path)
    if "--latency" in sys.argv:
        warm_latency(spark, ds, table, many_queries)
        spark.stop()
        return

    def theirs(q):
        return ds.to_table(nearest={"column": "emb", "q": q, "k": K, "use_index": False}, columns=["id"])["id"].to_pylist()

    def ours(qs):
        return table.search([[float(x) for x in q] for q in qs] if qs.ndim == 2 else [float(x) for x in qs], k=K,
                            column="emb", columns=["id"], bypass_vector_index=True).collect()

    def theirs_pq(q):
        return ds.to_table(nearest={"column": "emb", "q": q, "k": K, "nprobes": NPROBES}, columns=["id"])["id"].to_pylist()

    def ours_pq(q):
        return [r.id for r in table.search([float(x) for x in q], k=K, column="emb", columns=["id"],
                                           nprobes=NPROBES).collect()]

    def ours_pq_many():
        rows = table.search([[float(x) for x in q] for q in many_queries], k=K, column="emb", columns=["id"],
                            nprobes=NPROBES).collect()
        found = {}
        for r in rows:
            found.setdefault(r.query_index, []).append(r.id)
        return found

    found = ours_pq_many()
    for i in range(0, MANY, 50):
        assert found[i] == theirs_pq(many_queries[i]), f"different IVF_PQ neighbours for query {i} of the batch"
    assert [r.id for r in ours(queries[0])] == theirs(queries[0]), "different neighbours for query 0"
    batch_rows = ours(queries)
    for i, q in enumerate(queries):
        assert [r.id for r in batch_rows if r.query_index == i] == theirs(q), f"different neighbours for query {i}"
    for i, q in enumerate(queries):
        assert ours_pq(q) == theirs_pq(q), f"different IVF_PQ neighbours for query {i}"
    pq = (best(lambda: ours_pq(queries[0]), rounds=3), best(lambda: theirs_pq(queries[0]), rounds=3))
    one = (best(lambda: ours(queries[0]), rounds=3), best(lambda: theirs(queries[0]), rounds=3))
    many = (best(lambda: ours(queries), rounds=1), best(lambda: [theirs(q) for q in queries], rounds=1))
    pq_many = (best(ours_pq_many, rounds=1), best(lambda: [theirs_pq(q) for q in many_queries], rounds=1))
    print(f"{ROWS} x {DIM} float32, top {K} (l2); equal neighbours on all {BATCH} queries, exact and IVF_PQ "
          f"({PARTITIONS} partitions, {SUB_VECTORS} sub-vectors, nprobes={NPROBES})")
    print(f"{'search':<24}{'sparklance s':>14}{'pylance s':>12}{'ratio':>8}")
    for name, (a, b) in (("one query, exact", one), (f"{BATCH} queries, exact", many), ("one query, IVF_PQ", pq)):
        print(f"{name:<24}{a:>14.3f}{b:>12.3f}{a / b:>8.2f}")
    a, b = pq_many
    print(f"{f'{MANY} queries, IVF_PQ':<24}{a:>14.3f}{b:>12.3f}{a / b:>8.2f}   "
          f"({MANY / a:.0f} queries/s against {MANY / b:.0f})")
    warm_latency(spark, ds, table, many_queries)
    spark.stop()


def warm_latency(spark, ds, table, queries):
    """Median wall and CPU time of one warm IVF_PQ query per API, WARM queries after WARMUP of warm-up each."""
    import subprocess

    pid = spark._jvm.java.lang.ProcessHandle.current().pid()

    def jvm_cpu():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    nearest = {"column": "emb", "k": K, "nprobes": NPROBES}
    apis = {
        "pylance to_table": lambda q: ds.to_table(nearest={**nearest, "q": q}, columns=["id"])["id"].to_pylist(),
        "search().collect()": lambda q: [r.id for r in table.search([float(x) for x in q], k=K, column="emb",
                                                                    columns=["id"], nprobes=NPROBES).collect()],
        "to_table(nearest=)": lambda q: table.to_table(nearest={**nearest, "q": q}, columns=["id"])["id"].to_pylist(),
    }
    for i in range(0, len(queries), 100):
        theirs = apis["pylance to_table"](queries[i])
        assert all(f(queries[i]) == theirs for f in apis.values()), f"different IVF_PQ neighbours for query {i}"
    print(f"one IVF_PQ query warm, {WARM} queries after {WARMUP} of warm-up; load average "
          f"{os.getloadavg()[0]:.1f} before")
    print(f"{'API':<22}{'median wall ms':>16}{'mean wall ms':>14}{'JVM CPU ms':>12}{'Python CPU ms':>15}")
    for name, f in apis.items():
        for i in range(WARMUP):
            f(queries[i % len(queries)])
        walls = []
        jvm0, py0 = jvm_cpu(), time.process_time()
        for q in queries[len(queries) - WARM:]:
            t0 = time.perf_counter()
            f(q)
            walls.append(time.perf_counter() - t0)
        jvm, py = (jvm_cpu() - jvm0) / WARM, (time.process_time() - py0) / WARM
        print(f"{name:<22}{1000 * float(np.median(walls)):>16.1f}{1000 * float(np.mean(walls)):>14.1f}"
              f"{1000 * jvm:>12.1f}{1000 * py:>15.1f}")
    print("load average after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
