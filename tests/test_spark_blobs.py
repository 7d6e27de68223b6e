"""Blob columns read through Spark: the bytes of every blob (stored in the data file, a shared sidecar or a
dedicated one), equal to what pylance's take_blobs returns. Every blob column is `BINARY` (blob v2 of file version
2.2 as well), with lance-spark's virtual columns `<column>__blob_pos` and `<column>__blob_size` in 2.2; with
`blob_handling = blobs_descriptions` a blob v2 column is lance-spark's descriptor struct, equal to pylance's
descriptors."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark  # noqa: E402

SIZES = [0, 10, 100, 5000, 70000, None, 1, 5_500_000]
SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))


def random_blobs(rng: random.Random, n: int) -> list:
    """Blobs of sizes on both sides of pylance 14's thresholds: inline up to 64 KiB, a shared sidecar up to 4 MiB,
    a file of their own above; some null."""
    def size():
        return rng.choice([0, rng.randrange(1, 100), 65536, 65537, rng.randrange(65537, 300_000),
                           4 * 1024 * 1024, 4 * 1024 * 1024 + 1, rng.randrange(4_194_305, 4_500_000)])
    return [None if rng.random() < 0.1 else rng.randbytes(size()) for _ in range(n)]


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    root = tmp_path_factory.mktemp("blobs_wh")
    (root / "db").mkdir()
    return root


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-blob-tests", wh)
    yield session
    session.stop()


def pylance_blobs(path) -> dict:
    ds = lance.dataset(str(path))
    ds.validate()
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    return dict(zip(ids, [None if b is None else b.readall()
                          for b in ds.take_blobs("content", indices=list(range(len(ids))))]))


@pytest.mark.parametrize("case", range(N))
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_binary_writes_into_a_blob_column(spark, wh, version, case):
    """BINARY values written into a blob column by INSERT, a DataFrame append, UPDATE and MERGE (which rewrite the
    column) and CREATE TABLE ... AS SELECT from the table are blobs: pylance's take_blobs returns their bytes, and
    Spark reads the same bytes back, with their sizes in content__blob_size (2.2)."""
    rng = random.Random(SEED * 100 + case)
    name = f"w{version.replace('.', '')}_{case}"
    table = f"lance.db.{name}"
    spark.sql(f"CREATE TABLE {table} (id INT, content BINARY) TBLPROPERTIES ('content.lance.encoding' = 'blob', "
              f"'file_format_version' = '{version}')")
    assert spark.table(table).schema["content"].dataType.simpleString() == "binary"
    want = {}
    first = random_blobs(rng, 3)
    spark.sql(f"INSERT INTO {table} VALUES " + ", ".join(
        f"({i}, {'NULL' if b is None else 'X' + repr(b.hex())})" for i, b in enumerate(first)))
    want.update(enumerate(first))
    more = random_blobs(rng, 5)
    spark.createDataFrame([(10 + i, b) for i, b in enumerate(more)], "id INT, content BINARY") \
        .writeTo(table).append()
    want.update({10 + i: b for i, b in enumerate(more)})
    assert pylance_blobs(wh / "db" / f"{name}.lance") == want
    # UPDATE rewrites the rows it changes; MERGE updates one row and inserts another.
    new = random_blobs(rng, 2)
    spark.createDataFrame([(0, new[0]), (99, new[1])], "id INT, content BINARY").createOrReplaceTempView("src")
    spark.sql(f"UPDATE {table} SET content = CAST(concat(coalesce(content, X''), X'00') AS BINARY) WHERE id = 1")
    want[1] = (want[1] or b"") + b"\x00"
    spark.sql(f"MERGE INTO {table} t USING src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET content = s.content "
              "WHEN NOT MATCHED THEN INSERT *")
    want[0], want[99] = new[0], new[1]
    assert pylance_blobs(wh / "db" / f"{name}.lance") == want
    rows = spark.table(table).collect()
    assert {r.id: None if r.content is None else bytes(r.content) for r in rows} == want
    if version == "2.2":
        sizes = {r.id: r.content__blob_size for r in spark.table(table).select("id", "content__blob_size").collect()}
        assert sizes == {i: None if b is None else len(b) for i, b in want.items()}
    # A table made from it keeps the blob column (its field metadata says so).
    spark.sql(f"CREATE TABLE lance.db.{name}_copy TBLPROPERTIES ('file_format_version' = '{version}') "
              f"AS SELECT * FROM {table}")
    assert pylance_blobs(wh / "db" / f"{name}_copy.lance") == want


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
    df = spark.read.format("lance").load(path)
    assert df.schema["b"].dataType.simpleString() == "binary"
    assert df.schema["b"].metadata.get("lance-encoding:blob") == "true"
    rows = sorted(df.collect(), key=lambda r: r.id)
    assert [None if r.b is None else bytes(r.b) for r in rows] == want
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
    spark_bytes = [None if r.b is None else bytes(r.b) for r in rows]
    assert spark_bytes == blobs + blobs


def test_blob_field_of_pylance_14(spark, tmp_path):
    """`lance.blob_field` columns (blob v2 with position and size in the table's struct) read as BINARY; the
    virtual columns give the descriptors' position and size (pylance's to_table of the column), alone, with the
    bytes, and in a filter."""
    blobs = [b"abc", None, b"", bytes(range(256)) * 300, b"x" * 70000, b"y" * 4_200_000]
    schema = pa.schema([pa.field("id", pa.int32()), lance.blob_field("blob")])
    table = pa.table({"id": pa.array(range(len(blobs)), pa.int32()), "blob": lance.blob_array(blobs)}, schema=schema)
    path = str(tmp_path / "bf.lance")
    ds = lance.write_dataset(table, path, data_storage_version="2.2")
    want = [None if b is None else b.readall() for b in ds.take_blobs("blob", indices=list(range(len(blobs))))]
    assert want == blobs
    descriptors = ds.to_table(columns=["blob"]).column("blob").to_pylist()
    df = spark.read.format("lance").load(path)
    assert df.schema["blob"].dataType.simpleString() == "binary"
    rows = sorted(df.collect(), key=lambda r: r.id)
    assert [None if r.blob is None else bytes(r.blob) for r in rows] == blobs
    meta = sorted(df.select("id", "blob__blob_pos", "blob__blob_size").collect(), key=lambda r: r.id)
    assert [(r.blob__blob_pos, r.blob__blob_size) for r in meta] == \
        [(None, None) if b is None else (d["position"], d["size"]) for b, d in zip(blobs, descriptors)]
    both = sorted(df.select("id", "blob", "blob__blob_size").collect(), key=lambda r: r.id)
    assert [None if r.blob is None else (bytes(r.blob), r.blob__blob_size) for r in both] == \
        [None if b is None else (b, len(b)) for b in blobs]
    assert sorted(r.id for r in df.where("blob__blob_size > 1000").select("id").collect()) == [3, 4, 5]
    # Rows read from it append back; pylance reads the same bytes.
    df.selectExpr("id + 100 AS id", "blob").write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    got = dict(zip(ids, [None if b is None else b.readall() for b in ds.take_blobs("blob", indices=list(range(len(ids))))]))
    assert got == {**dict(enumerate(blobs)), **{i + 100: b for i, b in enumerate(blobs)}}


@pytest.mark.parametrize("version", ["2.1"])
def test_virtual_columns_of_older_blob_columns_are_refused(spark, tmp_path, version):
    """Blob columns of 2.0/2.1 have no virtual columns here: selecting one is refused, naming the column."""
    import sparklance
    from conftest import lance_raises
    table = pa.table({"id": pa.array([1], pa.int32()), "b": pa.array([b"abc"], pa.large_binary())},
                     schema=pa.schema([pa.field("id", pa.int32()),
                                       pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]))
    path = str(tmp_path / "old.lance")
    lance.write_dataset(table, path, data_storage_version=version)
    with lance_raises(sparklance.UnsupportedFeatureError, match="Cannot read column 'b__blob_size'"):
        spark.read.format("lance").load(path).select("b__blob_size").collect()


def data_tree(path) -> dict:
    """The files under a table's data/ directory (relative path -> size)."""
    root = Path(path) / "data"
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", range(N))
def test_sidecars_as_pylance_writes_them(spark, wh, tmp_path, case):
    """Seeded blob sizes across pylance 14's thresholds (64 KiB inline, 4 MiB shared sidecar), written by Spark in
    file version 2.2: every descriptor (kind, blob id, size, and position in a sidecar) equals the one pylance writes
    for the same values in the same order, the sidecar files have the same names and sizes, pylance reads the bytes
    (take_blobs, validate) and Spark reads pylance's table back equal."""
    rng = random.Random(SEED * 100 + 50 + case)
    blobs = random_blobs(rng, 12)
    name = f"side_{case}"
    spark.createDataFrame(list(enumerate(blobs)), "id INT, content BINARY").coalesce(1).writeTo(f"lance.db.{name}") \
        .tableProperty("content.lance.encoding", "blob").tableProperty("file_format_version", "2.2").create()
    ours = wh / "db" / f"{name}.lance"
    assert pylance_blobs(ours) == dict(enumerate(blobs))
    theirs = tmp_path / "theirs.lance"
    schema = pa.schema([pa.field("id", pa.int32()), lance.blob_field("content")])
    lance.write_dataset(pa.table({"id": pa.array(range(len(blobs)), pa.int32()), "content": lance.blob_array(blobs)},
                                 schema=schema), str(theirs), data_storage_version="2.2")

    def descriptors(path):
        ds = lance.dataset(str(path))
        rows = ds.to_table(columns=["id", "content"]).to_pylist()
        return {r["id"]: None if r["content"] is None else
                {k: v for k, v in r["content"].items() if k != "position" or r["content"]["kind"] != 0}
                for r in rows}

    assert descriptors(ours) == descriptors(theirs)
    strip = lambda tree: sorted((k.split("/", 1)[1], v) for k, v in tree.items() if "/" in k)  # noqa: E731
    assert strip(data_tree(ours)) == strip(data_tree(theirs))
    rows = spark.read.format("lance").load(str(theirs)).collect()
    assert {r.id: None if r.content is None else bytes(r.content) for r in rows} == dict(enumerate(blobs))


