"""What users type that the connector must not ignore: read and write options (ours and the other Lance
connector's), sparklance settings, a schema given to a read, writes into directories that hold something else,
namespace locations, and table names in the extension statements resolved as Spark resolves them (docs/
configuration.md, "How options are checked")."""

from __future__ import annotations

import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from pyspark.sql import types as T  # noqa: E402


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "options_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-options-tests", wh)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def table(wh) -> str:
    path = str(wh / "db" / "opts.lance")
    lance.write_dataset(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}), path)
    lance.write_dataset(pa.table({"id": pa.array([3], pa.int64()), "s": ["c"]}), path, mode="append")
    return path


def ids(df) -> list:
    return sorted(r.id for r in df.collect())


@pytest.mark.parametrize("key", ["verison", "Version_", "header", "mergeSchema"])
def test_unknown_read_option_is_an_error_listing_the_accepted_ones(spark, table, key):
    with lance_raises(sparklance.InvalidArgumentError) as e:
        spark.read.format("lance").option(key, "1").load(table).collect()
    assert f"Unknown option {key}" in str(e.value)
    assert "version" in str(e.value) and "batch_size" in str(e.value)


def test_unknown_write_option_is_an_error(spark, tmp_path):
    df = spark.range(3)
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown option max_rows_per_fiel"):
        df.write.format("lance").option("max_rows_per_fiel", "1").save(str(tmp_path / "t.lance"))
    assert not (tmp_path / "t.lance").exists()


def test_other_connector_options(spark, tmp_path, table):
    # Read: pushDownFilters (honoured: the plan has no pushed filters), cache sizes (no effect, accepted).
    df = spark.read.format("lance").option("pushDownFilters", "false").option("index_cache_size", "10").load(table)
    assert ids(df.where("id > 1")) == [2, 3]
    plan = df.where("id > 1")._jdf.queryExecution().executedPlan().toString()
    assert "batches where" not in plan
    assert "batches where" in spark.read.format("lance").load(table).where("id > 1")._jdf.queryExecution() \
        .executedPlan().toString()
    with lance_raises(sparklance.UnsupportedFeatureError, match="nearest"):
        spark.read.format("lance").option("nearest", "{}").load(table).collect()
    # Write: max_row_per_file, data_storage_version, write_mode.
    out = str(tmp_path / "w.lance")
    spark.range(10).coalesce(1).write.format("lance").option("max_row_per_file", "4").option("data_storage_version", "2.1") \
        .option("write_mode", "overwrite").save(out)
    ds = lance.dataset(out)
    ds.validate()
    assert [f.count_rows() for f in ds.get_fragments()] == [4, 4, 2]
    assert ds.data_storage_version == "2.1"
    spark.range(10, 12).write.format("lance").option("write_mode", "append").save(out)
    assert sorted(lance.dataset(out).to_table().column("id").to_pylist()) == list(range(12))
    with lance_raises(sparklance.InvalidArgumentError, match="write_mode is 'append' but the save mode"):
        spark.range(1).write.format("lance").mode("overwrite").option("write_mode", "append").save(out)
    with lance_raises(sparklance.UnsupportedFeatureError, match="legacy Lance file format"):
        spark.range(1).write.format("lance").option("data_storage_version", "LEGACY").save(str(tmp_path / "l.lance"))
    with lance_raises(sparklance.UnsupportedFeatureError, match="max_bytes_per_file"):
        spark.range(1).write.format("lance").mode("append").option("max_bytes_per_file", "100").save(out)
    with lance_raises(sparklance.UnsupportedFeatureError, match="not partitioned"):
        spark.range(1).write.format("lance").mode("append").partitionBy("id").save(out)
    with lance_raises(sparklance.InvalidArgumentError, match="keeps its files in version 2.1"):
        spark.range(1).write.format("lance").mode("append").option("file_format_version", "2.2").save(out)
    assert lance.dataset(out).count_rows() == 12


def test_catalog_table_refuses_version_options(spark, table):
    with lance_raises(sparklance.InvalidArgumentError, match="VERSION AS OF"):
        spark.read.option("version", "1").table("lance.db.opts").collect()
    # Spark's own time-travel option works.
    assert ids(spark.read.option("versionAsOf", "1").table("lance.db.opts")) == [1, 2]


def test_bad_settings_are_errors_on_local_paths(spark, table):
    with lance_raises(sparklance.InvalidArgumentError, match="sparklance.commit.unsafe must be true or false"):
        spark.read.format("lance").option("sparklance.commit.unsafe", "maybe").load(table).collect()
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown setting sparklance.read.coalesce-gap"):
        spark.read.format("lance").option("sparklance.read.coalesce-gap", "1").load(table).collect()
    with lance_raises(sparklance.InvalidArgumentError, match="coalesce-gap-bytes must be a number"):
        spark.read.format("lance").option("sparklance.read.coalesce-gap-bytes", "lots").load(table).collect()
    with lance_raises(sparklance.InvalidArgumentError, match="neither 'dynamodb' nor a class"):
        spark.range(1).write.format("lance").mode("append") \
            .option("sparklance.commit.external-store", "dynamo").save(table)
    assert lance.dataset(table).count_rows() == 3


def test_a_given_schema_projects_or_is_refused(spark, table):
    given = T.StructType([T.StructField("s", T.StringType()), T.StructField("id", T.LongType())])
    df = spark.read.format("lance").schema(given).load(table)
    assert df.columns == ["s", "id"]
    assert sorted(tuple(r) for r in df.collect()) == [("a", 1), ("b", 2), ("c", 3)]
    wrong = T.StructType([T.StructField("id", T.StringType())])
    with lance_raises(sparklance.InvalidArgumentError, match="'id' is BIGINT in the table but STRING"):
        spark.read.format("lance").schema(wrong).load(table).collect()
    missing = T.StructType([T.StructField("nope", T.LongType())])
    with lance_raises(sparklance.InvalidArgumentError, match="'nope' is not in the table"):
        spark.read.format("lance").schema(missing).load(table).collect()


