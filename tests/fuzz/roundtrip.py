"""The three round trips of the fuzz tests and the machinery around them: writing generated cases with pylance,
running one JVM tool for a whole batch of cases, comparing Arrow values, and shrinking a failing case.

Each ``run_*`` function takes a list of ``Source`` (a case pylance wrote) and returns, per source, ``None`` when the
round trip gave exactly the values pylance reads, else a description of the first difference or error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import lance
import pyarrow as pa

import gen

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402

SEED = os.environ.get("SPARKLANCE_FUZZ_SEED", "20261123")

# What sparklance refuses on purpose, with a clear LANCE_UNSUPPORTED_FEATURE error, and documents as not written
# (docs/writing.md): such a result is counted and printed as refused, not failed. Anything else is a failure.
KNOWN_REFUSALS = [
    "a fixed-size list of null values is not supported by the sparklance file writer yet",
    "a fixed-size list of bool values is not supported by the sparklance file writer yet",
    "a packed struct with variable-width, boolean or nested children",
    "packed struct (lance-encoding:packed) with the",
]


def refused(result: Optional[str]) -> bool:
    """Whether a result is one of the known, documented refusals."""
    if result is None or not ("UnsupportedFeatureException" in result or "LANCE_UNSUPPORTED_FEATURE" in result):
        return False
    return any(k in result for k in KNOWN_REFUSALS)
TOOL_TIMEOUT_S = 1800


@dataclasses.dataclass
class Source:
    """A case written by pylance: the table at ``path`` holds ``case`` minus the columns pylance refused."""
    case: gen.Case
    path: str
    refused: List[str]


def write_source(case: gen.Case, path: str) -> Optional[Source]:
    """Writes the case with pylance; columns pylance refuses at the case's file version are dropped (pylance is the
    reference: what it cannot write is not ours to test). None when no data column is left."""
    refused: List[str] = []
    while True:
        try:
            table = case.table()
            _write(case, table, path)
            return Source(case, path, refused)
        except BaseException as e:  # pyo3's PanicException is a BaseException
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            shutil.rmtree(path, ignore_errors=True)
            bad = _refused_column(case, path)
            if bad is None:
                return None
            refused.append(f"{bad.name}: {gen.type_src(bad.type)}")
            case = case.with_columns([c for c in case.columns if c is not bad])
            if len(case.columns) == 1:
                return None


def _write(case: gen.Case, table: pa.Table, path: str) -> None:
    ds = lance.write_dataset(table, path, data_storage_version=case.version, **case.write_kwargs)
    predicate = case.delete_predicate()
    if predicate and table.num_rows:
        ds.delete(predicate)


def _refused_column(case: gen.Case, path: str) -> Optional[gen.Column]:
    for col in case.columns[1:]:
        one = case.with_columns([case.columns[0], col])
        try:
            _write(one, one.table(), path)
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return col
        finally:
            shutil.rmtree(path, ignore_errors=True)
    return None


# ----------------------------------------------------------------------------------------------------------------
# Comparing

def _plain_type(t: pa.DataType) -> pa.DataType:
    """The type with dictionaries decoded: each writer and reader builds its own dictionaries."""
    if pa.types.is_dictionary(t):
        return t.value_type
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_plain_type(f.type)) for f in t])
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_plain_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_plain_type(t.value_type)), t.list_size)
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_plain_type(t.key_type)), t.item_field.with_type(_plain_type(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_plain_type(t.value_type)))
    return t


def plain(table: pa.Table) -> pa.Table:
    cols = []
    for col in table.columns:
        # Decoded chunk by chunk: pyarrow cannot combine dictionary chunks with nulls.
        t = _plain_type(col.type)
        try:
            cols.append((col if t == col.type else col.cast(t)).combine_chunks())
        except pa.ArrowIndexError:
            # pyarrow 26 cannot cast a struct holding a list of nulls ("array slice would exceed array length",
            # pylance's own tables too, fuzz seed 11): such columns go through Python values.
            cols.append(pa.array(col.to_pylist(), t))
    return pa.Table.from_arrays(cols, names=table.column_names)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def diff(got: pa.Table, want: pa.Table) -> Optional[str]:
    """None when the tables hold the same values (NaN equals NaN, -0.0 differs from 0.0), else the first difference."""
    got, want = plain(got), plain(want)
    if got.column_names != want.column_names:
        return f"columns {got.column_names} != {want.column_names}"
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows != {want.num_rows}"
    for name in want.column_names:
        g, w = got.column(name), want.column(name)
        if g.type != w.type:
            return f"column {name}: type {g.type} != {w.type}"
        if g.equals(w) and not pa.types.is_floating(w.type):
            continue
        gl, wl = _pylist(g), _pylist(w)
        for i, (x, y) in enumerate(zip(gl, wl)):
            if not _same(x, y):
                return f"column {name} row {i}: got {_short(x)}, want {_short(y)}"
        if not g.equals(w) and not _has_float(w.type):
            return f"column {name}: arrays differ (values equal as Python objects)"
    return None


def _ints_type(t: pa.DataType) -> pa.DataType:
    """The type with times, timestamps, durations and dates as their integers, extension types as their storage:
    their Python objects cannot hold every value (nanoseconds, dates past year 9999)."""
    if isinstance(t, pa.ExtensionType):
        return _ints_type(t.storage_type)
    if pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t) or pa.types.is_date64(t):
        return pa.int64()
    if pa.types.is_time32(t) or pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_ints_type(f.type)) for f in t])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_ints_type(t.key_type)), t.item_field.with_type(_ints_type(t.item_type)))
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_ints_type(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_ints_type(t.value_type)), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_ints_type(t.value_type)))
    return t


def _pylist(col) -> list:
    if isinstance(col.type, pa.ExtensionType):
        col = pa.chunked_array([c.storage for c in col.chunks], col.type.storage_type)
    t = _ints_type(col.type)
    return (col if t == col.type else col.cast(t)).to_pylist()


def _has_float(t: pa.DataType) -> bool:
    if pa.types.is_floating(t) or isinstance(t, pa.ExtensionType):
        return True
    return any(_has_float(t.field(i).type) for i in range(t.num_fields))


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) < 300 else s[:300] + "..."


# ----------------------------------------------------------------------------------------------------------------
# The round trips

# Pairs of paths per tool run: a long budget (make fuzz) has thousands, more than one command line holds.
PAIRS_PER_RUN = 200


def _tool(main_class: str, options: List[str], pairs: List[str]) -> None:
    """Runs a JVM tool over (input, output) path pairs (a flat list), `PAIRS_PER_RUN` pairs per JVM."""
    for at in range(0, len(pairs), 2 * PAIRS_PER_RUN):
        args = [*options, *pairs[at:at + 2 * PAIRS_PER_RUN]]
        proc = subprocess.run(java_command(main_class, args), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
        if proc.returncode != 0 and main_class.endswith("ReadFiles"):
            raise AssertionError(f"{main_class} exited {proc.returncode}:\n{proc.stderr[-3000:]}")


def data_files(path: str) -> List[tuple]:
    """(data file, fragment) of the table's latest version, in row order."""
    ds = lance.dataset(path)
    return [(os.path.join(path, "data", f.path), frag) for frag in ds.get_fragments() for f in frag.data_files()]


