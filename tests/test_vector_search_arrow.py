"""``LanceTable.to_table(nearest=...)``: the nearest-neighbour search as a ``pyarrow.Table``, pylance's call, without a
Spark DataFrame. Its rows must be those of ``LanceTable.search(...).collect()`` (the DataFrame path), for seeded
random tables (pylance's IVF_FLAT / IVF_PQ / IVF_SQ indexes, deletions, stable row ids, fragments appended after the
index), random options (filters after and before the search, refine, offsets, distance ranges, exact search), batches,
and a table changed between two searches; a search computed on the driver must run no Spark job; its columns keep
their Lance types, as pylance's ``to_table`` gives them.
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

from test_vector_index_search import compare, indexed_table  # noqa: E402
from test_vector_search_driver import no_job  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import InvalidArgumentError  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))


def nearest_of(q, opts):
    """pylance's ``nearest`` dict of a search's options."""
    nearest = {"column": "emb", "q": q, "k": opts["k"], "nprobes": opts["nprobes"], "use_index": opts["use_index"]}
    for key in ("refine_factor", "distance_range"):
        if opts.get(key) is not None:
            nearest[key] = opts[key]
    return nearest


def both(table, q, opts, batch=False):
    """The search's rows by ``to_table`` and by ``search(...).collect()``, as lists of tuples."""
    keep = dict(columns=opts["columns"], filter=opts["filter"], prefilter=opts["prefilter"], with_row_id=True,
                offset=opts["offset"])
    arrow = table.to_table(nearest=nearest_of(q, opts), **keep)
    df = table.search(q, k=opts["k"], column="emb", nprobes=opts["nprobes"], refine_factor=opts.get("refine_factor"),
                      distance_range=opts.get("distance_range"), bypass_vector_index=not opts["use_index"], **keep)
    assert arrow.column_names == df.columns
    rows = [tuple(r) for r in df.collect()]
    got = list(zip(*[arrow[c].to_pylist() for c in arrow.column_names])) if arrow.num_rows else []
    return [tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in got], \
        [tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in rows], arrow


def random_opts(rng):
    filt = rng.choice([None, "tag = 'a'", "id % 4 <> 0", "_distance < 40 AND tag <> 'c'"])
    return dict(k=rng.randint(1, 25), nprobes=rng.choice([1, 2, 4]), refine_factor=rng.choice([None, None, 2]),
                filter=filt, prefilter=filt is not None and "_distance" not in filt and rng.random() < 0.3,
                offset=rng.choice([0, 0, 2]), distance_range=rng.choice([None, (None, rng.uniform(5, 60))]),
                use_index=rng.random() < 0.85, columns=rng.choice([["id", "tag"], ["id", "emb"], None]))


def test_to_table_equals_the_dataframe_search(spark, tmp_path):
    rng = random.Random(f"{SEED}-arrow")
    for t in range(4 * N):
        index_type = rng.choice(["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
        unindexed, stable = rng.random() < 0.5, rng.random() < 0.4
        path = tmp_path / f"t{t}.lance"
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed, stable)
        table = LanceTable.for_path(spark, str(path))
        for _ in range(5):
            q = [rng.gauss(0, 3) for _ in range(dim)]
            opts = random_opts(rng)
            what = f"seed {SEED} table {t} {index_type} unindexed {unindexed} stable {stable} {opts}"
            ours, theirs, arrow = both(table, q, opts)
            assert ours == theirs, f"{what}: to_table against search().collect()"
            assert arrow.schema.field("_distance").type == pa.float32(), what
            assert arrow.schema.field("_rowid").type == pa.int64(), what
            if "emb" in arrow.column_names:
                assert arrow.schema.field("emb").type == ds.schema.field("emb").type, what
            batch = table.to_table(nearest={**nearest_of([q, q], opts)}, columns=opts["columns"], filter=opts["filter"],
                                   prefilter=opts["prefilter"], with_row_id=True, offset=opts["offset"])
            assert batch.column_names[0] == "query_index", what
            for i in (0, 1):
                mine = batch.filter(pa.compute.equal(batch["query_index"], i)).drop_columns(["query_index"])
                assert mine.to_pylist() == arrow.to_pylist(), f"{what}: batch query {i}"


def test_to_table_runs_no_job_and_gives_pylance_rows(spark, tmp_path):
    """A search its index serves alone is computed on the driver: no Spark job; pylance finds the same rows, with the
    same float32 distances for IVF_PQ (the index's sums) and equal up to float32 rounding for IVF_FLAT (measured in
    double precision here, in float32 by pylance)."""
    rng = random.Random(f"{SEED}-arrow-nojob")
    for t in range(2 * N):
        path = tmp_path / f"n{t}.lance"
        index_type = ["IVF_FLAT", "IVF_PQ"][t % 2]
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed=False, stable=rng.random() < 0.5)
        table = LanceTable.for_path(spark, str(path))
        for _ in range(4):
            q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32)
            k = rng.randint(1, 20)
            nearest = {"column": "emb", "q": q, "k": k, "nprobes": 4}
            ours = no_job(spark, lambda: table.to_table(nearest=nearest, columns=["id"], with_row_id=True))
            theirs = ds.to_table(nearest=nearest, columns=["id"], with_row_id=True)
            what = f"table {t} {index_type} k {k}"
            pairs = [list(zip(x["_rowid"].to_pylist(), x["_distance"].to_pylist())) for x in (ours, theirs)]
            compare(pairs[0], pairs[1], what)
            if index_type == "IVF_PQ":
                # The index's float32 sums exactly; rows as near as another may be either (compare allows it).
                assert [d for _, d in pairs[0]] == [d for _, d in pairs[1]], what


