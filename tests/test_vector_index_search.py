"""``vector_search`` served by the vector indexes pylance builds (IVF_FLAT, IVF_PQ, IVF_SQ) against pylance 14's
``to_table(nearest=...)`` with the same ``nprobes`` and ``refine_factor``.

Tables are drawn from ``SPARKLANCE_FUZZ_SEED``: clustered float32 vectors (float16 and float64 in a test of their
own) in several fragments, with or without stable row ids; pylance builds the index (a few partitions, PQ sub-vectors dividing the dimension), rows are then
deleted and a fragment may be appended that the index does not cover. For random queries, ``nprobes``,
``refine_factor``, ``k`` and filters (before or after the search), our rows must be pylance's and our distances
pylance's to float32 rounding (rows may differ only where two distances are that close). ``SPARKLANCE_FUZZ_N`` is the
number of tables per index type (``SPARKLANCE_FUZZ_N=10`` for a long run).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path
from typing import List, Tuple

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, lance_raises  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import CorruptFileError, StorageError  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
TOL = 2e-5


def indexed_table(rng: random.Random, path: Path, index_type: str, metric: str, unindexed: bool,
                  stable: bool, num_bits: int = 8, dtype: str = "float32") -> Tuple[lance.LanceDataset, int]:
    """A table of ``id``, ``tag``, ``emb`` (vectors of ``dtype``) with an index pylance built, rows deleted after the
    build, and (``unindexed``) a fragment appended after it."""
    dim = rng.choice([8, 12, 16, 32])
    n = rng.randint(1200, 2400)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    centers = nprng.normal(0, 3, (rng.randint(3, 10), dim))

    def rows(start: int, count: int) -> pa.Table:
        v = (centers[nprng.integers(0, len(centers), count)] + nprng.normal(0, 1, (count, dim))).astype(dtype)
        return pa.table({"id": pa.array(range(start, start + count), pa.int64()),
                         "tag": pa.array([rng.choice(["a", "b", "c"]) for _ in range(count)]),
                         "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), dim)})

    ds = lance.write_dataset(rows(0, n), str(path), max_rows_per_file=rng.choice([400, 700, n]),
                             enable_stable_row_ids=stable)
    params = {"num_partitions": rng.choice([4, 8, 16]), "metric": metric}
    if index_type == "IVF_PQ":
        params["num_sub_vectors"] = rng.choice([m for m in (2, 4, 8) if dim % m == 0])
        params["num_bits"] = num_bits
    ds.create_index("emb", index_type=index_type, **params)
    if unindexed:
        ds = lance.write_dataset(rows(n, rng.randint(50, 300)), str(path), mode="append")
    if rng.random() < 0.7:
        ds.delete(f"id % {rng.randint(3, 9)} = 1")
    return lance.dataset(str(path)), dim


def compare(ours: List[Tuple[int, float]], theirs: List[Tuple[int, float]], what: str, tol: float = TOL) -> None:
    """The same distances position by position, and the same rows wherever a distance is not within ``tol``
    (float32 rounding) of another one (or, at the end, of a row not returned)."""
    def close(a: float, b: float) -> bool:
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))

    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows, pylance {len(theirs)}\nours {ours}\npylance {theirs}"
    distances = [d for _, d in ours] + [d for _, d in theirs]
    for i, ((oid, od), (tid, td)) in enumerate(zip(ours, theirs)):
        assert close(od, td), f"{what}: distance {od} at {i} where pylance has {td}\nours {ours}\npylance {theirs}"
        tied = sum(1 for d in distances if close(d, od)) > 2 or i == len(ours) - 1
        assert oid == tid or tied, f"{what}: row {oid} at {i} where pylance has {tid}\nours {ours}\npylance {theirs}"
    if all(sum(1 for d in distances if close(d, od)) == 2 for _, od in ours[:-1]):
        assert [i for i, _ in ours[:-1]] == [i for i, _ in theirs[:-1]], what


def search_both(spark, ds, path, q, k, metric, what, **opts):
    nearest = {"column": "emb", "q": q.astype(np.float32), "k": k, "metric": metric}
    for key in ("nprobes", "refine_factor", "ef"):
        if opts.get(key) is not None:
            nearest[key] = opts[key]
    if opts.get("bypass_vector_index"):
        nearest["use_index"] = False
    filt, prefilter, tol = opts.get("filter"), opts.get("prefilter", False), opts.pop("tol", TOL)
    theirs_t = ds.to_table(nearest=nearest, filter=filt, prefilter=prefilter, with_row_id=True, columns=["id"])
    ours_df = LanceTable.for_path(spark, str(path)).search(
        [float(x) for x in q], k=k, column="emb", metric=metric, filter=filt, prefilter=prefilter,
        columns=["id"], with_row_id=True, **{k2: v for k2, v in opts.items() if k2 not in ("filter", "prefilter")})
    rows = ours_df.collect()
    ours = [(r._rowid, r._distance) for r in rows]
    theirs = list(zip(theirs_t["_rowid"].to_pylist(), theirs_t["_distance"].to_pylist()))
    if filt is not None and not prefilter:
        # Rows as near as the k-th may take its place in either search, and the filter after the search hides which
        # did (pylance breaks such a tie at the k-th row by its partition order): the rows equally near are left out.
        unfiltered = ds.to_table(nearest={**nearest, "k": k + 1}, with_row_id=True, columns=["id"])["_distance"].to_pylist()
        if len(unfiltered) == k + 1 and abs(unfiltered[k] - unfiltered[k - 1]) <= tol * max(1.0, abs(unfiltered[k])):
            def near(d):
                return abs(d - unfiltered[k]) <= tol * max(1.0, abs(d))
            ours, theirs = [r for r in ours if not near(r[1])], [r for r in theirs if not near(r[1])]
    ours, theirs = without_candidate_ties(ds, nearest, opts, ours, theirs, tol)
    compare(ours, theirs, what, tol)
    return rows


def without_candidate_ties(ds, nearest, opts, ours, theirs, tol):
    """When the rows the index finds are measured again exactly (``refine_factor``, or fragments the index does not
    cover), rows whose index distances tie at the last candidate's may be found by either search, and pylance breaks
    that tie in no fixed order (equal PQ codes give equal distances): their exact distances then differ, so the two
    lists differ by more than a tie. Such rows are left out of both, and the lists compared as far as both go: each
    is the nearest of the same other candidates."""
    refine = nearest.get("refine_factor")
    if nearest.get("use_index") is False:
        return ours, theirs
    unindexed = ds.stats.index_stats("emb_idx")["num_unindexed_rows"] > 0
    if refine is None and not unindexed:
        return ours, theirs
    wanted = nearest["k"] * (refine or 1)
    prefilter = opts.get("prefilter", False)
    approx = ds.to_table(nearest={**{k: v for k, v in nearest.items() if k != "refine_factor"}, "k": wanted + 1},
                         fast_search=True, filter=opts.get("filter") if prefilter else None, prefilter=prefilter,
                         with_row_id=True, columns=["id"])
    rowids, distances = approx["_rowid"].to_pylist(), approx["_distance"].to_pylist()
    if len(distances) <= wanted or abs(distances[wanted] - distances[wanted - 1]) > tol * max(1.0, abs(distances[wanted])):
        return ours, theirs
    last = distances[wanted - 1]
    # Every row whose index distance ties the last candidate's, also beyond the k + 1 asked for.
    everything = ds.to_table(nearest={**{k: v for k, v in nearest.items() if k != "refine_factor"}, "k": ds.count_rows()},
                             fast_search=True, with_row_id=True, columns=["id"])
    tied = {r for r, d in zip(everything["_rowid"].to_pylist(), everything["_distance"].to_pylist())
            if abs(d - last) <= tol * max(1.0, abs(last))}
    ours, theirs = [r for r in ours if r[0] not in tied], [r for r in theirs if r[0] not in tied]
    n = min(len(ours), len(theirs))
    return ours[:n], theirs[:n]


@pytest.mark.parametrize("index_type", ["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
def test_index_search_matches_pylance(spark, tmp_path, index_type):
    rng = random.Random(f"{SEED}-{index_type}")
    for t in range(N * 3):
        metric = "l2" if index_type == "IVF_SQ" else ["l2", "cosine", "dot"][t % 3]
        unindexed, stable = rng.random() < 0.5, rng.random() < 0.3
        path = tmp_path / f"{index_type}{t}.lance"
        ds, dim = indexed_table(rng, path, index_type, metric, unindexed, stable)
        for _ in range(4):
            q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64)
            k = rng.randint(1, 30)
            nprobes = rng.choice([1, 2, 3, 5, 16])
            refine = rng.choice([None, None, 1, 3])
            filt = rng.choice([None, None, "tag = 'a'", "id % 4 <> 0"])
            prefilter = filt is not None and rng.random() < 0.5
            what = (f"seed {SEED} {index_type} {metric} table {t} (dim {dim}, unindexed {unindexed}, stable ids "
                    f"{stable}) k={k} nprobes={nprobes} refine={refine} filter={filt} prefilter={prefilter}")
            search_both(spark, ds, path, q, k, metric, what, nprobes=nprobes, refine_factor=refine, filter=filt,
                        prefilter=prefilter)


@pytest.mark.parametrize("metric", ["l2", "dot", "cosine"])
def test_pq_distances_are_pylances_to_the_bit(spark, tmp_path, metric):
    """Every row's 8-bit IVF_PQ distance equals pylance's float32 value exactly, for sub-vectors shorter than, equal
    to and longer than pylance's kernels' 8 and 16 lanes (its table entries sum with FMA lanes, or plain lanes, in
    an order that rounds differently from a plain running sum: 40% of the rows differed by an ulp for 16-value
    sub-vectors, seed 20261202, before the table was summed as pylance sums it)."""
    rng = random.Random(f"{SEED}-pq-bits-{metric}")
    cases = [(16, 2), (32, 2), (24, 2), (40, 2), (48, 2), (32, 4), (64, 2), (12, 2)]
    rng.shuffle(cases)
    for t, (dim, m) in enumerate(cases[:max(3, N * 2)]):
        nprng = np.random.default_rng(rng.randrange(2 ** 32))
        centers = nprng.normal(0, 3, (5, dim))
        v = (centers[nprng.integers(0, 5, 900)] + nprng.normal(0, 1, (900, dim))).astype(np.float32)
        path = tmp_path / f"pq{t}.lance"
        ds = lance.write_dataset(pa.table({"id": pa.array(range(900), pa.int64()),
                                           "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), dim)}),
                                 str(path))
        ds.create_index("emb", index_type="IVF_PQ", num_partitions=2, num_sub_vectors=m, metric=metric)
        q = nprng.normal(0, 3, dim).astype(np.float32)
        theirs = ds.to_table(nearest={"column": "emb", "q": q, "k": 900, "nprobes": 2, "metric": metric},
                             with_row_id=True, columns=["id"])
        ours = LanceTable.for_path(spark, str(path)).search(
            [float(x) for x in q], k=900, column="emb", metric=metric, nprobes=2, with_row_id=True,
            columns=["id"]).collect()
        want = dict(zip(theirs["_rowid"].to_pylist(), theirs["_distance"].to_pylist()))
        got = {r._rowid: r._distance for r in ours}
        differ = [(r, got.get(r), d) for r, d in want.items() if got.get(r) != d]
        assert len(got) == len(want) == 900 and not differ, \
            f"{metric} dim {dim}, {m} sub-vectors: {len(differ)} of 900 distances differ, e.g. {differ[:3]}"


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_float16_and_float64_vectors(spark, tmp_path, dtype):
    """pylance indexes float16 and float64 vectors too; it measures float16 ones in float16, hence the tolerance."""
    if dtype == "float16" and SPARK_LINE < (4, 0):
        pytest.skip("Spark 3.x's Arrow has no half floats")
    rng = random.Random(f"{SEED}-{dtype}")
    for index_type in ("IVF_FLAT", "IVF_PQ", "IVF_SQ"):
        path = tmp_path / f"{dtype}{index_type}.lance"
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed=rng.random() < 0.5, stable=False, dtype=dtype)
        for _ in range(2):
            q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64)
            search_both(spark, ds, path, q, rng.randint(1, 20), "l2", f"{dtype} {index_type}", nprobes=rng.choice([1, 2, 4]),
                        refine_factor=rng.choice([None, 2]), tol=2e-3 if dtype == "float16" else TOL)


def test_bypass_other_metric_batch_and_explain(spark, tmp_path):
    rng = random.Random(SEED + 1)
    path = tmp_path / "b.lance"
    ds, dim = indexed_table(rng, path, "IVF_PQ", "l2", unindexed=False, stable=False)
    q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64)
    # An exact search, asked for or because the index is for another distance, is pylance's exact search.
    search_both(spark, ds, path, q, 10, "l2", "bypass", bypass_vector_index=True)
    exact = search_both(spark, ds, path, q, 10, "cosine", "cosine over an l2 index", nprobes=1)
    # 4-bit PQ codes are searched through the index too (tests/test_vector_index_pq4.py), or exactly when asked.
    path4 = tmp_path / "b4.lance"
    ds4, dim4 = indexed_table(rng, path4, "IVF_PQ", "l2", unindexed=False, stable=False, num_bits=4)
    q4 = np.array([rng.gauss(0, 3) for _ in range(dim4)], dtype=np.float32).astype(np.float64)
    search_both(spark, ds4, path4, q4, 10, "l2", "4-bit PQ exact", bypass_vector_index=True)
    search_both(spark, ds4, path4, q4, 10, "l2", "4-bit PQ", nprobes=1)
    approximate = search_both(spark, ds, path, q, 10, "l2", "index", nprobes=1)
    assert [r._distance for r in approximate] != [r._distance for r in
                                                  LanceTable.for_path(spark, str(path)).search(
                                                      [float(x) for x in q], k=10, column="emb", bypass_vector_index=True
                                                  ).collect()], "the index's PQ distances are approximate"
    table = LanceTable.for_path(spark, str(path))
    # A batch: each query's rows are those of its own search.
    qs = [np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64) for _ in range(3)]
    batch = table.search([[float(x) for x in v] for v in qs], k=7, column="emb", nprobes=2, with_row_id=True,
                         offset=1).collect()
    for i, v in enumerate(qs):
        single = table.search([float(x) for x in v], k=7, column="emb", nprobes=2, with_row_id=True, offset=1).collect()
        assert [(r._rowid, r._distance) for r in batch if r.query_index == i] == \
            [(r._rowid, r._distance) for r in single], f"query {i}"
    # EXPLAIN names the index that served the search.
    vec = ", ".join(str(float(x)) for x in q)
    name = f"'lance.`{path}`'"
    plan = "\n".join(r[0] for r in spark.sql(
        f"EXPLAIN SELECT * FROM vector_search({name}, array({vec}), 'emb', 5, 'l2', NULL, NULL, 3)").collect())
    assert "IVF_PQ index 'emb_idx' on emb" in plan and "nprobes=3" in plan, plan
    plan = "\n".join(r[0] for r in spark.sql(
        f"EXPLAIN SELECT * FROM vector_search({name}, array({vec}), 'emb', 5, 'cosine')").collect())
    assert "vector_index" not in plan, plan
    assert len(exact) == 10


def test_damaged_index_is_a_clear_error(spark, tmp_path):
    rng = random.Random(SEED + 2)
    path = tmp_path / "d.lance"
    ds, dim = indexed_table(rng, path, "IVF_FLAT", "l2", unindexed=False, stable=False)
    index_dir = path / "_indices" / ds.list_indices()[0]["uuid"]
    aux = index_dir / "auxiliary.idx"
    data = aux.read_bytes()
    aux.write_bytes(data[: len(data) // 2])
    q = [0.0] * dim
    with lance_raises(CorruptFileError, match="auxiliary.idx"):
        LanceTable.for_path(spark, str(path)).search(q, k=3, column="emb").collect()
    # Bypassing the index still searches.
    assert len(LanceTable.for_path(spark, str(path)).search(q, k=3, column="emb", bypass_vector_index=True).collect()) == 3
    shutil.rmtree(index_dir)
    with lance_raises(StorageError, match="index.idx does not exist"):
        LanceTable.for_path(spark, str(path)).search(q, k=3, column="emb").collect()


def test_cached_index_answers_only_for_its_version(spark, tmp_path):
    """The driver keeps an index's centroids and partitions once read; a search (and a batch) after rows are deleted
    or appended, after the index is replaced, or of an older version (with the index it had) is still pylance's search
    of that version."""
    rng = random.Random(SEED + 3)
    for t in range(2 * N):
        path = tmp_path / f"c{t}.lance"
        stable = t % 2 == 1
        ds, dim = indexed_table(rng, path, "IVF_PQ", "l2", unindexed=False, stable=stable)
        queries = [np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64) for _ in range(3)]
        k, nprobes = rng.randint(5, 20), rng.choice([2, 4])
        what = f"seed {SEED} table {t} (stable ids {stable})"

        def both(dataset, label, **opts):
            singles = [search_both(spark, dataset, path, q, k, "l2", f"{what}: {label}", nprobes=nprobes, **opts)
                       for q in queries]
            # The batch of the same queries, of the same version, gives each query's rows.
            batch = LanceTable.for_path(spark, str(path)).search(
                [[float(x) for x in q] for q in queries], k=k, column="emb", nprobes=nprobes, columns=["id"],
                with_row_id=True, **opts).collect()
            for i, rows in enumerate(singles):
                assert [(r._rowid, r._distance) for r in batch if r.query_index == i] == \
                    [(r._rowid, r._distance) for r in rows], f"{what}: {label}: batch query {i}"
            return singles

        first = both(ds, "first search")
        # Served by the index alone, a search reads its rows by row id on the driver: no Spark job.
        sc = spark.sparkContext
        sc.setJobGroup("vector-search", "vector search test")
        try:
            LanceTable.for_path(spark, str(path)).search([float(x) for x in queries[0]], k=k, column="emb",
                                                          nprobes=nprobes).collect()
            assert sc.statusTracker().getJobIdsForGroup("vector-search") == [], what
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)
        before = ds.version
        # The rows found are deleted: a search must not return them, though its index is the one cached.
        found = sorted({r.id for rows in first for r in rows})
        ds.delete(f"id IN ({', '.join(str(i) for i in found[: len(found) // 2])})")
        both(lance.dataset(str(path)), "after deleting rows it found")
        ds = lance.write_dataset(pa.table({"id": pa.array(range(10 ** 6, 10 ** 6 + 60), pa.int64()),
                                           "tag": pa.array(["a"] * 60),
                                           "emb": pa.FixedSizeListArray.from_arrays(pa.array(
                                               np.concatenate([q.astype(np.float32) for q in queries] * 20)), dim)}),
                                 str(path), mode="append")
        both(lance.dataset(str(path)), "after appending rows equal to the queries")
        # A new index in place of the old one (another uuid, other partitions).
        ds.create_index("emb", index_type="IVF_PQ", num_partitions=rng.choice([2, 3, 5]),
                        num_sub_vectors=rng.choice([m for m in (2, 4) if dim % m == 0]), replace=True)
        both(lance.dataset(str(path)), "after the index is replaced")
        both(lance.dataset(str(path), version=before), "of the version before", version=before)


def test_batch_equals_single_searches(spark, tmp_path):
    """A batch is one plan (each row taken once, paired with the queries that found it), and each query's rows are
    those of its own search, for random tables (deletions, stable row ids, unindexed fragments) and options (refine,
    filters before or after, offset, distance range); a small batch served by the index alone runs no Spark job."""
    rng = random.Random(SEED + 4)
    for t in range(4 * N):
        index_type = rng.choice(["IVF_FLAT", "IVF_PQ"])
        unindexed, stable = rng.random() < 0.5, rng.random() < 0.4
        path = tmp_path / f"batch{t}.lance"
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed, stable)
        table = LanceTable.for_path(spark, str(path))
        for _ in range(4):
            qs = [[rng.gauss(0, 3) for _ in range(dim)] for _ in range(rng.randint(1, 6))]
            qs.append(list(qs[0]))  # two queries finding the same rows
            filt = rng.choice([None, "tag = 'a'", "id % 4 <> 0"])
            opts = dict(k=rng.randint(1, 15), nprobes=rng.choice([1, 2, 4]), refine_factor=rng.choice([None, None, 2]),
                        filter=filt, prefilter=filt is not None and rng.random() < 0.5, offset=rng.choice([0, 0, 2]),
                        distance_range=rng.choice([None, (None, rng.uniform(5, 60))]), with_row_id=True)
            what = f"seed {SEED} table {t} {index_type} unindexed {unindexed} stable {stable} {opts}"
            df = table.search(qs, column="emb", columns=["id", "tag"], **opts)
            plan = df._jdf.queryExecution().optimizedPlan().toString()
            assert "Union" not in plan, f"{what}: {plan}"
            batch = [(r.query_index, r.id, r.tag, r._rowid, r._distance) for r in df.collect()]
            for i, q in enumerate(qs):
                single = [(i, r.id, r.tag, r._rowid, r._distance) for r in
                          table.search(q, column="emb", columns=["id", "tag"], **opts).collect()]
                assert [r for r in batch if r[0] == i] == single, f"{what}: query {i}"
        # Served by the index alone, a few queries' rows are taken and paired on the driver, without a job.
        if not unindexed:
            sc = spark.sparkContext
            sc.setJobGroup("vector-batch", "vector batch test")
            try:
                rows = table.search(qs, k=5, column="emb", nprobes=2).collect()
                assert sc.statusTracker().getJobIdsForGroup("vector-batch") == [], what
                assert {r.query_index for r in rows} <= set(range(len(qs))) and rows, what
            finally:
                sc.setLocalProperty("spark.jobGroup.id", None)


def test_dataframe_and_sql_forms_agree(spark, tmp_path):
    """LanceTable.search builds its plan on the JVM without SQL text; the SQL table function gives the same rows, and
    both refuse the same bad arguments."""
    rng = random.Random(SEED + 5)
    path = tmp_path / "forms.lance"
    ds, dim = indexed_table(rng, path, "IVF_PQ", "l2", unindexed=rng.random() < 0.5, stable=rng.random() < 0.5)
    table = LanceTable.for_path(spark, str(path))
    name = f"'lance.`{path}`'"
    for _ in range(3):
        q = [rng.gauss(0, 3) for _ in range(dim)]
        k, nprobes = rng.randint(1, 20), rng.choice([1, 3])
        vec = ", ".join(repr(x) for x in q)
        sql = spark.sql(f"SELECT * FROM vector_search({name}, array({vec}), 'emb', {k}, 'l2', array('id'), 'id % 2 = 0', "
                        f"{nprobes}, NULL, NULL, 1, NULL, NULL, NULL, false, false, true)").collect()
        ours = table.search(q, k=k, column="emb", columns=["id"], filter="id % 2 = 0", nprobes=nprobes, offset=1,
                            with_row_id=True).collect()
        assert [tuple(r) for r in ours] == [tuple(r) for r in sql]
        qs = [[rng.gauss(0, 3) for _ in range(dim)] for _ in range(3)]
        vecs = ", ".join("array(" + ", ".join(repr(x) for x in v) + ")" for v in qs)
        sql = spark.sql(f"SELECT * FROM vector_search({name}, array({vecs}), 'emb', {k}, 'l2', array('id'), NULL, "
                        f"{nprobes})").collect()
        assert [tuple(r) for r in table.search(qs, k=k, column="emb", columns=["id"], nprobes=nprobes).collect()] == \
            [tuple(r) for r in sql]
    from sparklance.errors import InvalidArgumentError
    with lance_raises(InvalidArgumentError, match="'num_results' must be positive"):
        table.search([0.0] * dim, k=0, column="emb")
    with lance_raises(InvalidArgumentError, match=f"the query vector has {dim + 1} values"):
        table.search([0.0] * (dim + 1), column="emb")
    with lance_raises(InvalidArgumentError, match="vector_column 'nope' is not a column"):
        table.search([0.0] * dim, column="nope")
