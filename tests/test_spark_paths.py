"""The Spark read path's row and columnar readers give the same rows, for every type and for deleted rows."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import make_tables  # noqa: E402


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    import sparklance

    s = sparklance.session(warehouse=str(tmp_path_factory.mktemp("wh")))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return make_tables.build_all(str(tmp_path_factory.mktemp("tables")))


@pytest.mark.parametrize("table", ["all_types", "deletes", "stable_row_ids", "schema_evolution"])
def test_row_and_columnar_readers_agree(spark, tables, table):
    from chispa import assert_df_equality

    def read(columnar: str):
        df = spark.read.format("lance").option("columnar", columnar).option("batch_size", 97).load(tables[table])
        cols = []
        for f in df.schema.fields:
            if f.name == "dur_s":
                continue  # past Spark's interval range (docs/types.md)
            # chispa cannot compare TIME values; their text is exact.
            cols.append(f"CAST(`{f.name}` AS STRING) AS `{f.name}`" if f.dataType.typeName() == "time" else f"`{f.name}`")
        return df.selectExpr("_rowaddr", *cols)

    columnar, rows = read("true"), read("false")
    plan = rows._jdf.queryExecution().executedPlan().toString()
    assert "ColumnarToRow" not in plan, "columnar=false must read rows"
    assert "ColumnarToRow" in columnar._jdf.queryExecution().executedPlan().toString()
    assert rows.count() == columnar.count() > 0
    assert_df_equality(rows.orderBy("_rowaddr"), columnar.orderBy("_rowaddr"))


def test_nanoseconds_can_be_read_exactly(spark, tables):
    import lance

    path = tables["all_types"]
    ds = lance.dataset(path)
    ns_cols = [f.name for f in ds.schema if str(f.type).startswith(("timestamp[ns", "time64[ns", "duration[ns"))]
    assert ns_cols, "the fixture must have nanosecond columns"
    df = spark.read.format("lance").option("nanoseconds", "long").load(path)
    assert all(df.schema[c].dataType.typeName() == "long" for c in ns_cols)
    got = {r["_rowaddr"]: r for r in df.selectExpr("_rowaddr", *ns_cols).collect()}
    import pyarrow as pa

    t = ds.to_table(columns=ns_cols, with_row_address=True)
    addrs = t.column("_rowaddr").to_pylist()
    checked = 0
    for c in ns_cols:
        values = t.column(c).cast(pa.int64()).to_pylist()
        for addr, v in zip(addrs, values):
            assert got[addr][c] == v, (c, addr)
            checked += v is not None
    assert checked > 0


def test_columnar_option_is_checked(spark, tables):
    with pytest.raises(Exception) as ei:
        spark.read.format("lance").option("columnar", "maybe").load(tables["history"]).count()
    assert "LANCE_INVALID_ARGUMENT" in str(ei.value) and "columnar" in str(ei.value)
