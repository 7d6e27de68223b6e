"""One HNSW graph built by pylance and by sparklance's core (no Spark) over the same rows, by wall clock and CPU.

The rows are vector_bench.py's kind (float32 vectors of 128 values around 256 centres, seed 17), ``--rows=N`` of them
(12,500 by default: one partition of the 50,000-row IVF_HNSW_SQ bench). pylance builds IVF_HNSW_SQ (or
``--kind=flat``: IVF_HNSW_FLAT) with one partition, m 20 and ef_construction 150, ``RUNS`` times; its time is the
whole ``create_index`` (the graph, and the SQ training, encoding and writing around it), its CPU this process's over
all its threads. The vectors are then written raw to OUT_DIR/hnsw-vectors.f32 and the JVM harness
(``jvm/bench`` ``HnswBuildBench``: the same graph over the same SQ codes, the graph alone) is run on them with one
thread and with all cores, when ``--sbt=WRAPPER`` names the sbt launcher of the worktree; else its command is
printed.
Usage: python integration/bench/hnsw_build_bench.py OUT_DIR [--rows=N] [--kind=sq|flat] [--runs=R] [--sbt=WRAPPER]
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

DIM, CENTRES, M, EF = 128, 256, 20, 150


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows, kind, runs = int(flags.get("rows", 12_500)), flags.get("kind", "sq"), int(flags.get("runs", 2))
    out = Path(args[0] if args else "build/bench/hnsw").resolve()
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(17)
    centres = rng.normal(0, 4, (CENTRES, DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, CENTRES, rows)] + rng.normal(0, 1, (rows, DIM)).astype(np.float32)
    raw = out / "hnsw-vectors.f32"
    vectors.astype("<f4").tofile(raw)

    import lance

    path = out / "hnsw.lance"
    shutil.rmtree(path, ignore_errors=True)
    lance.write_dataset(pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)}), str(path))
    index_type = "IVF_HNSW_SQ" if kind == "sq" else "IVF_HNSW_FLAT"
    print(f"{rows} vectors of {DIM}, {index_type}, one partition, m {M}, ef_construction {EF}")
    for run in range(runs):
        ds = lance.dataset(str(path))
        wall0, cpu0 = time.perf_counter(), cpu()
        ds.create_index("emb", index_type=index_type, num_partitions=1, m=M, ef_construction=EF, replace=True)
        print(f"pylance run {run}: wall {time.perf_counter() - wall0:.2f} s, cpu {cpu() - cpu0:.2f} s "
              f"(load {os.getloadavg()[0]:.1f})")
    command = f'"bench/runMain io.sparklance.bench.HnswBuildBench {raw} {DIM} {kind} {M} {EF} THREADS {runs}"'
    if "sbt" not in flags:
        print(f"sparklance: {command} (THREADS 1, or the cores)")
        return
    for threads in (1, os.cpu_count()):
        print(f"sparklance, {threads} threads (load {os.getloadavg()[0]:.1f}):", flush=True)
        subprocess.run([flags["sbt"], command.strip('"').replace("THREADS", str(threads))], check=True)


if __name__ == "__main__":
    main()
