"""Building a vector index: sparklance's ``CREATE INDEX ... USING ivf_pq`` (Spark, local[2]) against pylance's
``create_index``, on copies of the same table.

The rows are vector_bench.py's: 1M float32 vectors of 128 values around 256 centres, written by pylance in 4
fragments. Each side builds IVF_PQ (256 partitions, 16 sub-vectors, 8-bit, l2) once (the machine is shared: one run,
no best-of), timed by the wall clock and by the CPU time of the process that builds (the JVM for sparklance, this
Python process for pylance). Then pylance's recall@10 with nprobes=20 over 50 queries is measured against its exact
search, with each index, so that a faster build that trains worse shows: queries drawn like the centres (far from
every row) and queries near rows of the table (a row plus noise). The JVM runs with the Vector API module
(``--add-modules jdk.incubator.vector``, added by ``sparklance.session``); ``--plain`` sets
-Dsparklance.vector.plain=true, to measure the plain Java kernels. ``--kind=ivf_hnsw_sq`` (or another index type
sparklance builds) builds that type instead, with ``--partitions=N`` partitions (HNSW types: Lance's m 20 and
ef_construction 150, or ``--m`` / ``--ef-construction``); ``--rows=N`` uses a table of N rows drawn alike, for a
short run. The recall is then measured with ``min(20, partitions)`` probes and pylance's default ``ef``.
``--hnsw-threads=N`` builds each HNSW graph with N threads (-Dsparklance.hnsw-build-threads; 1: one thread, as
before 2026-11-27), else with all the JVM's cores.
Usage: python integration/bench/vector_build_bench.py OUT_DIR [--plain] [--kind=K] [--rows=N] [--partitions=N]
       [--m=M] [--ef-construction=E] [--hnsw-threads=N]
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vector_bench import DIM, PARTITIONS, ROWS, SUB_VECTORS, write  # noqa: E402

K, NPROBES, QUERIES = 10, 20, 50


def recall(ds, queries, nprobes: int = NPROBES) -> float:
    hits = 0
    for q in queries:
        nearest = {"column": "emb", "q": q, "k": K}
        exact = set(ds.to_table(nearest={**nearest, "use_index": False}, columns=["id"])["id"].to_pylist())
        hits += len(exact.intersection(ds.to_table(nearest={**nearest, "nprobes": nprobes}, columns=["id"])["id"].to_pylist()))
    return hits / (K * len(queries))


def main():
    flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    plain = "--plain" in sys.argv[1:]
    kind = flags.get("kind", "ivf_pq").lower()
    rows, partitions = int(flags.get("rows", ROWS)), int(flags.get("partitions", PARTITIONS))
    options = {"num_partitions": partitions}
    if "pq" in kind:
        options["num_sub_vectors"] = SUB_VECTORS
    if "hnsw" in kind:
        options.update(m=int(flags.get("m", 20)), ef_construction=int(flags.get("ef-construction", 150)))
    out = Path(args[0] if args else "build/bench/vector").resolve()
    source = write(out, rows)
    import lance
    import sparklance
    from sparklance import LanceTable

    copies = {}
    for who in ("pylance", "sparklance"):
        copies[who] = str(out / f"build-{who}.lance")
        shutil.rmtree(copies[who], ignore_errors=True)
        shutil.copytree(source, copies[who], ignore=shutil.ignore_patterns("_indices", "_transactions"))
        # Only the data and the first manifests: the copy has no index yet.
        ds = lance.dataset(copies[who])
        for index in ds.describe_indices():
            ds.drop_index(index.name)

    # sparklance.session adds the Vector API module; the property keeps the plain loops with it present.
    java_options = "-Dsparklance.vector.plain=true" if plain else ""
    hnsw_threads = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--hnsw-threads=")), None)
    if hnsw_threads:
        java_options += f" -Dsparklance.hnsw-build-threads={int(hnsw_threads)}"
    spark = sparklance.session(warehouse=str(out / "warehouse"), **{"spark.driver.memory": "6g",
                                                                     "spark.driver.extraJavaOptions": java_options})
    spark.sparkContext.setLogLevel("ERROR")
    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()

    def jvm_cpu() -> float:
        fields = Path(f"/proc/{jvm_pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    load = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    lance.dataset(copies["pylance"]).create_index("emb", index_type=kind.upper(), **options)
    theirs = (time.perf_counter() - wall, time.process_time() - cpu)

    wall, cpu = time.perf_counter(), jvm_cpu()
    LanceTable.for_path(spark, copies["sparklance"]).create_index("emb", kind, **options)
    ours = (time.perf_counter() - wall, jvm_cpu() - cpu)
    load_after = os.getloadavg()
    spark.stop()

    rng = np.random.default_rng(9)
    far = rng.normal(0, 4, (QUERIES, DIM)).astype(np.float32)
    taken = lance.dataset(source).take(sorted(rng.choice(rows, QUERIES, replace=False).tolist()), columns=["emb"])
    near = (np.stack(taken["emb"].to_numpy(zero_copy_only=False)) + rng.normal(0, 1, (QUERIES, DIM))).astype(np.float32)
    nprobes = min(NPROBES, partitions)
    their_recall = [recall(lance.dataset(copies["pylance"]), q, nprobes) for q in (far, near)]
    our_recall = [recall(lance.dataset(copies["sparklance"]), q, nprobes) for q in (far, near)]
    print(f"{kind.upper()} build, {rows:,} x {DIM} float32, {options}, l2, nprobes {nprobes}, "
          f"{'plain Java' if plain else 'Vector API'} kernels (load average {load[0]:.2f} before, {load_after[0]:.2f} after)")
    print(f"{'':<12}{'wall s':>10}{'CPU s':>10}{'recall far':>12}{'recall near':>13}")
    print(f"{'sparklance':<12}{ours[0]:>10.1f}{ours[1]:>10.1f}{our_recall[0]:>12.3f}{our_recall[1]:>13.3f}")
    print(f"{'pylance':<12}{theirs[0]:>10.1f}{theirs[1]:>10.1f}{their_recall[0]:>12.3f}{their_recall[1]:>13.3f}")
    print(f"ratio (sparklance / pylance): wall {ours[0] / theirs[0]:.2f}, CPU {ours[1] / theirs[1]:.2f}")


if __name__ == "__main__":
    main()
