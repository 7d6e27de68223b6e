"""The Spark read path: pylance 14.0.2 writes tables, a real local SparkSession reads them through sparklance
(``spark.read.format("lance")`` and the ``lance`` catalog), and every result must equal what pylance itself reads.

Expected values come from pylance (``lance.dataset(...).to_table()``), converted to what pyspark's ``collect()``
returns for the Spark type of docs/types.md (uint64 -> Decimal, halffloat -> float, nanoseconds truncated to
microseconds toward negative infinity, fixed-size lists -> lists, dictionaries decoded, maps -> dicts, ...). The
expected Spark schema is derived from pylance's Arrow schema by the same table. Nothing is derived from the JVM.

One SparkSession serves the whole module (``spark`` fixture); its catalog ``lance`` has a warehouse directory
laid out by the ``wh`` fixture:

    <wh>/db/<name>.lance      copies of the make_tables / spark_tables tables (history, deletes, ...)
    <wh>/a/b/t.lance          a nested namespace (copy of history)
    <wh>/keep/k.lance         a namespace that must survive a non-cascading DROP
    <wh>/db/README.txt        a plain file: neither a table nor a namespace
    <wh>/db/.hidden.lance, <wh>/.secret/t.lance, <wh>/db/a\\b.lance   real tables behind names that are refused
    <wh>/../escape.lance      a real table OUTSIDE the warehouse: names with '..' must not reach it
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import os
import shutil
import struct
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "fixtures"))
sys.path.insert(0, str(REPO / "python"))

from conftest import JAR, SPARK_LINE, arrow_df, cross_version, lance_raises, make_tables, require_jar  # noqa: E402,E501
import spark_tables  # noqa: E402

from pyspark.sql import Row  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

pytestmark = cross_version

# What a Spark line lacks (docs/types.md): Spark < 4.1 has no TIME type, so Lance times (any unit) read as BIGINT
# nanoseconds since midnight; the Arrow library of Spark 3.x has no half floats, so a float16 column cannot be read
# there (the table's other columns can: tests read all_types without `f16` on 3.x, test_float16_column asserts the
# error).
HAS_TIME = SPARK_LINE >= (4, 1)
HAS_FLOAT16 = SPARK_LINE >= (4, 0)
NS_PER_TIME_UNIT = {"s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}


def time_type(precision: int) -> str:
    """The Spark type (simpleString) of a Lance time column whose Spark precision is ``precision``."""
    return f"time({precision})" if HAS_TIME else "bigint"


def readable(df):
    """``df`` without its float16 column `f16` on Spark 3.x, which cannot read it."""
    return df if HAS_FLOAT16 else df.drop("f16")


def without_f16(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """pylance's rows without `f16` on Spark 3.x (see ``readable``)."""
    return rows if HAS_FLOAT16 else [{k: v for k, v in r.items() if k != "f16"} for r in rows]