def test_delete_optimize_vacuum_keep_and_remove_sidecars(spark, wh, tmp_path):
    """DELETE, OPTIMIZE and VACUUM on a table with blob sidecars: compaction writes the kept rows' blobs to the new
    data file's sidecars, and VACUUM removes the old data files' sidecar directories, as pylance's compact_files and
    cleanup_old_versions do on a copy of the same table, while every blob still reads."""
    import shutil
    blobs = [b"a" * 10, b"b" * 100_000, b"c" * 5_000_000, None, b"d" * 70_000, b"e" * 4_194_305]
    spark.createDataFrame(list(enumerate(blobs)), "id INT, content BINARY").repartition(3).writeTo("lance.db.life") \
        .tableProperty("content.lance.encoding", "blob").tableProperty("file_format_version", "2.2").create()
    path = wh / "db" / "life.lance"
    spark.sql("DELETE FROM lance.db.life WHERE id = 1")
    theirs = tmp_path / "theirs.lance"
    shutil.copytree(path, theirs)
    spark.sql("OPTIMIZE lance.db.life")
    lance.dataset(str(theirs)).optimize.compact_files()
    want = {i: b for i, b in enumerate(blobs) if i != 1}
    assert pylance_blobs(path) == want == pylance_blobs(theirs)
    spark.sql("VACUUM lance.db.life RETAIN 0 HOURS")
    import datetime
    lance.dataset(str(theirs)).cleanup_old_versions(older_than=datetime.timedelta(0), delete_unverified=True)
    assert pylance_blobs(path) == want == pylance_blobs(theirs)
    ours_tree, their_tree = data_tree(path), data_tree(theirs)
    data_files = [k for k in ours_tree if "/" not in k]
    assert len(data_files) == 1 and all(k.startswith(data_files[0][:-len(".lance")] + "/") or k == data_files[0]
                                        for k in ours_tree)
    assert sorted(v for k, v in ours_tree.items() if "/" in k) == sorted(v for k, v in their_tree.items() if "/" in k)
    rows = spark.table("lance.db.life").collect()
    assert {r.id: None if r.content is None else bytes(r.content) for r in rows} == want