def _json_columns(want: pa.Table, got: pa.Table, fragment) -> tuple:
    """pylance's file reader returns json columns as their stored JSONB bytes, the JVM reader (like pylance's dataset
    reader) as JSON text: such columns are compared with the fragment's live rows as pylance's dataset reads them."""
    names = [n for n in want.column_names if n in got.column_names and pa.types.is_large_binary(want.column(n).type)
             and getattr(got.column(n).type, "extension_name", None) == "arrow.json"]
    if not names:
        return want, got, None
    live = fragment.to_table(columns=["id", *names])
    ids = got.column("id").to_pylist()
    at = {i: k for k, i in enumerate(ids)}
    for n in names:
        texts = got.column(n).combine_chunks().storage.to_pylist()
        for i, v in zip(live.column("id").to_pylist(), live.column(n).combine_chunks().storage.to_pylist()):
            if texts[at[i]] != v:
                return want, got, f"column {n} (json) row id {i}: got {_short(texts[at[i]])}, want {_short(v)}"
    return want.drop_columns(names), got.drop_columns(names), None


def run_jvm_read(sources: List[Source], work: str, batch_rows: int) -> List[Optional[str]]:
    """Direction 1: pylance wrote; ReadFiles (the JVM core) reads every data file, compared with pylance's file reader."""
    from lance.file import LanceFileReader

    args, outs = [], []
    for k, src in enumerate(sources):
        files = data_files(src.path)
        pairs = [(f, os.path.join(work, f"read_{k}_{j}.arrow"), frag) for j, (f, frag) in enumerate(files)]
        args += [x for f, out, _ in pairs for x in (f, out)]
        outs.append(pairs)
    if args:
        _tool("io.sparklance.cli.ReadFiles", ["--batch-rows", str(batch_rows)], args)
    results: List[Optional[str]] = []
    for pairs in outs:
        result = None
        for f, out, frag in pairs:
            if os.path.exists(out + ".err"):
                result = f"the JVM reader failed on {os.path.basename(f)}: {open(out + '.err').read()[:2000]}"
                break
            with pa.memory_map(out) as m:
                got = pa.ipc.open_file(m).read_all()
            want = LanceFileReader(f).read_all().to_table()
            want, got, d = _json_columns(want, got, frag)
            d = d or diff(got, want)
            if d:
                result = f"the JVM reader's values differ from pylance's in {os.path.basename(f)}: {d}"
                break
        results.append(result)
    return results


