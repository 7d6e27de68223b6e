"""Column shapes made with the other connector's TBLPROPERTIES and field metadata (docs/writing.md, "Column
properties"): large strings, float16 vectors, Lance's encoding hints and blob columns. Both ways against pylance:
the table sparklance creates has the schema pylance creates for the same Arrow field metadata, pylance reads the
values written and ``validate()`` passes; a table pylance writes with the same metadata reads back the same values."""

from __future__ import annotations

import os
import random
import struct
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


SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "2"))


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


def blob_table_values(wh, name: str, version: str) -> dict:
    """The blob bytes of table ``name`` (columns ``id INT``, ``content`` blob) by id, as pylance's ``take_blobs`` reads
    them, after checking that pylance validates the table and sees the schema it makes of the same field metadata."""
    ds = lance.dataset(str(wh / "db" / f"{name}.lance"))
    ds.validate()
    want = pylance_schema([pa.field("id", pa.int32()),
                           pa.field("content", pa.large_binary(), metadata={"lance-encoding:blob": "true"})], version)
    assert ds.schema.equals(want, check_metadata=True)
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    return dict(zip(ids, [None if b is None else b.readall()
                          for b in ds.take_blobs("content", indices=list(range(len(ids))))]))


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
    assert blob_table_values(wh, name, version) == dict(enumerate(blobs))


@pytest.mark.parametrize("prop, cls, match", [
    ("content.lance.compression' = 'brotli", sparklance.InvalidArgumentError, "content.lance.compression must be zstd"),
    ("content.lance.rle-threshold' = '2", sparklance.InvalidArgumentError, "content.lance.rle-threshold must be a number"),
    ("content.arrow.float16' = 'true", sparklance.InvalidArgumentError, "applies to ARRAY<FLOAT> and ARRAY<DOUBLE>"),
    ("content.lance.encoding' = 'rle", sparklance.InvalidArgumentError, "content.lance.encoding must be 'blob'"),
    ("content.lance.dict-divisor' = '3", sparklance.UnsupportedFeatureError, "content.lance.dict-divisor is not supported"),
])
def test_bad_column_properties_are_refused_naming_them(spark, wh, prop, cls, match):
    with lance_raises(cls, match=match):
        spark.sql(f"CREATE TABLE lance.db.bad (id INT, content BINARY) TBLPROPERTIES ('{prop}')")
    assert not (wh / "db" / "bad.lance").exists()


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_a_view_column_with_blob_metadata_adds_a_blob_column(spark, wh, version):
    """ADD COLUMNS ... FROM a view whose column carries lance-encoding:blob adds a blob column (blob v2 at 2.2), as
    pylance makes of the same field metadata, holding the view's bytes."""
    name = "addblob" + version.replace(".", "")
    spark.sql(f"CREATE TABLE lance.db.{name} (id INT) TBLPROPERTIES ('file_format_version' = '{version}')")
    spark.sql(f"INSERT INTO lance.db.{name} VALUES (1), (2), (3)")
    addr = spark.sql(f"SELECT _rowaddr, id FROM lance.db.{name}").collect()
    schema = T.StructType([T.StructField("_rowaddr", T.LongType()),
                           T.StructField("content", T.BinaryType(), True, {"lance-encoding:blob": "true"})])
    spark.createDataFrame([(r._rowaddr, None if r.id == 2 else bytes([r.id]) * 70000) for r in addr], schema) \
        .createOrReplaceTempView("blob_backfill")
    spark.sql(f"ALTER TABLE lance.db.{name} ADD COLUMNS content FROM blob_backfill")
    assert blob_table_values(wh, name, version) == {1: b"\x01" * 70000, 2: None, 3: b"\x03" * 70000}


