"""pylance's recall@10 with our index against its recall with its own, built alike, on tables of the kinds
tests/test_vector_types.py draws (uint8 for hamming; float16/float64), several builds each: the measurements behind
docs/vector-search.md's recall of float16/float64/uint8 indexes (issue #17).

Usage: recall_types.py KIND TABLES BUILDS [NUM_PARTITIONS]
  KIND: hamming-ivf_flat, hamming-ivf_hnsw_flat, float64-ivf_hnsw_sq, float16-ivf_hnsw_sq, float32-ivf_hnsw_sq, ...
Run with the project's .venv from the repository root, after `make jar` (or spark/assembly); RECALL_JAR=<jar> measures
another build of sparklance (a baseline) against the same tables.
"""

import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import lance
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

import conftest  # noqa: E402
from conftest import start_spark  # noqa: E402
from test_vector_types import float_table, recall, uint8_table  # noqa: E402

from sparklance import LanceTable  # noqa: E402


def main():
    kind, tables, builds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    parts_arg = int(sys.argv[4]) if len(sys.argv) > 4 else None
    dtype, index_type = kind.split("-", 1)
    index_type = index_type.upper()
    metric = "hamming" if dtype == "hamming" else "l2"
    if os.environ.get("RECALL_JAR"):
        conftest.JAR = Path(os.environ["RECALL_JAR"])
    tmp = Path(tempfile.mkdtemp(prefix="recall_types"))
    spark = start_spark("recall_types", tmp / "wh")
    means = []
    try:
        for t in range(tables):
            rng = random.Random(f"recall-{kind}-{t}")
            path, twin = tmp / f"t{t}.lance", tmp / f"twin{t}.lance"
            if metric == "hamming":
                _, v = uint8_table(rng, path)
                queries = [v[rng.randrange(len(v))] for _ in range(40)]
                parts = parts_arg or rng.choice([2, 4, 8])
            else:
                v = float_table(rng, path, dtype, rng.randint(2500, 4000), rng.choice([16, 32]))
                queries = [x.astype(np.float32) + np.float32(0.5) for x in v[rng.sample(range(len(v)), 40)]]
                parts = parts_arg or rng.choice([4, 8])
            shutil.copytree(path, twin)
            ours, theirs = [], []
            for _ in range(builds):
                LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric,
                                                                   num_partitions=parts, replace=True)
                ours.append(recall(lance.dataset(str(path)), queries, metric, 1))
                lance.dataset(str(twin)).create_index("emb", index_type, metric=metric, num_partitions=parts,
                                                      replace=True)
                theirs.append(recall(lance.dataset(str(twin)), queries, metric, 1))
            means.append((np.mean(ours), np.mean(theirs)))
            print(f"{kind} table {t} ({len(v)} x {v.shape[1]}, {parts} partitions): ours {np.mean(ours):.3f} "
                  f"{[round(x, 3) for x in ours]} pylance {np.mean(theirs):.3f} {[round(x, 3) for x in theirs]}",
                  flush=True)
        o, p = np.mean([m[0] for m in means]), np.mean([m[1] for m in means])
        print(f"{kind}: mean over {tables} tables x {builds} builds: ours {o:.3f} pylance {p:.3f} ({o - p:+.3f})")
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
