"""Scalar indexes on more than integers and strings, against pylance 14, both ways: label list indexes answer
Spark's ``array_contains`` and ``arrays_overlap`` (and ANDs of them), and B-tree, bitmap, zone map and bloom filter
indexes answer ``=``, ranges and ``IN`` on float, double, date and timestamp columns. Either side builds the index;
Spark's filtered reads must return exactly the rows SQL's semantics give on a full read (NaN equal to NaN and above
every number, -0.0 equal to 0.0, null lists and null items matching no ``array_contains``), and say in EXPLAIN which
index they used.

The tables and predicates are drawn from ``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` is the number of tables
per test (``SPARKLANCE_FUZZ_N=30 pytest tests/test_index_types.py`` for a long run).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import lance
import pyarrow as pa
import pytest
from lance.indices.builder import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import JAR, SPARK_LINE, cross_version, needs_update_and_merge, start_spark, warehouse_with  # noqa: E402

from sparklance import LanceTable  # noqa: E402

pytestmark = [cross_version,
              pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261125"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "4"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "index_types_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-index-types-tests", wh)
    yield session
    session.stop()


def spark_read(spark, path: str, where: str, catalog: bool = False) -> Tuple[List[int], str]:
    """(sorted ids of the rows Spark's filtered read returns, the executed plan), by path or through the catalog."""
    if catalog:
        df = spark.sql(f"SELECT id FROM lance.`{path}` WHERE {where}")
    else:
        df = spark.read.format("lance").load(path).where(where).select("id")
    plan = df._jdf.queryExecution().executedPlan().toString()
    return sorted(r.id for r in df.collect()), plan


def covered(path: str, name: str) -> set:
    ds = lance.dataset(path)
    frags = {f.fragment_id for f in ds.get_fragments()}
    return frags & {f for i in ds.list_indices() if i["name"] == name for f in i["fragment_ids"]}


def pylance_index(path: str, column: str, kind: str, parameters: Dict[str, object]) -> None:
    lance.dataset(path).create_scalar_index(
        column, IndexConfig(index_type=kind.lower(), parameters=parameters) if parameters else kind)


def random_parameters(r: random.Random, kind: str) -> Dict[str, object]:
    return {"BTREE": {"zone_size": r.choice([4, 16, 64])}, "BITMAP": {}, "LABEL_LIST": {},
            "ZONEMAP": {"rows_per_zone": r.choice([8, 64])},
            "BLOOMFILTER": {"number_of_items": r.choice([8, 64]), "probability": 0.01}}[kind]


def build(spark, r: random.Random, path: str, column: str, kind: str, steps: List[str]) -> None:
    """An index on `column`, built by pylance or by Spark, with small pages and zones."""
    parameters = random_parameters(r, kind)
    if r.random() < 0.5:
        pylance_index(path, column, kind, parameters)
        steps.append(f"pylance creates {kind} on {column}, {parameters}")
    else:
        LanceTable.for_path(spark, path).create_index(column, kind.lower(), **parameters)
        steps.append(f"Spark creates {kind} on {column}, {parameters}")


def report(case: str, steps: List[str], what: str) -> str:
    return f"{case} (SPARKLANCE_FUZZ_SEED={SEED})\n  steps: " + "\n         ".join(steps) + f"\n  {what}"


# ------------------------------------------------------------------------------------------------- label lists

LABELS = ["a", "b", "c", "d", "", "é", "日本", "a b", "zz"]


def random_list(r: random.Random, labels: List[str], null_rate: float):
    x = r.random()
    if x < null_rate:
        return None
    if x < null_rate + 0.1:
        return []
    items = [r.choice(labels) for _ in range(r.choice([1, 1, 2, 3, 5]))]
    if r.random() < 0.15:
        items.insert(r.randrange(len(items) + 1), None)
    return items


def list_rows(r: random.Random, first: int, n: int, labels: List[str], null_rate: float) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + n), pa.int64()),
                     "tags": pa.array([random_list(r, labels, null_rate) for _ in range(n)], pa.list_(pa.string())),
                     "nums": pa.array([None if (l := random_list(r, labels, null_rate)) is None else
                                       [None if x is None else LABELS.index(x) - 3 for x in l] for _ in range(n)],
                                      pa.list_(pa.int32())),
                     "k": pa.array([r.randrange(5) for _ in range(n)], pa.int64())})


def sql_list(vs) -> str:
    return ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in vs)