@pytest.mark.parametrize("k", range(N))
def test_column_properties_set_on_an_existing_table_shape_columns_added_later(spark, wh, k):
    """ALTER TABLE ... SET TBLPROPERTIES with properties of columns the table does not have yet (lance-spark's
    add-columns page): they are kept in the table's config, and ADD COLUMNS ... FROM then writes the columns they
    describe (a blob v2 column, a large_string, float16 vectors of doubles, an encoding hint), as pylance makes of
    the same field metadata; pylance reads the values and validates the table."""
    rng = random.Random(SEED + 100 + k)
    name = f"later{k}"
    spark.sql(f"CREATE TABLE lance.db.{name} (id INT)")
    n = rng.randrange(20, 120)
    spark.createDataFrame([(i,) for i in range(n)], "id INT").repartition(rng.choice([1, 3])) \
        .writeTo(f"lance.db.{name}").append()
    dim = rng.choice([2, 5])
    props = {"content.lance.encoding": "blob", "body.arrow.large_var_char": "true",
             "emb.arrow.fixed-size-list.size": str(dim), "emb.arrow.float16": "true", "note.lance.compression": "zstd"}
    spark.sql(f"ALTER TABLE lance.db.{name} SET TBLPROPERTIES (" +
              ", ".join(f"'{key}' = '{v}'" for key, v in props.items()) + ")")
    path = str(wh / "db" / f"{name}.lance")
    assert lance.dataset(path).config() == props
    blobs = {i: None if rng.random() < 0.2 else rng.randbytes(rng.choice([0, 3, 100, 70000])) for i in range(n)}
    body = dict(zip(range(n), texts(rng, n)))
    emb = {i: awkward_doubles(rng, dim) for i in range(n)}
    note = dict(zip(range(n), texts(rng, n)))
    addr = {r.id: r._rowaddr for r in spark.sql(f"SELECT _rowaddr, id FROM lance.db.{name}").collect()}
    spark.createDataFrame([(addr[i], blobs[i], body[i], emb[i], note[i]) for i in range(n)],
                          "_rowaddr BIGINT, content BINARY, body STRING, emb ARRAY<DOUBLE>, note STRING") \
        .createOrReplaceTempView("later_backfill")
    spark.sql(f"ALTER TABLE lance.db.{name} ADD COLUMNS content, body, emb, note FROM later_backfill")
    ds = lance.dataset(path)
    ds.validate()
    want = pylance_schema([
        pa.field("id", pa.int32()),
        pa.field("content", pa.large_binary(), metadata={"lance-encoding:blob": "true"}),
        pa.field("body", pa.large_string()),
        pa.field("emb", pa.list_(pa.float16(), dim)),
        pa.field("note", pa.string(), metadata={"lance-encoding:compression": "zstd"})])
    assert ds.schema.equals(want, check_metadata=True)
    t = ds.to_table(columns=["id", "body", "emb", "note"])
    ids = t.column("id").to_pylist()
    assert dict(zip(ids, t.column("body").to_pylist())) == body
    assert dict(zip(ids, t.column("note").to_pylist())) == note
    got = t.column("emb").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    got_bits = [None if np.isnan(x) else int(b) for x, b in zip(got, got.view(np.uint16))]
    assert got_bits == half_bits([x for i in ids for x in emb[i]])
    got_blobs = [None if b is None else b.readall() for b in ds.take_blobs("content", indices=list(range(len(ids))))]
    assert dict(zip(ids, got_blobs)) == blobs
    # Spark reads the blob column as its bytes, with its sizes beside.
    back = {r.id: (r.content, r.content__blob_size) for r in
            spark.sql(f"SELECT id, content, content__blob_size FROM lance.db.{name}").collect()}
    assert {i: c for i, (c, _) in back.items()} == {i: None if b is None else bytearray(b) for i, b in blobs.items()}


def test_add_column_honours_column_properties_set_before(spark, wh):
    """ALTER TABLE ... ADD COLUMN takes the shape the table's column properties give a column of that name; a blob
    column is refused there (it has no values to add), naming ADD COLUMNS ... FROM."""
    spark.sql("CREATE TABLE lance.db.addcol (id INT)")
    spark.sql("INSERT INTO lance.db.addcol VALUES (1)")
    spark.sql("ALTER TABLE lance.db.addcol SET TBLPROPERTIES ('body.arrow.large_var_char' = 'true', "
              "'vec.arrow.fixed-size-list.size' = '3', 'vec.arrow.float16' = 'true', 'pic.lance.encoding' = 'blob')")
    spark.sql("ALTER TABLE lance.db.addcol ADD COLUMN body STRING")
    spark.sql("ALTER TABLE lance.db.addcol ADD COLUMN vec ARRAY<DOUBLE>")
    with lance_raises(sparklance.UnsupportedFeatureError, match="ADD COLUMN pic: the table's property "
                      "pic.lance.encoding = blob makes it a blob column"):
        spark.sql("ALTER TABLE lance.db.addcol ADD COLUMN pic BINARY")
    ds = lance.dataset(str(wh / "db" / "addcol.lance"))
    ds.validate()
    assert ds.schema.equals(pylance_schema([pa.field("id", pa.int32()), pa.field("body", pa.large_string()),
                                            pa.field("vec", pa.list_(pa.float16(), 3))]), check_metadata=True)
    spark.sql("INSERT INTO lance.db.addcol VALUES (2, 'two', array(0.5, 1.0, 65520.0))")
    assert lance.dataset(str(wh / "db" / "addcol.lance")).to_table().to_pylist() == [
        {"id": 1, "body": None, "vec": None}, {"id": 2, "body": "two", "vec": [0.5, 1.0, float("inf")]}]


@pytest.mark.parametrize("prop, cls, match", [
    ("id.lance.encoding' = 'blob", sparklance.UnsupportedFeatureError,
     "id.lance.encoding cannot be set or removed on lance.db.existing: column id exists"),
    ("pic.lance.encoding' = 'rle", sparklance.InvalidArgumentError, "pic.lance.encoding must be 'blob'"),
    ("vec.arrow.fixed-size-list.size' = '-1", sparklance.InvalidArgumentError, "must be a positive number"),
    ("pic.lance.dict-divisor' = '3", sparklance.UnsupportedFeatureError, "pic.lance.dict-divisor is not supported"),
])
def test_bad_column_properties_on_an_existing_table_are_refused(spark, wh, prop, cls, match):
    spark.sql("CREATE TABLE IF NOT EXISTS lance.db.existing (id INT)")
    before = lance.dataset(str(wh / "db" / "existing.lance")).version
    with lance_raises(cls, match=match):
        spark.sql(f"ALTER TABLE lance.db.existing SET TBLPROPERTIES ('{prop}')")
    assert lance.dataset(str(wh / "db" / "existing.lance")).version == before


