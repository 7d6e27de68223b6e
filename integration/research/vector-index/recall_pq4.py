"""pylance's recall@10 with our 4-bit PQ index against its recall with its own 4-bit index, built alike, on tables of
the kind tests/test_vector_index_build.py draws, several builds each: the measurement behind docs/vector-search.md's
recall of 4-bit indexes (issue #17).

Usage: recall_pq4.py INDEX_TYPE METRIC TABLES BUILDS [SEED]   (INDEX_TYPE ivf_pq or ivf_hnsw_pq; SEED draws another set
of tables, none the first set)
Run with the project's .venv from the repository root, after spark/assembly.
"""

import random
import shutil
import sys
import tempfile
from pathlib import Path

import lance
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "python"))

from conftest import start_spark  # noqa: E402
from test_vector_index_build import recall, table  # noqa: E402

from sparklance import LanceTable  # noqa: E402


def main():
    index_type, metric, tables, builds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seed = f"-{sys.argv[5]}" if len(sys.argv) > 5 else ""
    tmp = Path(tempfile.mkdtemp(prefix="recall_pq4"))
    spark = start_spark("recall_pq4", tmp / "wh")
    means = []
    try:
        for t in range(tables):
            rng = random.Random(f"recall-pq4-{index_type}-{metric}-{t}{seed}")
            dim = rng.choice([16, 32])
            path, twin = tmp / f"t{t}.lance", tmp / f"twin{t}.lance"
            data = table(rng, path, rng.randint(3000, 4500), dim)
            shutil.copytree(path, twin)
            parts = rng.choice([4, 8]) if index_type == "ivf_pq" else 2
            opts = {"num_partitions": parts, "num_sub_vectors": rng.choice([m for m in (4, 8, 16) if dim // m >= 2]),
                    "num_bits": 4}
            if index_type == "ivf_hnsw_pq":
                opts.update(m=16, ef_construction=80)
            nprobes = 1 if index_type == "ivf_pq" else parts
            queries = data.vectors(40)
            ours, theirs = [], []
            for _ in range(builds):
                LanceTable.for_path(spark, str(path)).create_index("emb", index_type, distance_type=metric,
                                                                   replace=True, **opts)
                ours.append(recall(lance.dataset(str(path)), queries, metric, nprobes))
                lance.dataset(str(twin)).create_index("emb", index_type.upper(), metric=metric, replace=True, **opts)
                theirs.append(recall(lance.dataset(str(twin)), queries, metric, nprobes))
            means.append((np.mean(ours), np.mean(theirs)))
            print(f"{index_type} {metric} table {t} (dim {dim}, {opts}): ours {np.mean(ours):.3f} "
                  f"{[round(x, 3) for x in ours]} pylance {np.mean(theirs):.3f} {[round(x, 3) for x in theirs]}",
                  flush=True)
        o, p = np.mean([m[0] for m in means]), np.mean([m[1] for m in means])
        print(f"{index_type} {metric}: mean over {tables} tables x {builds} builds: ours {o:.3f} pylance {p:.3f} "
              f"({o - p:+.3f})")
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
