"""Exact nearest-neighbour search: sparklance's vector_search (Spark, local[2]) against pylance's flat search
(``to_table(nearest=...)`` without an index), on the same table, with equal results checked.

The rows: 1M float32 vectors of 128 values drawn around 256 centres (clustered, as embeddings are), written by
pylance (4 fragments). Measured, best of 3 after a warm-up: one query's top 10 (l2), and a batch of 10 queries'
top 10 (pylance: one call per query). Issue #17's bars are for searches with a vector index, which sparklance does
not use yet; this is the exact baseline those will be compared with.
Usage: python integration/bench/vector_bench.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_write_bench import best  # noqa: E402

ROWS, DIM, CENTRES, K, BATCH = 1_000_000, 128, 256, 10, 10


def write(out: Path) -> str:
    path = out / "vectors.lance"
    if path.exists():
        return str(path)
    import lance

    rng = np.random.default_rng(17)
    centres = rng.normal(0, 4, (CENTRES, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, CENTRES, ROWS)] + rng.normal(0, 1, (ROWS, DIM)).astype(np.float32)
    out.mkdir(parents=True, exist_ok=True)
    lance.write_dataset(pa.table({"id": pa.array(np.arange(ROWS, dtype=np.int64)),
                                  "emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)}),
                        str(path), max_rows_per_file=ROWS // 4)
    return str(path)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/vector").resolve()
    path = write(out)
    import lance
    import sparklance
    from sparklance import LanceTable

    ds = lance.dataset(path)
    rng = np.random.default_rng(5)
    queries = rng.normal(0, 4, (BATCH, DIM)).astype(np.float32)
    spark = sparklance.session(warehouse=str(out / "warehouse"), **{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")
    table = LanceTable.for_path(spark, path)

    def theirs(q):
        return ds.to_table(nearest={"column": "emb", "q": q, "k": K, "use_index": False}, columns=["id"])["id"].to_pylist()

    def ours(qs):
        return table.search([[float(x) for x in q] for q in qs] if qs.ndim == 2 else [float(x) for x in qs], k=K,
                            column="emb", columns=["id"]).collect()

    assert [r.id for r in ours(queries[0])] == theirs(queries[0]), "different neighbours for query 0"
    batch_rows = ours(queries)
    for i, q in enumerate(queries):
        assert [r.id for r in batch_rows if r.query_index == i] == theirs(q), f"different neighbours for query {i}"
    one = (best(lambda: ours(queries[0]), rounds=3), best(lambda: theirs(queries[0]), rounds=3))
    many = (best(lambda: ours(queries), rounds=1), best(lambda: [theirs(q) for q in queries], rounds=1))
    print(f"{ROWS} x {DIM} float32, exact top {K} (l2); equal neighbours on all {BATCH} queries")
    print(f"{'search':<24}{'sparklance s':>14}{'pylance s':>12}{'ratio':>8}")
    for name, (a, b) in (("one query", one), (f"{BATCH} queries", many)):
        print(f"{name:<24}{a:>14.3f}{b:>12.3f}{a / b:>8.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