def test_to_table_after_the_table_changes(spark, tmp_path):
    """Rows deleted, rows appended (unindexed) and the index replaced between two searches: each answers for the
    version it reads, as the DataFrame search does."""
    rng = random.Random(f"{SEED}-arrow-changes")
    for t in range(2 * N):
        path = tmp_path / f"c{t}.lance"
        ds, dim = indexed_table(rng, path, "IVF_PQ", "l2", unindexed=False, stable=t % 2 == 1)
        q = [rng.gauss(0, 3) for _ in range(dim)]
        table = LanceTable.for_path(spark, str(path))
        opts = dict(k=rng.randint(5, 15), nprobes=3, filter=None, prefilter=False, offset=0, use_index=True,
                    columns=["id"])

        def check(label):
            ours, theirs, _ = both(table, q, opts)
            assert ours == theirs, f"table {t}: {label}"
            return [r[0] for r in ours]

        found = check("first")
        ds.delete(f"id IN ({', '.join(map(str, found[:3]))})")
        assert not set(check("after deleting rows it found")) & set(found[:3])
        lance.write_dataset(pa.table({"id": pa.array(range(10 ** 6, 10 ** 6 + 20), pa.int64()),
                                      "tag": pa.array(["a"] * 20),
                                      "emb": pa.FixedSizeListArray.from_arrays(
                                          pa.array(np.tile(np.array(q, dtype=np.float32), 20)), dim)}),
                            str(path), mode="append")
        assert set(check("after appending rows equal to the query")) >= set(range(10 ** 6, 10 ** 6 + min(20, opts["k"])))
        lance.dataset(str(path)).create_index("emb", index_type="IVF_PQ", num_partitions=2,
                                              num_sub_vectors=rng.choice([m for m in (2, 4) if dim % m == 0]),
                                              replace=True)
        check("after the index is replaced")


def test_to_table_refuses_bad_nearest(spark, tmp_path):
    rng = random.Random(f"{SEED}-arrow-bad")
    path = tmp_path / "bad.lance"
    indexed_table(rng, path, "IVF_FLAT", "l2", unindexed=False, stable=False)
    table = LanceTable.for_path(spark, str(path))
    with pytest.raises(InvalidArgumentError, match="unknown keys minimum_nprobes"):
        table.to_table(nearest={"column": "emb", "q": [0.0] * 8, "minimum_nprobes": 3})
    with pytest.raises(InvalidArgumentError, match="needs the query vector 'q'"):
        table.to_table(nearest={"column": "emb"})
    with pytest.raises(InvalidArgumentError, match="has 3 values"):
        table.to_table(nearest={"column": "emb", "q": [0.0, 1.0, 2.0]})


def test_to_table_over_an_index_pylance_optimized(spark, tmp_path):
    """pylance's ``optimize_indices()`` (one index merged: its default) writes one new segment covering the appended
    fragments: the search uses it and finds pylance's rows and distances. After ``num_indices_to_merge=0`` (a delta
    segment) both segments are searched through the index, with pylance's rows and distances."""
    rng = random.Random(f"{SEED}-arrow-optimized")
    for t, index_type in enumerate(["IVF_PQ", "IVF_FLAT", "IVF_SQ"]):
        path = tmp_path / f"o{t}.lance"
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed=True, stable=rng.random() < 0.5)
        ds.optimize.optimize_indices()
        ds = lance.dataset(str(path))
        assert len(ds.list_indices()) == 1 and len(ds.list_indices()[0]["fragment_ids"]) == len(ds.get_fragments())
        table = LanceTable.for_path(spark, str(path))
        for _ in range(3):
            q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32)
            nearest = {"column": "emb", "q": q, "k": rng.randint(1, 15), "nprobes": rng.choice([1, 3])}
            ours = no_job(spark, lambda: table.to_table(nearest=nearest, columns=["id"], with_row_id=True))
            theirs = ds.to_table(nearest=nearest, columns=["id"], with_row_id=True)
            pairs = [list(zip(x["_rowid"].to_pylist(), x["_distance"].to_pylist())) for x in (ours, theirs)]
            compare(pairs[0], pairs[1], f"{index_type} after optimize_indices()")
            if index_type == "IVF_PQ":
                # The index's float32 sums exactly; rows as near as another may be either (compare allows it).
                assert [d for _, d in pairs[0]] == [d for _, d in pairs[1]], f"{index_type} after optimize_indices()"
        lance.write_dataset(pa.table({"id": pa.array([10 ** 6], pa.int64()), "tag": pa.array(["a"]),
                                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(q), dim)}),
                            str(path), mode="append")
        lance.dataset(str(path)).optimize.optimize_indices(num_indices_to_merge=0)
        assert len(lance.dataset(str(path)).list_indices()) == 2
        df = table.search([float(x) for x in q], k=3, column="emb", nprobes=1, with_row_id=True)
        assert df._jdf.queryExecution().analyzed().toString().lstrip().startswith("LocalRelation"), index_type
        theirs = lance.dataset(str(path)).to_table(nearest={"column": "emb", "q": q, "k": 3, "nprobes": 1},
                                                   columns=["id"], with_row_id=True)
        compare([(r._rowid, r._distance) for r in df.collect()],
                list(zip(theirs["_rowid"].to_pylist(), theirs["_distance"].to_pylist())), f"{index_type} delta segment")
