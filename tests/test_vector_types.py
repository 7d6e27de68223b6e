"""Vector columns of other element types than float32 against pylance 14 (issue #17).

- uint8 vectors with ``distance_type => 'hamming'`` (the number of bits that differ, Lance's definition): pylance
  writes the table, both search it exactly, and the rows and distances must be pylance's. pylance builds IVF_FLAT and
  IVF_HNSW_FLAT indexes for hamming (not IVF_PQ); sparklance does not search them and measures hamming exactly, so
  with such an index the rows must be the exact nearest (pylance's with ``use_index=False``).
- hamming over float vectors, other distances over uint8 vectors, and query values that are not bytes are refused
  by name; building a hamming index, and building indexes over float16 and float64 vectors, is refused as not
  supported (nothing committed). Searching pylance's float16/float64 indexes is covered by
  test_vector_index_search.py::test_float16_and_float64_vectors.

Tables and queries are drawn from ``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` scales the number of tables.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import lance_raises, start_spark, warehouse_with  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import InvalidArgumentError, UnsupportedFeatureError  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("test_vector_types", warehouse_with(tmp_path_factory, "vt_wh"))
    yield session
    session.stop()


def uint8_table(rng: random.Random, path: Path) -> tuple:
    """A table of ``id``, ``emb`` (fixed-size lists of uint8, some rows near copies of others so that distances are
    small and tie often) in a few fragments, with some rows deleted."""
    dim = rng.choice([4, 8, 16, 32])
    n = rng.randint(300, 1200)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    v = nprng.integers(0, 256, (n, dim)).astype(np.uint8)
    flips = nprng.random((n, dim)) < 0.5
    v[n // 2:] = np.where(flips[n // 2:], v[: n - n // 2] ^ (1 << nprng.integers(0, 8, (n - n // 2, dim))).astype(np.uint8),
                          v[: n - n // 2])
    table = pa.table({"id": pa.array(range(n), pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel(), pa.uint8()), dim)})
    ds = lance.write_dataset(table, str(path), max_rows_per_file=rng.choice([200, 500, n]))
    if rng.random() < 0.6:
        ds.delete(f"id % {rng.randint(3, 9)} = 2")
    return lance.dataset(str(path)), v


def both(spark, ds, path, q, k, use_index=True, **opts):
    theirs = ds.to_table(nearest={"column": "emb", "q": q, "k": k, "metric": "hamming", "use_index": use_index},
                         with_row_id=True, columns=["id"], **opts)
    ours = LanceTable.for_path(spark, str(path)).search([int(x) for x in q], k=k, column="emb", metric="hamming",
                                                       columns=["id"], with_row_id=True, **opts).collect()
    return ([(r._rowid, r._distance) for r in ours],
            list(zip(theirs["_rowid"].to_pylist(), theirs["_distance"].to_pylist())))


def same_up_to_last_tie(ours, theirs, what):
    """The same distances, and the same rows except among those tied with the last distance returned (pylance's
    exact search keeps an arbitrary subset of those)."""
    assert [d for _, d in ours] == [d for _, d in theirs], f"{what}\nours {ours}\npylance {theirs}"
    if ours:
        last = ours[-1][1]
        assert [r for r, d in ours if d != last] == [r for r, d in theirs if d != last], \
            f"{what}\nours {ours}\npylance {theirs}"


def test_hamming_exact_search_matches_pylance(spark, tmp_path):
    rng = random.Random(f"{SEED}-hamming")
    for t in range(3 * N):
        path = tmp_path / f"h{t}.lance"
        ds, v = uint8_table(rng, path)
        for _ in range(4):
            q = v[rng.randrange(len(v))].copy() if rng.random() < 0.5 else \
                np.array([rng.randrange(256) for _ in range(v.shape[1])], dtype=np.uint8)
            k = rng.randint(1, 40)
            filt = rng.choice([None, "id % 3 = 0"])
            ours, theirs = both(spark, ds, path, q, k, filter=filt, prefilter=filt is not None)
            same_up_to_last_tie(ours, theirs, f"seed {SEED} table {t} dim {v.shape[1]} k={k} filter={filt}")
            # The distance is the bits that differ, whatever pylance says.
            ids = {r.id: r._distance for r in LanceTable.for_path(spark, str(path)).search(
                [int(x) for x in q], k=k, column="emb", metric="hamming", columns=["id"]).collect()}
            for i, d in ids.items():
                assert d == int(np.unpackbits(v[i] ^ q).sum()), f"row {i}"


def test_hamming_with_pylance_index_is_exact(spark, tmp_path):
    rng = random.Random(f"{SEED}-hamming-index")
    for index_type in ("IVF_FLAT", "IVF_HNSW_FLAT"):
        path = tmp_path / f"{index_type}.lance"
        ds, v = uint8_table(rng, path)
        ds.create_index("emb", index_type, num_partitions=4, metric="hamming")
        ds = lance.dataset(str(path))
        for _ in range(3):
            q = v[rng.randrange(len(v))].copy()
            k = rng.randint(1, 30)
            ours, exact = both(spark, ds, path, q, k, use_index=False)
            same_up_to_last_tie(ours, exact, f"seed {SEED} {index_type} k={k}")
        # An l2 search of the column is refused, the index notwithstanding.
        with lance_raises(InvalidArgumentError, match="uint8, which Lance measures by distance_type 'hamming' only"):
            LanceTable.for_path(spark, str(path)).search([0] * v.shape[1], k=3, column="emb").collect()


def test_refusals(spark, tmp_path):
    rng = random.Random(f"{SEED}-refusals")
    path = tmp_path / "u.lance"
    ds, v = uint8_table(rng, path)
    dim = v.shape[1]
    table = LanceTable.for_path(spark, str(path))
    with lance_raises(InvalidArgumentError, match="takes whole numbers from 0 to 255"):
        table.search([0.5] + [0] * (dim - 1), k=3, column="emb", metric="hamming").collect()
    with lance_raises(InvalidArgumentError, match="takes whole numbers from 0 to 255"):
        table.search([256] + [0] * (dim - 1), k=3, column="emb", metric="hamming").collect()
    with lance_raises(InvalidArgumentError, match="not cosine"):
        table.search([1] * dim, k=3, column="emb", metric="cosine").collect()
    fpath = tmp_path / "f.lance"
    lance.write_dataset(pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(40, np.float32)), 4)}),
                        str(fpath))
    with lance_raises(InvalidArgumentError, match="'hamming' measures vectors of uint8"):
        LanceTable.for_path(spark, str(fpath)).search([1.0] * 4, k=3, column="emb", metric="hamming").collect()
    name = f"lance.`{path}`"
    before = lance.dataset(str(path)).version
    with lance_raises(UnsupportedFeatureError, match="holds vectors of uint8.*does not build hamming indexes"):
        spark.sql(f"ALTER TABLE {name} CREATE INDEX h USING ivf_flat (emb) WITH (num_partitions = 2, "
                  "distance_type = 'hamming')")
    assert lance.dataset(str(path)).version == before


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_index_build_over_float16_and_float64_is_refused(spark, tmp_path, dtype):
    rng = np.random.default_rng(SEED)
    path = tmp_path / f"{dtype}.lance"
    v = rng.standard_normal((300, 8)).astype(dtype)
    lance.write_dataset(pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 8)}), str(path))
    for kind in ("ivf_flat", "ivf_pq", "ivf_sq"):
        with lance_raises(UnsupportedFeatureError, match="float32 vectors only"):
            spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX e USING {kind} (emb) WITH (num_partitions = 2)")
    assert lance.dataset(str(path)).version == 1 and lance.dataset(str(path)).list_indices() == []
