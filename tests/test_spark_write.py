"""The Spark write path: a real local SparkSession writes Lance tables through sparklance (``df.write`` in every
save mode, the ``lance`` catalog's CREATE TABLE / CTAS / INSERT / ``writeTo``), and pylance 14.0.2 must read every
table back with exactly the rows written and pass ``validate()``. Appends to tables pylance created, stable row
ids, concurrent writers and failed writes are covered too. Expected values come from the Python data the test
wrote, never from the JVM.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import sys
import threading
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, cross_version, start_spark, warehouse_with  # noqa: E402

from pyspark.sql import Row  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

pytestmark = cross_version

# The Arrow library of Spark 3.x has no half floats: a float16 column can be neither read nor written there.
HAS_FLOAT16 = SPARK_LINE >= (4, 0)
@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "write_warehouse")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-write-tests", wh, **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def rows_of(path) -> list:
    """pylance's rows of the latest version, sorted by their first column, after validate()."""
    ds = lance.dataset(str(path))
    ds.validate()
    rows = ds.to_table().to_pylist()
    return sorted(rows, key=lambda r: list(r.values())[0])


SCHEMA = T.StructType([
    T.StructField("id", T.LongType()),
    T.StructField("b", T.BooleanType()),
    T.StructField("i8", T.ByteType()),
    T.StructField("i16", T.ShortType()),
    T.StructField("i32", T.IntegerType()),
    T.StructField("f32", T.FloatType()),
    T.StructField("f64", T.DoubleType()),
    T.StructField("s", T.StringType()),
    T.StructField("bin", T.BinaryType()),
    T.StructField("dec", T.DecimalType(18, 4)),
    T.StructField("d", T.DateType()),
    T.StructField("ts", T.TimestampType()),
    T.StructField("ntz", T.TimestampNTZType()),
    T.StructField("arr", T.ArrayType(T.IntegerType())),
    T.StructField("st", T.StructType([T.StructField("x", T.IntegerType()), T.StructField("y", T.StringType())])),
    T.StructField("m", T.MapType(T.StringType(), T.LongType())),
    T.StructField("nested", T.ArrayType(T.StructType([T.StructField("k", T.StringType()),
                                                       T.StructField("v", T.ArrayType(T.DoubleType()))]))),
])


def sample_rows(start: int, n: int) -> list:
    """Rows of SCHEMA with nulls, empties and nested values, deterministic in the row id."""
    out = []
    utc = dt.timezone.utc
    for i in range(start, start + n):
        out.append((
            i,
            None if i % 7 == 0 else i % 2 == 0,
            (i % 256) - 128,
            None if i % 11 == 0 else (i * 7) % 30000,
            i * 3 - 1000,
            float(i) / 4,
            None if i % 13 == 0 else i * 1.25,
            None if i % 5 == 0 else f"str-{i}-" + "x" * (i % 17),
            None if i % 9 == 0 else bytes([i % 256]) * (i % 5),
            decimal.Decimal(i * 10007 % 1000000) / 10000,
            dt.date(2020, 1, 1) + dt.timedelta(days=i % 2000),
            dt.datetime(2024, 1, 1, tzinfo=utc) + dt.timedelta(seconds=i * 37, microseconds=i),
            dt.datetime(2025, 6, 1) + dt.timedelta(minutes=i),
            None if i % 10 == 0 else [] if i % 10 == 1 else [j if j % 4 else None for j in range(i % 6)],
            None if i % 8 == 0 else {"x": None if i % 3 == 0 else i, "y": f"y{i}"},
            None if i % 12 == 0 else {f"k{j}": i * j for j in range(i % 3)},
            None if i % 15 == 0 else [{"k": f"n{j}", "v": [float(j)] * (j % 3)} for j in range(i % 4)],
        ))
    return out


def expected(rows: list) -> list:
    """What pylance returns for sample rows: maps as lists of (key, value) pairs, timestamps as UTC datetimes."""
    names = [f.name for f in SCHEMA.fields]
    out = []
    for r in rows:
        d = dict(zip(names, r))
        d["f32"] = float(np.float32(d["f32"]))
        d["m"] = None if d["m"] is None else list(d["m"].items())
        out.append(d)
    return sorted(out, key=lambda r: r["id"])


def assert_rows(path, rows: list):
    got = rows_of(path)
    want = expected(rows)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for k in w:
            gv = g[k]
            if isinstance(gv, dt.datetime) and gv.tzinfo is not None:
                gv = gv.astimezone(dt.timezone.utc)
            assert gv == w[k], f"row {w['id']} column {k}: {gv!r} != {w[k]!r}"