@pytest.mark.parametrize("mode", ["errorifexists", "append", "overwrite", "ignore"])
def test_writing_into_a_directory_of_other_files_is_refused(spark, tmp_path, mode):
    target = tmp_path / "parquet_here"
    spark.range(3).write.parquet(str(target))
    before = sorted(p.name for p in target.iterdir())
    with lance_raises(sparklance.InvalidArgumentError, match="already holds other files"):
        spark.range(3).write.format("lance").mode(mode).save(str(target))
    assert sorted(p.name for p in target.iterdir()) == before


def test_catalog_tables_are_not_created_over_other_files(spark, wh):
    target = wh / "db" / "occupied.lance"
    target.mkdir()
    (target / "notes.txt").write_text("not a table")
    for statement in ["CREATE TABLE lance.db.occupied (id BIGINT)",
                      "CREATE TABLE lance.db.occupied AS SELECT 1 AS id",
                      "CREATE OR REPLACE TABLE lance.db.occupied AS SELECT 1 AS id"]:
        with lance_raises(sparklance.InvalidArgumentError, match=r"already holds other files \(notes.txt\)"):
            spark.sql(statement)
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]


def test_namespace_location_and_properties(spark, wh):
    with lance_raises(sparklance.UnsupportedFeatureError, match="LOCATION 'file:/elsewhere' is not supported"):
        spark.sql("CREATE NAMESPACE lance.located LOCATION '/elsewhere'")
    with lance_raises(sparklance.UnsupportedFeatureError, match="keep no properties"):
        spark.sql("CREATE NAMESPACE lance.commented COMMENT 'hello'")
    assert not (wh / "located").exists() and not (wh / "commented").exists()
    spark.sql(f"CREATE NAMESPACE lance.here LOCATION '{wh / 'here'}'")
    assert (wh / "here").is_dir()


def test_extension_statements_resolve_names_like_spark(spark, wh):
    path = str(wh / "db" / "named.lance")
    for i in range(3):
        lance.write_dataset(pa.table({"id": pa.array([i], pa.int64())}), path, mode="append" if i else "create")
    spark.sql("USE lance.db")
    try:
        spark.sql("ALTER TABLE named CREATE TAG t1 AS OF VERSION 1")
        assert lance.dataset(path).tags.list()["t1"]["version"] == 1
        assert [r.name for r in spark.sql("SHOW TAGS named").collect()] == ["t1"]
        assert [r.version for r in spark.sql("DESCRIBE HISTORY named").collect()][:1] in ([1], [3])
        spark.sql("OPTIMIZE named")
        assert len(lance.dataset(path).get_fragments()) == 1
        spark.sql("RESTORE TABLE named TO VERSION AS OF 't1'")
        assert lance.dataset(path).to_table().column("id").to_pylist() == [0]
        # A two-part name is namespace.table in the current catalog.
        spark.sql("ALTER TABLE db.named DROP TAG t1")
        assert lance.dataset(path).tags.list() == {}
    finally:
        spark.sql("USE spark_catalog.default")
    with lance_raises(sparklance.InvalidArgumentError, match="resolves to catalog 'spark_catalog'"):
        spark.sql("OPTIMIZE named")


def test_column_properties_of_the_other_connector(spark, wh):
    """TBLPROPERTIES '<column>.arrow.fixed-size-list.size' makes a vector column (the other connector's way);
    the column properties sparklance does not apply are refused, never stored as config and forgotten
    (test_spark_column_shapes.py tests those it applies)."""
    spark.sql("CREATE TABLE lance.db.emb (id INT NOT NULL, embeddings ARRAY<FLOAT> NOT NULL) "
              "TBLPROPERTIES ('embeddings.arrow.fixed-size-list.size' = '3', 'team' = 'search')")
    spark.sql("INSERT INTO lance.db.emb VALUES (1, array(1.0, 2.0, 3.0))")
    ds = lance.dataset(str(wh / "db" / "emb.lance"))
    ds.validate()
    assert ds.schema.field("embeddings").type == pa.list_(pa.float32(), 3)
    assert ds.to_table().column("embeddings").to_pylist() == [[1.0, 2.0, 3.0]]
    assert ds.config() == {"team": "search"}
    for prop in ["content.lance.dict-divisor' = '2", "content.lance.minichunk-size' = '4096",
                 "content.lance.dict-values-compression' = 'zstd"]:
        with lance_raises(sparklance.UnsupportedFeatureError, match="is not supported"):
            spark.sql(f"CREATE TABLE lance.db.docs (id INT, content BINARY) TBLPROPERTIES ('{prop}')")
        assert not (wh / "db" / "docs.lance").exists()
    blob = T.StructType([T.StructField("content", T.BinaryType(), True, {"lance-encoding:dict-divisor": "2"})])
    with lance_raises(sparklance.UnsupportedFeatureError, match="lance-encoding:"):
        spark.createDataFrame([(b"x",)], blob).writeTo("lance.db.docs").create()


def test_a_top_level_column_name_with_a_dot_is_refused(spark, tmp_path):
    """pylance refuses such a table ("Top level field a.b cannot contain `.`"): never write one."""
    with lance_raises(sparklance.InvalidArgumentError, match="Column 'a.b'"):
        spark.range(1).withColumnRenamed("id", "a.b").write.format("lance").save(str(tmp_path / "dot.lance"))
    assert not (tmp_path / "dot.lance" / "_versions").exists()