def random_list_pred(r: random.Random, labels: List[str]) -> Tuple[str, callable, int]:
    """(SQL, the oracle on one row, how many label list searches Spark's scan must make)."""
    column, domain = r.choice([("tags", labels + ["nope"]), ("nums", [LABELS.index(x) - 3 for x in labels] + [99])])

    def has(x, row):
        return row[column] is not None and x in [y for y in row[column] if y is not None]
    shape = r.random()
    if shape < 0.4:
        x = r.choice(domain)
        return f"array_contains({column}, {sql_list([x])})", lambda row: has(x, row), 1
    if shape < 0.6:
        xs = r.sample(domain, r.randint(1, 3))
        with_null = r.random() < 0.2   # a null in the literal array changes nothing where an item matches
        arr = sql_list(xs) + (", NULL" if with_null else "")
        args = (f"{column}, array({arr})", f"array({arr}), {column}")[r.random() < 0.3]
        return f"arrays_overlap({args})", lambda row: any(has(x, row) for x in xs), 1
    if shape < 0.8:
        x, y = r.sample(domain, 2)
        return (f"array_contains({column}, {sql_list([x])}) AND array_contains({column}, {sql_list([y])})",
                lambda row: has(x, row) and has(y, row), 2)
    if shape < 0.9:
        x, k = r.choice(domain), r.randrange(5)
        return f"array_contains({column}, {sql_list([x])}) AND k = {k}", lambda row: has(x, row) and row["k"] == k, 1
    x, y = r.sample(domain, 2)   # an OR is not a search
    return (f"array_contains({column}, {sql_list([x])}) OR array_contains({column}, {sql_list([y])})",
            lambda row: has(x, row) or has(y, row), 0)


def differ(where, got, want, plan):
    """What a differential failure reports: the rows missing and extra against a full scan, and the plan."""
    return (f"WHERE {where}: {len(got)} rows, a full scan has {len(want)}; missing {sorted(set(want) - set(got))[:10]}, "
            f"extra {sorted(set(got) - set(want))[:10]}\n  plan: {plan}")


def test_differential_label_lists(spark, wh):
    """Label list indexes on a list<string> and a list<int32> column (null lists, empty lists, null items), built by
    pylance or Spark, on tables with deletes, unindexed appends and sometimes stable row ids: Spark's reads with
    array_contains, arrays_overlap and ANDs of them return exactly a full scan's rows, through the index."""
    failures, stats = [], dict.fromkeys(["predicates", "searched", "with rows"], 0)
    for i in range(N):
        r = random.Random(f"{SEED}/labels/{i}")
        path = str(wh / "db" / f"labels_{i}.lance")
        labels = r.sample(LABELS, r.choice([2, 4, len(LABELS)]))
        null_rate = r.choice([0.0, 0.1, 0.4])
        n, stable = r.randint(100, 400), r.random() < 0.3
        lance.write_dataset(list_rows(r, 0, n, labels, null_rate), path, max_rows_per_file=r.choice([40, 150]),
                            enable_stable_row_ids=stable)
        steps = [f"pylance writes {n} rows, labels {labels}, null lists {null_rate}, stable row ids {stable}"]
        if r.random() < 0.6:
            lance.dataset(path).delete("id % 7 = 3")
            steps.append("pylance deletes id % 7 = 3")
        for column in ("tags", "nums"):
            build(spark, r, path, column, "LABEL_LIST", steps)
        if r.random() < 0.5:
            m = r.randint(1, 60)
            lance.write_dataset(list_rows(r, n, m, labels, null_rate), path, mode="append")
            steps.append(f"pylance appends {m} rows (not indexed)")
        if r.random() < 0.4:
            lance.dataset(path).delete("id % 11 = 5")
            steps.append("pylance deletes id % 11 = 5")
        rows = lance.dataset(path).to_table().to_pylist()
        indexed = bool(covered(path, "tags_idx"))
        for _ in range(10):
            where, keep, searches = random_list_pred(r, labels)
            want = sorted(row["id"] for row in rows if keep(row))
            got, plan = spark_read(spark, path, where, catalog=r.random() < 0.3)
            stats["predicates"] += 1
            stats["with rows"] += bool(want)
            stats["searched"] += "LABEL_LIST index" in plan
            if got != want:
                failures.append(report(f"labels case {i}", steps, differ(where, got, want, plan)))
            elif "LanceScan(" in plan and indexed and plan.count("LABEL_LIST index") != searches:
                failures.append(report(f"labels case {i}", steps, f"WHERE {where}: {plan.count('LABEL_LIST index')} "
                                       f"label list searches, not {searches}\n  plan: {plan}"))
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:6])
    assert stats["searched"] > stats["predicates"] // 2, stats


