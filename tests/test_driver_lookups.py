"""Index lookups read on the driver: a scan whose rows a scalar index selects and that reads few rows runs without a
Spark job, evaluating the filter and projection above it itself (``DriverLookups``).

Seeded random tables (pylance writes them, with deletions, nulls and sometimes an unindexed fragment appended after
the index; the index is a B-tree or a bitmap, built by pylance or by us) and random queries: point, ``IN`` and narrow
range conditions on the indexed column, ANDed with conditions on other columns that Spark does or does not push
(``OR``, functions, ``LIKE``, a nondeterministic one), under projections with expressions and aggregates. Every
query must give the rows Spark gives over a Parquet copy of the table and over the same table read by jobs
(``driver_lookup_rows`` 0); a driver-side lookup must run no job.

``SPARKLANCE_FUZZ_SEED`` draws the tables and queries; ``SPARKLANCE_FUZZ_N`` is the number of tables.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import List

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
QUERIES = 14


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "driver_lookups_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-driver-lookups-tests", wh)
    yield session
    session.stop()


def random_rows(r: random.Random, first_id: int, n: int) -> pa.Table:
    words = ["ab", "Ab", "abc", "b", "", "zz", "é", "a%b"]
    return pa.table({
        "id": pa.array(range(first_id, first_id + n), pa.int64()),
        "k": pa.array([None if r.random() < 0.05 else r.randrange(40) for _ in range(n)], pa.int32()),
        "s": pa.array([None if r.random() < 0.1 else r.choice(words) for _ in range(n)], pa.string()),
        "x": pa.array([None if r.random() < 0.1 else r.uniform(-1, 1) for _ in range(n)], pa.float64()),
        "tags": pa.array([None if r.random() < 0.1 else [r.choice(words) for _ in range(r.randrange(3))]
                          for _ in range(n)], pa.list_(pa.string())),
    })


def make_table(spark, r: random.Random, path: Path) -> None:
    """A pylance table indexed on `k`; its Parquet copy at `path`.parquet."""
    fragments = r.randint(1, 3)
    rows = 0
    for i in range(fragments):
        n = r.randint(50, 300)
        lance.write_dataset(random_rows(r, rows, n), str(path), mode="append" if i else "create",
                            data_storage_version=r.choice(["2.0", "2.1", "2.2"]) if i == 0 else None)
        rows += n
    ds = lance.dataset(str(path))
    ds.delete(f"id % {r.randint(3, 9)} = 1")
    kind = r.choice(["BTREE", "BITMAP"])
    if r.random() < 0.5:
        ds.create_scalar_index("k", kind)
    else:
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX k_idx USING {kind.lower()} (k)").collect()
    if r.random() < 0.5:
        lance.write_dataset(random_rows(r, rows, r.randint(1, 40)), str(path), mode="append")
    pq.write_table(lance.dataset(str(path)).to_table(), f"{path}.parquet")


def random_query(r: random.Random, view: str) -> str:
    k = r.randrange(-1, 41)
    on_k = r.choice([f"k = {k}", f"k IN ({k}, {r.randrange(40)})", f"k BETWEEN {k} AND {k + r.randrange(3)}",
                     f"{k} = k", f"k <=> {k}"])
    other = r.choice(["", " AND s IS NULL", " AND x > 0", " AND (x > 0.5 OR s = 'ab')", " AND upper(s) LIKE 'A%'",
                      " AND s LIKE 'a\\%%'", " AND rand() < 2", " AND size(tags) > 0", " AND id % 2 = 0",
                      " AND array_contains(tags, 'ab')"])
    select = r.choice(["*", "id, s", "id, k + 1 AS k1, concat(s, '!') AS t, get(tags, 0) AS t0", "count(*), sum(x)",
                       "k, count(*) AS n GROUP BY k", "DISTINCT s", "id, x ORDER BY id LIMIT 3"])
    head, _, tail = select.partition(" GROUP BY ") if "GROUP BY" in select else select.partition(" ORDER BY ")
    sep = " GROUP BY " if "GROUP BY" in select else (" ORDER BY " if tail else "")
    return f"SELECT {head} FROM {view} WHERE {on_k}{other}{sep}{tail}"


def rows_of(spark, sql: str) -> List[tuple]:
    return sorted((tuple(row) for row in spark.sql(sql).collect()), key=repr)


def jobs_run(spark, sql: str) -> int:
    sc = spark.sparkContext
    sc.setJobGroup("driver-lookup", "driver lookup test")
    try:
        spark.sql(sql).collect()
        return len(sc.statusTracker().getJobIdsForGroup("driver-lookup"))
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


@pytest.mark.parametrize("case", range(N))
def test_driver_lookups_give_the_rows_jobs_and_parquet_give(spark, tmp_path, case):
    r = random.Random(SEED * 1000 + case)
    path = tmp_path / "t.lance"
    make_table(spark, r, path)
    spark.read.format("lance").load(str(path)).createOrReplaceTempView("drv")
    spark.read.format("lance").option("driver_lookup_rows", "0").load(str(path)).createOrReplaceTempView("job")
    spark.read.parquet(f"{path}.parquet").createOrReplaceTempView("pq")
    on_driver = 0
    for _ in range(QUERIES):
        q = random_query(r, "{t}")
        expected = rows_of(spark, q.format(t="pq"))
        assert rows_of(spark, q.format(t="job")) == expected, q
        assert rows_of(spark, q.format(t="drv")) == expected, q
        plan = spark.sql(q.format(t="drv"))._jdf.queryExecution().executedPlan().toString()
        assert "LanceDriverScan" not in spark.sql(q.format(t="job"))._jdf.queryExecution().executedPlan().toString()
        if "index 'k_idx'" in plan:
            assert "LanceDriverScan" in plan or "LanceDriverQuery" in plan, (q, plan)
        # A lookup with nothing above it but what it evaluates itself (a whole query of projections, filters,
        # sorts and limits over it) is collected without a job.
        if plan.lstrip().startswith(("LanceDriverScan", "LanceDriverQuery")):
            on_driver += 1
            assert jobs_run(spark, q.format(t="drv")) == 0, (q, plan)
    # Queries on `k` of the shapes above read on the driver at least sometimes (else this test tests nothing).
    assert on_driver > 0


def test_driver_lookup_rows_option(spark, tmp_path):
    path = tmp_path / "t.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(5000), pa.int64())}), str(path))
    lance.dataset(str(path)).create_scalar_index("id", "BTREE")

    def plan(where: str, rows: str = None) -> str:
        reader = spark.read.format("lance")
        if rows is not None:
            reader = reader.option("driver_lookup_rows", rows)
        return reader.load(str(path)).where(where)._jdf.queryExecution().executedPlan().toString()

    assert plan("id = 7").lstrip().startswith("LanceDriverScan")
    assert plan("id < 4096").lstrip().startswith("LanceDriverScan")
    # More rows than the limit, or the lookup switched off: a job as before.
    assert "LanceDriverScan" not in plan("id < 4097")
    assert "LanceDriverScan" not in plan("id = 7", "0")
    assert plan("id < 4097", "5000").lstrip().startswith("LanceDriverScan")
    with pytest.raises(Exception, match="driver_lookup_rows must be a whole number, 0 or more, not '-1'"):
        plan("id = 7", "-1")


@pytest.mark.parametrize("case", range(N))
def test_rows_taken_by_row_id_and_address(spark, tmp_path, case):
    """`_rowid` and `_rowaddr` conditions (Lance's take) read only the rows they name, on the driver, and give the rows
    pylance has under those ids: with or without stable row ids, deleted rows, ids of no row, an appended fragment,
    and `_fragid` conditions ORed or ANDed with them."""
    r = random.Random(SEED * 1000 + 500 + case)
    path = tmp_path / "t.lance"
    stable = r.random() < 0.5
    rows = 0
    for i in range(r.randint(1, 3)):
        n = r.randint(50, 300)
        lance.write_dataset(random_rows(r, rows, n), str(path), mode="append" if i else "create",
                            enable_stable_row_ids=stable)
        rows += n
    ds = lance.dataset(str(path))
    everything = ds.to_table(columns=["id"], with_row_id=True, with_row_address=True)
    ids, addresses = everything["_rowid"].to_pylist(), everything["_rowaddr"].to_pylist()
    ds.delete(f"id % {r.randint(3, 9)} = 1")
    if r.random() < 0.5:
        ds.optimize.compact_files(target_rows_per_fragment=r.randint(100, 400))
    ds = lance.dataset(str(path))
    live = ds.to_table(columns=["id"], with_row_id=True, with_row_address=True).to_pylist()
    fragments = sorted({a >> 32 for a in ids + [x["_rowaddr"] for x in live]})
    for _ in range(QUERIES):
        column, pool = r.choice([("_rowid", ids), ("_rowaddr", addresses)])
        # Ids of rows deleted or never there too (past a fragment's end, of a fragment that does not exist).
        named = r.sample(pool, min(len(pool), r.randint(1, 12))) + [r.choice(pool) + 1000, (max(fragments) + 1) << 32]
        on = f"{column} IN ({', '.join(str(x) for x in named)})" if len(named) > 1 or r.random() < 0.5 else f"{column} = {named[0]}"
        fragment = r.choice(fragments)
        shape = r.choice(["alone", "or", "and"])
        where = {"alone": on, "or": f"({on}) OR _fragid = {fragment}", "and": f"({on}) AND _fragid <> {fragment}"}[shape]

        def keeps(x):
            hit = x[column] in named
            return {"alone": hit, "or": hit or x["_rowaddr"] >> 32 == fragment,
                    "and": hit and x["_rowaddr"] >> 32 != fragment}[shape]
        expected = sorted(x["id"] for x in live if keeps(x))
        q = f"SELECT id FROM lance.`{path}` WHERE {where}"
        assert sorted(row.id for row in spark.sql(q).collect()) == expected, (q, stable)
        plan = spark.sql(q)._jdf.queryExecution().executedPlan().toString()
        if shape != "or":
            assert plan.lstrip().startswith("LanceDriverScan") and "rows taken by id" in plan, (q, plan)
            assert jobs_run(spark, q) == 0, (q, plan)