# ---------------------------------------------------------------------------------------------------------------
# DataFrameWriter over paths


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_save_modes_over_a_path(spark, tmp_path, version):
    path = str(tmp_path / "t.lance")
    first = sample_rows(0, 3000)
    # 2.0 cannot store struct or map nulls: that file version gets rows without them.
    schema = SCHEMA if version != "2.0" else T.StructType([f for f in SCHEMA.fields if f.name not in ("st", "m")])
    if version == "2.0":
        first = [r[:14] + r[16:] for r in first]
    df = spark.createDataFrame(first, schema).repartition(3)
    df.write.format("lance").option("file_format_version", version).save(path)
    ds = lance.dataset(path)
    assert ds.version == 1 and ds.data_storage_version == version and ds.count_rows() == 3000
    if version != "2.0":
        assert_rows(path, first)

    with pytest.raises(Exception, match="LANCE_TABLE_EXISTS"):
        df.write.format("lance").save(path)
    df.write.format("lance").mode("ignore").save(path)
    assert lance.dataset(path).version == 1

    more = sample_rows(3000, 500)
    if version == "2.0":
        more = [r[:14] + r[16:] for r in more]
    spark.createDataFrame(more, schema).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    assert ds.version == 2 and ds.count_rows() == 3500 and ds.data_storage_version == version
    if version != "2.0":
        assert_rows(path, first + more)
    else:
        ds.validate()
        got = sorted(ds.to_table(columns=["id", "s", "arr"]).to_pylist(), key=lambda r: r["id"])
        assert [(r["id"], r["s"], r["arr"]) for r in got] == [(r[0], r[7], r[13]) for r in first + more]

    spark.range(5).selectExpr("id", "concat('v', id) AS v").write.format("lance").mode("overwrite").save(path)
    ds = lance.dataset(path)
    assert ds.version == 3 and ds.schema.names == ["id", "v"]
    assert rows_of(path) == [{"id": i, "v": f"v{i}"} for i in range(5)]
    # Overwrite keeps the table's file version and its history.
    assert ds.data_storage_version == version
    assert lance.dataset(path, version=2).count_rows() == 3500
    # Spark reads what it wrote, at every version.
    assert spark.read.format("lance").option("version", 1).load(path).count() == 3000
    assert sorted(r.v for r in spark.read.format("lance").load(path).collect()) == [f"v{i}" for i in range(5)]