def test_label_list_in_explain_and_with_pylance(spark, wh):
    """EXPLAIN names the index and the items searched; pylance answers the same question through the same index."""
    path = str(wh / "db" / "labels_explain.lance")
    labels = [["a"], None, [], ["a", "b"], ["b", None], ["c", "a", "c"], [None], ["d"]]
    lance.write_dataset(pa.table({"id": pa.array(range(160), pa.int64()),
                                  "tags": pa.array([labels[i % 8] for i in range(160)], pa.list_(pa.string()))}),
                        path, max_rows_per_file=50)
    LanceTable.for_path(spark, path).create_index("tags", "label_list")
    ids, plan = spark_read(spark, path, "array_contains(tags, 'a') AND arrays_overlap(tags, array('b', 'x'))")
    assert ids == [i for i in range(160) if i % 8 == 3], plan
    assert "lists where array_has_any(tags, ['a']) and array_has_any(tags, ['b', 'x'])" in plan, plan
    assert "LABEL_LIST index 'tags_idx' on tags HAS ANY (a), LABEL_LIST index 'tags_idx' on tags HAS ANY (b, x)" in plan
    theirs = lance.dataset(path).to_table(filter="array_has_all(tags, ['a', 'b'])", columns=["id"])
    assert sorted(theirs.column("id").to_pylist()) == ids
    # A null item neither matches nor hides a match: ["b", None] holds 'b'; [None] holds nothing.
    assert spark_read(spark, path, "array_contains(tags, 'b')")[0] == [i for i in range(160) if i % 8 in (3, 4)]
    # A condition Spark cannot fold into a literal is not searched.
    ids, plan = spark_read(spark, path, "array_contains(tags, substring('abc', 1 + CAST(id % 1 AS INT), 1))")
    assert ids == [i for i in range(160) if i % 8 in (0, 3, 5)] and "LABEL_LIST" not in plan, plan


LABEL_ROWS = [["a"], None, [], ["a", "b"], ["b", None], ["c", "a", "c"], [None], ["d"]]


def labelled_table(path: str) -> None:
    lance.write_dataset(pa.table({"id": pa.array(range(160), pa.int64()),
                                  "tags": pa.array([LABEL_ROWS[i % 8] for i in range(160)], pa.list_(pa.string()))}),
                        path, max_rows_per_file=50)
    lance.dataset(path).create_scalar_index("tags", "LABEL_LIST")


@pytest.mark.parametrize("negated", [False, True])
def test_delete_with_array_contains(spark, wh, negated):
    """A DELETE whose condition holds array_contains (the scans it plans may search the label list) deletes exactly
    the rows the condition is true on: under NOT, a null list or one with a null item and no 'a' stays."""
    path = str(wh / "db" / f"labels_delete_{negated}.lance")
    labelled_table(path)
    spark.sql(f"DELETE FROM lance.`{path}` WHERE {'NOT ' if negated else ''}array_contains(tags, 'a')")

    def stays(tags) -> bool:
        if tags is None or ("a" not in tags and None in tags):
            return True   # the condition is NULL either way
        return ("a" in tags) == negated
    assert sorted(lance.dataset(path).to_table().column("id").to_pylist()) == \
        [i for i in range(160) if stays(LABEL_ROWS[i % 8])]


@needs_update_and_merge
def test_update_with_array_contains(spark, wh):
    path = str(wh / "db" / "labels_update.lance")
    labelled_table(path)
    spark.sql(f"UPDATE lance.`{path}` SET id = id + 1000 WHERE array_contains(tags, 'b')")
    hit = [LABEL_ROWS[i % 8] is not None and "b" in LABEL_ROWS[i % 8] for i in range(160)]
    assert sorted(lance.dataset(path).to_table().column("id").to_pylist()) == \
        sorted(i + 1000 if hit[i] else i for i in range(160))


