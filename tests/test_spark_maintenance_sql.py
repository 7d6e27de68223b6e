"""sparklance's SQL extensions: OPTIMIZE, VACUUM, DESCRIBE HISTORY, tags and RESTORE on tables of the lance catalog,
checked with pylance. (The same operations are tested in depth through the API in test_table_ops.py.)"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = cross_version


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "maint_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-maintenance-tests", wh)
    yield session
    session.stop()


def test_maintenance_statements(spark, wh):
    path = str(wh / "db" / "m.lance")
    for i in range(4):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64())}), path,
                            mode="append" if i else "create")
    spark.sql("DELETE FROM lance.db.m WHERE id % 2 = 0")                       # v5
    spark.sql("ALTER TABLE lance.db.m CREATE TAG before_optimize")            # tags v5
    spark.sql("ALTER TABLE lance.db.m CREATE TAG first AS OF VERSION 1")
    assert lance.dataset(path).tags.list()["before_optimize"]["version"] == 5
    assert [(r.name, r.version) for r in spark.sql("SHOW TAGS lance.db.m").collect()] == [("before_optimize", 5), ("first", 1)]

    r = spark.sql("OPTIMIZE lance.db.m WITH (target_rows_per_fragment = 1000)").collect()[0]
    assert (r.version, r.fragments_removed, r.fragments_added) == (6, 4, 1)
    ds = lance.dataset(path)
    ds.validate()
    assert len(ds.get_fragments()) == 1 and sorted(ds.to_table().column("id").to_pylist()) == list(range(1, 40, 2))

    history = spark.sql("DESCRIBE HISTORY lance.db.m").collect()
    assert [(h.version, h.operation) for h in history][-3:] == [(4, "Append"), (5, "Delete"), (6, "Rewrite")]

    r = spark.sql("RESTORE TABLE lance.db.m TO VERSION AS OF 'first'").collect()[0]
    assert r.version == 7 and lance.dataset(path).count_rows() == 10
    spark.sql("RESTORE TABLE lance.db.m TO VERSION AS OF 6")
    assert lance.dataset(path).count_rows() == 20

    time.sleep(0.05)
    dry = spark.sql("VACUUM lance.db.m RETAIN 0 HOURS DRY RUN").collect()
    assert dry and lance.dataset(path).versions()[0]["version"] == 1
    spark.sql("VACUUM lance.db.m RETAIN 0 HOURS")
    ds = lance.dataset(path)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == [1, 5, 8]                  # tagged ones and the latest
    assert lance.dataset(path, version=5).count_rows() == 20
    spark.sql("ALTER TABLE lance.db.m DROP TAG first")
    assert list(lance.dataset(path).tags.list()) == ["before_optimize"]
    # Default retention (7 days) removes nothing recent.
    assert spark.sql("VACUUM lance.db.m").collect() == []


def test_statements_need_a_lance_table(spark):
    with pytest.raises(Exception, match="is not a table of a Lance catalog"):
        spark.sql("OPTIMIZE spark_catalog.default.t")
    # Other SQL still goes to Spark's parser.
    assert spark.sql("SELECT 1 AS x").collect()[0].x == 1
