"""Regressions found by the round-trip fuzzer (tests/fuzz) and issue #13, each checked against pylance: pylance
writes, the JVM (RewriteTable, the core) or Spark (``df.write.format("lance")``) writes it again, and pylance must
read our copy with the expected values and pass ``validate()``. Expected values come from the Python data written.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402
from sparklance._jvm import java_command  # noqa: E402

NESTED = pa.list_(pa.struct([("a", pa.list_(pa.string())), ("b", pa.int32())]))


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("sparklance-roundtrip-regressions", warehouse_with(tmp_path_factory, "rt_regressions"),
                          **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def rewrite(version: str, src: str, dst: str, *options: str) -> None:
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", [*options, version, src, dst]), check=True, timeout=300)
    if os.path.exists(dst + ".err"):
        pytest.fail(open(dst + ".err").read())


def read_back(path: str) -> pa.Table:
    ds = lance.dataset(path)
    ds.validate()
    return ds.to_table()


def spark_copy(spark, src: str, dst: str, version: str, **options) -> None:
    w = spark.read.format("lance").load(src).write.format("lance").option("file_format_version", version)
    for k, v in options.items():
        w = w.option(k, v)
    w.save(dst)


def rewritten_both_ways_read_back(spark, tmp_path, version: str, rows: list, typ: pa.DataType) -> None:
    """pylance writes ``rows`` (column ``c`` of ``typ``, beside ``id``) at ``version``; the JVM rewrite and a Spark
    write, both with small pages, must be read back by pylance with exactly those values."""
    table = pa.table({"id": pa.array(range(len(rows)), pa.int64()), "c": pa.array(rows, typ)})
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    rewrite(version, src, str(tmp_path / "core.lance"), "--max-page-bytes", "4096")
    assert read_back(str(tmp_path / "core.lance")).equals(table)
    spark_copy(spark, src, str(tmp_path / "spark.lance"), version, max_page_bytes="4096")
    assert read_back(str(tmp_path / "spark.lance")).sort_by("id").equals(table)


# Issue #13.1: a null struct inside a list whose children hold no values of their own. The structural encoder declared
# the layers under the null struct all-valid; pylance's reader expects them nullable, as its writer declares them.
@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("rows", [
    [[], [None]],
    [[None], None, [], [{"a": None, "b": None}], [None, None]],
    [[], [None]] * 3000 + [[{"a": ["x"], "b": 1}]],
], ids=["issue", "all-null-children", "many-pages"])
def test_null_struct_in_list_with_empty_children(spark, tmp_path, version, rows):
    rewritten_both_ways_read_back(spark, tmp_path, version, rows, NESTED)


# Found by the round-trip fuzzer at the end of session 15 (seed 20261129, N=150, case 101): an empty or null list above
# a struct holding two list levels. pylance reads a nullable struct over such lists only when every list down to the
# items is declared nullable ("Incorrect number of nulls for StructArray" otherwise). pylance 14 cannot read its own
# files of the rows holding a null struct ("null-struct" cases); the core reads them, and our copies pylance reads.
DEEP = pa.list_(pa.struct([("f0", pa.list_(pa.list_(pa.string())))]))
DEEPER = pa.list_(pa.struct([("f0", pa.list_(pa.list_(pa.list_(pa.int32())))), ("f1", pa.int32())]))


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("typ,rows", [
    (DEEP, [[{"f0": [["a"], ["b"]]}], []]),
    (DEEP, [[], [{"f0": [["a"]]}], None, [{"f0": [[], ["c", None]]}]]),
    (DEEP, [[{"f0": [["a"], ["b"]]}], [], [None]]),
    (DEEP, [[{"f0": [["a"]]}], None, [None], [{"f0": None}], [{"f0": [None, [], ["x", None]]}]]),
    (DEEPER, [[{"f0": [[[1]]], "f1": 2}], [], [None, {"f0": [[None, [3]]], "f1": None}]] * 700),
], ids=["issue", "no-null-struct", "null-struct", "null-struct-mixed", "deeper-many-pages"])
def test_empty_list_above_a_struct_of_nested_lists(spark, tmp_path, version, typ, rows):
    rewritten_both_ways_read_back(spark, tmp_path, version, rows, typ)


# Issue #13.2: a Spark STRING that is not UTF-8 is refused (naming column and row), or replaced on request.
def test_invalid_utf8_string_is_refused_naming_column_and_row(spark, tmp_path):
    df = spark.sql("SELECT id, IF(id = 3, CAST(unhex('61FF62') AS STRING), CAST(id AS STRING)) AS s "
                   "FROM range(5)").coalesce(1)
    with pytest.raises(Exception) as e:
        df.write.format("lance").save(str(tmp_path / "t.lance"))
    msg = str(e.value)
    assert "LANCE_INVALID_ARGUMENT" in msg
    assert "Cannot write column 's': row 3 of partition 0 holds a STRING that is not valid UTF-8" in msg
    assert "(byte 0xFF at offset 1)" in msg and "invalid_utf8" in msg
    assert not os.path.exists(str(tmp_path / "t.lance" / "_versions"))


def test_invalid_utf8_inside_an_array_is_refused(spark, tmp_path):
    df = spark.sql("SELECT 1 AS id, array('ok', CAST(unhex('C0AF') AS STRING)) AS a")
    with pytest.raises(Exception) as e:
        df.write.format("lance").save(str(tmp_path / "t.lance"))
    assert "Cannot write column 'a.element': row 0" in str(e.value)
    assert "(byte 0xC0 at offset 0)" in str(e.value)   # an overlong '/'


def test_invalid_utf8_replaced_on_request(spark, tmp_path):
    df = spark.sql("SELECT 1 AS id, CAST(unhex('61FF62EDA080') AS STRING) AS s, "
                   "array(CAST(unhex('E282') AS STRING), 'é😀') AS a")
    path = str(tmp_path / "t.lance")
    df.write.format("lance").option("invalid_utf8", "replace").save(path)
    rows = read_back(path).to_pylist()
    # 0xFF, a surrogate (ED A0 80: one U+FFFD per byte, as Java and Rust's from_utf8_lossy do) and a truncated sequence.
    assert rows == [{"id": 1, "s": "a\ufffdb\ufffd\ufffd\ufffd", "a": ["\ufffd", "é😀"]}]


def test_invalid_utf8_option_value_is_checked(spark, tmp_path):
    with pytest.raises(Exception) as e:
        spark.sql("SELECT 'x' AS s").write.format("lance").option("invalid_utf8", "drop").save(str(tmp_path / "t.lance"))
    assert "Option invalid_utf8 must be 'error' or 'replace', not 'drop'" in str(e.value)


def test_valid_unusual_utf8_is_written_as_is(spark, tmp_path):
    values = ["", "\x00", "e\u0301", "😀👩‍👩‍👧", "\U0010ffff", "\ufeffBOM", "\u202eRTL", "ß" * 5000]
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(len(values)), pa.int64()), "s": values}), src)
    spark_copy(spark, src, dst, "2.2")
    assert read_back(dst).sort_by("id").column("s").to_pylist() == values


# Issue #13.6: a null-typed column in a fragment with a deletion file (the read takes the live rows).
@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_null_column_and_large_lists_with_deletions(spark, tmp_path, version):
    n = 50
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "nothing": pa.array([None] * n, pa.null()),
        "ll": pa.array([[i, None] if i % 3 else [] for i in range(n)], pa.large_list(pa.int64())),
        "st": pa.array([{"z": None, "l": [str(i)]} for i in range(n)], pa.struct([("z", pa.null()), ("l", pa.large_list(pa.string()))])),
    })
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table, src, data_storage_version=version).delete("id % 4 = 1")
    want = table.filter(pa.compute.not_equal(pa.compute.bit_wise_and(table.column("id"), 3), 1))
    rewrite(version, src, str(tmp_path / "core.lance"))
    assert read_back(str(tmp_path / "core.lance")).equals(want)
    got = spark.read.format("lance").load(src).orderBy("id").collect()
    assert [r["id"] for r in got] == want.column("id").to_pylist()
    assert [r["nothing"] for r in got] == [None] * want.num_rows
    assert [r["ll"] for r in got] == want.column("ll").to_pylist()


# Issue #13.10: a path write stores INTERVAL DAY TO SECOND as duration:us, as CTAS and writeTo do.
def test_path_write_stores_day_time_interval_as_duration(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    spark.sql("SELECT 1 AS id, INTERVAL '1 02:03:04.000005' DAY TO SECOND AS d, "
              "array(INTERVAL '-3' SECOND) AS a").write.format("lance").save(path)
    t = read_back(path)
    assert t.schema.field("d").type == pa.duration("us")
    assert t.column("d").to_pylist() == [dt.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=5)]
    assert t.column("a").to_pylist() == [[dt.timedelta(seconds=-3)]]


# Issue #13.10: bfloat16 (pylance's lance.bfloat16 extension) reads as FLOAT and a rewrite keeps it bfloat16.
@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_bfloat16_reads_as_float_and_stays_bfloat16(spark, tmp_path, version):
    from lance._arrow.bf16 import bfloat16_array

    values = [1.5, None, -2.0, 0.0, 3.140625, float("inf"), 65280.0]
    table = pa.table({"id": pa.array(range(len(values)), pa.int64()), "b": bfloat16_array(values)})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    df = spark.read.format("lance").load(src)
    assert dict(df.dtypes)["b"] == "float"
    assert [r["b"] for r in df.orderBy("id").collect()] == values
    spark_copy(spark, src, dst, version)
    got = read_back(dst).sort_by("id")
    assert got.schema.field("b").type == table.schema.field("b").type
    assert got.column("b").combine_chunks().storage.equals(table.column("b").combine_chunks().storage)


# Found by the fuzzer: element types Spark cannot name were lost by a Spark rewrite (large_list became list,
# a second-unit timestamp inside a list became microseconds, a fixed-size list inside a list a list).
def test_spark_rewrite_keeps_nested_lance_types(spark, tmp_path):
    t = pa.struct([("ts", pa.timestamp("s", "UTC")), ("v", pa.list_(pa.uint16(), 2))])
    table = pa.table({
        "id": pa.array([0, 1, 2], pa.int64()),
        "ll": pa.array([[{"ts": 5, "v": [1, 2]}], None, []], pa.large_list(t)),
        "m": pa.array([[(1, [None])], [], None], pa.map_(pa.int32(), pa.large_list(pa.large_string()))),
    })
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version="2.2")
    spark_copy(spark, src, dst, "2.2")
    got = read_back(dst).sort_by("id")
    assert got.schema == table.schema
    assert got.equals(table)


# Found by the fuzzer: TIME(6) read from time64:ns kept its nanoseconds; docs/types.md says truncated.
def test_time64_ns_truncates_to_microseconds(spark, tmp_path):
    table = pa.table({"id": pa.array([0, 1], pa.int64()), "t": pa.array([1_000_001_999, None], pa.time64("ns"))})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src)
    spark_copy(spark, src, dst, "2.2")
    assert read_back(dst).sort_by("id").column("t").cast(pa.int64()).to_pylist() == [1_000_001_000, None]


# Found by the fuzzer: Spark could not read a map whose keys or values need converting (a uint8 value, a large list):
# the rebuilt map lost its keys ("Value at index is null").
@pytest.mark.parametrize("value_type,rows", [
    (pa.uint8(), [[(1, 3)], [(2, 4), (5, None)], None, []]),
    (pa.large_list(pa.string()), [[(1, ["a", None])], None, [(2, [])]]),
], ids=["uint8", "large_list"])
def test_spark_reads_maps_with_converted_values(spark, tmp_path, value_type, rows):
    path = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(len(rows)), pa.int64()),
                                  "m": pa.array(rows, pa.map_(pa.int32(), value_type))}), path)
    got = [r["m"] for r in spark.read.format("lance").load(path).orderBy("id").collect()]
    assert got == [None if r is None else dict(r) for r in rows]


# Found by the fuzzer: pylance writes a fixed-size list whose items are all null as a full-zip page of `constant`
# items (each value only its validity byte); the reader refused it.
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_fixed_size_list_of_constant_items_in_full_zip(tmp_path, version):
    rows = [None, [None, None, None], None, [None, None, None], None, None, None]
    table = pa.table({"id": pa.array(range(len(rows)), pa.int64()), "v": pa.array(rows, pa.list_(pa.duration("s"), 3))})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    rewrite(version, src, dst)
    assert read_back(dst).equals(table)


# Found by the fuzzer: a struct with nulls on some pages only. pylance 14 cannot read a file whose pages disagree on
# a struct's validity (not even one it wrote itself); every page now declares struct layers nullable.
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_struct_with_nulls_on_some_pages_only(spark, tmp_path, version):
    n = 600
    rows = [None if i < 100 and i % 7 == 0 else {"f0": None if i % 5 == 0 else [i * 86400000, None]} for i in range(n)]
    table = pa.table({"id": pa.array(range(n), pa.int64()),
                      "c": pa.array(rows, pa.struct([("f0", pa.list_(pa.date64()))]))})
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table, src, data_storage_version=version, max_rows_per_file=40)
    rewrite(version, src, str(tmp_path / "core.lance"), "--max-page-bytes", "512", "--batch-rows", "100")
    assert read_back(str(tmp_path / "core.lance")).equals(table)
    spark_copy(spark, src, str(tmp_path / "spark.lance"), version, max_page_bytes="512")
    assert read_back(str(tmp_path / "spark.lance")).sort_by("id").equals(table)


# Found by the fuzzer (wrong data): a list inside a struct, written by Spark over several batches, lost its values
# (nulls in their place): the struct's writer did not restart its lists' element counts at each batch.
@pytest.mark.parametrize("batch_rows", ["2", "5"])
def test_spark_writes_lists_inside_structs_over_batches(spark, tmp_path, batch_rows):
    rows = [{"f0": [i, i + 1, None], "f1": [float(i)] * (i % 3)} if i % 4 else ({"f0": None, "f1": []} if i % 8 else None)
            for i in range(40)]
    table = pa.table({"id": pa.array(range(40), pa.int64()),
                      "s": pa.array(rows, pa.struct([("f0", pa.list_(pa.time32("ms"))), ("f1", pa.large_list(pa.float64()))]))})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version="2.1")
    spark_copy(spark, src, dst, "2.1", batch_rows=batch_rows)
    assert read_back(dst).sort_by("id").equals(table)


# Found by the fuzzer: on an all-null page pylance misreads struct layers declared nullable below a null list.
@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_all_null_list_of_structs_of_lists(tmp_path, version):
    t = pa.list_(pa.struct([("f0", pa.large_list(pa.struct([("f0", pa.binary())]))), ("f1", pa.large_list(pa.uint64()))]))
    table = pa.table({"id": pa.array([0, 1], pa.int64()), "c": pa.array([None, None], t)})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    rewrite(version, src, dst)
    assert read_back(dst).equals(table)


# Found by the fuzzer (seed 2): a struct over a map whose pages are all-null on some pages (empty maps) and hold values
# on others; every page must declare the struct layer alike.
def test_struct_of_maps_with_all_empty_pages(tmp_path):
    rows = [{"f0": [("k", b"v"), ("l", b"w")]}, {"f0": []}, {"f0": [("m", b"x")]}, {"f0": []}, {"f0": []}, {"f0": []}]
    table = pa.table({"id": pa.array(range(6), pa.int64()),
                      "c": pa.array(rows, pa.struct([("f0", pa.map_(pa.large_string(), pa.binary()))]))})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version="2.2")
    rewrite("2.2", src, dst, "--max-page-bytes", "4096", "--batch-rows", "5", "--max-rows-per-file", "3")
    assert read_back(dst).equals(table)


# Fuzz seed 11 (file versions 2.1 and 2.2, cases 57, 158, 237, ...): a list of structs whose child is a list, with an
# empty or null outer list. Struct layers are declared nullable on every page; the list right under such a struct was
# declared all-valid, which pylance misreads ("Incorrect number of nulls for StructArray, expected 1 got 2").
LIST_STRUCT_LIST = pa.list_(pa.struct([("f0", pa.list_(pa.int64())), ("f1", pa.int64())]))


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("rows", [
    [[{"f0": [5], "f1": 1}], []],
    [[], [{"f0": [5], "f1": None}]],
    [None, [{"f0": [5], "f1": 2}, {"f0": [6, 7], "f1": 3}]],
    [[{"f0": [1], "f1": 1}], [], None, [{"f0": [], "f1": 2}], [{"f0": None, "f1": 3}], [None]] * 700,
], ids=["empty-after", "empty-before", "null-list", "mixed-pages"])
def test_list_of_structs_of_lists_with_empty_outer_lists(spark, tmp_path, version, rows):
    for large in (False, True):
        ty = pa.large_list(LIST_STRUCT_LIST.value_type) if large else LIST_STRUCT_LIST
        table = pa.table({"id": pa.array(range(len(rows)), pa.int64()), "c": pa.array(rows, ty)})
        src = str(tmp_path / f"src{large}.lance")
        lance.write_dataset(table, src, data_storage_version=version)
        rewrite(version, src, str(tmp_path / f"core{large}.lance"), "--batch-rows", "2", "--max-rows-per-file", "3")
        assert read_back(str(tmp_path / f"core{large}.lance")).sort_by("id").equals(table)
    spark_copy(spark, src, str(tmp_path / "spark.lance"), version, batch_rows="2", max_page_bytes="65536")
    got = read_back(str(tmp_path / "spark.lance")).sort_by("id")
    assert got.column("c").to_pylist() == table.column("c").to_pylist()


# Fuzz seed 11 (file version 2.2, case 375): pages whose values are all null (constant pages) of a list of structs of
# nested lists. Such a page declared the lists under a null struct all-valid, which pylance misreads ("Incorrect
# number of nulls for StructArray, expected 249 got 342"). Seeded random rows: nulls and empties at every level,
# leaves always null, small pages so that many pages are all null.
def _all_null_leaf_rows(rng, n):
    def inner():
        return None if rng.random() < 0.3 else [None] * rng.randrange(3)

    def middle(deep):
        return None if not deep or rng.random() < 0.3 else [inner() for _ in range(rng.randrange(3))]

    def item(deep):
        return None if rng.random() < 0.3 else {"f0": middle(deep)}

    # Runs of rows whose middle lists are all null (whole pages of them), between runs that reach the leaves.
    return [None if rng.random() < 0.3 else [item(deep=(i // 150) % 2 == 1) for _ in range(rng.randrange(4))]
            for i in range(n)]


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("seed", [375, 11])
def test_all_null_pages_of_lists_of_structs_of_nested_lists(tmp_path, version, seed):
    import random

    ty = pa.large_list(pa.struct([("f0", pa.large_list(pa.large_list(pa.dictionary(pa.int32(), pa.string()))))]))
    rows = _all_null_leaf_rows(random.Random(seed), 600)
    table = pa.table({"id": pa.array(range(len(rows)), pa.int64()), "c": pa.array(rows, ty)})
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    rewrite(version, src, str(tmp_path / "core.lance"), "--max-page-bytes", "512", "--batch-rows", "2")
    got = read_back(str(tmp_path / "core.lance")).sort_by("id")
    assert got.column("c").to_pylist() == table.column("c").to_pylist()


def test_all_null_packed_struct_with_a_list_child_is_refused_by_name(tmp_path):
    """Fuzz seed 20261415, 2.1 case 6: pylance 14 writes a packed struct with a list child when every value is null
    (a non-null value makes it panic). The reader refuses it naming the field and the child, instead of 'Field f2 of
    type list is not a leaf column'."""
    t = pa.struct([("f2", pa.list_(pa.int16()))])
    table = pa.Table.from_arrays([pa.array([0], pa.int64()), pa.array([None], t)], schema=pa.schema(
        [pa.field("id", pa.int64()), pa.field("c", t, metadata={"lance-encoding:packed": "true"})]))
    src = str(tmp_path / "src.lance")
    lance.write_dataset(table, src, data_storage_version="2.1")
    assert lance.dataset(src).to_table().column("c").to_pylist() == [None]
    out = str(tmp_path / "out.arrow")
    subprocess.run(java_command("io.sparklance.cli.ReadTable", [src, out]), check=True, timeout=120)
    message = open(out + ".err").read()
    assert message.startswith("LANCE_UNSUPPORTED_FEATURE: Cannot read field 'c': it is a packed struct "
                              "(lance-encoding:packed) with the list child 'f2'"), message


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_packed_struct_read_with_some_children(spark, tmp_path, version):
    """A packed struct is stored as one column and read whole; a query of some of its children (Spark's nested
    pruning) gets those children only. The rest used to stay in the batch under the pruned schema: a duration child
    then failed the read (UNSUPPORTED_ARROWTYPE Duration(NANOSECOND); round-trip fuzz seed 20261123, 2.1 case 2),
    and the extra children were carried in every batch."""
    path = str(tmp_path / "packed.lance")
    n = 50
    # Null structs, not null children: pylance 14 packs no struct whose children hold nulls (2.1 asks for 2.2's
    # variable packed encoding, 2.2 has no per-value compression of nullable values).
    dates = [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)]
    durs = [(i - 20) * 10**9 + 123000 for i in range(n)]
    ints = [i * 3 - 7 for i in range(n)]
    st = pa.StructArray.from_arrays([pa.array(dates, pa.date32()), pa.array(durs, pa.duration("ns")),
                                     pa.array(ints, pa.int32())], names=["d", "dur", "k"],
                                    mask=pa.array([i % 11 == 4 for i in range(n)]))
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("s", st.type, metadata={"lance-encoding:packed": "true"})])
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "s": st}, schema=schema), path,
                        data_storage_version=version, max_rows_per_file=20)
    got = lance.dataset(path).to_table().to_pylist()
    assert [r["s"] for r in got] == st.to_pylist()
    df = spark.read.format("lance").load(path)
    for child in ("d", "dur", "k"):
        want = [(i, None if s is None else s[child]) for i, s in enumerate(st.to_pylist())]
        rows = df.selectExpr("id", f"s.{child} AS v").collect()
        assert sorted((r.id, r.v) for r in rows) == want, child
        kept = df.where(f"s.{child} IS NOT NULL").selectExpr("id").collect()
        assert sorted(r.id for r in kept) == [i for i, v in want if v is not None], child
    pairs = df.selectExpr("id", "s.k", "s.d").collect()
    assert sorted((r.id, r.k, r.d) for r in pairs) == [
        (i, None if s is None else s["k"], None if s is None else s["d"]) for i, s in enumerate(st.to_pylist())]