def test_new_tables_are_2_2_with_nullable_columns(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.range(10).write.format("lance").save(path)
    ds = lance.dataset(path)
    assert ds.data_storage_version == "2.2"
    assert ds.schema.field("id").nullable
    ds.validate()


def test_append_matches_columns_by_name_and_widens(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.createDataFrame([(1, "a", 1.5)], "id BIGINT, s STRING, d DOUBLE").write.format("lance").save(path)
    # Other column order, an INT widened to BIGINT, a missing nullable column written as null.
    spark.createDataFrame([("b", 2)], "s STRING, id INT").write.format("lance").mode("append").save(path)
    assert rows_of(path) == [{"id": 1, "s": "a", "d": 1.5}, {"id": 2, "s": "b", "d": None}]


def test_append_refuses_data_that_does_not_match(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.createDataFrame([(1, "a")], "id BIGINT, s STRING").write.format("lance").save(path)
    bad = spark.createDataFrame([("x", 1, 2.0)], "id STRING, s INT, extra DOUBLE")
    with pytest.raises(Exception) as e:
        bad.write.format("lance").mode("append").save(path)
    msg = str(e.value)
    assert "LANCE_INVALID_ARGUMENT" in msg
    assert "column 'id' is BIGINT in the table but STRING in the data" in msg
    assert "column 's' is STRING in the table but INT in the data" in msg
    assert "column 'extra' (DOUBLE) is not in the table" in msg
    assert lance.dataset(path).version == 1


def test_null_into_not_null_column_fails_and_commits_nothing(spark, wh):
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.nn")
    spark.sql("CREATE TABLE lance.nn.t (id BIGINT NOT NULL, s STRING)")
    with pytest.raises(Exception, match="Cannot write a null to column 'id', which is NOT NULL"):
        spark.createDataFrame([(None, "a")], "id BIGINT, s STRING").write.format("lance").mode("append") \
            .save(str(wh / "nn" / "t.lance"))
    ds = lance.dataset(str(wh / "nn" / "t.lance"))
    assert ds.version == 1 and ds.count_rows() == 0
    assert os.listdir(str(wh / "nn" / "t.lance" / "data")) == [] if os.path.isdir(str(wh / "nn" / "t.lance" / "data")) else True


def test_failed_task_deletes_its_files_and_commits_nothing(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.range(100).write.format("lance").save(path)
    before = set(os.listdir(os.path.join(path, "data")))

    def failing(partitions):
        # The last row fails after the task has written data files (batches of 1000 rows, files of 1500).
        return spark.range(0, 4000, 1, partitions).select(
            F.when(F.col("id") == 3999, F.raise_error(F.lit("boom"))).otherwise(F.col("id")).alias("id"))

    with pytest.raises(Exception, match="boom"):
        failing(1).write.format("lance").mode("append").option("batch_rows", 1000) \
            .option("max_rows_per_file", 1500).save(path)
    assert set(os.listdir(os.path.join(path, "data"))) == before
    # With several tasks, the table is unchanged whatever the others had written.
    with pytest.raises(Exception, match="boom"):
        failing(4).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    assert ds.version == 1 and ds.count_rows() == 100
    ds.validate()
    assert sorted(r.id for r in spark.read.format("lance").load(path).collect()) == list(range(100))


def test_max_rows_per_file_makes_fragments(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.range(0, 10000, 1, 2).write.format("lance").option("max_rows_per_file", 1500).save(path)
    ds = lance.dataset(path)
    sizes = sorted(f.count_rows() for f in ds.get_fragments())
    assert sum(sizes) == 10000 and max(sizes) == 1500 and len(sizes) == 8
    assert sorted(r["id"] for r in ds.to_table().to_pylist()) == list(range(10000))
    ds.validate()


def test_vectors_with_fixed_size_list_metadata(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    meta = {"arrow.fixed-size-list.size": 4}
    schema = T.StructType([T.StructField("id", T.LongType()),
                           T.StructField("v", T.ArrayType(T.FloatType(), False), metadata=meta)])
    data = [(i, [float(i), 0.5, -1.0, float(i * i)]) for i in range(300)]
    spark.createDataFrame(data, schema).write.format("lance").save(path)
    ds = lance.dataset(path)
    assert ds.schema.field("v").type == pa.list_(pa.field("item", pa.float32()), 4)
    assert [(r["id"], r["v"]) for r in rows_of(path)] == data
    bad = spark.createDataFrame([(1, [1.0])], schema)
    with pytest.raises(Exception, match="an array of 1 elements in a column of fixed-size lists of 4"):
        bad.write.format("lance").mode("append").save(path)


# ---------------------------------------------------------------------------------------------------------------
# Appends to tables pylance made


def test_append_to_a_pylance_table_keeps_its_types(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    table = pa.table({
        "id": pa.array([1, 2], pa.int64()),
        "u8": pa.array([1, 255], pa.uint8()),
        "u64": pa.array([1, 2 ** 64 - 1], pa.uint64()),
        "ls": pa.array(["a", "b"], pa.large_string()),
        "vec": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32(), 2)),
        "ts_ns": pa.array([1, 2_000], pa.timestamp("ns")),
        "h": pa.array(np.array([1.5, 2.5], dtype=np.float16)),
    })
    if not HAS_FLOAT16:  # Spark 3.x refuses the float16 column; the test goes on with a table without it
        lance.write_dataset(table, str(tmp_path / "half.lance"), data_storage_version="2.1")
        half = spark.read.format("lance").load(str(tmp_path / "half.lance"))
        with pytest.raises(Exception, match="Cannot write column 'h': it is float16, and the Arrow library of "
                                            r"Spark 3\.x has no half-precision floats\."):
            half.where("id > 10").write.format("lance").mode("append").save(str(tmp_path / "half.lance"))
        table = table.drop_columns(["h"])
    lance.write_dataset(table, path, data_storage_version="2.1")
    df = spark.read.format("lance").load(path)
    df.union(df.selectExpr("id + 10 AS id", *table.column_names[1:])) \
        .where("id > 10").write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    assert ds.schema == lance.dataset(path, version=1).schema
    got = ds.to_table().sort_by("id")
    assert got.column("id").to_pylist() == [1, 2, 11, 12]
    assert got.column("u64").to_pylist() == [1, 2 ** 64 - 1] * 2
    assert got.column("vec").to_pylist() == [[1.0, 2.0], [3.0, 4.0]] * 2
    # Spark keeps microseconds: 1 ns reads (and is written back) as 0, 2000 ns as 2000.
    assert got.column("ts_ns").cast(pa.int64()).to_pylist() == [1, 2000, 0, 2000]
    with pytest.raises(Exception, match="-1 is outside the range of uint8"):
        spark.createDataFrame([(5, -1)], "id BIGINT, u8 SMALLINT").write.format("lance").mode("append").save(path)


def test_append_assigns_stable_row_ids(spark, tmp_path, capfd):
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), path, enable_stable_row_ids=True)
    spark.range(10, 25).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(with_row_id=True)
    assert sorted(t.column("_rowid").to_pylist()) == list(range(25))
    ids = dict(zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist()))
    assert all(ids[i] == i for i in range(25))
    lance.write_dataset(pa.table({"id": pa.array([99], pa.int64())}), path, mode="append")
    assert sorted(lance.dataset(path).to_table(with_row_id=True).column("_rowid").to_pylist()) == list(range(26))
    # pylance found nothing to complain about in our manifests (e.g. a stale inline transaction position).
    assert "Failed to decode" not in capfd.readouterr().err


# ---------------------------------------------------------------------------------------------------------------
# The catalog


def test_create_insert_overwrite_and_drop(spark, wh):
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.w")
    spark.sql("CREATE TABLE lance.w.t (id BIGINT, name STRING, tags ARRAY<STRING>) "
              "TBLPROPERTIES ('file_format_version' = '2.1', 'team' = 'search')")
    path = str(wh / "w" / "t.lance")
    ds = lance.dataset(path)
    assert ds.version == 1 and ds.count_rows() == 0 and ds.data_storage_version == "2.1"
    assert ds.config().get("team") == "search"
    spark.sql("INSERT INTO lance.w.t VALUES (1, 'a', array('x')), (2, 'b', array())")
    spark.sql("INSERT INTO lance.w.t SELECT id, concat('n', id), array('t', 'u') FROM range(3, 6)")
    assert rows_of(path) == [{"id": 1, "name": "a", "tags": ["x"]}, {"id": 2, "name": "b", "tags": []}] + \
        [{"id": i, "name": f"n{i}", "tags": ["t", "u"]} for i in range(3, 6)]
    assert lance.dataset(path).version == 3
    spark.sql("INSERT OVERWRITE lance.w.t SELECT 7, 'seven', NULL")
    assert rows_of(path) == [{"id": 7, "name": "seven", "tags": None}]
    assert spark.sql("SELECT count(*) AS n FROM lance.w.t VERSION AS OF 3").collect() == [Row(n=5)]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_ALREADY_EXISTS|already exists"):
        spark.sql("CREATE TABLE lance.w.t (id BIGINT)")
    spark.sql("DROP TABLE lance.w.t")
    assert not os.path.exists(path)
    assert spark.sql("SHOW TABLES IN lance.w").count() == 0


def test_ctas_rtas_and_writeto(spark, wh):
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.c")
    spark.sql("CREATE TABLE lance.c.sums AS SELECT id, id * 2 AS twice FROM range(100)")
    path = str(wh / "c" / "sums.lance")
    assert lance.dataset(path).version == 1
    assert sum(r["twice"] for r in rows_of(path)) == 9900
    spark.sql("CREATE OR REPLACE TABLE lance.c.sums AS SELECT 'x' AS s")
    ds = lance.dataset(path)
    assert ds.version == 2 and rows_of(path) == [{"s": "x"}]
    assert lance.dataset(path, version=1).count_rows() == 100

    spark.range(5).writeTo("lance.c.w").create()
    spark.range(5, 8).writeTo("lance.c.w").append()
    wpath = str(wh / "c" / "w.lance")
    assert [r["id"] for r in rows_of(wpath)] == list(range(8))
    spark.range(100, 102).writeTo("lance.c.w").overwrite(F.lit(True))
    assert [r["id"] for r in rows_of(wpath)] == [100, 101]
    spark.range(3).selectExpr("id", "'z' AS s").writeTo("lance.c.w").createOrReplace()
    assert rows_of(wpath) == [{"id": i, "s": "z"} for i in range(3)]
    assert lance.dataset(wpath).version == 4
    with pytest.raises(Exception, match="already exists"):
        spark.range(1).writeTo("lance.c.w").create()

    # A failed CTAS creates nothing.
    with pytest.raises(Exception, match="boom"):
        spark.sql("CREATE TABLE lance.c.failed AS SELECT CASE WHEN id = 50 THEN raise_error('boom') ELSE id END AS id "
                  "FROM range(100)")
    assert not os.path.exists(str(wh / "c" / "failed.lance" / "_versions"))

    spark.sql("DROP NAMESPACE lance.c CASCADE")
    assert not os.path.exists(str(wh / "c"))


@pytest.mark.parametrize("old", ["2.0", "2.1"])
def test_replacing_keeps_or_changes_the_file_version_consistently(spark, wh, old):
    """CREATE OR REPLACE, REPLACE TABLE AS SELECT and createOrReplace() keep the table's file version (as pylance's
    overwrite does) unless they name another; either way the manifest names the version of every data file."""
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.rv")
    name = f"r{old.replace('.', '')}"
    path = str(wh / "rv" / f"{name}.lance")
    lance.write_dataset(pa.table({"id": pa.array([1, 2], pa.int64())}), path, data_storage_version=old)

    def check(version, ids):
        ds = lance.dataset(path)
        ds.validate()
        assert ds.data_storage_version == version
        assert {f"{d.file_major_version}.{d.file_minor_version}" for f in ds.get_fragments()
                for d in f.metadata.files} <= {version}
        assert sorted(ds.to_table().column("id").to_pylist()) == ids

    spark.sql(f"CREATE OR REPLACE TABLE lance.rv.{name} AS SELECT id FROM range(3)")
    check(old, [0, 1, 2])
    spark.sql(f"REPLACE TABLE lance.rv.{name} AS SELECT id + 10 AS id FROM range(2)")
    check(old, [10, 11])
    spark.range(20, 22).writeTo(f"lance.rv.{name}").createOrReplace()
    check(old, [20, 21])
    spark.sql(f"INSERT OVERWRITE lance.rv.{name} SELECT id + 30 AS id FROM range(1)")
    check(old, [30])
    spark.range(40, 41).write.format("lance").mode("overwrite").save(path)
    check(old, [40])
    # Naming a version changes the table's, data files and manifest together.
    spark.sql(f"CREATE OR REPLACE TABLE lance.rv.{name} TBLPROPERTIES ('file_format_version' = '2.2') "
              "AS SELECT id FROM range(2)")
    check("2.2", [0, 1])
    spark.range(5, 6).writeTo(f"lance.rv.{name}").option("file_format_version", old).createOrReplace()
    check(old, [5])
    spark.range(7, 8).write.format("lance").mode("overwrite").option("file_format_version", "2.2").save(path)
    check("2.2", [7])
    spark.range(8, 9).write.format("lance").mode("append").save(path)
    check("2.2", [7, 8])


def test_partitioned_tables_are_refused(spark):
    with pytest.raises(Exception, match="PARTITIONED BY .* is not supported"):
        spark.sql("CREATE TABLE lance.default_p (id BIGINT, d DATE) PARTITIONED BY (d)")


# ---------------------------------------------------------------------------------------------------------------
# Concurrency


def test_concurrent_appends_lose_nothing(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.range(0).write.format("lance").save(path)
    errors = []

    def spark_writer(k: int):
        try:
            for j in range(3):
                base = 1_000_000 * (k + 1) + 1000 * j
                spark.range(base, base + 200, 1, 2).write.format("lance").mode("append").save(path)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def pylance_writer():
        try:
            for j in range(3):
                lance.write_dataset(pa.table({"id": pa.array(range(j * 10, j * 10 + 10), pa.int64())}), path,
                                    mode="append")
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=spark_writer, args=(k,)) for k in range(3)] + [threading.Thread(target=pylance_writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    ds = lance.dataset(path)
    ds.validate()
    ids = ds.to_table().column("id").to_pylist()
    want = [i for j in range(3) for i in range(j * 10, j * 10 + 10)] + \
        [1_000_000 * (k + 1) + 1000 * j + x for k in range(3) for j in range(3) for x in range(200)]
    assert sorted(ids) == sorted(want)
    assert [v["version"] for v in ds.versions()] == list(range(1, 14))


def test_append_json_text_to_a_json_column(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int64()), "j": pa.array(['{"x":1}'], pa.json_())}), path)
    spark.createDataFrame([(2, '{"b": [1, 2.5], "a": null}'), (3, None)], "id BIGINT, j STRING") \
        .write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    got = sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": 1, "j": '{"x":1}'}, {"id": 2, "j": '{"a":null,"b":[1,2.5]}'}, {"id": 3, "j": None}]
    with pytest.raises(Exception, match="Cannot write json column 'j': a value is not JSON"):
        spark.createDataFrame([(4, "{oops")], "id BIGINT, j STRING").write.format("lance").mode("append").save(path)
    assert lance.dataset(path).count_rows() == 3