def test_array_contains_without_the_extensions(wh, tmp_path):
    """Without sparklance's SQL extensions the scan searches no label list, and reads the same rows."""
    path = str(wh / "db" / "labels_plain.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(100), pa.int64()),
                                  "tags": pa.array([[str(i % 3), str(i % 5)] for i in range(100)],
                                                   pa.list_(pa.string()))}), path, max_rows_per_file=30)
    lance.dataset(path).create_scalar_index("tags", "LABEL_LIST")
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent(f"""
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").config("spark.jars", {str(JAR)!r})
                 .config("spark.ui.enabled", "false").getOrCreate())
        df = spark.read.format("lance").load({path!r}).where("array_contains(tags, '4')").select("id")
        print("PLAN", df._jdf.queryExecution().executedPlan().toString().replace(chr(10), " "))
        print("IDS", sorted(r.id for r in df.collect()))
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("PLAN", "IDS")))
    assert lines["IDS"] == str([i for i in range(100) if i % 5 == 4 or i % 3 == 4])
    assert "LanceScan(" in lines["PLAN"] and "LABEL_LIST" not in lines["PLAN"], lines["PLAN"]


# ------------------------------------------------------------------------------- floats, dates and timestamps

NEG_NAN = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000001))[0]
DOUBLES = [0.0, -0.0, 1.5, -1.5, 2.25, 7.0, -1e300, 1e300, math.inf, -math.inf, math.nan, NEG_NAN]


def f32(x: float) -> float:
    """`x` rounded to a 32-bit float, as a FLOAT column holds it."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


FLOATS = [f32(x) for x in (0.0, -0.0, 0.5, -0.5, 3.25, 1e30, -1e30, 0.1, math.inf, -math.inf, math.nan)]
EPOCH = dt.date(1970, 1, 1)
KEY_COLUMNS = ("f64", "f32", "d", "ts_us", "ts_ms")


def spark_cmp(a, b) -> int:
    """SQL's order of Spark: NaN equal to NaN and above all, -0.0 equal to 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return (math.isnan(a)) - (math.isnan(b))
    return (a > b) - (a < b)


class TypedDraw:
    def __init__(self, r: random.Random):
        self.r = r
        self.null_rate = r.choice([0.0, 0.1, 0.5])
        self.domain = {
            "f64": r.sample(DOUBLES, r.choice([3, 6, len(DOUBLES)])),
            "f32": r.sample(FLOATS, r.choice([3, 6, len(FLOATS)])),
            "d": [EPOCH + dt.timedelta(days=r.randint(-800, 20000)) for _ in range(r.choice([2, 8, 40]))],
            "ts_us": [dt.datetime(2020, 1, 1) + dt.timedelta(microseconds=r.randint(-10 ** 12, 10 ** 12))
                      for _ in range(r.choice([2, 8, 40]))],
            "ts_ms": [dt.datetime(1960, 1, 1) + dt.timedelta(milliseconds=r.randint(0, 10 ** 9))
                      for _ in range(r.choice([2, 8, 40]))],
        }

    def rows(self, first: int, n: int) -> pa.Table:
        def col(c):
            return [None if self.r.random() < self.null_rate else self.r.choice(self.domain[c]) for _ in range(n)]
        return pa.table({"id": pa.array(range(first, first + n), pa.int64()),
                         "f64": pa.array(col("f64"), pa.float64()), "f32": pa.array(col("f32"), pa.float32()),
                         "d": pa.array(col("d"), pa.date32()), "ts_us": pa.array(col("ts_us"), pa.timestamp("us")),
                         "ts_ms": pa.array(col("ts_ms"), pa.timestamp("ms"))})

    def literal(self, c: str):
        r = self.r
        if c == "f64":
            return r.choice(self.domain[c] if r.random() < 0.7 else DOUBLES + [0.75, -3.0])
        if c == "f32":
            return r.choice(self.domain[c] if r.random() < 0.7 else FLOATS + [0.75, -3.0, f32(0.2)])
        v = r.choice(self.domain[c])
        if r.random() < 0.3:
            v += {"d": dt.timedelta(days=r.choice([-1, 1])), "ts_us": dt.timedelta(microseconds=r.choice([-1, 1])),
                  "ts_ms": dt.timedelta(milliseconds=r.choice([-1, 1]))}[c]
        return v


def sql_value(c: str, v) -> str:
    if c in ("f64", "f32"):
        text = "NaN" if math.isnan(v) else "Infinity" if v == math.inf else "-Infinity" if v == -math.inf else \
            ("-0.0" if v == 0 and math.copysign(1, v) < 0 else repr(v))
        return f"CAST('{text}' AS {'DOUBLE' if c == 'f64' else 'FLOAT'})"
    if c == "d":
        return f"DATE'{v.isoformat()}'"
    return f"TIMESTAMP_NTZ'{v.isoformat(sep=' ')}'"


def random_typed_pred(d: TypedDraw, c: str):
    """(SQL, oracle, whether Spark's scan must search an index of `kind` for it: a function of the kind)."""
    r = d.r
    op = r.choice(["=", "=", "<", "<=", ">", ">=", "IN", "range", "IS NULL"])
    if op == "IS NULL":
        return f"{c} IS NULL", lambda row: row[c] is None, lambda kind: True
    if op == "IN":
        vs = [d.literal(c) for _ in range(r.randint(1, 4))]
        return (f"{c} IN ({', '.join(sql_value(c, v) for v in vs)})",
                lambda row: row[c] is not None and any(spark_cmp(row[c], v) == 0 for v in vs),
                # a bloom filter does not answer NaN; an IN of timestamps in ms is several ranges, which none answers
                lambda kind: c != "ts_ms" and (kind != "BLOOMFILTER" or not any(isinstance(v, float) and math.isnan(v)
                                                                               for v in vs)))
    if op == "range":
        lo, hi = d.literal(c), d.literal(c)
        lo_op, hi_op = r.choice([">", ">="]), r.choice(["<", "<="])
        tests = {">": lambda x, v: spark_cmp(x, v) > 0, ">=": lambda x, v: spark_cmp(x, v) >= 0,
                 "<": lambda x, v: spark_cmp(x, v) < 0, "<=": lambda x, v: spark_cmp(x, v) <= 0}
        return (f"{c} {lo_op} {sql_value(c, lo)} AND {c} {hi_op} {sql_value(c, hi)}",
                lambda row: row[c] is not None and tests[lo_op](row[c], lo) and tests[hi_op](row[c], hi),
                lambda kind: kind != "BLOOMFILTER")
    v = d.literal(c)
    tests = {"=": lambda x: spark_cmp(x, v) == 0, "<": lambda x: spark_cmp(x, v) < 0,
             "<=": lambda x: spark_cmp(x, v) <= 0, ">": lambda x: spark_cmp(x, v) > 0,
             ">=": lambda x: spark_cmp(x, v) >= 0}
    # `ts_ms = x` reaches the scan as a range of stored milliseconds, which a bloom filter does not answer.
    return (f"{c} {op} {sql_value(c, v)}", lambda row: row[c] is not None and tests[op](row[c]),
            lambda kind: kind != "BLOOMFILTER" or (op == "=" and c != "ts_ms" and
                                                   not (isinstance(v, float) and math.isnan(v))))


def test_differential_float_date_timestamp_keys(spark, wh):
    """B-tree, bitmap, zone map and bloom filter indexes (pylance's or Spark's) on double, float, date and timestamp
    columns holding NaN (both signs), -0.0, infinities and nulls: Spark's reads with =, ranges, IN and IS NULL
    return exactly a full scan's rows under SQL's semantics, through the index wherever it covers fragments."""
    failures, stats = [], dict.fromkeys(["predicates", "searched", "with rows"], 0)
    for i in range(N):
        r = random.Random(f"{SEED}/typed/{i}")
        d = TypedDraw(r)
        path = str(wh / "db" / f"typed_{i}.lance")
        n = r.randint(100, 400)
        lance.write_dataset(d.rows(0, n), path, max_rows_per_file=r.choice([40, 150]))
        steps = [f"pylance writes {n} rows, domains {d.domain}, null rate {d.null_rate}"]
        if r.random() < 0.5:
            lance.dataset(path).delete("id % 5 = 2")
            steps.append("pylance deletes id % 5 = 2")
        kinds = {}
        for c in KEY_COLUMNS:
            kinds[c] = r.choice(["BTREE", "BTREE", "BITMAP", "ZONEMAP", "BLOOMFILTER"])
            build(spark, r, path, c, kinds[c], steps)
        if r.random() < 0.4:
            m = r.randint(1, 50)
            lance.write_dataset(d.rows(n, m), path, mode="append")
            steps.append(f"pylance appends {m} rows (not indexed)")
        rows = lance.dataset(path).to_table().to_pylist()
        for _ in range(14):
            c = r.choice(KEY_COLUMNS)
            where, keep, must = random_typed_pred(d, c)
            if r.random() < 0.2:   # and a condition on another indexed column
                c2 = r.choice(KEY_COLUMNS)
                where2, keep2, must2 = random_typed_pred(d, c2)
                where, keep = f"{where} AND {where2}", (lambda k1, k2: lambda row: k1(row) and k2(row))(keep, keep2)
                if c2 == c:   # searched together: a bloom filter answers no pair of conditions
                    must = (lambda m1, m2: lambda kind: kind != "BLOOMFILTER" and m1(kind) and m2(kind))(must, must2)
            want = sorted(row["id"] for row in rows if keep(row))
            got, plan = spark_read(spark, path, where)
            stats["predicates"] += 1
            stats["with rows"] += bool(want)
            searched = f"index '{c}_idx' on {c} " in plan
            stats["searched"] += searched
            if got != want:
                failures.append(report(f"typed case {i}", steps, differ(where, got, want, plan)))
            elif "LanceScan(" in plan and covered(path, f"{c}_idx") and must(kinds[c]) and not searched:
                failures.append(report(f"typed case {i}", steps, f"WHERE {where}: the {kinds[c]} index on {c} "
                                       f"was not searched\n  plan: {plan}"))
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:6])
    assert stats["searched"] > stats["predicates"] // 2, stats


