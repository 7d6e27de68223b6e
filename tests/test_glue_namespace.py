"""A catalog with ``impl = glue`` (docs/reading.md, "Lance Namespaces") keeps its tables in an AWS Glue Data Catalog,
here moto's Glue on loopback. Both ways with lance-namespace-impls' own Glue namespace (``lance_namespace_impls.glue``,
boto3 underneath): the databases and Lance tables it declares show in ``SHOW ...`` and read equal (pylance wrote
them); what Spark creates, renames and drops it lists, describes and pylance reads and validates. Glue tables that
are not Lance's are not listed."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import lance
import pytest
from lance_namespace import (CreateNamespaceRequest, DeclareTableRequest, DescribeNamespaceRequest, DescribeTableRequest,
                             ListNamespacesRequest, ListTablesRequest)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import arrow_df, lance_raises, new_catalog  # noqa: E402
from s3_support import KEY, REGION, SECRET  # noqa: E402
from test_namespaces import random_table, rows, spark_rows  # noqa: E402

import sparklance  # noqa: E402
from pyspark.errors import AnalysisException  # noqa: E402

glue_impl = pytest.importorskip("lance_namespace_impls.glue")

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))


def glue_props(stand, root) -> dict:
    return {"endpoint": stand.endpoint, "region": REGION, "access_key_id": KEY, "secret_access_key": SECRET,
            "root": str(root)}


def catalog(spark, stand, root, **extra) -> str:
    return new_catalog(spark, "glue", impl="glue", **{**glue_props(stand, root), **extra})


def reference(stand, root):
    """lance-namespace-impls' Glue namespace over the same catalog."""
    return glue_impl.GlueNamespace(**glue_props(stand, root))


