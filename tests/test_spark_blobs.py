"""Blob columns read through Spark: the bytes of every blob (stored in the data file, a shared sidecar or a
dedicated one), equal to what pylance's take_blobs returns; for file version 2.2 the column is
`struct<data: binary, uri: string>` as the table's schema says, for 2.0/2.1 `binary`."""

from __future__ import annotations

import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark  # noqa: E402

SIZES = [0, 10, 100, 5000, 70000, None, 1, 5_500_000]


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("sparklance-blob-tests", tmp_path_factory.mktemp("blobs_wh"))
    yield session
    session.stop()


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_blob_bytes(spark, tmp_path, version):
    blobs = [None if s is None else bytes([i % 251]) * s for i, s in enumerate(SIZES * 3)]
    table = pa.Table.from_arrays([pa.array(range(len(blobs)), pa.int32()), pa.array(blobs, pa.large_binary())],
                                 schema=pa.schema([pa.field("id", pa.int32()),
                                                   pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]))
    path = str(tmp_path / "t.lance")
    ds = lance.write_dataset(table, path, data_storage_version=version)
    want = [None if b is None else b.readall() for b in ds.take_blobs("b", indices=list(range(len(blobs))))]
    assert want == blobs
    rows = sorted(spark.read.format("lance").load(path).collect(), key=lambda r: r.id)
    if version == "2.2":
        got = [None if r.b is None else bytes(r.b.data) for r in rows]
        assert all(r.b is None or r.b.uri is None for r in rows)
    else:
        got = [None if r.b is None else bytes(r.b) for r in rows]
    assert got == want
    # A projection of other columns does not touch the blobs.
    assert spark.read.format("lance").load(path).select("id").count() == len(blobs)


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_blob_bytes_written_by_spark(spark, tmp_path, version):
    """Spark appends rows (with their blobs) read from a blob table to it: pylance's take_blobs returns them all."""
    blobs = [None if s is None else bytes([i % 251]) * s for i, s in enumerate(SIZES)]
    table = pa.Table.from_arrays([pa.array(range(len(blobs)), pa.int32()), pa.array(blobs, pa.large_binary())],
                                 schema=pa.schema([pa.field("id", pa.int32()),
                                                   pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]))
    path = str(tmp_path / "t.lance")
    lance.write_dataset(table, path, data_storage_version=version)
    spark.read.format("lance").load(path).selectExpr("id + 100 AS id", "b").write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    got = dict(zip(ids, [None if b is None else b.readall() for b in ds.take_blobs("b", indices=list(range(len(ids))))]))
    assert got == {**dict(enumerate(blobs)), **{i + 100: b for i, b in enumerate(blobs)}}
    rows = sorted(spark.read.format("lance").load(path).collect(), key=lambda r: r.id)
    spark_bytes = [None if r.b is None else bytes(r.b.data if version == "2.2" else r.b) for r in rows]
    assert spark_bytes == blobs + blobs


def test_blob_field_of_pylance_14(spark, tmp_path):
    """`lance.blob_field` columns (blob v2 with position and size in the table's struct): every field reads, alone
    or together, as docs/types.md says; `data` equals pylance's take_blobs and `size` the blob's length."""
    blobs = [b"abc", None, b"", bytes(range(256)) * 300, b"x" * 70000]
    schema = pa.schema([pa.field("id", pa.int32()), lance.blob_field("blob")])
    table = pa.table({"id": pa.array(range(len(blobs)), pa.int32()), "blob": lance.blob_array(blobs)}, schema=schema)
    path = str(tmp_path / "bf.lance")
    ds = lance.write_dataset(table, path, data_storage_version="2.2")
    want = [None if b is None else b.readall() for b in ds.take_blobs("blob", indices=list(range(len(blobs))))]
    assert want == blobs
    df = spark.read.format("lance").load(path)
    assert df.schema["blob"].dataType.simpleString() == \
        "struct<data:binary,uri:string,position:decimal(20,0),size:decimal(20,0)>"
    rows = sorted(df.collect(), key=lambda r: r.id)
    assert [None if r.blob is None else bytes(r.blob.data) for r in rows] == blobs
    assert [None if r.blob is None else int(r.blob.size) for r in rows] == [None if b is None else len(b) for b in blobs]
    assert all(r.blob is None or r.blob.uri is None for r in rows)
    # Each field alone (nested projection), and a filter on the size.
    for field in ["data", "size", "position", "uri"]:
        got = sorted(df.selectExpr("id", f"blob.{field} AS f").collect(), key=lambda r: r.id)
        assert [r.f for r in got] == [None if r.blob is None else r.blob[field] for r in rows], field
    assert sorted(r.id for r in df.where("blob.size > 1000").select("id").collect()) == [3, 4]
    # Rows read from it append back; pylance reads the same bytes.
    df.selectExpr("id + 100 AS id", "blob").write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    got = dict(zip(ids, [None if b is None else b.readall() for b in ds.take_blobs("blob", indices=list(range(len(ids))))]))
    assert got == {**dict(enumerate(blobs)), **{i + 100: b for i, b in enumerate(blobs)}}