def test_external_blobs_are_refused_naming_the_uri(spark, tmp_path):
    """A blob v2 row pointing at an external object (pylance's Blob.from_uri, kind 3): its bytes, position and size
    are refused naming the URI (sparklance does not fetch it, and the descriptor does not give its size); the
    table's other columns read."""
    import sparklance
    from conftest import lance_raises
    external = tmp_path / "ext.bin"
    external.write_bytes(b"external-bytes")
    uri = external.as_uri()
    schema = pa.schema([pa.field("id", pa.int32()), lance.blob_field("b")])
    path = str(tmp_path / "ext.lance")
    lance.write_dataset(pa.table({"id": pa.array([0, 1], pa.int32()),
                                  "b": lance.blob_array([b"inline", lance.Blob.from_uri(uri)])}, schema=schema),
                        path, data_storage_version="2.2", allow_external_blob_outside_bases=True)
    df = spark.read.format("lance").load(path)
    assert sorted(r.id for r in df.select("id").collect()) == [0, 1]
    for column in ["b", "b__blob_size", "b__blob_pos"]:
        with lance_raises(sparklance.UnsupportedFeatureError, match=f"external URI {uri}"):
            df.select(column).collect()


# ------------------------------------------------------------------------------- blob_handling = blobs_descriptions