def test_tables_the_reference_declares_show_and_read_equal(spark, stand, tmp_path):
    rng = random.Random(SEED)
    ns = reference(stand, tmp_path)
    db_dir = tmp_path / "sales_dir"
    ns.create_namespace(CreateNamespaceRequest(id=["sales"], properties={"location": str(db_dir)}))
    ns.create_namespace(CreateNamespaceRequest(id=["empty_db"]))
    tables = {}
    for i in range(rng.randint(2, 4)):
        name = f"t{i}"
        location = ns.declare_table(DeclareTableRequest(id=["sales", name])).location
        assert location == f"{db_dir}/{name}.lance"
        tables[name] = random_table(rng)
        lance.write_dataset(tables[name], location)
    # A Glue table that is not Lance's (a Hive-style Parquet table) is not one of the catalog's.
    stand.client("glue").create_table(DatabaseName="sales", TableInput={
        "Name": "parquet_t", "TableType": "EXTERNAL_TABLE", "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {"Location": str(tmp_path / "elsewhere")}})

    cat = catalog(spark, stand, tmp_path)
    assert {"sales", "empty_db"} <= {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()}
    assert sorted(r["tableName"] for r in spark.sql(f"SHOW TABLES IN {cat}.sales").collect()) == sorted(tables)  # before by_glue
    assert spark.sql(f"SHOW TABLES IN {cat}.empty_db").collect() == []
    for name, table in tables.items():
        assert spark_rows(spark.table(f"{cat}.sales.{name}")) == rows(table)
    with pytest.raises(AnalysisException, match="(?i)TABLE_OR_VIEW_NOT_FOUND|not found"):
        spark.table(f"{cat}.sales.parquet_t").collect()
    # A table whose versions Glue commits (managed_by = impl) is refused, not read past Glue's versions.
    stand.client("glue").create_table(DatabaseName="sales", TableInput={
        "Name": "by_glue", "TableType": "EXTERNAL_TABLE",
        "Parameters": {"table_type": "lance", "managed_by": "impl", "version": "1"},
        "StorageDescriptor": {"Location": str(db_dir / "t0.lance")}})
    with lance_raises(sparklance.UnsupportedFeatureError, match="managed_by = impl"):
        spark.table(f"{cat}.sales.by_glue").collect()
    props = {r[0]: r[1] for r in spark.sql(f"DESCRIBE NAMESPACE EXTENDED {cat}.sales").collect()}
    assert str(db_dir) in " ".join(str(v) for v in props.values())


def test_spark_tables_are_glue_tables_the_reference_lists_and_pylance_reads(spark, stand, tmp_path):
    rng = random.Random(SEED + 1)
    cat = catalog(spark, stand, tmp_path)
    spark.sql(f"CREATE NAMESPACE {cat}.lake")
    ns = reference(stand, tmp_path)
    assert "lake" in ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces
    expected = random_table(rng)
    arrow_df(spark, expected).createOrReplaceTempView("glue_src")
    spark.sql(f"CREATE TABLE {cat}.lake.items AS SELECT * FROM glue_src")
    spark.sql(f"INSERT INTO {cat}.lake.items SELECT * FROM glue_src")

    assert list(ns.list_tables(ListTablesRequest(id=["lake"])).tables) == ["items"]
    location = ns.describe_table(DescribeTableRequest(id=["lake", "items"])).location
    assert location == f"{tmp_path}/lake/items.lance"  # the database has no location: <root>/<db>/<name>.lance
    ds = lance.dataset(location)
    ds.validate()
    assert rows(ds.to_table()) == sorted(rows(expected) * 2)
    entry = stand.client("glue").get_table(DatabaseName="lake", Name="items")["Table"]
    assert entry["TableType"] == "EXTERNAL_TABLE" and entry["Parameters"]["table_type"].lower() == "lance"
    assert entry["StorageDescriptor"]["Location"] == location

    spark.sql(f"ALTER TABLE {cat}.lake.items RENAME TO lake.goods")
    assert list(ns.list_tables(ListTablesRequest(id=["lake"])).tables) == ["goods"]
    assert ns.describe_table(DescribeTableRequest(id=["lake", "goods"])).location == location
    assert spark_rows(spark.table(f"{cat}.lake.goods")) == sorted(rows(expected) * 2)

    with pytest.raises(AnalysisException, match="(?i)not empty|NON_EMPTY|SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.lake")
    spark.sql(f"DROP TABLE {cat}.lake.goods PURGE")
    assert list(ns.list_tables(ListTablesRequest(id=["lake"])).tables) == []
    assert not Path(location).exists()
    spark.sql(f"DROP NAMESPACE {cat}.lake")
    assert "lake" not in ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces

    # CREATE NAMESPACE ... LOCATION is the database's location, below which its new tables go.
    placed = tmp_path / "placed"
    spark.sql(f"CREATE NAMESPACE {cat}.located LOCATION '{placed}'")
    assert ns.describe_namespace(DescribeNamespaceRequest(id=["located"])).properties["location"].endswith(str(placed))
    spark.sql(f"CREATE TABLE {cat}.located.t AS SELECT * FROM glue_src")
    assert ns.describe_table(DescribeTableRequest(id=["located", "t"])).location.endswith(f"{placed}/t.lance")
    assert rows(lance.dataset(str(placed / "t.lance")).to_table()) == rows(expected)


def test_bad_settings_and_shapes_are_clear_errors(spark, stand, tmp_path):
    cat = catalog(spark, stand, tmp_path)
    with lance_raises(sparklance.UnsupportedFeatureError, match="one level of namespaces"):
        spark.sql(f"CREATE NAMESPACE {cat}.a.b")
    with pytest.raises(AnalysisException, match="(?i)SCHEMA_NOT_FOUND|NAMESPACE_NOT_FOUND|not found"):
        spark.sql(f"CREATE TABLE {cat}.nope.t (id INT)")
    spark.sql(f"CREATE NAMESPACE {cat}.dup")
    with pytest.raises(AnalysisException, match="(?i)already exists|SCHEMA_ALREADY_EXISTS"):
        spark.sql(f"CREATE NAMESPACE {cat}.dup")
    bad = catalog(spark, stand, tmp_path, profile="default")
    with lance_raises(sparklance.InvalidArgumentError, match=r"Unknown option spark.sql.catalog.glue\d+.profile"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, stand, tmp_path, secret_access_key="")
    with lance_raises(sparklance.InvalidArgumentError, match="access_key_id and secret_access_key together"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    unreachable = catalog(spark, stand, tmp_path, endpoint="http://127.0.0.1:1")
    with lance_raises(sparklance.StorageError, match="127.0.0.1:1"):
        spark.sql(f"SHOW NAMESPACES IN {unreachable}")