def test_float_keys_with_pylance(spark, wh):
    """The same answers from pylance's index and from ours, for the values where SQL and IEEE order differ."""
    path = str(wh / "db" / "floats_both.lance")
    values = [0.0, -0.0, 1.5, math.nan, NEG_NAN, math.inf, -math.inf, None, -1.5]
    lance.write_dataset(pa.table({"id": pa.array(range(180), pa.int64()),
                                  "f": pa.array([values[i % 9] for i in range(180)], pa.float64())}),
                        path, max_rows_per_file=60)
    LanceTable.for_path(spark, path).create_index("f", zone_size=4)
    for where, keep in (("f = 0.0", lambda x: x == 0.0), ("f = CAST('-0.0' AS DOUBLE)", lambda x: x == 0.0),
                        ("f > 1.0", lambda x: math.isnan(x) or x > 1.0), ("f < 0.0", lambda x: x < 0.0),
                        ("f = CAST('NaN' AS DOUBLE)", math.isnan),
                        ("f >= CAST('Infinity' AS DOUBLE)", lambda x: math.isnan(x) or x == math.inf),
                        ("f IN (1.5, -1.5)", lambda x: abs(x) == 1.5)):
        ids, plan = spark_read(spark, path, where)
        assert ids == [i for i in range(180) if values[i % 9] is not None and keep(values[i % 9])], (where, plan)
        assert "BTREE index 'f_idx' on f " in plan, plan
    assert "@f_idx(BTree)" in lance.dataset(path).scanner(filter="f > 1.0").explain_plan(True)


