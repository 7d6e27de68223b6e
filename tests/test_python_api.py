"""The Python helper API (sparklance.LanceTable, configure, error classes) against a real local SparkSession, with
chispa DataFrame comparisons and pylance as the reference."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from chispa import assert_df_equality

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, cross_version, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

pytestmark = cross_version


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "pyapi_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-python-api-tests", wh)
    yield session
    session.stop()


def make(wh: Path, name: str) -> str:
    path = str(wh / "db" / f"{name}.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64()), "s": [f"s{i}" for i in range(10)]}), path)
    lance.write_dataset(pa.table({"id": pa.array(range(10, 15), pa.int64()), "s": [f"s{i}" for i in range(10, 15)]}),
                        path, mode="append")
    return path


def test_reads_by_version_tag_and_name(spark, wh):
    path = make(wh, "reads")
    t = LanceTable.for_path(spark, path)
    assert_df_equality(t.to_df(), spark.read.format("lance").load(path), ignore_row_order=True)
    assert t.to_df(version=1).count() == 10
    t.tags.create("first", 1)
    assert t.tags.list() == {"first": 1} and lance.dataset(path).tags.list()["first"]["version"] == 1
    assert_df_equality(t.to_df(tag="first"), t.to_df(version=1), ignore_row_order=True)
    by_name = LanceTable.for_name(spark, "lance.db.reads")
    assert by_name.path.rstrip("/").endswith("db/reads.lance")
    assert by_name.versions() == [1, 2] and by_name.version() == 2
    assert [f.name for f in t.schema.fields] == ["id", "s"]
    h = t.history().collect()
    assert [(r.version, r.operation) for r in h] == [(1, "Overwrite"), (2, "Append")]


def test_changes_and_maintenance(spark, wh):
    path = make(wh, "changes")
    t = LanceTable.for_path(spark, path)
    t.delete("id < 3")
    want = {i: f"s{i}" for i in range(3, 15)}
    if SPARK_LINE >= (3, 5):
        t.update("id = 3", {"s": "'three'"})
        src = spark.createDataFrame([(4, "four"), (100, "hundred")], "id BIGINT, s STRING")
        t.merge(src, "t.id = s.id").when_matched_update({"s": "s.s"}).when_not_matched_insert_all().execute()
        want.update({3: "three", 4: "four", 100: "hundred"})
    else:   # Spark 3.4 has no UPDATE or MERGE INTO for row-level sources (docs/spark-versions.md)
        with pytest.raises(Exception, match="UPDATE TABLE is not supported temporarily"):
            t.update("id = 3", {"s": "'three'"})
    ds = lance.dataset(path)
    ds.validate()
    assert {r["id"]: r["s"] for r in ds.to_table().to_pylist()} == want
    assert t.add_columns({"twice": "id * 2"}) == ds.version + 1
    assert all(r["twice"] == 2 * r["id"] for r in lance.dataset(path).to_table().to_pylist())
    r = t.optimize().collect()[0]
    assert r.fragments_removed >= 2
    assert t.restore(1) == t.version() and t.to_df().count() == 10
    assert t.vacuum(retain_hours=0, dry_run=True).count() > 0


def test_errors_are_python_classes(spark, wh, tmp_path):
    with pytest.raises(sparklance.TableNotFoundError) as e:
        LanceTable.for_path(spark, str(tmp_path / "missing.lance")).history()
    assert e.value.error_class == "LANCE_NOT_A_TABLE"
    path = make(wh, "errors")
    t = LanceTable.for_path(spark, path)
    with pytest.raises(sparklance.VersionNotFoundError):
        t.to_df(version=99).count()
    with pytest.raises(sparklance.TagNotFoundError):
        t.restore("nope")
    with pytest.raises(sparklance.InvalidArgumentError):
        t.update(None, {})
    with pytest.raises(sparklance.TableExistsError):
        with sparklance.errors.translated():
            spark.range(1).write.format("lance").save(path)


def test_configure_refuses_anything_but_a_builder():
    with pytest.raises(TypeError, match="SparkSession.Builder"):
        sparklance.configure("not a builder")


def test_cli_sql_and_history(wh, tmp_path):
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "python"))
    path = make(wh, "cli")
    out = subprocess.run([sys.executable, "-m", "sparklance", "sql", "--warehouse", str(wh),
                          "SELECT count(*) AS n FROM lance.db.cli"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "15" in out.stdout
    out = subprocess.run([sys.executable, "-m", "sparklance", "sql", "--warehouse", str(wh)], input=
                         "SELECT max(id) AS m FROM lance.db.cli\nSELECT * FROM lance.db.nope\n", env=env,
                         capture_output=True, text=True, timeout=300)
    assert "14" in out.stdout and "error" in out.stderr and out.returncode == 1
    out = subprocess.run([sys.executable, "-m", "sparklance", "history", path], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and "Overwrite" in out.stdout and "Append" in out.stdout
    out = subprocess.run([sys.executable, "-m", "sparklance", "history", str(tmp_path / "none.lance")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "LANCE_NOT_A_TABLE" in out.stderr


def test_commit_files_written_elsewhere(spark, tmp_path):
    from lance.file import LanceFileWriter

    path = tmp_path / "c.lance"
    (path / "data").mkdir(parents=True)
    names = []
    for k in range(3):   # as parallel tasks would: each writes a data file on its own
        name = f"task-{k}.lance"
        with LanceFileWriter(str(path / "data" / name), version="2.1") as w:
            w.write_batch(pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64())}))
        names.append(name)
    t = LanceTable.for_path(spark, str(path))
    assert t.commit_files(names[:2], mode="overwrite") == 1
    assert t.commit_files(names[2:]) == 2
    ds = lance.dataset(str(path))
    ds.validate()
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(30))
    assert ds.data_storage_version == "2.1"
    with pytest.raises(sparklance.InvalidArgumentError):
        t.commit_files(names, mode="upsert")


def test_a_relative_path_names_the_table_below_the_drivers_directory(spark, wh):
    make(wh, "relative")
    cwd = spark._jvm.java.lang.System.getProperty("user.dir")  # relative paths resolve against the driver's
    rel = os.path.relpath(wh / "db" / "relative.lance", cwd)
    t = LanceTable.for_path(spark, rel)
    assert t.path.startswith("file:") and t.path.rstrip("/").endswith("db/relative.lance")
    t.delete("id < 3")
    if SPARK_LINE >= (3, 5):   # Spark 3.4 has no UPDATE for row-level sources
        t.update("id = 14", {"s": "'changed'"})
    got = lance.dataset(str(wh / "db" / "relative.lance")).to_table().sort_by("id")
    assert got.column("id").to_pylist() == list(range(3, 15))
    assert got.column("s").to_pylist()[-1] == ("changed" if SPARK_LINE >= (3, 5) else "s14")