def awkward_doubles(rng, n):
    """Doubles that test a narrowing to float16: float16 ties (exact midpoints), values one double-rounding step
    away from a tie (where via-float32 and direct rounding differ), subnormals, values that overflow to infinity,
    NaN, infinities, signed zeros, and plain random values."""
    def f16(bits):
        return float(np.array([bits], np.uint16).view(np.float16)[0])
    out = []
    while len(out) < n:
        kind = rng.randrange(9)
        b = rng.randrange(0, 0x7BFF)
        lo, hi = f16(b), f16(b + 1)
        if kind == 0:
            out.append((lo + hi) / 2)  # a tie, exact in a double
        elif kind == 1:  # just above a tie, but rounds to the tie in float32: via float32 it is a tie again
            mid = (lo + hi) / 2
            out.append(mid + (hi - lo) * 2.0 ** -40)
        elif kind == 2:
            out.append(rng.uniform(-1, 1) * 2.0 ** -24 * rng.randrange(1, 1024))  # float16 subnormals and below
        elif kind == 3:
            out.append(rng.choice([65504.0, 65519.99, 65520.0, 1e5, 1e300, -65520.0, 2.0 ** -26, 2.0 ** -25, 3 * 2.0 ** -26]))
        elif kind == 4:
            out.append(rng.choice([float("nan"), float("inf"), float("-inf"), 0.0, -0.0]))
        elif kind == 5:
            out.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])  # any double at all
        else:
            out.append(rng.uniform(-70000, 70000) * 10.0 ** -rng.randrange(0, 8))
    return out


def half_bits(values):
    """float16 bit patterns as lance-spark's narrowing gives them: to float32 first, then to float16 (ties to even
    both times); NaN as None (its payload is not compared)."""
    with np.errstate(over="ignore"):
        h = np.array(values, np.float64).astype(np.float32).astype(np.float16)
    return [None if np.isnan(x) else int(b) for x, b in zip(h, h.view(np.uint16))]


@pytest.mark.parametrize("k", range(N))
def test_float16_vectors_of_doubles(spark, wh, k):
    """`<column>.arrow.float16` on an ARRAY<DOUBLE> column (lance-spark's page writes Python floats): the doubles
    are narrowed through float32 to float16; pylance reads the same bits as numpy's narrowing of the same doubles
    and as a table pylance wrote from them, and ``validate()`` passes."""
    rng = random.Random(SEED + k)
    dim = rng.choice([1, 3, 8])
    n = rng.randrange(50, 200)
    vecs = [awkward_doubles(rng, dim) for _ in range(n)]
    name = f"f16d{k}"
    df = spark.createDataFrame([(i, v) for i, v in enumerate(vecs)], "id INT, emb ARRAY<DOUBLE>")
    df.writeTo(f"lance.db.{name}").tableProperty("emb.arrow.fixed-size-list.size", str(dim)) \
        .tableProperty("emb.arrow.float16", "true").create()
    path = str(wh / "db" / f"{name}.lance")
    ds = lance.dataset(path)
    ds.validate()
    assert ds.schema.equals(pylance_schema([pa.field("id", pa.int32()), pa.field("emb", pa.list_(pa.float16(), dim))]),
                            check_metadata=True)
    got = ds.to_table().sort_by("id").column("emb").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    want = half_bits([x for v in vecs for x in v])
    assert [None if np.isnan(x) else int(b) for x, b in zip(got, got.view(np.uint16))] == want
    # pylance writes float16 vectors of the same values; Spark reads both tables alike (float16 widens to FLOAT).
    ref = str(wh / "db" / f"{name}_pylance.lance")
    with np.errstate(over="ignore"):
        items = pa.array(np.array([x for v in vecs for x in v]).astype(np.float32).astype(np.float16))
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int32()),
                                  "emb": pa.FixedSizeListArray.from_arrays(items, dim)}), ref)
    ours = [list(r.emb) for r in spark.read.format("lance").load(path).orderBy("id").collect()]
    theirs = [list(r.emb) for r in spark.read.format("lance").load(ref).orderBy("id").collect()]
    assert [[None if x != x else x for x in v] for v in ours] == [[None if x != x else x for x in v] for v in theirs]
    # An INSERT of doubles into the float16 column: Spark casts them to FLOAT first, so the bits are the same.
    spark.createDataFrame([(n + i, v) for i, v in enumerate(vecs[:20])], "id INT, emb ARRAY<DOUBLE>") \
        .writeTo(f"lance.db.{name}").append()
    again = lance.dataset(path).to_table(filter=f"id >= {n}").sort_by("id").column("emb").combine_chunks().flatten() \
        .to_numpy(zero_copy_only=False)
    assert [None if np.isnan(x) else int(b) for x, b in zip(again, again.view(np.uint16))] == \
        half_bits([x for v in vecs[:20] for x in v])
