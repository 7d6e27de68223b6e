"""``LanceTable.search`` of a search its vector index serves and that takes few rows is computed on the driver (the
index search, the take of the rows found and of unindexed fragments, refine, the filter after the search, the
offset) and returned as a DataFrame over the rows computed: no Spark job to collect it. Its rows must be those of the
SQL table function, which plans the same search for Spark, of the batch form, and of pylance's
``to_table(nearest=...)``: seeded random tables with deletions, stable row ids, fragments appended after the index,
tables changed between two searches, and random options. A search taking more rows than ``driver_lookup_rows`` keeps
the plan Spark runs.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from test_vector_index_search import indexed_table, search_both  # noqa: E402

from sparklance import LanceTable  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))


def on_driver(df) -> bool:
    """Whether the DataFrame's plan is the rows computed on the driver."""
    return df._jdf.queryExecution().analyzed().toString().lstrip().startswith("LocalRelation")


def no_job(spark, f):
    """``f()``'s value, checked to have run no Spark job."""
    sc = spark.sparkContext
    sc.setJobGroup("vsd", "driver vector search")
    try:
        value = f()
        assert sc.statusTracker().getJobIdsForGroup("vsd") == [], "a Spark job ran"
        return value
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def sql_rows(spark, path, q, dim, opts):
    """The same search through the SQL table function (positional arguments), which Spark plans."""
    vec = ", ".join(repr(float(x)) for x in q)
    def lit(v):
        return "NULL" if v is None else repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    lower, upper = opts.get("distance_range") or (None, None)
    args = [f"'lance.`{path}`'", f"array({vec})", "'emb'", str(opts["k"]), "'l2'", "array('id', 'tag')",
            lit(opts.get("filter")), lit(opts.get("nprobes")), lit(opts.get("refine_factor")), "NULL",
            str(opts.get("offset", 0)), "NULL", lit(lower), lit(upper), "false", lit(opts.get("prefilter", False)), "true"]
    return [tuple(r) for r in spark.sql(f"SELECT * FROM vector_search({', '.join(args)})").collect()]


def test_driver_search_equals_planned_batch_and_pylance(spark, tmp_path):
    rng = random.Random(f"{SEED}-driver")
    for t in range(4 * N):
        index_type = rng.choice(["IVF_FLAT", "IVF_PQ", "IVF_SQ"])
        unindexed, stable = rng.random() < 0.5, rng.random() < 0.4
        path = tmp_path / f"t{t}.lance"
        ds, dim = indexed_table(rng, path, index_type, "l2", unindexed, stable)
        table = LanceTable.for_path(spark, str(path))
        for _ in range(5):
            q = [rng.gauss(0, 3) for _ in range(dim)]
            filt = rng.choice([None, "tag = 'a'", "id % 4 <> 0", "_distance < 40 AND tag <> 'c'"])
            opts = dict(k=rng.randint(1, 25), nprobes=rng.choice([1, 2, 4]), refine_factor=rng.choice([None, None, 2]),
                        filter=filt, prefilter=filt is not None and "_distance" not in filt and rng.random() < 0.3,
                        offset=rng.choice([0, 0, 2]), distance_range=rng.choice([None, (None, rng.uniform(5, 60))]))
            what = f"seed {SEED} table {t} {index_type} unindexed {unindexed} stable {stable} {opts}"
            df = table.search(q, column="emb", columns=["id", "tag"], with_row_id=True, **opts)
            driver = not (opts["prefilter"] and filt is not None)
            assert on_driver(df) == driver, f"{what}: {df._jdf.queryExecution().analyzed().toString()}"
            ours = [tuple(r) for r in (no_job(spark, df.collect) if driver else df.collect())]
            assert ours == sql_rows(spark, path, q, dim, opts), f"{what}: driver against the planned search"
            batch = table.search([q, q], column="emb", columns=["id", "tag"], with_row_id=True, **opts).collect()
            for i in (0, 1):
                assert [tuple(r)[1:] for r in batch if r.query_index == i] == ours, f"{what}: batch query {i}"
            if "_distance" not in (filt or "") and opts["distance_range"] is None and opts["offset"] == 0:
                search_both(spark, ds, path, np.array(q), opts["k"], "l2", what, nprobes=opts["nprobes"],
                            refine_factor=opts["refine_factor"], filter=filt, prefilter=opts["prefilter"])


