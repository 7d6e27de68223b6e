"""OPTIMIZE INDEX of vector indexes over float16, float64 and uint8 (hamming) vectors, against pylance 14.

- pylance builds the index, rows are appended and deleted, we optimize it: pylance lists one segment over every
  fragment, ``validate()`` passes, the segment holds every live row once, the centroids (and PQ codebook) are the old
  ones byte for byte, IVF_FLAT's old vectors are kept exactly (float64 too), and pylance's searches through it and ours
  return the same rows and distances.
- we build it, rows are appended, pylance's ``optimize_indices()`` extends it (a delta segment or a merge), the
  result validates and our search through it is pylance's; and ours optimized by us, then by pylance, likewise
  (pylance 14 optimizes no hamming IVF_HNSW_FLAT index, not even its own: that one is optimized by us only).

Tables and queries are drawn from ``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` scales the number of tables.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE  # noqa: E402
from test_vector_index_search import search_both  # noqa: E402
from test_vector_types import both, proto_fields, same_up_to_last_tie  # noqa: E402

from sparklance import LanceTable  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))

CASES = [("float16", "IVF_FLAT", "l2"), ("float16", "IVF_SQ", "l2"), ("float64", "IVF_FLAT", "l2"),
         ("float64", "IVF_FLAT", "cosine"),
         ("float64", "IVF_PQ", "l2"), ("float64", "IVF_HNSW_SQ", "l2"), ("uint8", "IVF_FLAT", "hamming"),
         ("uint8", "IVF_HNSW_FLAT", "hamming")]


class Rows:
    """Rows of ``id`` and ``emb`` (clustered vectors of ``dtype``; uint8 ones near copies of a few random ones)."""

    def __init__(self, rng: random.Random, dtype: str):
        self.rng, self.dtype = rng, dtype
        self.np = np.random.default_rng(rng.randrange(2 ** 32))
        self.dim = rng.choice([8, 16])
        self.centers = self.np.normal(0, 3, (rng.randint(6, 12), self.dim))
        self.bytes = self.np.integers(0, 256, (rng.randint(6, 12), self.dim)).astype(np.uint8)
        self.next = 0

    def vectors(self, count: int) -> np.ndarray:
        if self.dtype == "uint8":
            v = self.bytes[self.np.integers(0, len(self.bytes), count)]
            flips = (self.np.random((count, self.dim)) < 0.3) * (1 << self.np.integers(0, 8, (count, self.dim)))
            return v ^ flips.astype(np.uint8)
        return (self.centers[self.np.integers(0, len(self.centers), count)]
                + self.np.normal(0, 1, (count, self.dim))).astype(self.dtype)

    def table(self, count: int) -> pa.Table:
        start, self.next = self.next, self.next + count
        return pa.table({"id": pa.array(range(start, start + count), pa.int64()),
                         "emb": pa.FixedSizeListArray.from_arrays(pa.array(self.vectors(count).ravel()), self.dim)})


def skip_float16(dtype: str) -> None:
    if dtype == "float16" and SPARK_LINE < (4, 0):
        pytest.skip("Spark 3.x's Arrow has no half floats")


def new_table(rng: random.Random, path: Path, dtype: str) -> Rows:
    rows = Rows(rng, dtype)
    n = rng.randint(1200, 2000)
    lance.write_dataset(rows.table(n), str(path), max_rows_per_file=rng.choice([n // 2, n]))
    return rows


def append_and_delete(rng: random.Random, path: Path, rows: Rows) -> None:
    for _ in range(rng.randint(1, 2)):
        lance.write_dataset(rows.table(rng.randint(100, 300)), str(path), mode="append")
    lance.dataset(str(path)).delete(f"id % {rng.randint(5, 9)} = 2")


def options(index_type: str, metric: str) -> dict:
    return {"num_partitions": 2, "metric": metric, **({"num_sub_vectors": 4} if "PQ" in index_type else {})}


def index_files(path: Path) -> dict:
    """For each segment of ``emb_idx``: its centroids tensor's bytes, and its PQ codebook's (None for the others)."""
    from lance.file import LanceFileReader
    out = {}
    for i in lance.dataset(str(path)).list_indices():
        d = path / "_indices" / i["uuid"]
        reader = LanceFileReader(str(d / "index.idx"))
        ivf = proto_fields(bytes(reader.read_global_buffer(int(reader.metadata().schema.metadata[b"lance:ivf"]))))
        codebook = None
        if "PQ" in i["type"]:
            aux = LanceFileReader(str(d / "auxiliary.idx"))
            stored = json.loads(json.loads(aux.metadata().schema.metadata[b"storage_metadata"])[0])
            codebook = bytes(aux.read_global_buffer(stored["codebook_position"]))
        out[i["uuid"]] = (dict(ivf)[4], codebook)
    return out


def query(rng: random.Random, rows: Rows) -> np.ndarray:
    q = rows.vectors(1)[0]
    return q if rows.dtype == "uint8" else q.astype(np.float64) + np.array([rng.gauss(0, 0.3) for _ in range(rows.dim)])


def same_search(spark, ds, path: Path, rng: random.Random, rows: Rows, metric: str, what: str, hnsw: bool) -> None:
    """Our search through the table's index returns pylance's rows and distances (HNSW: a beam as wide as the table,
    so that graph walks do not part where distances tie; test_vector_index_hnsw.py compares walks)."""
    for _ in range(3):
        q = query(rng, rows)
        k, nprobes = rng.randint(1, 20), rng.choice([1, 2])
        ef = rows.next if hnsw else None
        if metric == "hamming":
            ours, theirs = both(spark, ds, path, q, k, nprobes=nprobes, ef=ef)
            same_up_to_last_tie(ours, theirs, f"{what} k={k} nprobes={nprobes}")
        else:
            search_both(spark, ds, path, q, k, metric, what, nprobes=nprobes, ef=ef,
                        tol=5e-3 if rows.dtype == "float16" else 2e-5)


@pytest.mark.parametrize("dtype,index_type,metric", CASES)
def test_pylance_index_optimized_by_us(spark, tmp_path, dtype, index_type, metric):
    skip_float16(dtype)
    rng = random.Random(f"{SEED}-ours-{dtype}-{index_type}-{metric}")
    for t in range(N):
        path = tmp_path / f"t{t}.lance"
        rows = new_table(rng, path, dtype)
        lance.dataset(str(path)).create_index("emb", index_type=index_type, **options(index_type, metric))
        [(old_uuid, old_tensors)] = index_files(path).items()
        append_and_delete(rng, path, rows)
        version = lance.dataset(str(path)).version
        what = f"seed {SEED} {dtype} {index_type} {metric} table {t}"

        made = LanceTable.for_path(spark, str(path)).optimize_index("emb_idx")
        ds = lance.dataset(str(path))
        assert ds.version == version + 1, what
        [listed] = ds.list_indices()
        assert listed["uuid"] == made["uuid"] != old_uuid and listed["type"] == index_type, listed
        assert sorted(listed["fragment_ids"]) == sorted(f.fragment_id for f in ds.get_fragments())
        assert ds.stats.index_stats("emb_idx")["num_unindexed_rows"] == 0
        ds.validate()
        # The model is the old one, byte for byte (float64 centroids are not rounded through float32).
        assert index_files(path)[made["uuid"]] == old_tensors, what
        # Every live row once, found by an index search probing both partitions; IVF_FLAT measures exactly (its
        # stored vectors kept in the column's type), so its distances are the exact search's.
        q = query(rng, rows)
        nearest = {"column": "emb", "q": q, "k": rows.next + 10, "nprobes": 2, "metric": metric}
        if "HNSW" in index_type:
            nearest["ef"] = rows.next + 10
        held = ds.to_table(nearest=nearest, columns=[], with_row_id=True)
        live = ds.to_table(columns=[], with_row_id=True)["_rowid"].to_pylist()
        assert sorted(held["_rowid"].to_pylist()) == sorted(live), what
        if index_type == "IVF_FLAT":
            # (cosine: the index measures stored unit vectors, the exact search the vectors; float32 rounding apart)
            exact = ds.to_table(nearest={**nearest, "use_index": False}, columns=[], with_row_id=True)
            got = dict(zip(held["_rowid"].to_pylist(), held["_distance"].to_pylist()))
            want = dict(zip(exact["_rowid"].to_pylist(), exact["_distance"].to_pylist()))
            assert got.keys() == want.keys(), what
            rel = 0 if metric != "cosine" else 1e-6
            assert all(abs(got[r] - want[r]) <= rel * max(1.0, abs(want[r])) for r in got), what
        same_search(spark, ds, path, rng, rows, metric, what, "HNSW" in index_type)
        # Up to date: returned as it is, nothing committed.
        assert LanceTable.for_path(spark, str(path)).optimize_index("emb_idx")["uuid"] == made["uuid"]
        assert lance.dataset(str(path)).version == version + 1


@pytest.mark.parametrize("dtype,index_type,metric", CASES)
def test_our_index_optimized_by_pylance(spark, tmp_path, dtype, index_type, metric):
    skip_float16(dtype)
    rng = random.Random(f"{SEED}-theirs-{dtype}-{index_type}-{metric}")
    for t in range(N):
        path, twin = tmp_path / f"t{t}.lance", tmp_path / f"twin{t}.lance"
        rows = new_table(rng, path, dtype)
        opts = options(index_type, metric)
        LanceTable.for_path(spark, str(path)).create_index(
            "emb", index_type.lower(), distance_type=opts.pop("metric"), **opts)
        append_and_delete(rng, path, rows)
        shutil.copytree(path, twin)
        what = f"seed {SEED} {dtype} {index_type} {metric} table {t}"
        # pylance 14 does not optimize hamming IVF_HNSW_FLAT indexes, its own included (it panics: "unsupported index
        # type: HNSW, FLATBIN"); ours are optimized by us only.
        pylance_optimizes = not (metric == "hamming" and "HNSW" in index_type)
        if pylance_optimizes:
            lance.dataset(str(path)).optimize.optimize_indices()
            ds = lance.dataset(str(path))
            ds.validate()
            assert ds.stats.index_stats("emb_idx")["num_unindexed_rows"] == 0
            same_search(spark, ds, path, rng, rows, metric, what + " optimized by pylance", "HNSW" in index_type)
        # Our index optimized by us (then by pylance): it validates and is searched alike.
        LanceTable.for_path(spark, str(twin)).optimize_index("emb_idx")
        lance.dataset(str(twin)).validate()
        if pylance_optimizes:
            lance.write_dataset(rows.table(rng.randint(50, 150)), str(twin), mode="append")
            lance.dataset(str(twin)).optimize.optimize_indices()
        ds = lance.dataset(str(twin))
        ds.validate()
        same_search(spark, ds, twin, rng, rows, metric, what + " optimized by us, then pylance", "HNSW" in index_type)
