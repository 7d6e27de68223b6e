"""Tags, restore and history through sparklance's table API (``io.sparklance.spark.LanceTableOps``, called over
py4j as the Python package will), proved against pylance: pylance sees the tags we create and we see its tags,
a restored version reads as the old one in pylance (and validates), and history lists every version with its
operation."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))


def ops(spark):
    return spark._jvm.io.sparklance.spark.LanceTableOps


def df(spark, jdf):
    from pyspark.sql import DataFrame
    return DataFrame(jdf, spark)


def table(tmp_path) -> str:
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), path)
    lance.write_dataset(pa.table({"id": pa.array(range(10, 15), pa.int64())}), path, mode="append")
    lance.dataset(path).delete("id < 3")
    return path


def test_tags_both_ways(spark, tmp_path):
    path = table(tmp_path)
    ops(spark).createTag(spark._jsparkSession, path, "first", 1)
    assert lance.dataset(path).tags.list()["first"]["version"] == 1
    lance.dataset(path).tags.create("second", 2)
    got = [(r.name, r.version) for r in df(spark, ops(spark).tags(spark._jsparkSession, path)).collect()]
    assert got == [("first", 1), ("second", 2)]
    assert spark.read.format("lance").option("tag", "first").load(path).count() == 10
    with pytest.raises(Exception, match="already has a tag 'first'"):
        ops(spark).createTag(spark._jsparkSession, path, "first", 2)
    with pytest.raises(Exception, match="LANCE_VERSION_NOT_FOUND"):
        ops(spark).createTag(spark._jsparkSession, path, "nope", 99)
    ops(spark).deleteTag(spark._jsparkSession, path, "first")
    assert list(lance.dataset(path).tags.list()) == ["second"]
    with pytest.raises(Exception, match="has no tag 'first'"):
        ops(spark).deleteTag(spark._jsparkSession, path, "first")


def test_restore_commits_the_old_version_as_a_new_one(spark, tmp_path):
    path = table(tmp_path)
    assert ops(spark).restore(spark._jsparkSession, path, 1) == 4
    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 4 and sorted(ds.to_table().column("id").to_pylist()) == list(range(10))
    assert lance.dataset(path, version=3).count_rows() == 12
    # Writes go on from the restored state; fragment ids keep counting.
    lance.write_dataset(pa.table({"id": pa.array([100], pa.int64())}), path, mode="append")
    ds = lance.dataset(path)
    ds.validate()
    assert ds.count_rows() == 11 and [f.fragment_id for f in ds.get_fragments()] == [0, 2]
    lance.dataset(path).tags.create("v3", 3)
    assert ops(spark).restoreTag(spark._jsparkSession, path, "v3") == 6
    assert lance.dataset(path).count_rows() == 12
    with pytest.raises(Exception, match="already the latest"):
        ops(spark).restore(spark._jsparkSession, path, 6)


def test_history(spark, tmp_path):
    path = table(tmp_path)
    ops(spark).restore(spark._jsparkSession, path, 2)
    h = df(spark, ops(spark).history(spark._jsparkSession, path)).collect()
    assert [(r.version, r.operation, r.rows, r.fragments) for r in h] == [
        (1, "Overwrite", 10, 1), (2, "Append", 15, 2), (3, "Delete", 12, 2), (4, "Restore", 15, 2)]
    assert h[0].written_by.startswith("lance ") and h[3].written_by.startswith("sparklance")
    assert [(r.rows_added, r.rows_deleted) for r in h] == [(10, 0), (5, 0), (0, 3), (3, 0)]
    assert all(a.timestamp <= b.timestamp for a, b in zip(h, h[1:]))


def test_optimize_merges_small_fragments_and_drops_deleted_rows(spark, tmp_path):
    path = str(tmp_path / "c.lance")
    for i in range(6):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 100, i * 100 + 100), pa.int64()),
                                      "s": [f"s{j}" for j in range(i * 100, i * 100 + 100)]}),
                            path, mode="append" if i else "create")
    lance.dataset(path).delete("id % 10 = 0")
    before = lance.dataset(path).to_table().to_pylist()
    r = df(spark, ops(spark).optimize(spark._jsparkSession, path, 250)).collect()[0]
    assert (r.version, r.fragments_removed) == (8, 6)
    ds = lance.dataset(path)
    ds.validate()
    assert ds.to_table().to_pylist() == before                      # same rows, same order
    frags = ds.get_fragments()
    assert [f.count_rows() for f in frags] == [180, 180, 180] and all(f.deletion_file() is None for f in frags)
    assert [f.fragment_id for f in frags] == [6, 7, 8]               # ids never reused
    assert lance.dataset(path, version=7).count_rows() == 540
    again = df(spark, ops(spark).optimize(spark._jsparkSession, path, 250)).collect()[0]
    assert again.version is None and again.fragments_removed == 0


def test_optimize_keeps_stable_row_ids(spark, tmp_path):
    path = str(tmp_path / "s.lance")
    for i in range(4):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 50, i * 50 + 50), pa.int64())}), path,
                            mode="append" if i else "create", enable_stable_row_ids=True)
    lance.dataset(path).delete("id % 3 = 0")
    want = lance.dataset(path).to_table(with_row_id=True).to_pylist()
    ops(spark).optimize(spark._jsparkSession, path)
    ds = lance.dataset(path)
    ds.validate()
    assert len(ds.get_fragments()) == 1
    assert ds.to_table(with_row_id=True).to_pylist() == want
    assert spark.read.format("lance").load(path).selectExpr("_rowid", "id").collect() == \
        [(r["_rowid"], r["id"]) for r in want]
    # pylance keeps assigning new row ids after ours.
    lance.write_dataset(pa.table({"id": pa.array([999], pa.int64())}), path, mode="append")
    assert max(lance.dataset(path).to_table(with_row_id=True).column("_rowid").to_pylist()) == 200


def test_vacuum_removes_old_versions_but_not_what_kept_ones_need(spark, tmp_path):
    import time
    path = str(tmp_path / "v.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(100), pa.int64())}), path)            # v1
    lance.write_dataset(pa.table({"id": pa.array(range(100), pa.int64())}), path, mode="overwrite")  # v2
    lance.write_dataset(pa.table({"id": pa.array([7], pa.int64())}), path, mode="append")    # v3
    lance.dataset(path).tags.create("keep", 1)
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int64())}), path, mode="overwrite")  # v4
    lance.dataset(path).delete("id = 1")                                                       # v5
    time.sleep(0.05)
    files_before = sorted(str(p) for p in Path(path).rglob("*") if p.is_file())
    dry = df(spark, ops(spark).vacuum(spark._jsparkSession, path, 0.0, True)).collect()
    assert sorted(str(p) for p in Path(path).rglob("*") if p.is_file()) == files_before   # a dry run deletes nothing
    assert sorted(dry[0].versions) == [2, 3, 4]
    removed = df(spark, ops(spark).vacuum(spark._jsparkSession, path, 0.0, False)).collect()
    assert sorted(r.path for r in removed) == sorted(r.path for r in dry)
    ds = lance.dataset(path)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == [1, 5]
    assert lance.dataset(path, version=1).count_rows() == 100            # the tagged version still reads
    assert ds.count_rows() == 0
    assert spark.read.format("lance").option("tag", "keep").load(path).count() == 100
    # Only unreferenced files went: every file a kept version names is there.
    for v in (1, 5):
        for f in lance.dataset(path, version=v).get_fragments():
            for d in f.data_files():
                assert os.path.exists(os.path.join(path, "data", d.path))
    with pytest.raises(Exception, match="retainHours must not be negative"):
        ops(spark).vacuum(spark._jsparkSession, path, -1.0, True)


def test_vacuum_keeps_recent_versions_and_files_of_writes_in_progress(spark, tmp_path):
    path = str(tmp_path / "r.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), path)
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64())}), path, mode="overwrite")
    # A data file written but not (yet) committed.
    stray = os.path.join(path, "data", "in-progress.lance")
    Path(stray).write_bytes(b"x")
    removed = df(spark, ops(spark).vacuum(spark._jsparkSession, path, 1.0, False)).collect()
    assert removed == []
    assert os.path.exists(stray)
    assert [v["version"] for v in lance.dataset(path).versions()] == [1, 2]


def test_add_columns_with_values_writes_only_the_new_columns(spark, tmp_path):
    path = str(tmp_path / "e.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(1000), pa.int64()), "s": [f"s{i}" for i in range(1000)]}), path,
                        max_rows_per_file=300)
    lance.dataset(path).delete("id % 7 = 0")
    before = {f.fragment_id: [d.path for d in f.data_files()] for f in lance.dataset(path).get_fragments()}
    v = ops(spark).addColumns(spark._jsparkSession, path, ["twice", "tag"], ["id * 2", "concat(s, '!')"])
    ds = lance.dataset(path)
    ds.validate()
    assert v == 3 and ds.schema.names == ["id", "s", "twice", "tag"]
    rows = ds.to_table().to_pylist()
    assert len(rows) == 1000 - len(range(0, 1000, 7))
    assert all(r["twice"] == 2 * r["id"] and r["tag"] == r["s"] + "!" for r in rows)
    for f in ds.get_fragments():                       # the old files stay; one new file per fragment
        files = [d.path for d in f.data_files()]
        assert files[:-1] == before[f.fragment_id] and len(files) == len(before[f.fragment_id]) + 1
    assert lance.dataset(path, version=2).schema.names == ["id", "s"]
    got = spark.read.format("lance").load(path).selectExpr("sum(twice) AS t").collect()[0].t
    assert got == sum(2 * r["id"] for r in rows)
    # pylance can keep going: it appends rows with the new columns.
    lance.write_dataset(pa.table({"id": pa.array([5000], pa.int64()), "s": ["x"], "twice": pa.array([10000], pa.int64()),
                                  "tag": ["x!"]}), path, mode="append")
    lance.dataset(path).validate()