@pytest.mark.parametrize("kind", ["BTREE", "BITMAP", "ZONEMAP"])
def test_decimal_keys_pylance_builds(spark, wh, kind):
    """pylance indexes DECIMAL(10, 2) columns (sparklance does not build such indexes, nor does pylance build bloom
    filters on them); Spark's comparisons with decimal literals search them, by value whatever the literal's scale."""
    import decimal
    r = random.Random(f"{SEED}/decimal/{kind}")
    path = str(wh / "db" / f"decimal_{kind}.lance")
    domain = [decimal.Decimal(r.randint(-5000, 5000)) / 100 for _ in range(20)] + [decimal.Decimal("0.00")]
    values = [None if r.random() < 0.1 else r.choice(domain) for _ in range(400)]
    lance.write_dataset(pa.table({"id": pa.array(range(400), pa.int64()), "x": pa.array(values, pa.decimal128(10, 2))}),
                        path, max_rows_per_file=120)
    pylance_index(path, "x", kind, random_parameters(r, kind))
    tests = {"=": lambda a, b: a == b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
             ">=": lambda a, b: a >= b}
    for _ in range(12):
        v = r.choice(domain) + r.choice([0, 0, decimal.Decimal("0.01"), decimal.Decimal("-0.01")])
        op = r.choice(list(tests) + ["IN"])
        literal = f"CAST('{v}' AS DECIMAL(12, 3))"   # another scale than the column's
        if op == "IN":
            vs = [v, r.choice(domain)]
            where = f"x IN ({', '.join(f'{y}BD' for y in vs)})"
            want = [i for i, x in enumerate(values) if x is not None and x in vs]
        else:
            where = f"x {op} {literal}"
            want = [i for i, x in enumerate(values) if x is not None and tests[op](x, v)]
        ids, plan = spark_read(spark, path, where)
        assert ids == want, (where, plan)
        assert f"{kind} index 'x_idx' on x " in plan, (where, plan)