def run_jvm_rewrite(sources: List[Source], work: str, version: str, options: List[str]) -> List[Optional[str]]:
    """Direction 2: pylance wrote; RewriteTable reads it with the JVM and writes it again; pylance reads our copy."""
    dsts = [os.path.join(work, f"rewrite_{k}.lance") for k in range(len(sources))]
    args = [x for src, dst in zip(sources, dsts) for x in (src.path, dst)]
    if args:
        _tool("io.sparklance.cli.RewriteTable", [*options, version], args)
    results: List[Optional[str]] = []
    for src, dst in zip(sources, dsts):
        if os.path.exists(dst + ".err"):
            results.append(f"the JVM rewrite failed: {open(dst + '.err').read()[:2000]}")
            continue
        results.append(_pylance_reads(dst, lance.dataset(src.path).to_table(), version))
    return results


def _pylance_reads(dst: str, want: pa.Table, version: str) -> Optional[str]:
    try:
        ds = lance.dataset(dst)
        if ds.data_storage_version != version:
            return f"our copy has file version {ds.data_storage_version}, not {version}"
        ds.validate()
        got = ds.to_table()
        # Arrays pylance builds from our pages are checked too: a malformed one fails here, not in validate().
        got.validate(full=True)
        if got.num_rows and "id" in got.column_names:
            got = plain(got).sort_by("id")
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return f"pylance cannot read our copy: {type(e).__name__}: {str(e)[:1500]}"
    d = diff(got, want)
    return None if d is None else f"pylance reads other values from our copy: {d}"


def spark_expected(table: pa.Table) -> pa.Table:
    """The values a Spark round trip keeps (docs/types.md): nanoseconds are truncated to microseconds, rounding
    toward negative infinity; json reads as its text (STRING) and a new table stores that text as `string`; every
    other type keeps its values and type."""
    cols = []
    for c in plain(table).columns:
        c = c.combine_chunks()
        if getattr(c.type, "extension_name", None) == "arrow.json":
            c = c.storage
        cols.append(_floor_nanos(c))
    return pa.Table.from_arrays(cols, names=table.column_names)


