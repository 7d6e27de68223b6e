"""Column shapes made with the other connector's TBLPROPERTIES and field metadata (docs/writing.md, "Column
properties"): large strings, float16 vectors, Lance's encoding hints and blob columns. Both ways against pylance:
the table sparklance creates has the schema pylance creates for the same Arrow field metadata, pylance reads the
values written and ``validate()`` passes; a table pylance writes with the same metadata reads back the same values."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from pyspark.sql import types as T  # noqa: E402


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "shapes_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-column-shapes", wh)
    yield session
    session.stop()


def texts(rng, n):
    return [None if rng.random() < 0.1 else "".join(rng.choice("abcxyz é") for _ in range(rng.randrange(0, 300)))
            for _ in range(n)]


def pylance_schema(fields, version="2.2"):
    """The Lance schema pylance makes of an Arrow schema (fields with their metadata), from an empty table."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        ds = lance.write_dataset(pa.schema(fields).empty_table(), d + "/t.lance", data_storage_version=version)
        return ds.schema


@pytest.mark.parametrize("seed", [1, 2])
def test_properties_make_the_columns_pylance_makes(spark, wh, seed):
    rng = random.Random(seed)
    name = f"shaped{seed}"
    spark.sql(f"""CREATE TABLE lance.db.{name} (id INT NOT NULL, content STRING, emb ARRAY<FLOAT> NOT NULL,
                  payload STRING, ts BIGINT) TBLPROPERTIES (
                  'content.arrow.large_var_char' = 'true',
                  'emb.arrow.fixed-size-list.size' = '4', 'emb.arrow.float16' = 'true',
                  'payload.lance.compression' = 'zstd', 'payload.lance.compression-level' = '7',
                  'ts.lance.compression' = 'none', 'ts.lance.bss' = 'off', 'id.lance.structural-encoding' = 'fullzip',
                  'team' = 'search')""")
    n = 300
    content = texts(rng, n)
    payload = texts(rng, n)
    emb = [[float(np.float16(rng.uniform(-4, 4))) for _ in range(4)] for _ in range(n)]
    ts = [rng.randrange(-2**40, 2**40) for _ in range(n)]
    rows = list(zip(range(n), content, emb, payload, ts))
    schema = spark.table(f"lance.db.{name}").schema
    spark.createDataFrame(rows, schema).writeTo(f"lance.db.{name}").append()

    ds = lance.dataset(str(wh / "db" / f"{name}.lance"))
    ds.validate()
    want = pylance_schema([
        pa.field("id", pa.int32(), nullable=False, metadata={"lance-encoding:structural-encoding": "fullzip"}),
        pa.field("content", pa.large_string()),
        pa.field("emb", pa.list_(pa.float16(), 4), nullable=False),
        pa.field("payload", pa.string(), metadata={"lance-encoding:compression": "zstd",
                                                   "lance-encoding:compression-level": "7"}),
        pa.field("ts", pa.int64(), metadata={"lance-encoding:compression": "none", "lance-encoding:bss": "off"})])
    assert ds.schema == want
    assert ds.schema.equals(want, check_metadata=True)
    assert ds.config() == {"team": "search"}
    got = ds.to_table().sort_by("id")
    assert got.column("content").to_pylist() == content
    assert got.column("payload").to_pylist() == payload
    assert got.column("ts").to_pylist() == ts
    assert [[float(x) for x in v] for v in got.column("emb").to_pylist()] == emb
    # Read back through Spark: float16 items widen to FLOAT exactly.
    back = sorted(spark.table(f"lance.db.{name}").collect(), key=lambda r: r.id)
    assert [r.content for r in back] == content
    assert [list(r.emb) for r in back] == emb
    # pylance appends to the table with the same metadata, and Spark reads its rows.
    lance.write_dataset(got.slice(0, 10).set_column(0, "id", pa.array(range(n, n + 10), pa.int32())).cast(ds.schema),
                        str(wh / "db" / f"{name}.lance"), mode="append")
    assert spark.table(f"lance.db.{name}").where(f"id >= {n}").count() == 10