# ---------------------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def extra(tmp_path_factory) -> Dict[str, str]:
    """The Spark-only tables of fixtures/spark_tables.py: {name: path}."""
    return spark_tables.build(tmp_path_factory.mktemp("spark_tables"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory, tables, extra) -> Path:
    """The catalog warehouse (see the module docstring for its layout)."""
    root = tmp_path_factory.mktemp("warehouse")
    for name in ("history", "v1_naming", "deletes", "schema_evolution", "stable_row_ids", "overwrite",
                 "extension_types", "format_2_0", "format_2_1"):
        spark_tables.place(tables[name], root, "db", name)
    spark_tables.place(tables["all_types"], root, "db", "all_types_orig")
    spark_tables.place(extra["all_types_spark"], root, "db", "all_types")
    spark_tables.place(extra["big"], root, "db", "big")
    spark_tables.place(tables["history"], root, "a", "b", "t")
    spark_tables.place(tables["history"], root, "keep", "k")
    (root / "db" / "README.txt").write_text("not a table\n")
    # Real tables behind names that must be refused ('.'-prefixed, '\\'):
    spark_tables.place(tables["history"], root, "db", ".hidden")
    spark_tables.place(tables["history"], root, ".secret", "t")
    spark_tables.place(tables["history"], root, "db", "a\\b")
    # Targets a name with '..' or a path separator would reach if it were not refused.
    escape = root.parent / "escape.lance"
    if not escape.exists():
        shutil.copytree(tables["history"], escape)
    return root


@pytest.fixture(scope="module")
def spark(wh):
    """One local[2] SparkSession with the sparklance jar and the `lance` catalog over `wh`, for the module."""
    require_jar()
    before = os.environ.get("SPARKLANCE_JAR")
    os.environ["SPARKLANCE_JAR"] = str(JAR)  # exactly the jar `make jar` built
    import sparklance

    # Module scope (not session): test_spark_paths.py starts its own session with another warehouse.
    session = sparklance.session(warehouse=str(wh), app_name="sparklance-tests",
                                 **{"spark.sql.session.timeZone": "UTC"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    if before is None:
        os.environ.pop("SPARKLANCE_JAR", None)
    else:
        os.environ["SPARKLANCE_JAR"] = before


def read(spark, path, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


# ---------------------------------------------------------------------------------------------------------------
# pylance side: Arrow -> the Python values pyspark's collect() gives for the mapped Spark type (docs/types.md)


def _ext_name(field: Optional[pa.Field]) -> Optional[str]:
    if field is None or not field.metadata:
        return None
    name = field.metadata.get(b"ARROW:extension:name")
    return name.decode() if name else None


def _bf16(raw: bytes) -> float:
    # bfloat16 is the high half of a float32 (little-endian bytes [low, high]).
    return struct.unpack("<f", b"\x00\x00" + raw)[0]


_UNIT_TO_NS = {"s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}


def _micros(v: int, unit: str) -> int:
    # Exact, then floor to microseconds (toward negative infinity), as docs/types.md says for nanoseconds.
    return (v * _UNIT_TO_NS[unit]) // 1000


def _spark_ts(us: int) -> dt.datetime:
    """pyspark's TimestampType.fromInternal."""
    return dt.datetime.fromtimestamp(us // 10 ** 6).replace(microsecond=us % 10 ** 6)


def _spark_ts_ntz(us: int) -> dt.datetime:
    """pyspark's TimestampNTZType.fromInternal."""
    return dt.datetime.fromtimestamp(us // 10 ** 6, dt.timezone.utc).replace(microsecond=us % 10 ** 6, tzinfo=None)


def _time_of_day(us: int) -> dt.time:
    h, rem = divmod(us, 3_600_000_000)
    m, rem = divmod(rem, 60_000_000)
    s, u = divmod(rem, 1_000_000)
    return dt.time(h, m, s, u)


class MapV(tuple):
    """A map value, canonical (entries sorted by key) so that comparisons ignore entry order."""

    def __new__(cls, items):
        return super().__new__(cls, sorted(items, key=lambda kv: repr(kv[0])))

    def __repr__(self):
        return "MapV" + super().__repr__()


def arrow_values(arr, field: Optional[pa.Field] = None) -> List[Any]:
    """The column ``arr`` as pyspark would collect it after the docs/types.md mapping (maps as MapV)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    n = len(arr)
    valid = [True] * n if arr.null_count == 0 else arr.is_valid().to_pylist()

    def masked(values):
        return [v if ok else None for v, ok in zip(values, valid)]

    if isinstance(t, pa.BaseExtensionType):
        name = t.extension_name
        storage = arr.storage
        if name in ("arrow.json", "lance.json"):
            return masked(storage.to_pylist())
        if name == "lance.bfloat16":
            return masked([None if b is None else _bf16(b) for b in storage.to_pylist()])
        return arrow_values(storage)
    if _ext_name(field) == "lance.bfloat16":
        return masked([None if b is None else _bf16(b) for b in arr.to_pylist()])
    if pa.types.is_dictionary(t):
        return arrow_values(arr.dictionary_decode())
    if pa.types.is_null(t):
        return [None] * n
    if pa.types.is_uint64(t):
        return [None if v is None else decimal.Decimal(v) for v in arr.to_pylist()]
    if pa.types.is_float16(t):
        return [None if v is None else float(v) for v in arr.to_pylist()]
    if pa.types.is_decimal(t) and t.precision > 38:  # read as the exact decimal text
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if (pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t)
            or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t) or pa.types.is_date(t)):
        return arr.to_pylist()
    if pa.types.is_time(t) and not HAS_TIME:  # BIGINT nanoseconds since midnight
        return [None if v is None else v * NS_PER_TIME_UNIT[t.unit]
                for v in arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()]
    if pa.types.is_time(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        raw = arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()
        us = [None if v is None else _micros(v, t.unit) for v in raw]
        if pa.types.is_time(t):
            conv: Callable[[int], Any] = _time_of_day
        elif pa.types.is_duration(t):
            conv = lambda u: dt.timedelta(microseconds=u)  # noqa: E731
        else:
            conv = _spark_ts if t.tz is not None else _spark_ts_ntz
        return [None if u is None else conv(u) for u in us]
    if pa.types.is_struct(t):
        children = [arrow_values(c, t.field(i)) for i, c in enumerate(arr.flatten())]
        names = [t.field(i).name for i in range(t.num_fields)]
        return masked([dict(zip(names, vals)) for vals in zip(*children)] if children else [{}] * n)
    if pa.types.is_map(t):
        offsets = arr.offsets.to_pylist()
        keys = arrow_values(arr.keys, t.key_field)
        items = arrow_values(arr.items, t.item_field)
        return masked([MapV(zip(keys[offsets[i]:offsets[i + 1]], items[offsets[i]:offsets[i + 1]]))
                       for i in range(n)])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = arr.offsets.to_pylist()
        values = arrow_values(arr.values, t.value_field)
        return masked([values[offsets[i]:offsets[i + 1]] for i in range(n)])
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        values = arrow_values(arr.values, t.value_field)  # the unsliced child
        start = arr.offset
        return masked([values[(start + i) * size:(start + i + 1) * size] for i in range(n)])
    raise AssertionError(f"test converter: unhandled Arrow type {t}")


def table_rows(tbl: pa.Table) -> List[Dict[str, Any]]:
    cols = [arrow_values(tbl.column(i), tbl.schema.field(i)) for i in range(tbl.num_columns)]
    return [dict(zip(tbl.column_names, vals)) for vals in zip(*cols)] if cols else []


@functools.lru_cache(maxsize=None)
def pl(path: str, version=None) -> lance.LanceDataset:
    return lance.dataset(path) if version is None else lance.dataset(path, version=version)


def pl_rows(path, version=None, columns=None, **kw) -> List[Dict[str, Any]]:
    return table_rows(pl(str(path), version).to_table(columns=columns, **kw))


# ---------------------------------------------------------------------------------------------------------------
# Spark side: collected values, normalized (Row -> dict, bytearray -> bytes, dict (a Spark map) -> MapV)


def norm(v):
    if isinstance(v, Row):
        return {k: norm(x) for k, x in zip(v.__fields__, v)}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return MapV((norm(k), norm(x)) for k, x in v.items())
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def spark_rows(df) -> List[Dict[str, Any]]:
    cols = df.columns
    return [{c: norm(x) for c, x in zip(cols, row)} for row in df.collect()]


def assert_rows_equal(actual: List[dict], expected: List[dict], key: Optional[str] = None, what: str = ""):
    """Equal as multisets of rows; with ``key`` (a unique column), mismatches are reported per key and column."""
    if key is None:
        a, e = Counter(map(repr, actual)), Counter(map(repr, expected))
        if a != e:
            extra = list((a - e).elements())[:3]
            missing = list((e - a).elements())[:3]
            pytest.fail(f"{what}: {len(actual)} rows read, {len(expected)} expected\n  unexpected: {extra}\n"
                        f"  missing: {missing}", pytrace=False)
        return
    ak = {r[key]: r for r in actual}
    ek = {r[key]: r for r in expected}
    assert len(ek) == len(expected), f"{what}: test bug, key {key} is not unique in pylance's rows"
    assert len(ak) == len(actual), f"{what}: duplicate {key} values in the Spark result ({len(actual)} rows, " \
                                   f"{len(ak)} distinct)"
    problems = []
    if ak.keys() != ek.keys():
        problems.append(f"{key}s read but not expected: {sorted(ak.keys() - ek.keys(), key=repr)[:5]}; "
                        f"expected but not read: {sorted(ek.keys() - ak.keys(), key=repr)[:5]}")
    if actual and expected and list(actual[0]) != list(expected[0]):
        problems.append(f"columns {list(actual[0])}, expected {list(expected[0])}")
    bad: Dict[str, List[str]] = {}
    for k in ek.keys() & ak.keys():
        for c, ev in ek[k].items():
            av = ak[k].get(c, "<missing>")
            if repr(av) != repr(ev):
                bad.setdefault(c, []).append(f"{key}={k!r}: read {av!r}, expected {ev!r}")
    for c, lines in bad.items():
        problems.append(f"column {c}: {len(lines)} rows differ, e.g. " + "; ".join(lines[:2]))
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# Expected Spark types (docs/types.md), from pylance's Arrow schema


DAY_TO_SECOND = T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)


def expected_type(t: pa.DataType, field: Optional[pa.Field] = None) -> T.DataType:
    if isinstance(t, pa.BaseExtensionType):
        if t.extension_name in ("arrow.json", "lance.json"):
            return T.StringType()
        if t.extension_name == "lance.bfloat16":
            return T.FloatType()
        return expected_type(t.storage_type)
    if _ext_name(field) == "lance.bfloat16":
        return T.FloatType()
    if pa.types.is_dictionary(t):
        return expected_type(t.value_type)
    simple = [
        (pa.types.is_null, T.NullType()), (pa.types.is_boolean, T.BooleanType()),
        (pa.types.is_int8, T.ByteType()), (pa.types.is_int16, T.ShortType()),
        (pa.types.is_int32, T.IntegerType()), (pa.types.is_int64, T.LongType()),
        (pa.types.is_uint8, T.ShortType()), (pa.types.is_uint16, T.IntegerType()),
        (pa.types.is_uint32, T.LongType()), (pa.types.is_uint64, T.DecimalType(20, 0)),
        (pa.types.is_float16, T.FloatType()), (pa.types.is_float32, T.FloatType()),
        (pa.types.is_float64, T.DoubleType()),
        (pa.types.is_string, T.StringType()), (pa.types.is_large_string, T.StringType()),
        (pa.types.is_binary, T.BinaryType()), (pa.types.is_large_binary, T.BinaryType()),
        (pa.types.is_fixed_size_binary, T.BinaryType()),
        (pa.types.is_date, T.DateType()), (pa.types.is_duration, DAY_TO_SECOND),
    ]
    for pred, st in simple:
        if pred(t):
            return st
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale) if t.precision <= 38 else T.StringType()
    if pa.types.is_time(t):
        return T.TimeType({"s": 0, "ms": 3, "us": 6, "ns": 6}[t.unit]) if HAS_TIME else T.LongType()
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz is not None else T.TimestampNTZType()
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, expected_type(f.type, f), f.nullable) for f in t])
    if pa.types.is_map(t):
        return T.MapType(expected_type(t.key_type, t.key_field), expected_type(t.item_type, t.item_field),
                         t.item_field.nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(expected_type(t.value_type, t.value_field), t.value_field.nullable)
    if pa.types.is_fixed_size_list(t):
        return T.ArrayType(expected_type(t.value_type, t.value_field), True)  # vectors: elements nullable
    raise AssertionError(f"test: no expected Spark type for Arrow {t}")


def expected_schema(schema: pa.Schema) -> T.StructType:
    return T.StructType([T.StructField(f.name, expected_type(f.type, f), f.nullable) for f in schema])


def strip(t: T.DataType) -> T.DataType:
    """The type without field metadata (StructField equality includes metadata)."""
    if isinstance(t, T.StructType):
        return T.StructType([T.StructField(f.name, strip(f.dataType), f.nullable) for f in t.fields])
    if isinstance(t, T.ArrayType):
        return T.ArrayType(strip(t.elementType), t.containsNull)
    if isinstance(t, T.MapType):
        return T.MapType(strip(t.keyType), strip(t.valueType), t.valueContainsNull)
    return t


def assert_schema(actual: T.StructType, expected: T.StructType, what: str = ""):
    actual = strip(actual)
    assert [f.name for f in actual.fields] == [f.name for f in expected.fields], f"{what}: column names"
    problems = [f"{a.name}: {a.dataType.simpleString()} nullable={a.nullable}, expected "
                f"{e.dataType.simpleString()} nullable={e.nullable}"
                f"{'' if a.dataType.simpleString() != e.dataType.simpleString() else ' (nested nullability: ' + repr(a.dataType) + ' vs ' + repr(e.dataType) + ')'}"  # noqa: E501
                for a, e in zip(actual.fields, expected.fields) if a != e]
    assert not problems, f"{what}: fields differ from docs/types.md:\n  " + "\n  ".join(problems)


def lance_field_ids(ds: lance.LanceDataset) -> Dict[str, int]:
    """{dotted name: Lance field id} for top-level fields and struct children, from pylance."""
    out: Dict[str, int] = {}

    def walk(lfields, afields, prefix):
        for lf, af in zip(lfields, afields):
            out[prefix + lf.name()] = lf.id()
            if pa.types.is_struct(af.type):
                walk(lf.children(), list(af.type), prefix + lf.name() + ".")

    walk(ds.lance_schema.fields(), list(ds.schema), "")
    return out


def spark_field_ids(schema: T.StructType) -> Dict[str, Any]:
    out: Dict[str, Any] = {}

    def walk(st, prefix):
        for f in st.fields:
            out[prefix + f.name] = f.metadata.get("lance.field_id")
            if isinstance(f.dataType, T.StructType):
                walk(f.dataType, prefix + f.name + ".")

    walk(schema, "")
    return out


def error_text(excinfo) -> str:
    e = excinfo.value
    parts = [str(e)]
    jex = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    for _ in range(10):  # the JVM exception and its causes
        if jex is None:
            break
        try:
            parts.append(str(jex.toString()))
            jex = jex.getCause()
        except Exception:  # noqa: BLE001
            break
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# 1. Every type


ALL_TYPES_MAPPING = {  # docs/types.md, spelled out for the columns of all_types (simpleString)
    "i8": "tinyint", "u8": "smallint", "i16": "smallint", "u16": "int", "i32": "int", "u32": "bigint",
    "i64": "bigint", "u64": "decimal(20,0)", "i64_notnull": "bigint", "f16": "float", "f32": "float",
    "f64": "double", "bool": "boolean", "str": "string", "lstr": "string", "bin": "binary", "lbin": "binary",
    "fsb16": "binary", "dec128": "decimal(18,4)", "dec256": "string", "date32": "date", "date64": "date", "time32_s": time_type(0),
    "time32_ms": time_type(3), "time64_us": time_type(6), "time64_ns": time_type(6), "ts_s": "timestamp_ntz",
    "ts_ms": "timestamp_ntz", "ts_us": "timestamp_ntz", "ts_ns": "timestamp_ntz", "ts_us_utc": "timestamp",
    "ts_ms_ny": "timestamp", "ts_ns_offset": "timestamp", "dur_s": "interval day to second",
    "dur_ms": "interval day to second", "dur_us": "interval day to second", "dur_ns": "interval day to second",
    "null_col": "void", "struct": "struct<x:int,y:string,z:struct<zz:double>>",
    "struct_notnull": "struct<p:bigint,q:boolean>", "list_i32": "array<int>", "list_str": "array<string>",
    "list_notnull_items": "array<bigint>", "large_list_i64": "array<bigint>",
    "list_struct": "array<struct<k:string,v:float>>", "large_list_struct": "array<struct<k:smallint>>",
    "list_list": "array<array<int>>", "vector": "array<float>", "fsl_i32_3": "array<int>",
    "fsl_fsl": "array<array<smallint>>", "list_fsl": "array<array<float>>", "map": "map<string,int>",
    "map_nested": "map<bigint,array<string>>", "dict_str": "string", "dict_lstr_i32": "string",
}


def test_all_types_schema(spark, extra):
    """Every column's Spark type (and nullability, nested too) is the docs/types.md mapping of pylance's type."""
    path = extra["all_types_spark"]
    schema = read(spark, path).schema
    assert {f.name: f.dataType.simpleString() for f in schema.fields} == ALL_TYPES_MAPPING
    assert_schema(schema, expected_schema(pl(path).schema), "all_types")
    assert schema["i64_notnull"].nullable is False
    assert schema["struct_notnull"].dataType["p"].nullable is False
    assert schema["list_notnull_items"].dataType.containsNull is False
    assert schema["vector"].dataType.containsNull is True


def test_all_types_field_metadata(spark, extra):
    """Each Spark field carries the Lance field id (top level and struct children) and the logical type."""
    path = extra["all_types_spark"]
    schema = read(spark, path).schema
    assert spark_field_ids(schema) == lance_field_ids(pl(path))
    for f in schema.fields:
        assert f.metadata.get("lance.logical_type"), f"{f.name}: no lance.logical_type metadata"
    lt = {f.name: f.metadata.get("lance.logical_type") for f in schema.fields}
    assert lt["u64"] == "uint64" and lt["f16"] == "halffloat" and lt["dec128"] == "decimal:128:18:4"
    assert lt["ts_ns"] == "timestamp:ns:-" and lt["vector"] == "fixed_size_list:float:128"
    assert lt["dict_str"].startswith("dict:string:int16") and lt["dec256"] == "decimal:256:40:5"


def test_all_types_values(spark, extra):
    """Every value of every type equals pylance's, converted per docs/types.md (300 rows, 2 fragments, nulls)."""
    path = extra["all_types_spark"]
    expected = pl_rows(path)
    assert len({r["i64_notnull"] for r in expected}) == 300  # the key is unique
    assert_rows_equal(spark_rows(readable(read(spark, path))), without_f16(expected), key="i64_notnull",
                      what="all_types")


def test_all_types_values_sql_catalog(spark, extra):
    """The same table through the catalog (`lance.db.all_types`) and SQL."""
    df = readable(spark.sql("SELECT * FROM lance.db.all_types"))
    expected = without_f16(pl_rows(extra["all_types_spark"]))  # lance.db.all_types is a copy of it
    assert_rows_equal(spark_rows(df), expected, key="i64_notnull", what="lance.db.all_types")


def test_float16_column(spark, extra):
    """float16 reads as FLOAT on Spark 4.x; Spark 3.x refuses it with LANCE_UNSUPPORTED_FEATURE naming the column,
    whether selected alone or with `*`, and reads the table's other columns."""
    import sparklance

    path = extra["all_types_spark"]
    key_and_f16 = read(spark, path).select("i64_notnull", "f16")
    expected = pl_rows(path, columns=["i64_notnull", "f16"])
    if HAS_FLOAT16:
        assert key_and_f16.schema["f16"].dataType == T.FloatType()
        assert_rows_equal(spark_rows(key_and_f16), expected, key="i64_notnull", what="all_types f16")
        return
    message = (r"Cannot read column 'f16': it is float16, and the Arrow library of Spark 3\.x has no half-precision "
               r"floats\.")
    with lance_raises(sparklance.UnsupportedFeatureError, match=message) as info:
        key_and_f16.collect()
    assert info.value.error_class == "LANCE_UNSUPPORTED_FEATURE"
    with lance_raises(sparklance.UnsupportedFeatureError, match=message):
        spark.sql("SELECT * FROM lance.db.all_types").collect()
    only_key = read(spark, path).select("i64_notnull")
    assert sorted(r[0] for r in only_key.collect()) == sorted(r["i64_notnull"] for r in expected)


def test_all_types_nanoseconds_truncate_toward_negative_infinity(spark, extra):
    """time64:ns / timestamp:ns / duration:ns lose their sub-microsecond digits (floor), per docs/types.md; before
    Spark 4.1 (no TIME type) time64:ns reads as its exact BIGINT nanoseconds."""
    path = extra["all_types_spark"]
    rows = {r["i64_notnull"]: r for r in spark_rows(read(spark, path).select("i64_notnull", "time64_ns",
                                                                               "dur_ns"))}
    raw = pl(path).to_table(columns=["i64_notnull", "time64_ns", "dur_ns"])
    keys = raw.column("i64_notnull").to_pylist()
    t_ns = raw.column("time64_ns").cast(pa.int64()).to_pylist()
    d_ns = raw.column("dur_ns").cast(pa.int64()).to_pylist()
    negative_seen = False
    for k, t, d in zip(keys, t_ns, d_ns):
        if t is not None:
            assert rows[k]["time64_ns"] == (_time_of_day(t // 1000) if HAS_TIME else t)
        if d is not None:
            negative_seen |= d < 0 and d % 1000 != 0
            td = rows[k]["dur_ns"]
            assert td == dt.timedelta(microseconds=d // 1000), f"dur_ns {d}ns read as {td}"
    assert negative_seen, "fixture: expected negative nanosecond durations with a remainder"


def test_extension_types(spark, tables):
    """arrow.uuid -> BINARY (16 bytes), lance.bfloat16 vectors -> ARRAY<FLOAT> (exact), json -> STRING (JSON text)."""
    path = tables["extension_types"]
    df = read(spark, path)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types == {"id": "int", "bf16_vec": "array<float>", "json": "string", "uuid": "binary"}
    cols = ["id", "bf16_vec", "json", "uuid"]
    assert_rows_equal(spark_rows(df.select(*cols)), pl_rows(path, columns=cols), key="id", what="extension_types")


def test_json_column_reads_as_pylance_text(spark, tables):
    """docs/types.md: a Lance json column reads as STRING holding the JSON text pylance returns."""
    path = tables["extension_types"]
    cols = ["id", "json"]
    rows = spark_rows(read(spark, path).select(*cols))
    assert any(r["json"] is not None for r in rows), "fixture: expected non-null json values"
    assert_rows_equal(rows, pl_rows(path, columns=cols), key="id", what="extension_types json")


def test_wide_decimal_reads_as_exact_text(spark, extra):
    """decimal(40,5) is wider than Spark's 38 digits: STRING holding the exact decimal text."""
    path = extra["all_types_spark"]
    df = read(spark, path).select("i64_notnull", "dec256")
    assert df.schema["dec256"].dataType == T.StringType()
    got = {r[0]: r[1] for r in df.collect()}
    t = pl(path).to_table(columns=["i64_notnull", "dec256"])
    want = {k: None if d is None else format(d, "f")
            for k, d in zip(t.column(0).to_pylist(), t.column(1).to_pylist())}
    assert got == want
    assert any(v is not None and v.startswith("-") and len(v.split(".")[0]) > 30 for v in want.values())
    assert all(v is None or len(v.split(".")[1]) == 5 for v in got.values())


def test_out_of_range_durations_fail_naming_the_column(spark, tables):
    """all_types.dur_s holds +-1e15 s, past Spark's 64-bit microsecond intervals: LANCE_VALUE_OUT_OF_RANGE naming
    the column, never silently wrapped values ("nothing is narrowed silently")."""
    with pytest.raises(Exception) as ei:
        read(spark, tables["all_types"]).select("i64_notnull", "dur_s").collect()
    text = error_text(ei)
    assert "LANCE_VALUE_OUT_OF_RANGE" in text and "dur_s" in text, text[:2000]


def test_other_columns_of_a_table_with_out_of_range_durations_read(spark, tables):
    """Only a query that selects the overflowing column fails: every other column of all_types reads."""
    path = tables["all_types"]
    cols = [c for c in pl(path).schema.names if c != "dur_s" and (HAS_FLOAT16 or c != "f16")]
    df = read(spark, path).select(*cols)
    assert_rows_equal(spark_rows(df), pl_rows(path, columns=cols), key="i64_notnull", what="all_types minus dur_s")


# ---------------------------------------------------------------------------------------------------------------
# 2. Deletions, every version (chispa DataFrame equality with pylance's table)


DELETION_CASES = [(t, v) for t in ("deletes", "history") for v in range(1, make_tables.EXPECTED_VERSIONS[t] + 1)]


@pytest.mark.parametrize("table,version", DELETION_CASES, ids=[f"{t}@v{v}" for t, v in DELETION_CASES])
def test_deletions_every_version(spark, tables, table, version):
    from chispa import assert_df_equality

    path = tables[table]
    ds = pl(path, version)
    df = read(spark, path, version=version)
    expected = arrow_df(spark, ds.to_table())
    assert df.count() == ds.count_rows()
    assert_df_equality(df, expected, ignore_row_order=True, ignore_nullable=True, ignore_metadata=True)


def test_deleted_rows_are_absent(spark, tables):
    """The rows pylance deleted (by predicate) are exactly the ones missing, per version of `deletes`."""
    path = tables["deletes"]
    gone = {
        2: {3, 17, 4242, 9999},
        7: {3, 17, 4242, 9999, 5, 6, 7777} | set(range(10000, 19500)) | set(range(20000, 30000)),
    }
    for version, deleted in gone.items():
        ids = {r.id for r in read(spark, path, version=version).select("id").collect()}
        assert not ids & deleted, f"v{version}: deleted ids read: {sorted(ids & deleted)[:5]}"
        assert ids == set(pl(path, version).to_table(columns=["id"]).column(0).to_pylist())


# ---------------------------------------------------------------------------------------------------------------
# 3. Time travel


def _version_ns(path) -> Dict[int, int]:
    return {v["version"]: int(v["timestamp"]) for v in pl(str(path))._ds.versions()}


def _mid_us(path, k) -> int:
    ns = _version_ns(path)
    a, b = ns[k] // 1000, ns[k + 1] // 1000
    assert a < b - 2, "fixture: versions too close for an as-of test"
    return (a + b) // 2


def _iso_z(us: int) -> str:
    return _spark_ts_ntz(us).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _sql_ts(us: int) -> str:  # session time zone is UTC
    return _spark_ts_ntz(us).strftime("%Y-%m-%d %H:%M:%S.%f")


def _ids(df) -> List[int]:
    return sorted(r[0] for r in df.select("id").collect())


def _pl_ids(path, version) -> List[int]:
    return sorted(pl(str(path), version).to_table(columns=["id"]).column(0).to_pylist())


def test_time_travel_dataframe_version(spark, tables):
    path = tables["history"]
    for v in range(1, 6):
        assert _ids(read(spark, path, version=v)) == _pl_ids(path, v), f"version={v}"
    assert _ids(read(spark, path)) == _pl_ids(path, 5), "no option: latest"


def test_time_travel_dataframe_timestamp(spark, tables):
    """option("timestamp"): the latest version committed at or before the instant."""
    path = tables["history"]
    for k in range(1, 5):
        us = _mid_us(path, k)
        assert _ids(read(spark, path, timestamp=_iso_z(us))) == _pl_ids(path, k), f"between v{k} and v{k + 1}"
    last = _version_ns(path)[5] // 1000 + 3_600_000_000
    assert _ids(read(spark, path, timestamp=_iso_z(last))) == _pl_ids(path, 5)
    # An offset spelling of the same instant as the v2/v3 midpoint
    us = _mid_us(path, 2)
    off = (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=us)).astimezone(
        dt.timezone(dt.timedelta(hours=2))).isoformat(timespec="microseconds")
    assert _ids(read(spark, path, timestamp=off)) == _pl_ids(path, 2), off


def test_time_travel_dataframe_tag(spark, tables):
    path = tables["history"]
    assert _ids(read(spark, path, tag="v2tag")) == _pl_ids(path, 2)
    assert _ids(read(spark, path, tag="first")) == _pl_ids(path, 1)


def test_time_travel_sql_version_as_of(spark, tables):
    path = tables["history"]
    for v in range(1, 6):
        df = spark.sql(f"SELECT id FROM lance.db.history VERSION AS OF {v}")
        assert _ids(df) == _pl_ids(path, v), f"VERSION AS OF {v}"
    assert spark.sql("SELECT count(*) FROM lance.db.v1_naming VERSION AS OF 3").first()[0] == \
        pl(tables["v1_naming"], 3).count_rows()


def test_time_travel_sql_version_as_of_tag(spark, tables):
    path = tables["history"]
    assert _ids(spark.sql("SELECT id FROM lance.db.history VERSION AS OF 'v2tag'")) == _pl_ids(path, 2)
    assert _ids(spark.sql("SELECT id FROM lance.db.history VERSION AS OF 'first'")) == _pl_ids(path, 1)


def test_time_travel_sql_timestamp_as_of(spark, tables):
    path = tables["history"]
    for k in range(1, 5):
        ts = _sql_ts(_mid_us(path, k))
        df = spark.sql(f"SELECT id FROM lance.db.history TIMESTAMP AS OF '{ts}'")
        assert _ids(df) == _pl_ids(path, k), f"TIMESTAMP AS OF '{ts}' (between v{k} and v{k + 1})"
    path = tables["deletes"]
    ts = _sql_ts(_mid_us(path, 3))
    assert spark.sql(f"SELECT count(*) FROM lance.db.deletes TIMESTAMP AS OF '{ts}'").first()[0] == \
        pl(path, 3).count_rows()


def test_time_travel_sql_on_a_path(spark, tables):
    """An absolute path in the catalog's root namespace, with and without VERSION AS OF."""
    path = tables["history"]
    assert _ids(spark.sql(f"SELECT * FROM lance.`{path}`")) == _pl_ids(path, 5)
    assert _ids(spark.sql(f"SELECT * FROM lance.`{path}` VERSION AS OF 2")) == _pl_ids(path, 2)
    assert_rows_equal(spark_rows(spark.sql(f"SELECT * FROM lance.`{path}` VERSION AS OF 4")), pl_rows(path, 4),
                      key="id", what="history@4 by path")


def test_time_travel_schema_follows_the_version(spark, tables):
    """`overwrite` changed the schema in v2: each version reads with its own schema and data."""
    path = tables["overwrite"]
    for v in (1, 2):
        df = read(spark, path, version=v)
        assert_schema(df.schema, expected_schema(pl(path, v).schema), f"overwrite@{v}")
        assert_rows_equal(spark_rows(df), pl_rows(path, v), what=f"overwrite@{v}")
    sql = spark.sql("SELECT * FROM lance.db.overwrite VERSION AS OF 1")
    assert sql.columns == ["id", "name", "value", "flag"]


# ---------------------------------------------------------------------------------------------------------------
# 4. Schema evolution


SE_VERSIONS = list(range(1, make_tables.EXPECTED_VERSIONS["schema_evolution"] + 1))


@pytest.mark.parametrize("version", SE_VERSIONS, ids=[f"v{v}" for v in SE_VERSIONS])
def test_schema_evolution(spark, tables, version):
    """Added (expression, all-null, UDF), rewritten (-2 tombstone), merged, dropped (also nested), renamed,
    nullability-changed and re-typed columns: columns, types, field ids and values equal pylance's at that version."""
    path = tables["schema_evolution"]
    ds = pl(path, version)
    df = read(spark, path, version=version)
    assert df.columns == ds.schema.names
    assert_schema(df.schema, expected_schema(ds.schema), f"schema_evolution@{version}")
    assert spark_field_ids(df.schema) == lance_field_ids(ds)
    key = ds.schema.names[0]  # a, renamed a2 in v9: unique
    actual = spark_rows(df)
    assert_rows_equal(actual, pl_rows(path, version), key=key, what=f"schema_evolution@{version}")
    if version == 5:  # the rewritten-in-place column (tombstoned in its first data file)
        assert sum(1 for r in actual if (r["b"] or "").startswith("rewritten")) == 50
    if version == 6:
        assert sum(1 for r in actual if (r["b"] or "").startswith("merged")) == 20


def test_schema_evolution_catalog_latest(spark, tables):
    path = tables["schema_evolution"]
    df = spark.table("lance.db.schema_evolution")
    assert df.columns == ["a2", "s", "c", "d", "e", "f"]
    assert df.schema["c"].dataType == T.LongType()
    assert df.schema["s"].dataType.names == ["y"]
    assert_rows_equal(spark_rows(df), pl_rows(path), key="a2", what="lance.db.schema_evolution")


# ---------------------------------------------------------------------------------------------------------------
# 5. Metadata columns, stable row ids


def _pl_meta(path, version=None) -> Dict[int, tuple]:
    t = pl(str(path), version).to_table(columns=["id"], with_row_id=True, with_row_address=True)
    return {i: (rid, addr) for i, rid, addr in zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist(),
                                                   t.column("_rowaddr").to_pylist())}


def _spark_meta(df) -> Dict[int, tuple]:
    out = {}
    for r in df.collect():
        assert r["_fragid"] == r["_rowaddr"] >> 32, f"_fragid {r['_fragid']} vs _rowaddr {r['_rowaddr']}"
        assert r["id"] not in out, f"id {r['id']} read twice"
        out[r["id"]] = (r["_rowid"], r["_rowaddr"])
    return out


SRI_VERSIONS = list(range(1, make_tables.EXPECTED_VERSIONS["stable_row_ids"] + 1))


@pytest.mark.parametrize("version", SRI_VERSIONS, ids=[f"v{v}" for v in SRI_VERSIONS])
def test_stable_row_ids(spark, tables, version):
    """_rowid is the stable row id (kept across update, column rewrite and compaction), _rowaddr the address."""
    path = tables["stable_row_ids"]
    df = spark.sql(f"SELECT _rowid, _rowaddr, _fragid, * FROM lance.db.stable_row_ids VERSION AS OF {version}")
    got = _spark_meta(df)
    want = _pl_meta(path, version)
    assert got.keys() == want.keys()
    bad = [(i, got[i], want[i]) for i in want if got[i] != want[i]]
    assert not bad, f"{len(bad)} rows differ (id, (rowid, rowaddr) read, pylance): {bad[:5]}"
    if version == 8:  # after compaction, stable ids and addresses differ for most rows
        assert sum(1 for rid, addr in want.values() if rid != addr) > 1000


def test_metadata_columns_schema_and_star(spark):
    df = spark.sql("SELECT _rowid, _rowaddr, _fragid FROM lance.db.history")
    assert [(f.name, f.dataType) for f in df.schema.fields] == [
        ("_rowid", T.LongType()), ("_rowaddr", T.LongType()), ("_fragid", T.LongType())]
    # SELECT * does not include them
    assert spark.table("lance.db.history").columns == ["id", "name", "value", "flag"]


def test_metadata_columns_without_stable_ids(spark, tables):
    """No stable row ids: _rowid is the row address; every address equals pylance's, deleted rows leave gaps."""
    path = tables["history"]
    for version in (1, 4, 5):
        got = _spark_meta(spark.sql(f"SELECT _rowid, _rowaddr, _fragid, id FROM lance.db.history "
                                    f"VERSION AS OF {version}"))
        want = _pl_meta(path, version)
        assert got == want, f"history@{version}"
        assert all(rid == addr for rid, addr in got.values())
    frags = {addr >> 32 for _, addr in _pl_meta(path, 5).values()}
    assert frags == {0, 1, 2}  # fragment 3 was dropped by the last delete


def test_metadata_columns_dataframe_api(spark, tables):
    """Metadata columns resolve by name on a DataFrame read by path too (and after a filter)."""
    path = tables["stable_row_ids"]
    df = read(spark, path).select("_rowid", "_rowaddr", "_fragid", "id")
    assert _spark_meta(df) == _pl_meta(path)
    picked = read(spark, path).where("id >= 1500 AND id < 1600").select("_rowid", "id").collect()
    want = _pl_meta(path)
    assert picked and all(r["_rowid"] == want[r["id"]][0] for r in picked)


# ---------------------------------------------------------------------------------------------------------------
# 6. Catalog


def _rows(spark, sql) -> List[tuple]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_show_namespaces(spark, wh):
    names = {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance")}
    assert {"db", "a", "keep"} <= names, names
    assert not any(n.endswith(".lance") or n.endswith("escape") for n in names), names
    nested = {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance.a")}
    assert nested in ({"a.b"}, {"b"}), nested
    assert {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance.db")} == set()  # tables are not namespaces


def test_show_tables(spark, wh):
    df = spark.sql("SHOW TABLES IN lance.db")
    names = {r["tableName"] for r in df.collect()}
    expected = {"history", "v1_naming", "deletes", "schema_evolution", "stable_row_ids", "overwrite",
                "extension_types", "format_2_0", "format_2_1", "all_types_orig", "all_types", "big"}
    assert expected <= names, f"missing: {expected - names}"
    # README.txt is not a table; '.hidden' and 'a\\b' are test_hidden_entries_are_not_listed's business
    unexpected = names - expected - {"fresh", ".hidden", "a\\b"}
    assert not unexpected, f"unexpected tables: {unexpected}"
    assert {r["tableName"] for r in spark.sql("SHOW TABLES IN lance.a.b").collect()} == {"t"}


def test_pylance_created_table_shows_up(spark, wh):
    """A table pylance writes into the warehouse after the session started is listed and readable, and a later
    pylance commit is seen by the next query."""
    path = wh / "db" / "fresh.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(10), pa.int64()), "s": [f"x{i}" for i in range(10)]}),
                        str(path))
    assert "fresh" in {r["tableName"] for r in spark.sql("SHOW TABLES IN lance.db").collect()}
    assert spark.sql("SELECT count(*) FROM lance.db.fresh").first()[0] == 10
    lance.write_dataset(pa.table({"id": pa.array(range(10, 15), pa.int64()), "s": ["y"] * 5}), str(path),
                        mode="append")
    assert spark.sql("SELECT count(*), max(id) FROM lance.db.fresh").first()[:] == (15, 14)


def test_nested_namespace_table(spark, tables):
    path = tables["history"]
    assert _ids(spark.table("lance.a.b.t")) == _pl_ids(path, 5)
    assert spark.sql("SELECT count(*) FROM lance.a.b.t VERSION AS OF 2").first()[0] == pl(path, 2).count_rows()


def test_describe_table(spark):
    rows = _rows(spark, "DESCRIBE TABLE lance.db.history")
    cols = []
    for name, typ, _ in rows:
        if not name or name.startswith("#"):
            break
        cols.append((name, typ))
    assert cols == [("id", "bigint"), ("name", "string"), ("value", "double"), ("flag", "boolean")]
    typed = {r[0]: r[1] for r in _rows(spark, "DESCRIBE TABLE lance.db.all_types")}
    for c in ("u64", "f16", "ts_ns", "ts_us_utc", "time32_s", "dur_us", "dict_str", "vector", "map"):
        assert typed.get(c) == ALL_TYPES_MAPPING[c], (c, typed.get(c))


def test_describe_table_extended(spark, tables):
    """Columns, the metadata columns, and the table facts (version, fragments, rows, ...) from pylance."""
    rows = _rows(spark, "DESCRIBE TABLE EXTENDED lance.db.history")
    text = "\n".join(" | ".join("" if x is None else str(x) for x in r) for r in rows)
    ds = pl(tables["history"])
    facts = {"version": str(ds.version), "latest_version": str(ds.latest_version),
             "fragments": str(len(ds.get_fragments())), "rows": str(ds.count_rows()),
             "file_format_version": ds.data_storage_version, "manifest_naming": "v2"}
    for k, v in facts.items():
        # as a key/value row, or inside the 'Table Properties' list: "k=v"
        assert any(r[0] == k and r[1] == v for r in rows) or f"{k}={v}" in text, f"{k}={v} not in:\n{text}"
    names = [r[0] for r in rows]
    assert names[:4] == ["id", "name", "value", "flag"]
    assert {"_rowid", "_rowaddr", "_fragid"} <= set(names), f"metadata columns not described:\n{text}"
    assert str(ds.count_rows()) in text


def _committed_ns(text: str) -> int:
    """Epoch nanoseconds of an ISO-8601 UTC instant with up to 9 fractional digits ('...T04:05:02.4285Z')."""
    assert text.endswith("Z"), text
    whole, _, frac = text[:-1].partition(".")
    secs = int(dt.datetime.fromisoformat(whole).replace(tzinfo=dt.timezone.utc).timestamp())
    return secs * 10 ** 9 + int((frac or "0").ljust(9, "0"))


@pytest.mark.parametrize("table", ["history", "v1_naming", "stable_row_ids", "all_types", "deletes"])
def test_show_tblproperties(spark, tables, extra, table):
    """The table facts (docs/reading.md) as properties, each equal to what pylance reports."""
    path = extra["all_types_spark"] if table == "all_types" else tables[table]
    df = spark.sql(f"SHOW TBLPROPERTIES lance.db.{table}")
    assert df.columns == ["key", "value"]
    rows = df.collect()
    props = {r["key"]: r["value"] for r in rows}
    assert len(props) == len(rows), "duplicate keys"
    ds = pl(path)
    assert props.get("version") == str(ds.version)
    assert props.get("latest_version") == str(ds.latest_version)
    assert props.get("fragments") == str(len(ds.get_fragments()))
    assert props.get("rows") == str(ds.count_rows())
    assert props.get("file_format_version") == ds.data_storage_version
    assert props.get("manifest_naming") == ("v1" if table == "v1_naming" else "v2")
    assert _committed_ns(props["committed_at"]) == _version_ns(path)[ds.version]
    flags = (props.get("reader_feature_flags") or "").lower()
    # stable_row_ids' last version is a compaction: no deletion files left; all_types never deleted a row
    assert ("stable row ids" in flags) == (table == "stable_row_ids"), flags
    assert ("deletion files" in flags) == (table in ("history", "v1_naming", "deletes")), flags


def test_create_and_drop_namespace(spark, wh):
    spark.sql("CREATE NAMESPACE lance.scratch")
    assert (wh / "scratch").is_dir()
    spark.sql("CREATE NAMESPACE lance.scratch.inner")
    assert (wh / "scratch" / "inner").is_dir()
    assert "scratch" in {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance")}
    assert {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance.scratch")} in ({"scratch.inner"}, {"inner"})
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.scratch")
    spark.sql("DROP NAMESPACE lance.scratch.inner")
    assert not (wh / "scratch" / "inner").exists()
    spark.sql("DROP NAMESPACE lance.scratch")
    assert not (wh / "scratch").exists()
    assert "scratch" not in {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance")}


def test_drop_non_empty_namespace_without_cascade_fails(spark, wh):
    with pytest.raises(Exception):
        spark.sql("DROP NAMESPACE lance.keep")
    assert (wh / "keep" / "k.lance" / "_versions").is_dir(), "DROP NAMESPACE (no CASCADE) deleted a table"


@pytest.mark.parametrize("sql,name", [
    ("SELECT count(*) FROM lance.`..`.escape", ".."),
    ("SELECT count(*) FROM lance.db.`../../escape`", "../../escape"),
    ("SELECT count(*) FROM lance.`a/b`.t", "a/b"),
    ("SELECT count(*) FROM lance.a.`b/t`", "b/t"),
], ids=["dotdot-namespace", "dotdot-table", "slash-namespace", "slash-table"])
def test_refused_names(spark, wh, sql, name):
    """Every one of these would reach a real table (outside the warehouse, or a nested one by a wrong name)."""
    with pytest.raises(Exception) as ei:
        spark.sql(sql).collect()
    text = error_text(ei)
    assert "LANCE_INVALID_ARGUMENT" in text and f"'{name}'" in text, text[:2000]


def test_refused_namespace_names(spark, wh):
    for ns, made in (("`../outside_ns`", wh.parent / "outside_ns"), ("`x/y`", wh / "x" / "y"),
                     ("`..`", None)):
        with pytest.raises(Exception) as ei:
            spark.sql(f"CREATE NAMESPACE lance.{ns}")
        assert "LANCE_INVALID_ARGUMENT" in error_text(ei), error_text(ei)[:2000]
        if made is not None:
            assert not made.exists(), f"CREATE NAMESPACE lance.{ns} created {made}"
    assert not (wh / "x").exists()
    sibling = wh.parent / "sibling_ns"
    sibling.mkdir(exist_ok=True)
    with pytest.raises(Exception) as ei:
        spark.sql("DROP NAMESPACE lance.`../sibling_ns`")
    assert "LANCE_INVALID_ARGUMENT" in error_text(ei), error_text(ei)[:2000]
    assert sibling.is_dir(), "DROP NAMESPACE reached a directory outside the warehouse"


# ---------------------------------------------------------------------------------------------------------------
# 7. Projection, batching, big fragments


def test_projection_nested_field(spark, extra):
    path = extra["all_types_spark"]
    df = read(spark, path).select("i64_notnull", "struct.x", "struct.z.zz", "list_struct", "map")
    assert df.columns == ["i64_notnull", "x", "zz", "list_struct", "map"]
    full = {r["i64_notnull"]: r for r in pl_rows(path)}
    expected = [{"i64_notnull": k, "x": None if r["struct"] is None else r["struct"]["x"],
                 "zz": None if r["struct"] is None else r["struct"]["z"]["zz"],
                 "list_struct": r["list_struct"], "map": r["map"]} for k, r in full.items()]
    assert_rows_equal(spark_rows(df), expected, key="i64_notnull", what="projection")


def test_projection_sql_struct_field_and_reordered_columns(spark, tables):
    path = tables["schema_evolution"]
    df = spark.sql("SELECT f, s.y, a2 FROM lance.db.schema_evolution")
    expected = [{"f": r["f"], "y": None if r["s"] is None else r["s"]["y"], "a2": r["a2"]} for r in pl_rows(path)]
    assert_rows_equal(spark_rows(df), expected, key="a2", what="SELECT f, s.y, a2")


@pytest.mark.parametrize("name", ["history", "deletes", "schema_evolution", "all_types"])
def test_small_batches(spark, tables, extra, name):
    """batch_size=7: batches end everywhere (inside pages, around deleted rows) -- same rows."""
    path = extra["all_types_spark"] if name == "all_types" else tables[name]
    key = {"all_types": "i64_notnull", "schema_evolution": "a2"}.get(name, "id")
    assert_rows_equal(spark_rows(readable(read(spark, path, batch_size=7))), without_f16(pl_rows(path)), key=key,
                      what=f"{name} batch_size=7")


def _big_expected(path):
    t = pl(str(path)).to_table()
    s = t.column("s").combine_chunks()
    return t.column("id").to_pylist(), t.column("v").to_pylist(), s.field("x").to_pylist(), \
        s.field("w").to_pylist(), t.column("tag").to_pylist()


def _assert_same_in_spark(df, expected, what):
    """Multiset equality computed inside Spark (no 300k-row collect): both differences are empty."""
    extra = df.exceptAll(expected)
    missing = expected.exceptAll(df)
    n_extra, n_missing = extra.count(), missing.count()
    assert (n_extra, n_missing) == (0, 0), (
        f"{what}: {n_extra} unexpected rows, e.g. {extra.limit(3).collect()}; {n_missing} missing rows, "
        f"e.g. {missing.limit(3).collect()}")


@pytest.mark.parametrize("batch_size", [None, 999], ids=["default", "batch999"])
def test_big_fragment(spark, extra, batch_size):
    """300,000 rows in one fragment (with a Roaring deletion file) plus two small fragments: every row, once."""
    path = extra["big"]
    assert len(pl(path).get_fragments()) == 3
    opts = {} if batch_size is None else {"batch_size": batch_size}
    df = read(spark, path, **opts).select("id", "v", "s.x", "s.w", "tag")
    t = pl(path).to_table()
    s = t.column("s").combine_chunks()
    expected = arrow_df(spark, pa.table({"id": t.column("id"), "v": t.column("v"), "x": s.field("x"),
                                         "w": s.field("w"), "tag": t.column("tag")}))
    assert df.count() == pl(path).count_rows() == 297202
    _assert_same_in_spark(df, expected, f"big batch_size={batch_size}")


def test_big_fragment_catalog_aggregates(spark, extra):
    path = extra["big"]
    ids, v, x, _, tag = _big_expected(path)
    row = spark.sql("SELECT count(*), sum(id), sum(s.x), count(tag), min(id), max(id) FROM lance.db.big").first()
    assert tuple(row) == (len(ids), sum(ids), sum(x), sum(t is not None for t in tag), min(ids), max(ids))


# ---------------------------------------------------------------------------------------------------------------
# Older file versions and manifest naming


@pytest.mark.parametrize("name,version", [("format_2_0", 1), ("format_2_0", 2), ("format_2_1", 1),
                                          ("format_2_1", 2), ("v1_naming", 1), ("v1_naming", 5)])
def test_other_fixture_tables(spark, tables, name, version):
    path = tables[name]
    df = read(spark, path, version=version)
    assert_schema(df.schema, expected_schema(pl(path, version).schema), f"{name}@{version}")
    assert_rows_equal(spark_rows(df), pl_rows(path, version), key="id", what=f"{name}@{version}")


# ---------------------------------------------------------------------------------------------------------------
# 8. Errors


def test_error_missing_path(spark, tmp_path):
    missing = tmp_path / "no_such_table"
    with pytest.raises(Exception) as ei:
        read(spark, missing).collect()
    text = error_text(ei)
    assert "LANCE_NOT_A_TABLE" in text and "no_such_table" in text, text[:2000]


def test_error_not_a_table(spark, tmp_path):
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    plain = tmp_path / "plain_file.txt"
    plain.write_text("hello\n")
    for p in (empty, plain):
        with pytest.raises(Exception) as ei:
            read(spark, p).collect()
        text = error_text(ei)
        assert "LANCE_NOT_A_TABLE" in text and p.name in text, text[:2000]


def test_error_missing_table_in_catalog(spark):
    with pytest.raises(Exception) as ei:
        spark.sql("SELECT * FROM lance.db.no_such_tbl").collect()
    assert "no_such_tbl" in error_text(ei)


def test_error_version_not_found(spark, tables):
    path = tables["history"]
    with pytest.raises(Exception) as ei:
        read(spark, path, version=4242).collect()
    text = error_text(ei)
    assert "LANCE_VERSION_NOT_FOUND" in text and "4242" in text, text[:2000]
    with pytest.raises(Exception) as ei:
        spark.sql("SELECT * FROM lance.db.history VERSION AS OF 7777").collect()
    text = error_text(ei)
    assert "LANCE_VERSION_NOT_FOUND" in text and "7777" in text, text[:2000]


def test_error_tag_not_found(spark, tables):
    with pytest.raises(Exception) as ei:
        read(spark, tables["history"], tag="no_such_tag").collect()
    text = error_text(ei)
    assert "LANCE_TAG_NOT_FOUND" in text and "no_such_tag" in text, text[:2000]
    assert "v2tag" in text and "first" in text, f"the tags that exist are not listed: {text[:2000]}"
    with pytest.raises(Exception) as ei:
        spark.sql("SELECT * FROM lance.db.history VERSION AS OF 'missing_tag'").collect()
    text = error_text(ei)
    assert "LANCE_TAG_NOT_FOUND" in text and "missing_tag" in text, text[:2000]


def test_error_timestamp_before_first_version(spark, tables):
    with pytest.raises(Exception) as ei:
        read(spark, tables["history"], timestamp="2000-01-01T00:00:00Z").collect()
    text = error_text(ei)
    assert "LANCE_VERSION_NOT_FOUND" in text and "2000-01-01" in text, text[:2000]
    with pytest.raises(Exception) as ei:
        spark.sql("SELECT * FROM lance.db.history TIMESTAMP AS OF '2001-02-03 04:05:06'").collect()
    text = error_text(ei)
    assert "LANCE_VERSION_NOT_FOUND" in text and "2001-02-03" in text, text[:2000]


# ---------------------------------------------------------------------------------------------------------------
# 9. LIMIT and count


def _live_ids(path, version=None) -> set:
    return set(pl(str(path), version).to_table(columns=["id"]).column(0).to_pylist())


def test_limit(spark, tables):
    path = tables["deletes"]
    live = _live_ids(path)
    assert len(live) == pl(path).count_rows() == 11397
    for n in (0, 1, 10, 4000, 10500):
        got = [r[0] for r in spark.sql(f"SELECT id FROM lance.db.deletes LIMIT {n}").collect()]
        assert len(got) == n, f"LIMIT {n}: {len(got)} rows"
        assert len(set(got)) == n and set(got) <= live, f"LIMIT {n}: duplicate or deleted rows"
    assert len(spark.sql("SELECT * FROM lance.db.deletes LIMIT 20000").collect()) == len(live)
    got = [r[0] for r in read(spark, path).limit(333).select("id").collect()]
    assert len(got) == 333 and set(got) <= live
    assert len(read(spark, path).take(3)) == 3
    got = [r[0] for r in spark.sql("SELECT id FROM lance.db.deletes WHERE id >= 25000 LIMIT 100").collect()]
    assert len(got) == 100 and all(i >= 30000 for i in got) and set(got) <= live


@pytest.mark.parametrize("table", ["deletes", "history", "stable_row_ids", "schema_evolution"])
def test_count_every_version(spark, tables, table):
    path = tables[table]
    for v in range(1, make_tables.EXPECTED_VERSIONS[table] + 1):
        want = pl(path, v).count_rows()
        assert read(spark, path, version=v).count() == want, f"{table}@{v} count()"
        got = spark.sql(f"SELECT COUNT(*) FROM lance.db.{table} VERSION AS OF {v}").first()[0]
        assert got == want, f"{table}@{v} COUNT(*)"


def test_count_with_filter(spark, tables):
    path = tables["deletes"]
    want = sum(1 for i in _live_ids(path) if i % 3 == 0)
    assert spark.sql("SELECT count(*) FROM lance.db.deletes WHERE id % 3 = 0").first()[0] == want
    assert read(spark, path).where("payload LIKE 'p1%'").count() == \
        sum(1 for p in pl(path).to_table(columns=["payload"]).column(0).to_pylist() if p.startswith("p1"))


# ---------------------------------------------------------------------------------------------------------------
# 10. Read options, partitioning, pinned versions, _fragid filters (docs/reading.md)


@pytest.mark.parametrize("rows_per_partition", [49_999, 7_777])
def test_rows_per_partition_splits_large_fragments(spark, extra, rows_per_partition):
    """A 300,000-row fragment is split into row ranges of at most `rows_per_partition` rows (not aligned to pages
    or to the deleted ranges); the rows are the same, each once."""
    path = extra["big"]
    df = read(spark, path, rows_per_partition=rows_per_partition)
    parts = df.rdd.getNumPartitions()
    assert parts >= -(-300_000 // rows_per_partition), f"{parts} partitions"
    t = pl(path).to_table(columns=["id", "v", "tag"])
    expected = arrow_df(spark, t)
    _assert_same_in_spark(df.select("id", "v", "tag"), expected, f"big rows_per_partition={rows_per_partition}")
    assert df.count() == pl(path).count_rows()
    counts = df.groupBy("_fragid").count().collect()
    want = Counter(a >> 32 for a in pl(path).to_table(columns=[], with_row_address=True).column(0).to_pylist())
    assert {r[0]: r[1] for r in counts} == dict(want)


def test_small_fragments_are_packed(spark, tables):
    """history@3 has 4 fragments of 400-600 rows: with the default rows_per_partition they share a partition."""
    path = tables["history"]
    assert len(pl(path, 3).get_fragments()) == 4
    df = read(spark, path, version=3)
    assert df.rdd.getNumPartitions() == 1
    assert _ids(df) == _pl_ids(path, 3)


def test_tasks_are_sized_by_the_bytes_of_the_columns_read(spark, tmp_path):
    """Without rows_per_partition a scan is cut into tasks of at most spark.sql.files.maxPartitionBytes of data
    files, counting only the columns read (the bytes of their pages, as pylance's file metadata gives them): reading
    `id` of a pylance table whose string column holds most of its bytes takes fewer tasks than reading both."""
    from lance.file import LanceFileReader
    import random
    rnd = random.Random(int(os.environ.get("SPARKLANCE_FUZZ_SEED", "19")))
    n = 100_000
    path = tmp_path / "wide.lance"
    pad = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(40)) for _ in range(n)]
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "pad": pad}), str(path))
    total = sum(f.stat().st_size for f in (path / "data").iterdir())
    max_bytes = int(total / 7.5)
    id_pages = 0
    for f in (path / "data").iterdir():
        column = LanceFileReader(str(f)).metadata().columns[0]  # `id`, the first field
        id_pages += sum(b.size for p in column.pages for b in p.buffers) + sum(b.size for b in column.column_buffers)
    before = {k: spark.conf.get(k, None) for k in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")}
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(max_bytes))
    spark.conf.set("spark.sql.files.openCostInBytes", "1024")
    try:
        narrow, full = read(spark, path).select("id"), read(spark, path)
        assert full.rdd.getNumPartitions() == 8
        # A small scan is spread over the cores, in tasks of at least openCostInBytes.
        target = min(max_bytes, max(1024, id_pages / spark.sparkContext.defaultParallelism))
        assert narrow.rdd.getNumPartitions() == math.ceil(id_pages / target) < 8, (id_pages, max_bytes)
        assert sorted(r[0] for r in narrow.collect()) == list(range(n))
    finally:
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def test_read_settings_as_table_properties(spark, tmp_path):
    """rows_per_partition as a table property splits a scan that takes no options (a catalog read, a DELETE); a
    read option still wins."""
    path = tmp_path / "props.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(4000), pa.int64())}), str(path), max_rows_per_file=1000)
    assert read(spark, path).rdd.getNumPartitions() == 1
    lance.dataset(str(path)).update_config({"rows_per_partition": "1000"})
    assert read(spark, path).rdd.getNumPartitions() == 4
    assert spark.table(f"lance.`{path}`").rdd.getNumPartitions() == 4
    assert read(spark, path, rows_per_partition=2000).rdd.getNumPartitions() == 2
    assert _ids(read(spark, path)) == list(range(4000))
    lance.dataset(str(path)).update_config({"rows_per_partition": "lots"})
    with pytest.raises(Exception) as ei:
        read(spark, path).collect()
    assert "Table property rows_per_partition must be a positive number, not 'lots'." in error_text(ei)


def test_row_based_reader(spark, extra):
    """columnar=false hands Spark rows instead of columnar batches: the same values, every type."""
    path = extra["all_types_spark"]
    assert_rows_equal(spark_rows(readable(read(spark, path, columnar="false", batch_size=13))),
                      without_f16(pl_rows(path)),
                      key="i64_notnull", what="all_types columnar=false")


def test_version_is_pinned_when_the_dataframe_is_created(spark, tmp_path):
    path = tmp_path / "pinned.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(100), pa.int64())}), str(path))
    df = read(spark, path)
    assert df.count() == 100
    lance.write_dataset(pa.table({"id": pa.array(range(100, 130), pa.int64())}), str(path), mode="append")
    assert df.count() == 100, "a DataFrame created before a commit must keep reading its version"
    assert sorted(r[0] for r in df.collect()) == list(range(100))
    assert read(spark, path).count() == 130


@pytest.mark.parametrize("options", [{"version": 2, "tag": "first"}, {"version": 1, "timestamp": "2030-01-01"},
                                     {"tag": "first", "timestamp": "2030-01-01T00:00:00Z"}],
                         ids=["version+tag", "version+timestamp", "tag+timestamp"])
def test_error_more_than_one_time_travel_option(spark, tables, options):
    with pytest.raises(Exception) as ei:
        read(spark, tables["history"], **options).collect()
    text = error_text(ei)
    assert "LANCE_INVALID_ARGUMENT" in text, text[:2000]
    assert all(k in text for k in options), text[:2000]


@pytest.mark.parametrize("options,word", [({"version": "latest-ish"}, "latest-ish"),
                                          ({"timestamp": "yesterday noon"}, "yesterday noon"),
                                          ({"batch_size": "0"}, "batch_size"),
                                          ({"rows_per_partition": "-5"}, "rows_per_partition")],
                         ids=["version", "timestamp", "batch_size", "rows_per_partition"])
def test_error_bad_option_value(spark, tables, options, word):
    with pytest.raises(Exception) as ei:
        read(spark, tables["history"], **options).collect()
    text = error_text(ei)
    assert "LANCE_INVALID_ARGUMENT" in text and word in text, text[:2000]


FRAGID_FILTERS = [
    ("_fragid = 1", lambda f, i: f == 1),
    ("_fragid IN (0, 2)", lambda f, i: f in (0, 2)),
    ("_fragid > 0", lambda f, i: f > 0),
    ("_fragid >= 1 AND _fragid < 2", lambda f, i: f == 1),
    ("_fragid <= 1 AND id % 2 = 0", lambda f, i: f <= 1 and i % 2 == 0),
    ("_fragid = 0 OR id > 1400", lambda f, i: f == 0 or i > 1400),
    ("NOT (_fragid = 0)", lambda f, i: f != 0),
    ("_fragid = 3", lambda f, i: f == 3),  # fragment 3 was dropped by the last delete
    ("_fragid < 0", lambda f, i: False),
    ("_fragid IN (1, 99)", lambda f, i: f == 1),
]


@pytest.mark.parametrize("where,pred", FRAGID_FILTERS, ids=[w for w, _ in FRAGID_FILTERS])
def test_fragid_filters(spark, tables, where, pred):
    """Filters on _fragid select fragments at planning (and are not evaluated again): they must select exactly
    the rows the predicate selects, alone, combined, under OR and NOT; COUNT(*) too."""
    path = tables["history"]
    meta = _pl_meta(path)
    want = sorted(i for i, (_, addr) in meta.items() if pred(addr >> 32, i))
    got = sorted(r[0] for r in spark.sql(f"SELECT id FROM lance.db.history WHERE {where}").collect())
    assert got == want, f"WHERE {where}: {len(got)} rows, expected {len(want)}"
    assert spark.sql(f"SELECT count(*) FROM lance.db.history WHERE {where}").first()[0] == len(want)


def test_fragid_filter_at_an_old_version(spark, tables):
    """history@3 still has fragment 3."""
    path = tables["history"]
    want = sorted(i for i, (_, addr) in _pl_meta(path, 3).items() if addr >> 32 == 3)
    assert len(want) == 500
    got = sorted(r[0] for r in spark.sql(
        "SELECT id FROM lance.db.history VERSION AS OF 3 WHERE _fragid = 3").collect())
    assert got == want


@pytest.mark.parametrize("sql,name", [
    ("SELECT count(*) FROM lance.db.`.hidden`", ".hidden"),
    ("SELECT count(*) FROM lance.`.secret`.t", ".secret"),
    ("SELECT count(*) FROM lance.db.`a\\b`", "a\\b"),
    ("SELECT count(*) FROM lance.db.``", "``"),
], ids=["dot-table", "dot-namespace", "backslash", "empty"])
def test_refused_names_dot_backslash_empty(spark, wh, sql, name):
    """Names that start with '.', contain '\\' or are empty are refused, even where a table exists."""
    with pytest.raises(Exception) as ei:
        spark.sql(sql).collect()
    text = error_text(ei)
    assert "LANCE_INVALID_ARGUMENT" in text, text[:2000]
    if name != "``":
        assert name.replace("\\", "\\\\") in text or name in text, text[:2000]


def test_hidden_entries_are_not_listed(spark, wh):
    """A '.'-prefixed table directory cannot be named, so it is not listed either; nor a '.'-prefixed directory."""
    tables = {r["tableName"] for r in spark.sql("SHOW TABLES IN lance.db").collect()}
    namespaces = {r[0] for r in _rows(spark, "SHOW NAMESPACES IN lance")}
    listed = sorted(tables & {".hidden", "a\\b"}) + sorted(namespaces & {".secret"})
    assert not listed, f"names that are refused when queried are listed: {listed}"


NS_COLUMNS = ["time64_ns", "ts_ns", "ts_ns_offset", "dur_ns"]


def test_nanoseconds_long_option(spark, extra):
    """nanoseconds=long: nanosecond times, timestamps and durations read as their exact BIGINT nanoseconds;
    microsecond and coarser columns keep their Spark types."""
    path = extra["all_types_spark"]
    df = read(spark, path, nanoseconds="long")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert {c: types[c] for c in NS_COLUMNS} == {c: "bigint" for c in NS_COLUMNS}
    assert {c: t for c, t in types.items() if c not in NS_COLUMNS} == \
        {c: t for c, t in ALL_TYPES_MAPPING.items() if c not in NS_COLUMNS}
    got = {r[0]: tuple(r[1:]) for r in df.select("i64_notnull", *NS_COLUMNS).collect()}
    t = pl(path).to_table(columns=["i64_notnull", *NS_COLUMNS])
    raw = [t.column(0).to_pylist()] + [t.column(c).cast(pa.int64()).to_pylist() for c in NS_COLUMNS]
    want = {row[0]: tuple(row[1:]) for row in zip(*raw)}
    assert got == want
    assert any(v is not None and v % 1000 != 0 for row in want.values() for v in row), "fixture: sub-us digits"


def test_nanoseconds_truncate_is_the_default(spark, extra):
    path = extra["all_types_spark"]
    a = read(spark, path, nanoseconds="truncate").select("i64_notnull", *NS_COLUMNS)
    assert [f.dataType.simpleString() for f in a.schema.fields[1:]] == \
        [time_type(6), "timestamp_ntz", "timestamp", "interval day to second"]
    b = read(spark, path).select("i64_notnull", *NS_COLUMNS)
    assert_rows_equal(spark_rows(a), spark_rows(b), key="i64_notnull", what="nanoseconds=truncate vs default")


def test_error_bad_nanoseconds_option(spark, extra):
    with pytest.raises(Exception) as ei:
        read(spark, extra["all_types_spark"], nanoseconds="round").collect()
    text = error_text(ei)
    assert "LANCE_INVALID_ARGUMENT" in text and "round" in text, text[:2000]


# ---------------------------------------------------------------------------------------------------------------
# 11. Edge cases: as-of boundaries, two versions in one query, metadata columns across split partitions, empty
#     tables


def test_time_travel_timestamp_boundaries(spark, tables):
    """One microsecond after a commit opens it, one microsecond before opens the previous version; an instant
    without an offset is UTC (docs/reading.md). (The commit's own floor microsecond is ambiguous: not tested.)"""
    path = tables["history"]
    ns = _version_ns(path)
    for k in (2, 4):
        after, before = ns[k] // 1000 + 1, ns[k] // 1000 - 1
        assert _ids(read(spark, path, timestamp=_iso_z(after))) == _pl_ids(path, k), f"1us after v{k}"
        assert _ids(read(spark, path, timestamp=_iso_z(before))) == _pl_ids(path, k - 1), f"1us before v{k}"
        assert _ids(spark.sql(f"SELECT id FROM lance.db.history TIMESTAMP AS OF '{_sql_ts(after)}'")) == \
            _pl_ids(path, k), f"SQL 1us after v{k}"
        assert _ids(spark.sql(f"SELECT id FROM lance.db.history TIMESTAMP AS OF '{_sql_ts(before)}'")) == \
            _pl_ids(path, k - 1), f"SQL 1us before v{k}"
    mid = _mid_us(path, 3)
    no_offset = _iso_z(mid)[:-1]  # '2026-...T..:..:..ffffff' -> UTC
    assert _ids(read(spark, path, timestamp=no_offset)) == _pl_ids(path, 3)
    assert _ids(read(spark, path, timestamp=no_offset.replace("T", " "))) == _pl_ids(path, 3)


def test_two_versions_in_one_query(spark, tables):
    path = tables["history"]
    v1, v5 = set(_pl_ids(path, 1)), set(_pl_ids(path, 5))
    got = spark.sql("SELECT count(*) FROM lance.db.history VERSION AS OF 1 a "
                    "JOIN lance.db.history VERSION AS OF 5 b ON a.id = b.id").first()[0]
    assert got == len(v1 & v5)
    only_new = spark.sql("SELECT id FROM lance.db.history b WHERE NOT EXISTS "
                         "(SELECT 1 FROM lance.db.history VERSION AS OF 1 a WHERE a.id = b.id)").collect()
    assert sorted(r[0] for r in only_new) == sorted(v5 - v1)


def test_metadata_columns_across_split_partitions(spark, extra):
    """A fragment split into row ranges: _rowaddr counts offsets from the fragment's start, not the range's."""
    path = extra["big"]
    df = read(spark, path, rows_per_partition=49_999, batch_size=1000).select("_rowaddr", "_fragid", "_rowid", "id")
    assert df.rdd.getNumPartitions() >= 7
    t = pl(path).to_table(columns=["id"], with_row_address=True)
    expected = arrow_df(spark, pa.table({"_rowaddr": t.column("_rowaddr").cast(pa.int64()),
                                         "id": t.column("id")}))
    _assert_same_in_spark(df.select("_rowaddr", "id"), expected, "big _rowaddr, split partitions")
    assert df.where("_fragid != shiftright(_rowaddr, 32) OR _rowid != _rowaddr").count() == 0


def test_stable_row_ids_across_split_partitions(spark, tables):
    path = tables["stable_row_ids"]
    df = read(spark, path, rows_per_partition=97, batch_size=13).select("_rowid", "_rowaddr", "_fragid", "id")
    assert df.rdd.getNumPartitions() > 10
    assert _spark_meta(df) == _pl_meta(path)


def test_filter_on_rowid(spark, tables):
    path = tables["stable_row_ids"]
    meta = _pl_meta(path)
    some = sorted(meta.items())[::97]
    rowids = [rid for _, (rid, _) in some]
    got = spark.sql(f"SELECT id, _rowid FROM lance.db.stable_row_ids WHERE _rowid IN "
                    f"({', '.join(map(str, rowids))})").collect()
    assert sorted((r[0], r[1]) for r in got) == sorted((i, rid) for i, (rid, _) in some)


def test_empty_tables(spark, tmp_path):
    """No fragments at all (an empty write), and every row deleted: zero rows, the schema intact."""
    empty = tmp_path / "empty.lance"
    schema = pa.schema([("id", pa.int64()), ("s", pa.struct([("x", pa.int32())])), ("v", pa.list_(pa.float32()))])
    lance.write_dataset(pa.table({"id": [], "s": [], "v": []}, schema=schema), str(empty))
    gone = tmp_path / "gone.lance"
    lance.write_dataset(pa.table({"id": pa.array(range(50), pa.int64())}), str(gone))
    lance.dataset(str(gone)).delete("id >= 0")
    assert lance.dataset(str(gone)).count_rows() == 0
    for path, cols in ((empty, ["id", "s", "v"]), (gone, ["id"])):
        df = read(spark, path)
        assert df.columns == cols
        assert df.collect() == []
        assert df.count() == 0
        assert spark.sql(f"SELECT count(*), max(id) FROM lance.`{path}`").first()[:] == (0, None)
    assert read(spark, gone, version=1).count() == 50


def test_error_version_zero(spark, tables):
    with pytest.raises(Exception) as ei:
        read(spark, tables["history"], version=0).collect()
    assert "LANCE_VERSION_NOT_FOUND" in error_text(ei)
