"""Decode throughput of the JVM file reader against pylance, per encoding family and for a whole file.

Writes one Lance data file per encoding family (4M values, file version 2.2 unless noted) with pylance, times
pylance reading each (its default, multi-threaded) and the JVM reader (one thread), in the same run, and prints
throughput and the ratio JVM / pylance. Usage: python integration/bench/file_read_bench.py OUT_DIR JVM_CMD...
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
from lance.file import LanceFileReader, LanceFileWriter

N = 4_000_000


def families():
    rng = np.random.default_rng(42)
    words = np.array([f"category-{i}" for i in range(50)])
    ints = rng.integers(0, 1000, N, dtype=np.int32)
    nulls = rng.random(N) < 0.2
    yield "flat_int64", pa.array(rng.integers(-2**62, 2**62, N, dtype=np.int64)), "2.2"
    yield "flat_float64", pa.array(rng.standard_normal(N)), "2.2"
    yield "bitpack_int32", pa.array(ints), "2.2"
    yield "nullable_int32", pa.array(ints, mask=nulls), "2.2"
    yield "dictionary_string", pa.array(words[rng.integers(0, 50, N)]), "2.2"
    yield "fsst_string", pa.array([f"user-{i:08d}@example.com" for i in range(N)]), "2.2"
    yield "variable_binary", pa.array([os.urandom(16) for _ in range(N // 4)], pa.binary()), "2.2"
    yield "vector_f32x32", pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(N * 8, dtype=np.float32)), 32), "2.2"
    # DECIMAL(7,2) money (TPC-DS's): 16-byte values of which 4 bytes vary; flat as pylance writes it by default,
    # LZ4-compressed chunks (General(lz4, Flat(128))) as our writer and pylance's `compression=lz4` write it,
    # zstd-compressed as pylance's `compression=zstd` does.
    money = decimal128(rng.integers(-10**6, 10**6, N // 2))
    yield "flat_decimal128", money, "2.2"
    yield "lz4_decimal128", money, "2.2:lz4"
    yield "zstd_decimal128", money, "2.2:zstd"
    yield "flat_int64_v2.0", pa.array(rng.integers(-2**62, 2**62, N, dtype=np.int64)), "2.0"
    yield "string_v2.0", pa.array([f"user-{i:08d}@example.com" for i in range(N // 2)]), "2.0"


def decimal128(unscaled: np.ndarray) -> pa.Array:
    """DECIMAL(7,2) values of the given unscaled int64s: each the 16-byte little-endian two's complement."""
    words = np.empty((len(unscaled), 2), dtype=np.int64)
    words[:, 0] = unscaled
    words[:, 1] = unscaled >> 63
    return pa.Array.from_buffers(pa.decimal128(7, 2), len(unscaled), [None, pa.py_buffer(words.tobytes())])


def write(out_dir):
    files = []
    whole = {}
    for name, arr, version in families():
        path = os.path.join(out_dir, f"{name}.lance")
        version, _, compression = version.partition(":")
        if not os.path.exists(path):
            t = pa.table({"c": arr})
            if compression:
                t = t.cast(pa.schema([t.schema.field(0).with_metadata({"lance-encoding:compression": compression})]))
            with LanceFileWriter(path, t.schema, version=version) as w:
                w.write_batch(t)
        files.append((name, path))
        if version == "2.2" and len(arr) == N:
            whole[name] = arr
    path = os.path.join(out_dir, "whole_file.lance")
    if not os.path.exists(path):
        t = pa.table(whole)
        with LanceFileWriter(path, t.schema, version="2.2") as w:
            w.write_batch(t)
    files.append(("whole_file", path))
    return files


def pylance_seconds(path, rounds=5):
    LanceFileReader(path).read_all().to_table()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        LanceFileReader(path).read_all().to_table()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    out_dir, jvm = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    files = write(out_dir)
    jvm_out = subprocess.run(jvm + [p for _, p in files], check=True, capture_output=True, text=True).stdout
    jvm_times = {}
    for line in jvm_out.strip().splitlines():
        path, rows, nbytes, secs = line.split("\t")
        jvm_times[path] = (int(rows), int(nbytes), float(secs))
    print(f"{'family':<22}{'rows':>10}{'MB':>9}{'pylance MB/s':>14}{'JVM MB/s':>11}{'JVM/pylance':>13}")
    for name, path in files:
        rows, nbytes, js = jvm_times[path]
        ps = pylance_seconds(path)
        mb = nbytes / 1e6
        print(f"{name:<22}{rows:>10}{mb:>9.1f}{mb / ps:>14.0f}{mb / js:>11.0f}{ps / js:>13.2f}")
    print("pylance: multi-threaded (its default) on this machine; JVM: one thread, best of 5 after warm-up.")


if __name__ == "__main__":
    main()