DESCRIPTOR = "struct<kind:smallint,position:bigint,size:bigint,blob_id:bigint,blob_uri:string>"
PARTS = ("kind", "position", "size", "blob_id", "blob_uri")


def pylance_descriptors(path, column="content") -> dict:
    """The descriptors pylance 14 shows for a blob v2 column (``to_table``'s default, ``blobs_descriptions``)."""
    ds = lance.dataset(str(path))
    ds.validate()
    rows = ds.to_table(columns=["id", column]).to_pylist()
    return {r["id"]: None if r[column] is None else tuple(r[column][p] for p in PARTS) for r in rows}


def spark_descriptors(rows, column="content") -> dict:
    return {r.id: None if r[column] is None else tuple(r[column][p] for p in PARTS) for r in rows}


def descriptor_session(spark):
    """A session of the tests' Spark whose catalog ``lance`` reads blob columns as descriptors."""
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.lance.warehouse", spark.conf.get("spark.sql.catalog.lance.warehouse"))
    session.conf.set("spark.sql.catalog.lance.blob_handling", "blobs_descriptions")
    return session


@pytest.mark.parametrize("case", range(N))
def test_descriptors_of_every_kind_as_pylance_shows_them(spark, tmp_path, case):
    """A table pylance writes with seeded blob sizes around its thresholds (64 KiB inline, 4 MiB shared sidecar),
    nulls, and external blobs (whole objects and ranges of one), read with the read option blob_handling =
    blobs_descriptions: the column is lance-spark's descriptor struct, and every row's kind, position, size, blob id
    and URI equal pylance's descriptor; the sizes of blobs stored in the table equal take_blobs' bytes; filters
    and projections of the descriptor's fields select the same rows."""
    rng = random.Random(SEED * 100 + 70 + case)
    external = tmp_path / "ext.bin"
    external.write_bytes(rng.randbytes(5000))
    uri = external.as_uri()
    stored = random_blobs(rng, 10) + [b"", b"s" * 65536, b"p" * 65537, b"d" * (4 * 1024 * 1024 + 1)]
    values = list(stored)
    for _ in range(3):
        start = rng.randrange(0, 4000)
        values.insert(rng.randrange(len(values) + 1),
                      lance.Blob.from_uri(uri) if rng.random() < 0.5 else lance.Blob.from_uri(uri, start, rng.randrange(1, 1000)))
    values.append(lance.Blob.from_uri(uri))
    values.append(lance.Blob.from_uri(uri, 7, 11))
    path = tmp_path / "kinds.lance"
    schema = pa.schema([pa.field("id", pa.int32()), lance.blob_field("content")])
    ds = lance.write_dataset(pa.table({"id": pa.array(range(len(values)), pa.int32()),
                                       "content": lance.blob_array(values)}, schema=schema),
                             str(path), data_storage_version="2.2", allow_external_blob_outside_bases=True)
    want = pylance_descriptors(path)
    assert {d[0] for d in want.values() if d is not None} == {0, 1, 2, 3}
    df = spark.read.format("lance").option("blob_handling", "blobs_descriptions").load(str(path))
    assert df.schema["content"].dataType.simpleString() == DESCRIPTOR
    assert "lance-encoding:blob" not in df.schema["content"].metadata
    assert spark_descriptors(df.collect()) == want
    # The sizes of the blobs the table stores are those of the bytes take_blobs returns; nulls are null.
    blobs = ds.take_blobs("content", indices=list(range(len(values))))
    for i, (d, b) in enumerate(zip([want[i] for i in range(len(values))], blobs)):
        assert (d is None) == (b is None)
        if d is not None and d[0] != 3:
            assert d[2] == len(b.readall())
        if d is not None and d[0] == 3:
            assert d[4] == uri
    # Fields of the descriptor, alone and in filters (which Spark evaluates).
    got = df.where("content.kind = 1 OR content.size > 4194304").selectExpr("id", "content.size", "content.kind").collect()
    assert sorted(tuple(r) for r in got) == sorted(
        (i, d[2], d[0]) for i, d in want.items() if d is not None and (d[0] == 1 or d[2] > 4194304))
    got = df.where("content.blob_uri <> ''").selectExpr("id", "content.position", "content.size").collect()
    assert sorted(tuple(r) for r in got) == sorted((i, d[1], d[2]) for i, d in want.items() if d is not None and d[0] == 3)
    assert df.where("content IS NULL").count() == sum(d is None for d in want.values())


