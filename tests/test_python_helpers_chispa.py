"""Every public helper of ``sparklance.LanceTable`` against a real local SparkSession, compared with chispa to
DataFrames built from literal rows.

Each test writes its own small table, with ``coalesce(1)`` so that one write is one fragment and fragment counts are
known. Expected rows, versions and counts follow from what each operation does to those rows; none is read back
from the code under test."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest
from chispa import assert_df_equality
from chispa.schema_comparer import assert_schema_equality
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

SCHEMA = "id BIGINT, s STRING, n INT"
ROWS = [(1, "a", 10), (2, "b", 20), (3, "c", 30), (4, "d", 40)]


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "helpers_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    # One shuffle partition: the tables are tiny, and chispa sorts both sides when row order is ignored.
    session = start_spark("sparklance-helpers-chispa", wh, **{"spark.sql.shuffle.partitions": "1"})
    yield session
    session.stop()


def df(spark, rows, schema=SCHEMA):
    return spark.createDataFrame(rows, schema)


def write(spark, path, rows, mode="errorifexists", schema=SCHEMA) -> None:
    df(spark, rows, schema).coalesce(1).write.format("lance").mode(mode).save(str(path))


def table(spark, wh, name, rows=ROWS) -> LanceTable:
    path = wh / "db" / f"{name}.lance"
    write(spark, path, rows)
    return LanceTable.for_path(spark, str(path))


def assert_rows(actual, spark, rows, schema=SCHEMA) -> None:
    """``actual`` holds exactly ``rows`` (any order). Lance's field metadata on read columns is not compared here;
    test_schema checks it."""
    assert_df_equality(actual, df(spark, rows, schema), ignore_row_order=True, ignore_metadata=True)


def test_to_df_by_version_timestamp_tag_and_name(spark, wh):
    t = table(spark, wh, "reads")
    time.sleep(0.3)
    between = datetime.now(timezone.utc)
    time.sleep(0.3)
    write(spark, t.path, [(5, "e", 50)], mode="append")
    t.tags.create("first", 1)

    assert_rows(t.to_df(), spark, ROWS + [(5, "e", 50)])
    assert_rows(t.to_df(version=1), spark, ROWS)
    assert_rows(t.to_df(version=2), spark, ROWS + [(5, "e", 50)])
    assert_rows(t.to_df(timestamp=between.isoformat()), spark, ROWS)
    assert_rows(t.to_df(timestamp=between), spark, ROWS)
    assert_rows(t.to_df(timestamp=datetime.now(timezone.utc)), spark, ROWS + [(5, "e", 50)])
    assert_rows(t.to_df(tag="first"), spark, ROWS)
    assert_rows(LanceTable.for_name(spark, "lance.db.reads").to_df(version=1), spark, ROWS)

    with pytest.raises(sparklance.VersionNotFoundError, match="version 3 does not exist"):
        t.to_df(version=3)
    with pytest.raises(sparklance.VersionNotFoundError, match="no version was committed at or before"):
        t.to_df(timestamp="2000-01-01T00:00:00Z")
    with pytest.raises(sparklance.TagNotFoundError):
        t.to_df(tag="nope")
    with pytest.raises(sparklance.InvalidArgumentError, match="time zone"):
        t.to_df(timestamp=datetime(2026, 1, 1, 10, 0))


def test_schema(spark, wh):
    t = table(spark, wh, "schema")
    assert_schema_equality(t.schema, StructType([
        StructField("id", LongType(), True, {"lance.logical_type": "int64", "lance.field_id": 0}),
        StructField("s", StringType(), True, {"lance.logical_type": "string", "lance.field_id": 1}),
        StructField("n", IntegerType(), True, {"lance.logical_type": "int32", "lance.field_id": 2}),
    ]))


def test_history_and_versions(spark, wh):
    started = datetime.now(timezone.utc) - timedelta(seconds=1)
    t = table(spark, wh, "history")
    write(spark, t.path, [(5, "e", 50), (6, "f", 60)], mode="append")
    t.delete("id = 1")
    ended = datetime.now(timezone.utc) + timedelta(seconds=1)

    writer = f"sparklance {sparklance.__version__}"
    expected = df(spark, [
        (1, "Overwrite", 4, 1, 4, 0, writer),
        (2, "Append", 6, 2, 2, 0, writer),
        (3, "Delete", 5, 2, 0, 1, writer),
    ], "version BIGINT, operation STRING, rows BIGINT, fragments INT, rows_added BIGINT, rows_deleted BIGINT, "
       "written_by STRING").withColumn("committed_during_test", F.lit(True))
    # Commit times are not known in advance: they must fall within the test (aware datetimes, so any session time
    # zone compares the same instants) and ascend.
    actual = (t.history()
              .withColumn("committed_during_test", F.col("timestamp").between(F.lit(started), F.lit(ended)))
              .drop("timestamp"))
    assert_df_equality(actual, expected, ignore_nullable=True)
    stamps = [r.timestamp for r in t.history().orderBy("version").collect()]
    assert stamps == sorted(stamps)

    assert t.versions() == [1, 2, 3]
    assert t.version() == 3


def test_tags_create_delete_and_list(spark, wh):
    t = table(spark, wh, "tags")
    t.delete("id > 2")
    assert t.tags.list() == {}
    t.tags.create("latest")
    t.tags.create("original", 1)
    assert t.tags.list() == {"latest": 2, "original": 1}
    assert_rows(t.to_df(tag="original"), spark, ROWS)
    assert_rows(t.to_df(tag="latest"), spark, [(1, "a", 10), (2, "b", 20)])

    t.tags.delete("latest")
    assert t.tags.list() == {"original": 1}
    with pytest.raises(sparklance.TagNotFoundError):
        t.to_df(tag="latest")
    with pytest.raises(sparklance.TagNotFoundError):
        t.tags.delete("latest")
    with pytest.raises(sparklance.VersionNotFoundError):
        t.tags.create("future", 9)


def test_restore_by_version_and_by_tag(spark, wh):
    t = table(spark, wh, "restore")
    t.delete("id <= 2")                                    # v2: (3, 4)
    t.tags.create("two", 2)
    assert t.restore(1) == 3
    assert_rows(t.to_df(), spark, ROWS)
    assert t.restore("two") == 4
    assert_rows(t.to_df(), spark, [(3, "c", 30), (4, "d", 40)])
    assert_rows(t.to_df(version=3), spark, ROWS)          # the versions in between stay readable
    assert_df_equality(t.history().select("version", "operation"),
                       df(spark, [(1, "Overwrite"), (2, "Delete"), (3, "Restore"), (4, "Restore")],
                          "version BIGINT, operation STRING"), ignore_nullable=True)
    with pytest.raises(sparklance.VersionNotFoundError):
        t.restore(9)


def test_delete(spark, wh):
    t = table(spark, wh, "delete")
    t.delete("n >= 30 OR s = 'a'")
    assert_rows(t.to_df(), spark, [(2, "b", 20)])
    t.delete("id = 99")                                    # matches nothing: no new version
    assert t.versions() == [1, 2]
    assert_rows(t.to_df(version=1), spark, ROWS)


def test_update(spark, wh):
    t = table(spark, wh, "update")
    t.update("id > 2", {"s": "upper(s)", "n": "n + id"})
    assert_rows(t.to_df(), spark, [(1, "a", 10), (2, "b", 20), (3, "C", 33), (4, "D", 44)])
    t.update(None, {"n": "0"})
    assert_rows(t.to_df(), spark, [(1, "a", 0), (2, "b", 0), (3, "C", 0), (4, "D", 0)])
    assert t.versions() == [1, 2, 3]


def test_merge_matched_update_matched_delete_and_insert(spark, wh):
    t = table(spark, wh, "merge")
    source = df(spark, [(2, "B", 200), (3, "gone", 0), (5, "e", 50), (6, "skip", 60)])
    (t.merge(source, "t.id = s.id")
     .when_matched_delete("s.s = 'gone'")
     .when_matched_update({"s": "s.s", "n": "t.n + s.n"})
     .when_not_matched_insert_all("s.s <> 'skip'")
     .execute())
    assert_rows(t.to_df(), spark, [(1, "a", 10), (2, "B", 220), (4, "d", 40), (5, "e", 50)])

    (t.merge(df(spark, [(1, "A", 1), (4, "D", 4), (7, "g", 70)]), "t.id = s.id")
     .when_matched_update_all("s.id = 4")
     .when_matched_delete()
     .when_not_matched_insert_all()
     .execute())
    assert_rows(t.to_df(), spark, [(2, "B", 220), (4, "D", 4), (5, "e", 50), (7, "g", 70)])
    assert t.versions() == [1, 2, 3]

    with pytest.raises(sparklance.InvalidArgumentError, match="at least one WHEN clause"):
        t.merge(source, "t.id = s.id").execute()
    assert spark.catalog.listTables() == []                # the source's temporary view is gone


def test_optimize_leaves_the_data_unchanged(spark, wh):
    t = table(spark, wh, "optimize", ROWS[:2])
    write(spark, t.path, ROWS[2:3], mode="append")
    write(spark, t.path, ROWS[3:], mode="append")
    t.delete("id = 2")

    result_schema = "version BIGINT, fragments_removed INT, fragments_added INT"
    assert_df_equality(t.optimize(), df(spark, [(5, 3, 1)], result_schema), ignore_nullable=True)
    assert_rows(t.to_df(), spark, [(1, "a", 10), (3, "c", 30), (4, "d", 40)])
    assert t.history().where("version = 5").select("fragments").first()[0] == 1
    assert_df_equality(t.optimize(), df(spark, [(None, 0, 0)], result_schema), ignore_nullable=True)
    assert t.versions() == [1, 2, 3, 4, 5]


def test_vacuum_keeps_the_current_version_and_removes_old_ones(spark, wh):
    t = table(spark, wh, "vacuum", ROWS[:2])              # v1: one data file
    write(spark, t.path, ROWS[2:], mode="overwrite")      # v2: v1's data file is no longer used
    t.tags.create("keep", 1)
    t.tags.create("dropped", 2)
    t.tags.delete("dropped")
    write(spark, t.path, [(5, "e", 50)], mode="overwrite")  # v3
    write(spark, t.path, [(6, "f", 60)], mode="append")     # v4
    current = [(5, "e", 50), (6, "f", 60)]

    def kinds(result):
        """A vacuum result as (directory under the table, removed versions)."""
        return result.select(F.regexp_extract("path", r"vacuum\.lance/([^/]+)/", 1).alias("dir"), "versions")

    # v1 is tagged and v4 is the latest: v2 and v3 go, each with its manifest and transaction file; v2's data file
    # goes too, v3's stays (v4 appended to it).
    expected = df(spark, [("_versions", [2, 3]), ("_versions", [2, 3]), ("_transactions", [2, 3]),
                          ("_transactions", [2, 3]), ("data", [2, 3])], "dir STRING, versions ARRAY<BIGINT>")
    assert_df_equality(kinds(t.vacuum(retain_hours=0, dry_run=True)), expected, ignore_row_order=True,
                       ignore_nullable=True)
    assert t.versions() == [1, 2, 3, 4]
    assert_rows(t.to_df(version=2), spark, ROWS[2:])

    assert_df_equality(kinds(t.vacuum(retain_hours=0)), expected, ignore_row_order=True, ignore_nullable=True)
    assert t.versions() == [1, 4]
    assert_rows(t.to_df(), spark, current)
    assert_rows(t.to_df(tag="keep"), spark, ROWS[:2])
    for gone in (2, 3):
        with pytest.raises(sparklance.VersionNotFoundError, match=f"version {gone} does not exist") as e:
            t.to_df(version=gone)
        assert e.value.error_class == "LANCE_VERSION_NOT_FOUND"
    assert t.vacuum(retain_hours=0).count() == 0
    assert t.vacuum().count() == 0                         # the default keeps a week
    with pytest.raises(sparklance.InvalidArgumentError, match="must not be negative"):
        t.vacuum(retain_hours=-1)


def test_add_columns(spark, wh):
    t = table(spark, wh, "addcols")
    t.delete("id = 4")
    assert t.add_columns({"n2": "n * 2", "label": "concat(s, '-', CAST(id AS STRING))"}) == 3
    assert_rows(t.to_df(), spark, [(1, "a", 10, 20, "a-1"), (2, "b", 20, 40, "b-2"), (3, "c", 30, 60, "c-3")],
                SCHEMA + ", n2 INT, label STRING")
    assert_rows(t.to_df(version=2), spark, ROWS[:3])
    with pytest.raises(sparklance.LanceError):
        t.add_columns({"n": "n + 1"})                       # a column of that name exists


def test_commit_files(spark, tmp_path):
    from lance.file import LanceFileWriter

    path = tmp_path / "committed.lance"
    (path / "data").mkdir(parents=True)
    names = []
    for k in range(3):                                     # as parallel tasks would: each writes a data file alone
        name = f"part-{k}.lance"
        with LanceFileWriter(str(path / "data" / name)) as w:
            w.write_batch(pa.table({"id": pa.array([10 * k, 10 * k + 1], pa.int64()),
                                    "s": pa.array([f"p{k}a", f"p{k}b"])}))
        names.append(name)
    t = LanceTable.for_path(spark, str(path))
    assert t.commit_files(names[:2], mode="overwrite") == 1
    assert_rows(t.to_df(), spark, [(0, "p0a"), (1, "p0b"), (10, "p1a"), (11, "p1b")], "id BIGINT, s STRING")
    assert t.commit_files(names[2:]) == 2
    assert_rows(t.to_df(), spark, [(0, "p0a"), (1, "p0b"), (10, "p1a"), (11, "p1b"), (20, "p2a"), (21, "p2b")],
                "id BIGINT, s STRING")
    assert_df_equality(t.history().select("version", "operation", "rows", "fragments"),
                       df(spark, [(1, "Overwrite", 4, 2), (2, "Append", 6, 3)],
                          "version BIGINT, operation STRING, rows BIGINT, fragments INT"), ignore_nullable=True)
    with pytest.raises(sparklance.InvalidArgumentError):
        t.commit_files(names, mode="upsert")