def test_driver_search_after_the_table_changes(spark, tmp_path):
    """A search after rows are deleted, appended (unindexed) or the index replaced answers for the new version, and
    one of the old version for the old one, though the index's files and the version's row sets are cached."""
    rng = random.Random(f"{SEED}-changes")
    for t in range(2 * N):
        path = tmp_path / f"c{t}.lance"
        ds, dim = indexed_table(rng, path, "IVF_PQ", "l2", unindexed=False, stable=t % 2 == 1)
        q = np.array([rng.gauss(0, 3) for _ in range(dim)])
        k = rng.randint(5, 15)
        table = LanceTable.for_path(spark, str(path))

        def check(dataset, label, **opts):
            df = table.search([float(x) for x in q], k=k, column="emb", nprobes=3, columns=["id"], with_row_id=True, **opts)
            assert on_driver(df), label
            search_both(spark, dataset, path, q, k, "l2", f"table {t}: {label}", nprobes=3, **opts)

        check(ds, "first")
        first = ds.version
        found = [r.id for r in table.search([float(x) for x in q], k=k, column="emb", nprobes=3).collect()]
        ds.delete(f"id IN ({', '.join(map(str, found[:3]))})")
        check(lance.dataset(str(path)), "after deleting rows it found")
        assert not {r.id for r in table.search([float(x) for x in q], k=k, column="emb", nprobes=3).collect()} & set(found[:3])
        lance.write_dataset(pa.table({"id": pa.array(range(10 ** 6, 10 ** 6 + 20), pa.int64()),
                                      "tag": pa.array(["a"] * 20),
                                      "emb": pa.FixedSizeListArray.from_arrays(
                                          pa.array(np.tile(q.astype(np.float32), 20)), dim)}),
                            str(path), mode="append")
        check(lance.dataset(str(path)), "after appending rows equal to the query")
        lance.dataset(str(path)).create_index("emb", index_type="IVF_PQ", num_partitions=rng.choice([2, 3]),
                                              num_sub_vectors=rng.choice([m for m in (2, 4) if dim % m == 0]),
                                              replace=True)
        check(lance.dataset(str(path)), "after the index is replaced")
        check(lance.dataset(str(path), version=first), "of the first version", version=first)


def test_large_search_keeps_the_spark_plan(spark, tmp_path):
    """Past driver_lookup_rows rows taken (4096), the search is planned for Spark, with the same rows as pylance."""
    rng = random.Random(f"{SEED}-large")
    path, dim, n = tmp_path / "large.lance", 8, 6000
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "tag": pa.array(["a"] * n),
                                  "emb": pa.FixedSizeListArray.from_arrays(
                                      pa.array(nprng.normal(0, 3, n * dim).astype(np.float32)), dim)}),
                        str(path), max_rows_per_file=2000)
    lance.dataset(str(path)).create_index("emb", index_type="IVF_FLAT", num_partitions=4)
    ds = lance.dataset(str(path))
    q = np.array([rng.gauss(0, 3) for _ in range(dim)])
    table = LanceTable.for_path(spark, str(path))
    small = table.search([float(x) for x in q], k=50, column="emb", nprobes=4)
    assert on_driver(small)
    large = table.search([float(x) for x in q], k=1100, column="emb", nprobes=4, refine_factor=4)
    assert not on_driver(large)
    search_both(spark, ds, path, q, 1100, "l2", "large", nprobes=4, refine_factor=4)
    # A batch whose queries take few rows together is computed on the driver too, and equals the planned SQL batch.
    qs = [[rng.gauss(0, 3) for _ in range(dim)] for _ in range(5)]
    batch = table.search(qs, k=7, column="emb", nprobes=2, columns=["id"], with_row_id=True)
    assert on_driver(batch)
    vecs = ", ".join("array(" + ", ".join(repr(x) for x in v) + ")" for v in qs)
    sql = spark.sql(f"SELECT * FROM vector_search('lance.`{path}`', array({vecs}), 'emb', 7, 'l2', array('id'), NULL, "
                    f"2, NULL, NULL, 0, NULL, NULL, NULL, false, false, true)").collect()
    assert [tuple(r) for r in no_job(spark, batch.collect)] == [tuple(r) for r in sql]
