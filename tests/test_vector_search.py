"""Exact nearest-neighbour search (the ``vector_search`` table function and ``LanceTable.search``) against pylance 14's
``to_table(nearest=...)`` on the same tables.

Tables and queries are drawn from ``SPARKLANCE_FUZZ_SEED``: float16, float32 and float64 vectors of 1 to 40 values,
several fragments, deleted rows, null vectors, vectors holding NaN, zero vectors and repeated vectors (ties); the
``l2``, ``cosine`` and ``dot`` distances; filters applied after the search (Lance's default) or before it, offsets,
distance ranges and batches of queries. Every row returned must carry the distance numpy computes for its vector,
the distances must be pylance's, and the rows pylance's wherever no two candidate distances are within float
rounding of each other. ``SPARKLANCE_FUZZ_N`` is the number of tables (``SPARKLANCE_FUZZ_N=40`` for a long run).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, cross_version, lance_raises  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import InvalidArgumentError  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261125"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "6"))
# Spark 3.x's Arrow has no half floats: float16 vectors are refused there (test_float16_vectors_on_spark_3).
TYPES = {"float32": pa.float32(), "float64": pa.float64(), **({"float16": pa.float16()} if SPARK_LINE >= (4, 0) else {})}
TOLERANCE = {"float16": 2e-3, "float32": 2e-5, "float64": 2e-6}  # _distance is float32 for all


def vectors_table(rng: random.Random, path: Path) -> Tuple[lance.LanceDataset, np.ndarray, str]:
    """A pylance-written table of ``id`` and ``emb`` (a fixed-size list) with awkward rows, some deleted; and the
    vectors (NaN for null ones) of every id."""
    type_name = rng.choice(sorted(TYPES))
    dim, n = rng.randint(1, 40), rng.randint(1, 300)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    centers = nprng.normal(0, 3, (rng.randint(1, 5), dim))
    vecs = centers[nprng.integers(0, len(centers), n)] + nprng.normal(0, 1, (n, dim))
    rows: List[Optional[List[float]]] = []
    for i in range(n):
        r = rng.random()
        if r < 0.04:
            rows.append(None)
        elif r < 0.07:
            v = list(vecs[i]); v[rng.randrange(dim)] = float("nan"); rows.append(v)
        elif r < 0.09:
            rows.append([0.0] * dim)
        elif r < 0.14 and i > 0 and rows[i - 1] is not None:
            rows.append(list(rows[i - 1]))  # a tie with the row before
        else:
            rows.append(list(vecs[i]))
    arrow_type = TYPES[type_name]
    table = pa.table({"id": pa.array(range(n), pa.int64()),
                      "tag": pa.array([rng.choice(["a", "b", "c"]) for _ in range(n)]),
                      "emb": pa.array(rows, pa.list_(arrow_type, dim))})
    ds = lance.write_dataset(table, str(path), max_rows_per_file=rng.choice([n, max(1, n // 3), 64]))
    if rng.random() < 0.5 and n > 3:
        ds.delete(f"id % {rng.randint(3, 7)} = 1")
    # The values as the file holds them (float16 rounding included), in float64.
    stored = np.array([[np.nan] * dim if v is None else v for v in table["emb"].to_pylist()], dtype=np.float64)
    return lance.dataset(str(path)), stored, type_name


def numpy_distance(metric: str, q: np.ndarray, v: np.ndarray) -> float:
    if metric == "l2":
        return float(((q - v) ** 2).sum())
    if metric == "cosine":
        return float(1 - (q @ v) / (np.linalg.norm(q) * np.linalg.norm(v)))
    return float(1 - q @ v)


def compare(ours: List[Tuple[int, float]], theirs: List[Tuple[int, float]], candidates: Dict[int, float],
            tol: float, what: str) -> None:
    """Equal distances (within ``tol``, relative), each of ours the one its row has, and equal ids where no other
    candidate's distance is within ``tol`` of the row's."""
    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows, pylance {len(theirs)}\nours {ours}\npylance {theirs}"
    def close(a, b):
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    for (oid, od), (tid, td) in zip(ours, theirs):
        assert close(od, td), f"{what}: distance {od} where pylance has {td}\nours {ours}\npylance {theirs}"
        assert close(od, candidates[oid]), f"{what}: row {oid} has distance {candidates[oid]}, not {od}"
        if sum(1 for d in candidates.values() if close(d, od)) == 1:
            assert oid == tid, f"{what}: row {oid} where pylance has {tid}\nours {ours}\npylance {theirs}"


def boundary_tied(candidates: Dict[int, float], k: int, tol: float) -> bool:
    """Whether the k-th nearest distance is tied (within ``tol``) with one beyond it: which rows are the k nearest
    is then a choice."""
    ds = sorted(candidates.values())
    return len(ds) > k and abs(ds[k] - ds[k - 1]) <= tol * max(1.0, abs(ds[k - 1]))


def test_exact_search_matches_pylance(spark, tmp_path):
    rng = random.Random(SEED)
    for t in range(N):
        path = tmp_path / f"t{t}.lance"
        ds, stored, type_name = vectors_table(rng, path)
        live = set(ds.to_table(columns=["id"])["id"].to_pylist())
        tol = TOLERANCE[type_name]
        dim = stored.shape[1]
        for _ in range(4):
            metric = rng.choice(["l2", "cosine", "dot"])
            q = np.array([rng.gauss(0, 3) for _ in range(dim)])
            if type_name == "float16":
                q = q.astype(np.float16).astype(np.float64)
            k = rng.randint(1, 40)
            filt = rng.choice([None, "tag = 'a'", "id % 2 = 0", "tag <> 'c' AND id > 20"])
            prefilter = filt is not None and rng.random() < 0.5
            offset = rng.choice([0, 0, 1, 3])
            nearest = {"column": "emb", "q": q.astype(np.float32), "k": k, "metric": metric}
            what = f"seed {SEED} table {t} ({type_name}, dim {dim}) {metric} k={k} filter={filt} prefilter={prefilter} offset={offset}"
            theirs_t = ds.to_table(nearest=nearest, filter=filt, prefilter=prefilter, offset=offset or None,
                                   with_row_id=True, columns=["id", "tag"])
            theirs = list(zip(theirs_t["id"].to_pylist(), theirs_t["_distance"].to_pylist()))
            ours_df = LanceTable.for_path(spark, str(path)).search(
                [float(x) for x in q], k=k, column="emb", metric=metric, filter=filt, prefilter=prefilter,
                offset=offset, columns=["id", "tag"], with_row_id=True)
            assert ours_df.columns == ["id", "tag", "_distance", "_rowid"], what
            rows = ours_df.collect()
            ours = [(r.id, r._distance) for r in rows]
            assert [r._rowid for r in rows] == theirs_t["_rowid"].to_pylist() or len({d for _, d in theirs}) < len(theirs), what
            candidates = {i: numpy_distance(metric, q, stored[i]) for i in live}
            candidates = {i: d for i, d in candidates.items() if not np.isnan(d)}
            if filt is not None and not prefilter and boundary_tied(candidates, k, tol):
                # The k nearest of all rows, filtered after: rows tied with the k-th may be in or out of those k on
                # either side (float16 in one dimension: cosine 0 for many rows, or pylance's -6e-8), so the rows
                # kept after the filter may differ in number. Each of ours must still be one of the k nearest.
                kth = sorted(candidates.values())[k - 1]
                assert len(ours) <= k, what
                for oid, od in ours:
                    assert abs(od - candidates[oid]) <= tol * max(1.0, abs(od)), what
                    assert od <= kth + tol * max(1.0, abs(kth)), f"{what}: row {oid} at {od} beyond the k-th {kth}"
                continue
            compare(ours, theirs, candidates, tol, what)
        # The same searches as one batch: each query's rows are those of its own search.
        qs = [np.array([rng.gauss(0, 3) for _ in range(dim)]) for _ in range(rng.randint(2, 4))]
        if type_name == "float16":
            qs = [q.astype(np.float16).astype(np.float64) for q in qs]
        metric, k, offset = rng.choice(["l2", "cosine", "dot"]), rng.randint(1, 30), rng.choice([0, 2])
        filt = rng.choice([None, "tag = 'b'"])
        prefilter = filt is not None and rng.random() < 0.5
        rows = LanceTable.for_path(spark, str(path)).search(
            [[float(x) for x in q] for q in qs], k=k, column="emb", metric=metric, filter=filt, prefilter=prefilter,
            offset=offset, columns=["id"]).collect()
        for i, q in enumerate(qs):
            what = f"seed {SEED} table {t} batch query {i} {metric} k={k} filter={filt} prefilter={prefilter} offset={offset}"
            theirs_t = ds.to_table(nearest={"column": "emb", "q": q.astype(np.float32), "k": k, "metric": metric},
                                   filter=filt, prefilter=prefilter, offset=offset or None, columns=["id"])
            candidates = {j: numpy_distance(metric, q, stored[j]) for j in live}
            compare([(r.id, r._distance) for r in rows if r.query_index == i],
                    list(zip(theirs_t["id"].to_pylist(), theirs_t["_distance"].to_pylist())),
                    {j: d for j, d in candidates.items() if not np.isnan(d)}, tol, what)


def test_batch_and_ranges_match_single_searches(spark, tmp_path):
    rng = random.Random(SEED + 1)
    ds, stored, type_name = vectors_table(rng, tmp_path / "b.lance")
    dim = stored.shape[1]
    table = LanceTable.for_path(spark, str(tmp_path / "b.lance"))
    queries = [[rng.gauss(0, 3) for _ in range(dim)] for _ in range(3)]
    batch = table.search(queries, k=5, column="emb", metric="l2", offset=1, filter="id % 3 <> 0")
    assert batch.columns[:1] == ["query_index"] and batch.columns[-1] == "_distance"
    got = [(r.query_index, r.id, r._distance) for r in batch.collect()]
    for i, q in enumerate(queries):
        single = [(i, r.id, r._distance) for r in
                  table.search(q, k=5, column="emb", metric="l2", offset=1, filter="id % 3 <> 0").collect()]
        assert [x for x in got if x[0] == i] == single, f"query {i}"
    # A distance range keeps lower <= d < upper before the nearest are chosen, as pylance's distance_range does.
    q = queries[0]
    all_d = sorted(r._distance for r in table.search(q, k=1000, column="emb").collect())
    if len(all_d) > 4 and all_d[1] < all_d[-2]:
        lower, upper = all_d[1], all_d[-2]
        ours = [(r.id, r._distance) for r in table.search(q, k=3, column="emb", distance_range=(lower, upper)).collect()]
        assert all(lower <= d < upper for _, d in ours) and ours[0][1] == lower
        # pylance sums squares in float32 and may land an ulp from our distance (seed 20261127: 87.6987152 against
        # our 87.6987228), so a boundary on a row's distance is compared with pylance halfway between two rows.
        lower, upper = (all_d[0] + all_d[1]) / 2, (all_d[-3] + all_d[-2]) / 2
        ours = [r.id for r in table.search(q, k=3, column="emb", distance_range=(lower, upper)).collect()]
        theirs_t = ds.to_table(nearest={"column": "emb", "q": np.array(q, np.float32), "k": 3,
                                        "distance_range": (lower, upper)}, columns=["id", "_distance"])
        assert ours == theirs_t["id"].to_pylist() or len(set(all_d)) < len(all_d)


def test_sql_forms_time_travel_and_vector_columns(spark, tmp_path):
    path = tmp_path / "s.lance"
    vecs = np.arange(24, dtype=np.float32).reshape(8, 3)
    lance.write_dataset(pa.table({"id": pa.array(range(8)), "emb": pa.FixedSizeListArray.from_arrays(
        pa.array(vecs.ravel()), 3)}), str(path))
    ds = lance.write_dataset(pa.table({"id": pa.array([100]), "emb": pa.FixedSizeListArray.from_arrays(
        pa.array([0.0, 1.0, 2.0], pa.float32()), 3)}), str(path), mode="append")
    ds.tags.create("first", 1)
    name = f"'lance.`{path}`'"
    named = spark.sql(f"SELECT id, _distance FROM VECTOR_SEARCH(table => {name}, query_vector => array(0, 1, 2), "
                      "vector_column => 'emb', num_results => 2)") if SPARK_LINE >= (3, 5) else None
    positional = spark.sql(f"SELECT id, _distance FROM vector_search({name}, array(0, 1, 2), 'emb', 2)")
    assert [(r.id, r._distance) for r in positional.collect()] == [(0, 0.0), (100, 0.0)]
    if named is not None:
        assert named.collect() == positional.collect()
    for version in ("1", "'first'"):
        old = spark.sql(f"SELECT id FROM vector_search({name}, array(0, 1, 2), 'emb', 2, 'l2', NULL, NULL, NULL, NULL, "
                        f"NULL, 0, {version})")
        assert [r.id for r in old.collect()] == [0, 1], version
    # The table's one vector column is found without naming it.
    assert [r.id for r in LanceTable.for_path(spark, str(path)).search([0, 1, 2], k=1).collect()] == [0]


@pytest.mark.skipif(SPARK_LINE >= (4, 0), reason="Spark 4's Arrow reads float16")
def test_float16_vectors_on_spark_3(spark, tmp_path):
    """A float16 vector column is refused with LANCE_UNSUPPORTED_FEATURE naming it, as float16 scalars are."""
    import sparklance

    path = tmp_path / "h.lance"
    lance.write_dataset(pa.table({"id": pa.array([1, 2]), "emb": pa.array([[1.0, 2.0], [3.0, 4.0]],
                                                                            pa.list_(pa.float16(), 2))}), str(path))
    with lance_raises(sparklance.UnsupportedFeatureError, match="Cannot read column 'emb': it is float16 vectors"):
        LanceTable.for_path(spark, str(path)).search([1.0, 2.0], column="emb").collect()
    assert [r.id for r in spark.read.format("lance").load(str(path)).select("id").collect()] == [1, 2]


def test_bad_arguments_are_clear_errors(spark, tmp_path):
    path = tmp_path / "e.lance"
    lance.write_dataset(pa.table({"id": pa.array([1, 2]), "s": pa.array(["x", "y"]),
                                  "emb": pa.FixedSizeListArray.from_arrays(pa.array([1.0, 2.0, 3.0, 4.0], pa.float32()), 2)}),
                        str(path))
    name = f"'lance.`{path}`'"
    cases = {
        f"vector_search({name}, array(1, 2, 3), 'emb', 2)": "query vector has 3 values; vector_column 'emb' holds vectors of 2",
        f"vector_search({name}, array(1, 2), 'nope', 2)": "vector_column 'nope' is not a column",
        f"vector_search({name}, array(1, 2), 's', 2)": "vector_column 's' is string",
        f"vector_search({name}, array(1, 2), 'emb', 0)": "'num_results' must be positive and at most",
        f"vector_search({name}, array(1, 2), 'emb', 2, 'manhattan')": "'manhattan' is not a distance type",
        f"vector_search({name}, array(1, NULL), 'emb', 2)": "holds a null at position 1",
        f"vector_search({name}, array(1, 2), 'emb', 2, 'l2', NULL, 'id >')": "filter 'id >' is not a SQL condition",
        f"vector_search({name})": "the argument 'query_vector' is required",
    }
    if SPARK_LINE >= (3, 5):
        cases[f"vector_search(table => {name}, query_vector => array(1, 2), vector_column => 'emb', top_k => 3)"] = \
            "there is no argument 'top_k'"
    for call, message in cases.items():
        with lance_raises(InvalidArgumentError, match=message):
            spark.sql(f"SELECT * FROM {call}").collect()
    table = LanceTable.for_path(spark, str(path))
    with lance_raises(InvalidArgumentError, match="different lengths"):
        table.search([[1.0, 2.0], [3.0]], column="emb").collect()
    with pytest.raises(InvalidArgumentError, match="finite numbers"):
        table.search([1.0, float("nan")], column="emb")