@pytest.mark.parametrize("case", range(N))
def test_catalog_reads_descriptors_and_refuses_writing_them(spark, wh, case):
    """A catalog with blob_handling = blobs_descriptions shows the blob columns of its tables (written by Spark,
    seeded sizes around the thresholds) as descriptors equal to pylance's, answers lance-spark's SELECT content.size,
    content.kind, and refuses to write descriptors anywhere (INSERT from the table, CTAS, UPDATE), naming the
    column, and to stream them; the table is unchanged and the default catalog still reads the bytes."""
    import sparklance
    from conftest import lance_raises
    rng = random.Random(SEED * 100 + 90 + case)
    blobs = random_blobs(rng, 12)
    name = f"desc_{case}"
    spark.createDataFrame(list(enumerate(blobs)), "id INT, content BINARY").coalesce(1).writeTo(f"lance.db.{name}") \
        .tableProperty("content.lance.encoding", "blob").tableProperty("file_format_version", "2.2").create()
    path = wh / "db" / f"{name}.lance"
    want = pylance_descriptors(path)
    assert sorted(i for i, d in want.items() if d is None) == [i for i, b in enumerate(blobs) if b is None]
    session = descriptor_session(spark)
    table = session.table(f"lance.db.{name}")
    assert table.schema["content"].dataType.simpleString() == DESCRIPTOR
    assert spark_descriptors(table.collect()) == want
    got = session.sql(f"SELECT id, content.size, content.kind, content__blob_size FROM lance.db.{name}").collect()
    assert sorted(tuple(r) for r in got) == sorted(
        (i, None, None, None) if d is None else (i, d[2], d[0], d[2]) for i, d in want.items())
    with lance_raises(sparklance.UnsupportedFeatureError, match="Cannot write column 'content': its values are blob descriptors"):
        session.sql(f"INSERT INTO lance.db.{name} SELECT * FROM lance.db.{name}")
    with lance_raises(sparklance.UnsupportedFeatureError, match="Cannot write column 'content': its values are blob descriptors"):
        session.sql(f"CREATE TABLE lance.db.{name}_copy AS SELECT * FROM lance.db.{name}")
    assert not (wh / "db" / f"{name}_copy.lance").exists()
    with lance_raises(sparklance.UnsupportedFeatureError, match="Cannot write column 'content': its values are blob descriptors"):
        session.sql(f"UPDATE lance.db.{name} SET id = id + 100 WHERE id = 0")
    query = session.readStream.table(f"lance.db.{name}").writeStream.format("noop").start()
    with lance_raises(sparklance.UnsupportedFeatureError, match="reading blob columns as descriptors"):
        query.awaitTermination(300)
    query.stop()
    # BINARY values into the descriptor struct: Spark's analyser refuses them, naming the column.
    with pytest.raises(Exception, match="content"):
        session.sql(f"INSERT INTO lance.db.{name} VALUES (50, X'00')")
    with lance_raises(sparklance.InvalidArgumentError, match="Option blob_handling does not apply to"):
        session.read.option("blob_handling", "all_binary").table(f"lance.db.{name}").collect()
    assert pylance_blobs(path) == dict(enumerate(blobs))
    rows = spark.table(f"lance.db.{name}").collect()
    assert {r.id: None if r.content is None else bytes(r.content) for r in rows} == dict(enumerate(blobs))