def _floor_nanos(arr: pa.Array) -> pa.Array:
    t = arr.type
    if (pa.types.is_timestamp(t) or pa.types.is_time64(t) or pa.types.is_duration(t)) and t.unit == "ns":
        ints = arr.cast(pa.int64()).to_pylist()
        return pa.array([None if v is None else v - v % 1000 for v in ints], pa.int64()).cast(t)
    if pa.types.is_struct(t):
        children = [_floor_nanos(c) for c in arr.flatten()]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, _floor_nanos(arr.keys), _floor_nanos(arr.items), type=t,
                                       mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
        return cls.from_arrays(arr.offsets, _floor_nanos(arr.values), type=t, mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_fixed_size_list(t):
        return pa.FixedSizeListArray.from_arrays(_floor_nanos(arr.values), type=t, mask=arr.is_null() if arr.null_count else None)
    return arr


def task_bytes(max_bytes: int) -> Dict[str, str]:
    """The session settings that cut Spark's scans into tasks of at most `max_bytes` of data files
    (`spark.sql.files.maxPartitionBytes`, with `openCostInBytes` a quarter of it), so that even small fragments are
    read by several tasks, each a range of rows."""
    return {"spark.sql.files.maxPartitionBytes": str(max_bytes), "spark.sql.files.openCostInBytes": str(max_bytes // 4)}


# Spark 4.1+ reads TIME columns, but turns a comparison of one with a literal into a data source filter only with
# its TIME type enabled (without it Parquet fails alike: UNSUPPORTED_TIME_TYPE); earlier lines ignore the key.
TIME_FILTERS = {"spark.sql.timeType.enabled": "true"}


@contextlib.contextmanager
def session_conf(spark, keys: Dict[str, str]):
    """The session settings `keys` for the duration of the block, the previous ones restored after it."""
    before = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def fragment_bytes(path: str) -> List[int]:
    """The bytes of each fragment's data files in the table's latest version."""
    return [sum(os.path.getsize(os.path.join(path, "data", f.path)) for f in frag.data_files())
            for frag in lance.dataset(path).get_fragments()]


@dataclasses.dataclass
class SplitStats:
    """How the Spark scans of a run were cut into tasks: the cases read, those whose largest fragment holds at least
    four tasks' bytes, and those read in more tasks than fragments (some fragment read by several tasks)."""
    cases: int = 0
    large_fragments: int = 0
    split_fragments: int = 0


def run_spark(spark, sources: List[Source], work: str, version: str, options: Dict[str, str],
              max_task_bytes: int, stats: Optional[SplitStats] = None) -> List[Optional[str]]:
    """Direction 3: Spark reads pylance's table, with tasks of at most `max_task_bytes` (`task_bytes`), and writes
    it with `df.write.format("lance")`; pylance reads it."""
    results: List[Optional[str]] = []
    for k, src in enumerate(sources):
        dst = os.path.join(work, f"spark_{k}.lance")
        try:
            with session_conf(spark, task_bytes(max_task_bytes)):
                df = spark.read.format("lance").load(src.path)
                if stats is not None:
                    sizes = fragment_bytes(src.path)
                    stats.cases += 1
                    stats.large_fragments += bool(sizes) and max(sizes) >= 4 * max_task_bytes
                    stats.split_fragments += df.rdd.getNumPartitions() > len(sizes)
                w = df.write.format("lance").option("file_format_version", version)
                for key, value in options.items():
                    w = w.option(key, value)
                w.save(dst)
        except Exception as e:  # noqa: BLE001 - a Spark error is a result here
            results.append(f"the Spark round trip failed: {type(e).__name__}: {str(e)[:2000]}")
            continue
        results.append(_pylance_reads(dst, spark_expected(lance.dataset(src.path).to_table()), version))
    return results


def _filter_columns(schema) -> List[str]:
    """The columns a filter can name: top-level atomic columns and the atomic fields of top-level structs."""
    from pyspark.sql import types as T

    def atomic(t) -> bool:
        return not isinstance(t, (T.ArrayType, T.MapType, T.StructType))

    out = []
    for f in schema.fields:
        if f.name == "id":
            continue
        if atomic(f.dataType):
            out.append(f"`{f.name}`")
        elif isinstance(f.dataType, T.StructType):
            out += [f"`{f.name}`.`{c.name}`" for c in f.dataType.fields if atomic(c.dataType)]
    return out


def random_filter(r, base, columns: List[str]):
    """(a random predicate on one of `columns` with literals the column holds, its text), or None when no literal
    could be made. Comparisons, IN, IS [NOT] NULL, sometimes joined with an `id` range or another predicate."""
    from pyspark.sql import functions as F

    name = r.choice(columns)
    col = F.col(name)
    values = [row[0] for row in base.select(col).where(col.isNotNull()).limit(64).collect()]
    op = r.choice(["=", "!=", "<", "<=", ">", ">=", "IN", "IS NULL", "IS NOT NULL"] if values else
                  ["IS NULL", "IS NOT NULL"])
    try:
        if op == "IS NULL":
            pred, text = col.isNull(), f"{name} IS NULL"
        elif op == "IS NOT NULL":
            pred, text = col.isNotNull(), f"{name} IS NOT NULL"
        elif op == "IN":
            vs = [r.choice(values) for _ in range(r.randint(1, 3))]
            pred, text = col.isin(*[F.lit(v) for v in vs]), f"{name} IN {_short(vs)}"
        else:
            v = r.choice(values)
            lit = F.lit(v)
            pred = {"=": col == lit, "!=": col != lit, "<": col < lit, "<=": col <= lit, ">": col > lit,
                    ">=": col >= lit}[op]
            text = f"{name} {op} {_short(v)}"
    except Exception:  # noqa: BLE001 - a value pyspark cannot make a literal of: no predicate
        return None
    shape = r.random()
    if shape < 0.2:
        bound = r.randint(0, 1500)
        pred, text = pred & (F.col("id") < bound), f"({text}) AND id < {bound}"
    elif shape < 0.3:
        bound = r.randint(0, 1500)
        pred, text = pred | (F.col("id") >= bound), f"({text}) OR id >= {bound}"
    return pred, text


@dataclasses.dataclass
class FilterStats:
    """The predicates a filter run drew, those it compared (a literal pyspark or Spark could not use is skipped),
    and those that kept rows and dropped rows."""
    drawn: int = 0
    compared: int = 0
    kept_rows: int = 0
    dropped_rows: int = 0


def run_spark_filters(spark, sources: List[Source], work: str, seed: str, max_task_bytes: int,
                      per_case: int, stats: Optional[FilterStats] = None) -> List[Optional[str]]:
    """Filtered reads: Spark reads pylance's table with a random predicate pushed to the scan (row skipping on every
    type, tasks of at most `max_task_bytes`), and must return the rows Spark's own evaluation of the predicate keeps
    on the whole table read once and checkpointed (where nothing reaches the scan)."""
    import random as _random

    results: List[Optional[str]] = []
    for src in sources:
        r = _random.Random(f"{seed}/{src.case.version}/{src.case.index}/filters")
        result = None
        try:
            with session_conf(spark, {**task_bytes(max_task_bytes), **TIME_FILTERS}):
                base = spark.read.format("lance").load(src.path).localCheckpoint()
                columns = _filter_columns(base.schema)
                total = base.count()
                for _ in range(per_case if columns else 0):
                    if stats is not None:
                        stats.drawn += 1
                    made = random_filter(r, base, columns)
                    if made is None:
                        continue
                    pred, text = made
                    try:
                        want = sorted(row.id for row in base.where(pred).select("id").collect())
                    except Exception:  # noqa: BLE001 - a literal Spark cannot compare with the column: no predicate
                        continue
                    if stats is not None:
                        stats.compared += 1
                        stats.kept_rows += bool(want)
                        stats.dropped_rows += len(want) < total
                    got = sorted(row.id for row in
                                 spark.read.format("lance").load(src.path).where(pred).select("id").collect())
                    if got != want:
                        result = (f"Spark's filtered read WHERE {text} returns {len(got)} rows, {len(want)} hold: "
                                  f"missing ids {sorted(set(want) - set(got))[:10]}, extra "
                                  f"{sorted(set(got) - set(want))[:10]}")
                        break
        except Exception as e:  # noqa: BLE001 - a Spark error is a result here
            result = f"Spark's filtered read failed: {type(e).__name__}: {str(e)[:2000]}"
        results.append(result)
    return results


# ----------------------------------------------------------------------------------------------------------------
# Shrinking

Runner = Callable[[List[Source], str], List[Optional[str]]]


def write_sources(cases: List[gen.Case], work: str) -> List[Source]:
    out = []
    for case in cases:
        src = write_source(case, os.path.join(work, f"src_{case.name}_{len(out)}_{time.monotonic_ns()}.lance"))
        if src is not None:
            out.append(src)
    return out


def shrink(source: Source, error: str, runner: Runner, budget_s: float = 120.0) -> (Source, str):
    """A smaller source that still fails, tried in rounds of candidates run as one batch (one JVM start a round)."""
    deadline = time.monotonic() + budget_s
    best, best_error = source, error
    while time.monotonic() < deadline:
        work = tempfile.mkdtemp(prefix="shrink_")
        candidates = write_sources(gen.shrink_candidates(best.case), work)
        if not candidates:
            break
        results = runner(candidates, work)
        failing = [(c, e) for c, e in zip(candidates, results) if e is not None and not refused(e)]
        if not failing:
            break
        best, best_error = failing[0]
    return best, best_error


def reproducer(source: Source, error: str, then: str) -> str:
    refused = f"# pylance refused (dropped): {source.refused}\n" if source.refused else ""
    return f"{error}\n--- reproducer ---\n{refused}{source.case.snippet()}# then: {then}\n"
