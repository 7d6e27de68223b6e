"""Filters on data columns pushed into the scan (batches where no row can match are skipped before the other
columns are decoded): results must equal the rows Python selects from the data pylance wrote, for every
supported comparison, with nulls, NaN, -0.0 and strings; unsupported filters still give exact results."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark  # noqa: E402

N = 20000


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("sparklance-filter-tests", tmp_path_factory.mktemp("filters_wh"))
    yield session
    session.stop()


def value(i):
    return {
        "id": i,
        "i32": None if i % 97 == 0 else (i * 7) % 1000 - 500,
        "f64": float("nan") if i % 501 == 0 else (-0.0 if i % 503 == 0 else (None if i % 89 == 0 else i / 3)),
        "s": None if i % 83 == 0 else f"k{i % 250:03d}",
        "b": None if i % 7 == 0 else i % 2 == 0,
        "pad": "x" * (i % 13),
    }


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    rows = [value(i) for i in range(N)]
    path = str(tmp_path_factory.mktemp("filters") / "t.lance")
    lance.write_dataset(pa.Table.from_pylist(rows, pa.schema([("id", pa.int64()), ("i32", pa.int32()), ("f64", pa.float64()),
                                                             ("s", pa.string()), ("b", pa.bool_()), ("pad", pa.string())])),
                        path, max_rows_per_file=7000)
    spark.read.format("lance").option("batch_size", 512).load(path).createOrReplaceTempView("ft")
    return rows


def eq(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


CASES = [
    ("id = 12345", lambda r: r["id"] == 12345),
    ("id IN (3, 19999, 77777)", lambda r: r["id"] in (3, 19999)),
    ("id > 19990 OR id < 5", lambda r: r["id"] > 19990 or r["id"] < 5),
    ("i32 = -493", lambda r: r["i32"] == -493),
    ("i32 >= 498 AND id < 3000", lambda r: r["i32"] is not None and r["i32"] >= 498 and r["id"] < 3000),
    ("i32 IS NULL", lambda r: r["i32"] is None),
    ("f64 = 0.0", lambda r: r["f64"] is not None and not math.isnan(r["f64"]) and r["f64"] == 0.0),
    ("f64 = double('NaN')", lambda r: r["f64"] is not None and math.isnan(r["f64"])),
    ("f64 > 6666.0", lambda r: r["f64"] is not None and (math.isnan(r["f64"]) or r["f64"] > 6666.0)),
    ("s = 'k007'", lambda r: r["s"] == "k007"),
    ("s < 'k002'", lambda r: r["s"] is not None and r["s"] < "k002"),
    ("s IS NOT NULL AND id < 100", lambda r: r["s"] is not None and r["id"] < 100),
    ("b = true AND id < 50", lambda r: r["b"] is True and r["id"] < 50),
    ("pad LIKE 'xxxxxxxxxxxx%'", lambda r: r["pad"].startswith("x" * 12)),          # not pushed
    ("NOT (id > 10)", lambda r: not r["id"] > 10),                                   # not pushed
]


@pytest.mark.parametrize("where,keep", CASES, ids=[c[0] for c in CASES])
def test_filter_results(spark, table, where, keep):
    got = sorted((r.asDict() for r in spark.sql(f"SELECT * FROM ft WHERE {where}").collect()), key=lambda r: r["id"])
    want = [r for r in table if keep(r)]
    assert [r["id"] for r in got] == [r["id"] for r in want]
    for g, w in zip(got, want):
        assert all(eq(g[k], w[k]) for k in w), (g, w)


def test_pushed_filters_are_reported(spark, table):
    plan = spark.sql("SELECT s FROM ft WHERE id = 12345 AND pad LIKE 'x%'")._jdf.queryExecution().executedPlan().toString()
    pushed = plan.split("batches where ")[1].split(")) ")[0]
    assert "EqualTo(id,12345" in pushed and "IsNotNull(pad)" in pushed
    assert "StringStartsWith" not in pushed


def test_filtered_batches_keep_column_order_metadata_columns_and_deletions(spark, tmp_path):
    """The filtered columns are read first and kept for the batch: the batch must still have the projection's
    order, the metadata columns and the rows the deletion files leave."""
    path = str(tmp_path / "d.lance")
    rows = [value(i) for i in range(N)]
    lance.write_dataset(pa.Table.from_pylist(rows), path, max_rows_per_file=7000)
    lance.dataset(path).delete("id % 5 = 0")
    got = (spark.read.format("lance").option("batch_size", 512).load(path)
           .where("s = 'k007' AND i32 > -400").select("pad", "s", "id", "_rowaddr", "i32", "_rowid").collect())
    want = lance.dataset(path).to_table(filter="s = 'k007' AND i32 > -400", with_row_id=True,
                                        with_row_address=True).to_pylist()
    assert len(want) > 10
    assert sorted((r.pad, r.s, r.id, r._rowaddr, r.i32, r._rowid) for r in got) == \
        sorted((w["pad"], w["s"], w["id"], w["_rowaddr"], w["i32"], w["_rowid"]) for w in want)
