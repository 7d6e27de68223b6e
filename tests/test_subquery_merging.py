"""Scalar subqueries over one Lance table merge as they do over Parquet (TPC-DS q9's shape).

Spark's ``MergeSubplans`` fuses scalar subqueries that read the same table with the same filter into one subquery
whose aggregate computes all their values; for DataSourceV2 tables it does so only when the table has the
``SCAN_MERGING`` capability (Spark 4.3), since the scans it fuses differ in their columns and it builds one scan of
their union. Random tables (``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` of them) written by pylance in several
fragments with rows deleted and nulls, and a Parquet copy of the surviving rows; a query of random buckets, each
three scalar subqueries (``count(*)``, an aggregate of one column, an aggregate of another) under one random range
filter. The Lance query must return the Parquet query's row and run one subquery per bucket, as Parquet does.
"""

from __future__ import annotations

import decimal
import os
import random
import re
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, new_catalog  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "2"))

pytestmark = pytest.mark.skipif(SPARK_LINE < (4, 3), reason="Spark merges DataSourceV2 scans from 4.3 on "
                                "(TableCapability.SCAN_MERGING)")

# Aggregates whose values do not depend on the order rows are added in (Parquet and Lance read in other orders).
AGGREGATES = ("avg(price)", "sum(price)", "sum(amount)", "max(ratio)", "min(ratio)", "count(amount)")


def table(root: Path, seed: int):
    """Writes ``root/db/sales.lance`` (pylance, several fragments, rows deleted) and ``root/sales.parquet`` (the
    surviving rows)."""
    r = random.Random(seed)
    rows = r.randint(5_000, 20_000)
    quantity = [None if r.random() < 0.05 else r.randint(1, 100) for _ in range(rows)]
    data = pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "quantity": pa.array(quantity, pa.int32()),
        "price": pa.array([None if r.random() < 0.05 else decimal.Decimal(r.randint(0, 99_999)) / 100
                           for _ in range(rows)], pa.decimal128(7, 2)),
        "amount": pa.array([None if r.random() < 0.05 else r.randint(-10**6, 10**6) for _ in range(rows)], pa.int64()),
        "ratio": pa.array([r.random() for _ in range(rows)], pa.float64()),
    })
    path = str(root / "db" / "sales.lance")
    half = rows // 2
    lance.write_dataset(data.slice(0, half), path, max_rows_per_file=max(1, half // 3))
    lance.write_dataset(data.slice(half), path, mode="append")
    deleted = r.randint(3, 11)
    lance.dataset(path).delete(f"id % {deleted} = 2")
    pq.write_table(data.filter(pa.array([i % deleted != 2 for i in range(rows)])), str(root / "sales.parquet"))


def query(source: str, seed: int) -> tuple[str, int]:
    """A q9-like query over ``source``: a CASE per bucket over three scalar subqueries sharing the bucket's range
    filter; returns it and its number of buckets."""
    r = random.Random(seed + 1)
    buckets = r.randint(2, 5)
    cases = []
    for b in range(buckets):
        lo = r.randint(1, 90)
        hi = lo + r.randint(0, 30)
        where = f"FROM {source} WHERE quantity BETWEEN {lo} AND {hi}"
        first, second = r.sample(AGGREGATES, 2)
        cases.append(f"CASE WHEN (SELECT count(*) {where}) > {r.randint(0, 400)} THEN (SELECT {first} {where}) "
                     f"ELSE (SELECT {second} {where}) END AS bucket{b}")
    return f"SELECT {', '.join(cases)} FROM (SELECT 1 AS one) WHERE one = 1", buckets


def subqueries_run(df) -> set:
    """The ids of the scalar subqueries the executed plan of ``df`` runs (not those it reuses)."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName() == "AdaptiveSparkPlan":  # its final plan, not the initial one it prints too
        plan = plan.executedPlan()
    plan = plan.toString()
    return set(re.findall(r"(?<!ReusedSubquery )Subquery subquery#(\d+)", plan))


@pytest.mark.parametrize("i", range(N))
def test_scalar_subqueries_over_one_table_merge_as_over_parquet(spark, tmp_path, i):
    seed = SEED + i
    table(tmp_path, seed)
    catalog = new_catalog(spark, "merging", warehouse=tmp_path)
    lance_sql, buckets = query(f"{catalog}.db.sales", seed)
    # A table of the session catalog, as the TPC-DS benchmark reads (Spark merges no two reads of a bare path).
    spark.sql(f"CREATE TABLE sales_parquet{i} USING parquet LOCATION '{tmp_path / 'sales.parquet'}'")
    parquet_sql, _ = query(f"sales_parquet{i}", seed)

    parquet = spark.sql(parquet_sql)
    expected = parquet.collect()
    ours = spark.sql(lance_sql)
    assert ours.collect() == expected, f"seed {seed}: {lance_sql}"
    assert len(subqueries_run(parquet)) == buckets, f"seed {seed}: Parquet's plan"
    assert len(subqueries_run(ours)) == buckets, (
        f"seed {seed}: the Lance query runs {len(subqueries_run(ours))} scalar subqueries for {buckets} filters "
        f"(up to three per filter without the merge)")
