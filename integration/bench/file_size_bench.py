"""Bytes per column type: the same rows written by pylance (file version 2.2) and rewritten by the JVM file writer.

    .venv/bin/python integration/bench/file_size_bench.py OUT_DIR

One seeded table of 500,000 rows with a column per kind of data people store: integers (sequential, small, wide),
decimals (low and high cardinality), dates, timestamps, doubles and floats, strings (low and high cardinality,
one-byte flags, long text), booleans and a 32-float vector. pylance writes it as one 2.2 file; io.sparklance.cli.RewriteTable
rewrites it at 2.2 with the jar `make jar` built (or SPARKLANCE_JAR), pylance must read the same values back, and
the bytes of every column's pages are printed with our/pylance ratio.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sparklance._jvm import java_command  # noqa: E402
from tpch_column_sizes import column_bytes  # noqa: E402

N = 500_000


def table() -> pa.Table:
    rng = np.random.default_rng(11)
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
    price_cents = rng.integers(100, 10_000_000, N)
    return pa.table({
        "int64 sequential": pa.array(np.arange(N, dtype=np.int64) * 3 + 1_000_000),
        "int32 small (0-999)": pa.array(rng.integers(0, 1000, N, dtype=np.int32)),
        "int64 keys, 8 each": pa.array(np.arange(N, dtype=np.int64) // 8 + 1),
        "int64 wide random": pa.array(rng.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)),
        "decimal(15,2) 50 values": pa.array([Decimal(int(v)) for v in rng.integers(1, 51, N)], pa.decimal128(15, 2)),
        "decimal(15,2) prices": pa.array([Decimal(int(v)).scaleb(-2) for v in price_cents], pa.decimal128(15, 2)),
        "date (7 years)": pa.array(rng.integers(8000, 8000 + 7 * 365, N).astype(np.int32), pa.date32()),
        "timestamp[us]": pa.array(1_700_000_000_000_000 + rng.integers(0, 10 ** 12, N), pa.timestamp("us")),
        "double normal": pa.array(rng.standard_normal(N)),
        "float32 normal": pa.array(rng.standard_normal(N).astype(np.float32)),
        "double 2 digits": pa.array(np.round(rng.uniform(0, 1000, N), 2)),
        "string 8 values": pa.array(words[rng.integers(0, len(words), N)]),
        "string 1 byte, 3 values": pa.array(np.array(["A", "N", "R"])[rng.integers(0, 3, N)]),
        "string ids": pa.array([f"user-{v:09d}" for v in rng.integers(0, 10 ** 9, N)]),
        "string text": pa.array([" ".join(words[rng.integers(0, 8, 12)]) for _ in range(N)]),
        "bool": pa.array(rng.random(N) < 0.3),
        "vector 32 x float32": pa.FixedSizeListArray.from_arrays(
            pa.array(rng.standard_normal(N * 32).astype(np.float32)), 32),
    })


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/file_sizes").resolve()
    out.mkdir(parents=True, exist_ok=True)
    src, dst = str(out / "pylance.lance"), str(out / "sparklance.lance")
    for p in (src, dst):
        shutil.rmtree(p, ignore_errors=True)
    lance.write_dataset(table(), src, data_storage_version="2.2", max_rows_per_file=N)
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", ["2.2", src, dst]), check=True)
    assert lance.dataset(dst).to_table().equals(lance.dataset(src).to_table()), "pylance reads other values"
    theirs, ours = column_bytes(src), column_bytes(dst)
    print(f"{N} rows, file version 2.2: bytes per column")
    print(f"{'column':26}{'pylance':>14}{'sparklance':>14}{'ours/pylance':>14}")
    for c in list(theirs) + ["TOTAL"]:
        t, o = (sum(theirs.values()), sum(ours.values())) if c == "TOTAL" else (theirs[c], ours[c])
        print(f"{c:26}{t:14,d}{o:14,d}{o / max(t, 1):14.2f}")


if __name__ == "__main__":
    main()