def test_older_blob_columns_stay_binary_with_descriptors(spark, tmp_path):
    """Blob columns of file version 2.1 read as BINARY (their bytes) with blob_handling = blobs_descriptions too, as
    lance-spark shows them: only blob v2 columns have lance-spark's descriptor struct."""
    blobs = [b"abc", None, b"x" * 70000]
    table = pa.table({"id": pa.array(range(3), pa.int32()), "content": pa.array(blobs, pa.large_binary())},
                     schema=pa.schema([pa.field("id", pa.int32()),
                                       pa.field("content", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]))
    path = str(tmp_path / "v1.lance")
    lance.write_dataset(table, path, data_storage_version="2.1")
    df = spark.read.format("lance").option("blob_handling", "blobs_descriptions").load(path)
    assert df.schema["content"].dataType.simpleString() == "binary"
    assert {r.id: None if r.content is None else bytes(r.content) for r in df.collect()} == dict(enumerate(blobs))


def test_blob_handling_values_are_checked(spark, tmp_path):
    """An unknown blob_handling is an error naming the option (read option and catalog setting); pylance's
    all_descriptions (every binary column) is refused as not supported."""
    import sparklance
    from conftest import lance_raises
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int32())}), path)
    with lance_raises(sparklance.InvalidArgumentError, match="Option blob_handling must be 'all_binary'.*not 'bytes'"):
        spark.read.format("lance").option("blob_handling", "bytes").load(path).collect()
    with lance_raises(sparklance.UnsupportedFeatureError, match="Option blob_handling = all_descriptions"):
        spark.read.format("lance").option("blob_handling", "all_descriptions").load(path).collect()
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.lance.warehouse", spark.conf.get("spark.sql.catalog.lance.warehouse"))
    session.conf.set("spark.sql.catalog.lance.blob_handling", "descriptors")
    with lance_raises(sparklance.InvalidArgumentError,
                      match="Option spark.sql.catalog.lance.blob_handling must be 'all_binary'.*not 'descriptors'"):
        session.sql("SHOW NAMESPACES IN lance").collect()