def test_field_metadata_of_a_dataframe_shapes_a_new_table(spark, wh):
    schema = T.StructType([
        T.StructField("id", T.IntegerType(), False),
        T.StructField("content", T.StringType(), True, {"arrow:large-var-char": "true"}),
        T.StructField("blob", T.BinaryType(), True, {"lance-encoding:blob": "true"}),
        T.StructField("note", T.StringType(), True, {"lance-encoding:compression": "lz4"})])
    rows = [(1, "a" * 1000, b"x" * 10, "n1"), (2, None, None, None)]
    spark.createDataFrame(rows, schema).writeTo("lance.db.meta").tableProperty("file_format_version", "2.1").create()
    ds = lance.dataset(str(wh / "db" / "meta.lance"))
    ds.validate()
    # A table created from a DataFrame has nullable columns (docs/writing.md).
    want = pylance_schema([pa.field("id", pa.int32()), pa.field("content", pa.large_string()),
                           pa.field("blob", pa.large_binary(), metadata={"lance-encoding:blob": "true"}),
                           pa.field("note", pa.string(), metadata={"lance-encoding:compression": "lz4"})], "2.1")
    assert ds.schema.equals(want, check_metadata=True)
    assert [None if b is None else b.readall() for b in ds.take_blobs("blob", indices=[0, 1])] == [b"x" * 10, None]
    assert ds.to_table(columns=["content", "note"]).to_pylist() == [{"content": "a" * 1000, "note": "n1"},
                                                                     {"content": None, "note": None}]


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_blob_property_makes_the_blob_column_pylance_makes(spark, wh, version):
    """`<column>.lance.encoding = blob` on a BINARY column: a blob-marked large_binary in 2.1, a blob v2 column in
    2.2, as pylance makes of the same field metadata; a DataFrame's BINARY values fill it (CREATE ... AS SELECT)."""
    rng = random.Random(7)
    sizes = [0, 1, 10, 5000, 70000, None, 200_000, 3]
    blobs = [None if s is None else rng.randbytes(s) for s in sizes]
    name = "blobs" + version.replace(".", "")
    df = spark.createDataFrame(list(zip(range(len(blobs)), blobs)), "id INT, content BINARY")
    df.writeTo(f"lance.db.{name}").tableProperty("content.lance.encoding", "blob") \
        .tableProperty("file_format_version", version).create()
    ds = lance.dataset(str(wh / "db" / f"{name}.lance"))
    ds.validate()
    want = pylance_schema([pa.field("id", pa.int32()),
                           pa.field("content", pa.large_binary(), metadata={"lance-encoding:blob": "true"})], version)
    assert ds.schema.equals(want, check_metadata=True)
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    got = dict(zip(ids, [None if b is None else b.readall() for b in ds.take_blobs("content", indices=list(range(len(ids))))]))
    assert got == dict(enumerate(blobs))


@pytest.mark.parametrize("prop, cls, match", [
    ("content.lance.compression' = 'brotli", sparklance.InvalidArgumentError, "content.lance.compression must be zstd"),
    ("content.lance.rle-threshold' = '2", sparklance.InvalidArgumentError, "content.lance.rle-threshold must be a number"),
    ("content.arrow.float16' = 'true", sparklance.InvalidArgumentError, "applies to ARRAY<FLOAT>"),
    ("content.lance.encoding' = 'rle", sparklance.InvalidArgumentError, "content.lance.encoding must be 'blob'"),
    ("content.lance.dict-divisor' = '3", sparklance.UnsupportedFeatureError, "content.lance.dict-divisor is not supported"),
])
def test_bad_column_properties_are_refused_naming_them(spark, wh, prop, cls, match):
    with lance_raises(cls, match=match):
        spark.sql(f"CREATE TABLE lance.db.bad (id INT, content BINARY) TBLPROPERTIES ('{prop}')")
    assert not (wh / "db" / "bad.lance").exists()


def test_a_blob_column_is_not_added_to_an_existing_table(spark, wh):
    """ADD COLUMNS ... FROM a view whose column carries lance-encoding:blob is refused, naming the column; the table
    keeps its version."""
    spark.sql("CREATE TABLE lance.db.addblob (id INT)")
    spark.sql("INSERT INTO lance.db.addblob VALUES (1), (2)")
    addr = spark.sql("SELECT _rowaddr, id FROM lance.db.addblob").collect()
    schema = T.StructType([T.StructField("_rowaddr", T.LongType()),
                           T.StructField("content", T.BinaryType(), True, {"lance-encoding:blob": "true"})])
    spark.createDataFrame([(r._rowaddr, bytes([r.id])) for r in addr], schema).createOrReplaceTempView("blob_backfill")
    with lance_raises(sparklance.UnsupportedFeatureError, match="Column content carries field metadata lance-encoding:blob"):
        spark.sql("ALTER TABLE lance.db.addblob ADD COLUMNS content FROM blob_backfill")
    ds = lance.dataset(str(wh / "db" / "addblob.lance"))
    assert ds.version == 2 and ds.schema.names == ["id"]
