"""Scalar indexes against pylance 14, both ways: pylance builds B-tree, bitmap, zone map and bloom filter indexes
and Spark's filtered reads through them must return exactly the rows a full scan holds; Spark builds B-tree,
bitmap, zone map and bloom filter indexes (CREATE INDEX) whose files must hold what pylance's own hold, and pylance must list
them, use them (``ScalarIndexQuery`` in its plan), answer through them as a full scan does and validate the table.
Then an index's life across appends, deletes, updates, merges, compaction, schema changes, time travel and DROP
INDEX, the Python API (``LanceTable.create_index`` ...), refused input, and damaged index files (the scan must fall
back to reading the fragments whole).

The differential part draws random tables, changes and predicates from ``SPARKLANCE_FUZZ_SEED``;
``SPARKLANCE_FUZZ_N`` is the number of cases per direction (small by default, so that `make test` stays quick:
``SPARKLANCE_FUZZ_N=40 pytest tests/test_scalar_indexes.py -k differential`` for a long run). The oracle for every
predicate is the predicate evaluated in Python, with SQL's semantics, on the rows pylance reads without a filter.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from lance.indices.builder import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import (SPARK_LINE, arrow_df, cross_version, lance_raises, needs_update_and_merge,  # noqa: E402
                      start_spark, warehouse_with)

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

pytestmark = [cross_version,
              pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261123"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
KEYS = ("k64", "k32", "k8", "u32", "s", "b")


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "index_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-scalar-index-tests", wh)
    yield session
    session.stop()


# ---------------------------------------------------------------------------------------------------- helpers

def pylance_btree(ds, column: str, zone_size: int, name: Optional[str] = None):
    """A BTREE index built by pylance with `zone_size` rows per page (only IndexConfig passes parameters)."""
    ds.create_scalar_index(column, IndexConfig(index_type="btree", parameters={"zone_size": zone_size}), name=name)
    return lance.dataset(ds.uri)


def spark_read(spark, path: str, where: str, version: Optional[int] = None) -> Tuple[List[int], str]:
    """(sorted ids of the rows Spark's filtered read returns, the executed plan) for one predicate."""
    reader = spark.read.format("lance")
    if version is not None:
        reader = reader.option("version", str(version))
    df = reader.load(path).where(where).select("id")
    plan = df._jdf.queryExecution().executedPlan().toString()
    return sorted(r.id for r in df.collect()), plan


def pylance_ids(path: str, where: str) -> List[int]:
    return sorted(lance.dataset(path).to_table(filter=where, columns=["id"]).column("id").to_pylist())


def uses(plan: str, name: str, column: str) -> bool:
    """Whether Spark's plan says the scan selects rows through index `name` on `column`."""
    return f"index '{name}' on {column} " in plan


def index_dir(path: str, name: str) -> Path:
    uuids = [i["uuid"] for i in lance.dataset(path).list_indices() if i["name"] == name]
    assert len(uuids) == 1, f"{path} has {len(uuids)} indexes named {name}"
    return Path(path) / "_indices" / uuids[0]


def covered(ds, name: str) -> set:
    """The fragments of the dataset's latest version that index `name` covers (any of its segments)."""
    frags = {f.fragment_id for f in ds.get_fragments()}
    return frags & {f for i in ds.list_indices() if i["name"] == name for f in i["fragment_ids"]}


def simple_table(path: str, n: int = 600, rows_per_file: int = 200, **kw) -> None:
    """id, k (int64 % 37, null every 11th), s (13 strings, null every 7th); 3 fragments by default."""
    lance.write_dataset(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "k": pa.array([i % 37 if i % 11 else None for i in range(n)], pa.int64()),
        "s": pa.array([f"s{i % 13}" if i % 7 else None for i in range(n)])}), path, max_rows_per_file=rows_per_file, **kw)


# ------------------------------------------------------------------------------------- random tables and predicates

STRINGS = ["", "a", "ab", "abc", "b", "ba", "A", "zz", "é", "ß", "日本", "a b", "k0", "k1", "k10", "k2"]


# Integer key columns: (Arrow type, values a domain always holds besides small ones, the literals' bounds). Literals
# stay off a type's very ends: Spark's optimizer rewrites a comparison with one on a narrow column (k8 < 127 is
# k8 != 127), and reads -9223372036854775808 as minus a DECIMAL.
INTS = {
    "k64": (pa.int64(), [-(2 ** 63), 2 ** 63 - 1, -(2 ** 31), 2 ** 31, 0], (-(2 ** 63) + 1, 2 ** 63 - 1)),
    "k32": (pa.int32(), [-(2 ** 31), 2 ** 31 - 1, 0], (-(2 ** 31) + 1, 2 ** 31 - 1)),
    "k8": (pa.int8(), [-128, 127, 0], (-126, 126)),
    "u32": (pa.uint32(), [0, 2 ** 31, 2 ** 32 - 1], (0, 2 ** 32 - 1)),   # BIGINT in Spark
}


class Draw:
    """Random values of one case: small key domains so that keys repeat and span B-tree pages."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.null_rate = {c: rng.choice([0.0, 0.05, 0.3, 0.9]) for c in KEYS}
        self.domain = {}
        for c, (_, ends, _) in INTS.items():
            low = 0 if c == "u32" else -40
            self.domain[c] = [rng.randint(low, low + 80) for _ in range(rng.choice([1, 3, 12, 60]))] + \
                rng.sample(ends, 2)
        self.domain["s"] = rng.sample(STRINGS, rng.choice([2, 6, len(STRINGS)]))
        self.string_type = rng.choice([pa.string(), pa.large_string()])

    def value(self, column: str):
        r = self.rng
        if r.random() < self.null_rate[column]:
            return None
        if column == "b":
            return r.random() < 0.3
        return r.choice(self.domain[column])

    def rows(self, first_id: int, n: int) -> pa.Table:
        columns = {"id": pa.array(range(first_id, first_id + n), pa.int64())}
        for c in KEYS:
            kind = INTS[c][0] if c in INTS else self.string_type if c == "s" else pa.bool_()
            columns[c] = pa.array([self.value(c) for _ in range(n)], kind)
        return pa.table(columns)

    def literal(self, column: str):
        """A value to compare with: mostly one the column holds, sometimes one near or outside its domain."""
        r = self.rng
        if column == "b":
            return r.random() < 0.5
        if column == "s":
            return r.choice(self.domain["s"]) if r.random() < 0.7 else r.choice(STRINGS + ["aa", "zzz", "k"])
        low, high = INTS[column][2]
        return min(high, max(low, r.choice(self.domain[column]) + r.choice([0, 0, 0, -1, 1, 7])))


def sql_literal(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v + "'"
    return str(v)


@dataclass(frozen=True)
class Cond:
    """One condition on a column: `op` is =, !=, <, <=, >, >=, IN or IS NULL."""
    column: str
    op: str
    values: tuple = ()

    def sql(self) -> str:
        if self.op == "IS NULL":
            return f"{self.column} IS NULL"
        if self.op == "IN":
            return f"{self.column} IN ({', '.join(map(sql_literal, self.values))})"
        return f"{self.column} {self.op} {sql_literal(self.values[0])}"

    def holds(self, row: dict) -> bool:
        x = row[self.column]
        if self.op == "IS NULL":
            return x is None
        if x is None:
            return False
        if self.op == "IN":
            return x in self.values
        v = self.values[0]
        return {"=": x == v, "!=": x != v, "<": x < v, "<=": x <= v, ">": x > v, ">=": x >= v}[self.op]

    def spark_uses_index(self) -> Optional[bool]:
        """Whether Spark's scan must answer this condition with a B-tree on its column (docs/indexes.md), or None
        where Spark's optimizer decides: it rewrites `b != false` into `b`, pushed as `b = true`, and `b = false`
        into `NOT b`, which it pushes as no comparison at all."""
        if self.column == "u32":   # widened to BIGINT in Spark; filters on it do not reach the scan yet
            return None
        if self.column == "b" and self.op == "!=":
            return True if self.values[0] is False else None
        if self.column == "b" and self.op in ("=", "IN"):
            return True if all(v is True for v in self.values) else None
        return self.op != "!="


@dataclass(frozen=True)
class Pred:
    """Conditions joined by AND (or by OR, which no index answers)."""
    conds: Tuple[Cond, ...]
    joiner: str = "AND"

    def sql(self) -> str:
        return f" {self.joiner} ".join(c.sql() for c in self.conds)

    def holds(self, row: dict) -> bool:
        results = [c.holds(row) for c in self.conds]
        return all(results) if self.joiner == "AND" else any(results)

    def spark_uses_index(self, indexes: Dict[str, "Index"]) -> Dict[str, Optional[bool]]:
        """Per indexed column the predicate names: whether Spark's scan must use its index (True), must not (False),
        or either (None: conditions that Spark's optimizer may fold together or rewrite, and what an index kind
        does not promise). Only the conditions of a top-level AND are answered by an index."""
        columns = [c for c in dict.fromkeys(c.column for c in self.conds) if c in indexes]
        if self.joiner == "OR":
            return {c: False if len(set(x.column for x in self.conds)) == len(self.conds) else None for c in columns}
        out: Dict[str, Optional[bool]] = {}
        for column in columns:
            mine = [c for c in self.conds if c.column == column]
            forms = {c.spark_uses_index() for c in mine}
            must = forms.pop() if len(forms) == 1 else None
            kind = indexes[column].kind
            if must and kind == "BLOOMFILTER" and (column == "b" or len(mine) > 1 or
                                                   mine[0].op not in ("=", "IN", "IS NULL")):
                must = None   # a bloom filter answers =, IN and IS NULL on integers and strings
            out[column] = must
        return out


def random_cond(d: Draw, column: str) -> Cond:
    r = d.rng
    ops = ["=", "IN", "IS NULL", "!="] + ([] if column == "b" else ["<", "<=", ">", ">=", "range"])
    op = r.choice(ops)
    if op == "IN":   # more than 10 values are an InSet for Spark
        n = r.choice([1, 2, 3, 4, 12])
        return Cond(column, "IN", tuple(dict.fromkeys(d.literal(column) for _ in range(n))))
    if op == "IS NULL":
        return Cond(column, "IS NULL")
    if op == "range":   # both ends, as two conditions on one column
        lo, hi = sorted([d.literal(column), d.literal(column)])
        return (Cond(column, r.choice([">", ">="]), (lo,)), Cond(column, r.choice(["<", "<="]), (hi,)))
    return Cond(column, op, (d.literal(column),))


def random_pred(d: Draw, indexed: Sequence[str]) -> Pred:
    """Mostly predicates on indexed columns: one condition, a range, or an AND over two columns."""
    r = d.rng
    first = r.choice(list(indexed)) if r.random() < 0.85 else r.choice(KEYS)
    conds = random_cond(d, first)
    conds = conds if isinstance(conds, tuple) else (conds,)
    shape = r.random()
    if shape < 0.35:
        more = random_cond(d, r.choice(KEYS))
        conds += more if isinstance(more, tuple) else (more,)
    elif shape < 0.42:
        other = random_cond(d, r.choice(KEYS))
        return Pred((conds[0], other[0] if isinstance(other, tuple) else other), "OR")
    return Pred(conds)


def truth(rows: List[dict], pred: Pred) -> List[int]:
    return sorted(r["id"] for r in rows if pred.holds(r))


# --------------------------------------------------------------------------------------------- differential cases

@dataclass(frozen=True)
class Index:
    name: str
    kind: str   # as sparklance names it: BTREE, BITMAP, ZONEMAP, BLOOMFILTER

    @property
    def pylance_kind(self) -> str:
        """The kind as pylance's plans name it, e.g. `@k_idx(BTree)`."""
        return {"BTREE": "BTree", "BITMAP": "Bitmap", "ZONEMAP": "ZoneMap", "BLOOMFILTER": "BloomFilter"}[self.kind]


def random_parameters(r: random.Random, kind: str) -> Dict[str, object]:
    """Small pages and zones, so that keys and nulls span several of them."""
    return {"BTREE": {"zone_size": r.choice([8, 16, 64])}, "BITMAP": {},
            "ZONEMAP": {"rows_per_zone": r.choice([16, 64])},
            "BLOOMFILTER": {"number_of_items": r.choice([16, 64]), "probability": 0.01}}[kind]


def pylance_index(path: str, column: str, kind: str, parameters: Dict[str, object], name: Optional[str] = None):
    lance.dataset(path).create_scalar_index(
        column, IndexConfig(index_type=kind.lower(), parameters=parameters) if parameters else kind, name=name)


@dataclass
class Case:
    """One random table and what was done to it, for a failure report that can be replayed."""
    index: int
    path: str
    steps: List[str]
    stable_row_ids: bool = False

    def report(self, what: str) -> str:
        return f"case {self.index} (SPARKLANCE_FUZZ_SEED={SEED}), table {self.path}\n  steps: " + \
            "\n         ".join(self.steps) + f"\n  {what}"


def build_random_table(d: Draw, path: str, case: Case) -> int:
    """A pylance table of several fragments, sometimes with stable row ids, with rows deleted before any index;
    returns the next free id."""
    r = d.rng
    n = r.randint(150, 500)
    rows_per_file = r.choice([40, 90, 200])
    stable = case.stable_row_ids = r.random() < 0.25
    lance.write_dataset(d.rows(0, n), path, max_rows_per_file=rows_per_file, enable_stable_row_ids=stable)
    case.steps.append(f"pylance writes ids 0..{n - 1}, max_rows_per_file={rows_per_file}, stable row ids={stable}")
    if r.random() < 0.6:
        m = r.choice([5, 7, 3])
        lance.dataset(path).delete(f"id % {m} = 1")
        case.steps.append(f"pylance deletes id % {m} = 1")
    return n


def change_randomly(spark, d: Draw, path: str, case: Case, next_id: int, indexes: Dict[str, Index]) -> int:
    """Changes after the indexes exist: appends (pylance or Spark), deletes (pylance or Spark), updates (Spark),
    index upkeep (pylance delta segments or merges, sparklance OPTIMIZE INDEX) and compaction (pylance's or
    sparklance's)."""
    r = d.rng
    t = LanceTable.for_path(spark, path)
    for _ in range(r.randint(1, 4)):
        step = r.choice(["append", "append", "delete", "compact", "index"] + (["update"] if SPARK_LINE >= (3, 5) else []))
        if step == "append":
            n = r.randint(1, 120)
            rows = d.rows(next_id, n)
            if r.random() < 0.5:
                lance.write_dataset(rows, path, mode="append", max_rows_per_file=r.choice([30, 200]))
                case.steps.append(f"pylance appends ids {next_id}..{next_id + n - 1}")
            else:
                # pyspark takes no uint32 (nor, before 3.5, large_string) from Arrow; Spark reads and writes the
                # columns as BIGINT and STRING.
                rows = rows.cast(pa.schema([pa.field(f.name, pa.int64() if f.name == "u32" else
                                                     pa.string() if f.type == pa.large_string() else f.type)
                                            for f in rows.schema]))
                arrow_df(spark, rows).write.format("lance").mode("append").save(path)
                case.steps.append(f"Spark appends ids {next_id}..{next_id + n - 1}")
            next_id += n
        elif step == "delete":
            cond = random_cond(d, r.choice(KEYS))
            where = cond.sql() if isinstance(cond, Cond) else f"{cond[0].sql()} AND {cond[1].sql()}"
            if r.random() < 0.5:
                lance.dataset(path).delete(where)
                case.steps.append(f"pylance deletes {where}")
            else:
                t.delete(where)
                case.steps.append(f"Spark deletes {where}")
        elif step == "update":   # moves the rows to new fragments; on stable row ids they keep their ids
            cond = random_cond(d, r.choice(KEYS))
            where = cond.sql() if isinstance(cond, Cond) else f"{cond[0].sql()} AND {cond[1].sql()}"
            column = r.choice(KEYS)
            value = d.literal(column) if r.random() < 0.8 else None
            t.update(where, {column: "NULL" if value is None else sql_literal(value)})
            case.steps.append(f"Spark UPDATE SET {column} = {value} WHERE {where}")
        elif step == "compact":
            if r.random() < 0.5:
                lance.dataset(path).optimize.compact_files(target_rows_per_fragment=r.choice([100, 10_000]))
                case.steps.append("pylance compact_files")
            else:
                target = r.choice([100, 10_000])
                t.optimize(target_rows_per_fragment=target).collect()
                case.steps.append(f"Spark OPTIMIZE target_rows_per_fragment={target}")
        else:
            if r.random() < 0.5:   # ours, also of pylance's indexes
                name = r.choice(sorted(i.name for i in indexes.values()))
                t.optimize_index(name)
                case.steps.append(f"Spark OPTIMIZE INDEX {name}")
            else:
                merge = r.random() < 0.5
                lance.dataset(path).optimize.optimize_indices(**({} if merge else {"num_indices_to_merge": 0}))
                case.steps.append(f"pylance optimize_indices({'' if merge else 'num_indices_to_merge=0'})")
    return next_id


def check_predicates(spark, d: Draw, case: Case, indexes: Dict[str, Index], spark_built: bool,
                     stats: Dict[str, int]) -> List[str]:
    """Every predicate's rows from Spark and from pylance against the oracle, and index use in both plans; counts
    predicates, those Spark answered through an index and those with rows in `stats`."""
    path = case.path
    ds = lance.dataset(path)
    rows = ds.to_table().to_pylist()
    coverage = {c: covered(ds, i.name) for c, i in indexes.items()}
    failures = []
    for _ in range(12):
        pred = random_pred(d, sorted(indexes))
        where = pred.sql()
        want = truth(rows, pred)
        got, plan = spark_read(spark, path, where)
        stats["predicates"] += 1
        stats["through an index"] += " index '" in plan
        stats["with rows"] += bool(want)
        if got != want:
            failures.append(case.report(f"Spark WHERE {where}: {len(got)} rows, a full scan has {len(want)}; "
                                        f"missing {sorted(set(want) - set(got))[:10]}, extra "
                                        f"{sorted(set(got) - set(want))[:10]}\n  plan: {plan}"))
            continue
        # A predicate Spark folds to false reads nothing: there is no scan to look at.
        expected = pred.spark_uses_index(indexes) if "LanceScan(" in plan else {}
        stats["must use an index"] += any(must and coverage[column] for column, must in expected.items())
        for column, must in expected.items():
            index = indexes[column]
            if must and coverage[column] and not uses(plan, index.name, column):
                failures.append(case.report(f"Spark WHERE {where}: {index.kind} index {index.name} covers fragments "
                                            f"{sorted(coverage[column])} but the scan does not use it\n  plan: {plan}"))
            if must is False and uses(plan, index.name, column):
                failures.append(case.report(f"Spark WHERE {where}: the scan uses {index.name}, which cannot "
                                            f"answer this predicate\n  plan: {plan}"))
        theirs = pylance_ids(path, where)
        if theirs != want:
            failures.append(case.report(f"pylance WHERE {where} ({'our' if spark_built else 'its'} index): "
                                        f"{len(theirs)} rows, a full scan has {len(want)}"))
        if spark_built:
            first = pred.conds[0]
            index = indexes.get(first.column)
            # pylance, like Spark, makes `b = false` into `NOT b`, which its zone maps do not answer.
            plain = first.op in (("=",) if index and index.kind == "BLOOMFILTER" else ("=", "<", "<=", ">", ">=")) \
                and first.values != (False,)
            if pred.joiner == "AND" and plain and index and coverage[first.column]:
                explained = ds.scanner(filter=where, columns=["id"]).explain_plan(True)
                if f"@{index.name}({index.pylance_kind})" not in explained or "ScalarIndexQuery" not in explained:
                    failures.append(case.report(f"pylance does not use index {index.name} for {where}:\n"
                                                f"{explained}"))
    return failures


def assert_through_indexes(stats: Dict[str, int]) -> None:
    """The differential runs read through an index wherever the index rules (`Pred.spark_uses_index`) say an index
    covering fragments must answer. How many predicates that is depends on the draw, not on sparklance: a table
    whose only index is on `u32` (whose filters do not reach the scan) or a bloom filter (which answers no range)
    has few or none (seed 111 at N=1: none of 24; seed 9 at N=3: 23 of 72), so no fixed share of all predicates is
    required."""
    assert stats["through an index"] >= stats["must use an index"], stats


def test_differential_pylance_builds_spark_reads(spark, wh):
    """pylance builds B-tree, bitmap, zone map and bloom filter indexes (small pages and zones, so that keys and
    nulls span several); Spark's reads through them must hold exactly the rows of a full scan, and say in EXPLAIN
    that they used them wherever they cover fragments."""
    failures, stats = [], dict.fromkeys(["predicates", "must use an index", "through an index", "with rows"], 0)
    for i in range(N):
        d = Draw(random.Random(f"{SEED}/pylance-builds/{i}"))
        case = Case(i, str(wh / "db" / f"pyl_{i}.lance"), [])
        next_id = build_random_table(d, case.path, case)
        indexes = {}
        for c in d.rng.sample(KEYS, d.rng.randint(1, len(KEYS))):
            # pylance has no bloom filters on booleans
            kind = d.rng.choice(["BTREE", "BTREE", "BITMAP", "ZONEMAP"] + ([] if c == "b" else ["BLOOMFILTER"]))
            parameters = random_parameters(d.rng, kind)
            pylance_index(case.path, c, kind, parameters)
            indexes[c] = Index(f"{c}_idx", kind)
            case.steps.append(f"pylance creates {kind} {c}_idx on {c}, {parameters}")
        failures += check_predicates(spark, d, case, indexes, spark_built=False, stats=stats)
        change_randomly(spark, d, case.path, case, next_id, indexes)
        failures += check_predicates(spark, d, case, indexes, spark_built=False, stats=stats)
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:8])
    assert_through_indexes(stats)


def index_files(path: str, name: str) -> Tuple[pa.Table, pa.Table]:
    """The B-tree `name`'s page_lookup and page_data."""
    d = index_dir(path, name)
    return (LanceFileReader(str(d / "page_lookup.lance")).read_all().to_table(),
            LanceFileReader(str(d / "page_data.lance")).read_all().to_table())


def roaring(data: bytes, at: int = 0) -> Tuple[set, int]:
    """(the values, the end offset) of a portable 32-bit RoaringBitmap at `at` of `data`, with or without run
    containers (docs/dev/scalar-indexes.md §1, §2)."""
    import struct

    cookie = struct.unpack_from("<I", data, at)[0]
    at += 4
    runs = cookie & 0xFFFF == 12347
    if runs:
        size = (cookie >> 16) + 1
        flags = data[at:at + (size + 7) // 8]
        at += (size + 7) // 8
    else:
        assert cookie == 12346, f"not a portable RoaringBitmap (cookie {cookie})"
        size = struct.unpack_from("<I", data, at)[0]
        at += 4
    headers = [struct.unpack_from("<HH", data, at + 4 * k) for k in range(size)]
    at += 4 * size
    if not runs or size >= 4:   # the offset table
        at += 4 * size
    values = set()
    for k, (key, card) in enumerate(headers):
        if runs and flags[k // 8] >> (k % 8) & 1:
            n = struct.unpack_from("<H", data, at)[0]
            for start, length in (struct.unpack_from("<HH", data, at + 2 + 4 * j) for j in range(n)):
                values.update((key << 16) | v for v in range(start, start + length + 1))
            at += 2 + 4 * n
        elif card + 1 <= 4096:
            values.update((key << 16) | v for v in struct.unpack_from(f"<{card + 1}H", data, at))
            at += 2 * (card + 1)
        else:
            words = struct.unpack_from("<1024Q", data, at)
            values.update((key << 16) | (64 * w + b) for w, word in enumerate(words) for b in range(64) if word >> b & 1)
            at += 8192
    return values, at


def row_id_tree_map(data: bytes) -> Dict[int, object]:
    """A RowIdTreeMap (docs/dev/scalar-indexes.md §2): {fragment id: its offsets, or "all"}."""
    import struct

    n = struct.unpack_from("<I", data, 0)[0]
    at, out = 4, {}
    for _ in range(n):
        fragment, size = struct.unpack_from("<II", data, at)
        at += 8
        out[fragment] = roaring(data, at)[0] if size else "all"
        at += size
    return out


def same_files(ours: Path, theirs: Path) -> List[str]:
    """How the files of two index directories differ: names, rows (a B-tree's ids in any order among equal
    values, as pylance does not fix it; bitmaps as the sets they hold, which sparklance may encode with run
    containers), schema metadata and global buffers past the schema (as sets too)."""
    problems = []
    names = sorted(p.name for p in ours.iterdir())
    if names != sorted(p.name for p in theirs.iterdir()):
        return [f"files {names}, pylance's {sorted(p.name for p in theirs.iterdir())}"]
    for name in names:
        a, b = LanceFileReader(str(ours / name)), LanceFileReader(str(theirs / name))
        x, y = a.read_all().to_table(), b.read_all().to_table()
        if name == "page_data.lance":
            pairs = [sorted(zip(map(repr, t.column("values").to_pylist()), t.column("ids").to_pylist())) for t in (x, y)]
            if x.column("values") != y.column("values") or pairs[0] != pairs[1]:
                problems.append(f"{name}: other values or ids")
        elif "bitmaps" in x.column_names:
            decoded = [(t.column("keys").to_pylist(), [row_id_tree_map(b) for b in t.column("bitmaps").to_pylist()])
                       for t in (x, y)]
            if decoded[0] != decoded[1]:
                problems.append(f"{name}: other keys or bitmaps\n{decoded[0]}\npylance's:\n{decoded[1]}")
        elif not x.equals(y):
            problems.append(f"{name}: other rows\n{x}\npylance's:\n{y}")
        if x.schema.metadata != y.schema.metadata:
            problems.append(f"{name}: schema metadata {x.schema.metadata}, pylance's {y.schema.metadata}")
        buffers = [len(r.metadata().global_buffers) for r in (a, b)]
        if buffers[0] != buffers[1]:
            problems.append(f"{name}: {buffers[0]} global buffers, pylance's {buffers[1]}")
        elif any(row_id_tree_map(a.read_global_buffer(k)) != row_id_tree_map(b.read_global_buffer(k))
                 for k in range(1, buffers[0])):
            problems.append(f"{name}: the row sets in global buffers past the schema differ")
    return problems


def test_differential_spark_builds_pylance_reads(spark, wh):
    """Spark builds B-tree, bitmap, zone map and bloom filter indexes (LanceTable.create_index); pylance must list
    them, find the files it writes itself for the same rows, use them, answer through them as a full scan does, keep them up
    (merge, remap) and validate the table."""
    failures, stats = [], dict.fromkeys(["predicates", "must use an index", "through an index", "with rows"], 0)
    for i in range(N):
        d = Draw(random.Random(f"{SEED}/spark-builds/{i}"))
        case = Case(i, str(wh / "db" / f"ours_{i}.lance"), [])
        next_id = build_random_table(d, case.path, case)
        twin = str(wh / "db" / f"ours_{i}_pylance.lance")
        shutil.copytree(case.path, twin)
        t = LanceTable.for_path(spark, case.path)
        indexes = {}
        live = lance.dataset(case.path).count_rows()
        for c in d.rng.sample(KEYS, d.rng.randint(1, len(KEYS))):
            # There are no bloom filters on booleans.
            kind = d.rng.choice(["BTREE", "BTREE", "BITMAP", "ZONEMAP"] + ([] if c == "b" else ["BLOOMFILTER"]))
            parameters = random_parameters(d.rng, kind)
            name = f"{c}_by_spark"
            made = t.create_index(c, kind.lower(), name=name, **parameters)
            case.steps.append(f"Spark creates {kind} {name} on {c}, {parameters}")
            assert (made["name"], made["type"], made["columns"]) == (name, kind, [c])
            indexes[c] = Index(name, kind)
            pylance_index(twin, c, kind, parameters, name=name)
            failures += [case.report(f"index {name}: {p}")
                         for p in same_files(index_dir(case.path, name), index_dir(twin, name))]
        ds = lance.dataset(case.path)
        described = {x.name: x for x in ds.describe_indices()}
        for c, index in indexes.items():
            x = described.get(index.name)
            package = "lance.index.pb" if index.kind == "BLOOMFILTER" else "lance.table"
            if x is None or x.field_names != [c] or x.num_rows_indexed != live or \
                    x.type_url != f"/{package}.{index.pylance_kind}IndexDetails":
                failures.append(case.report(f"pylance describes {index.name} as {x}; want field {c}, {live} rows"))
        ds.validate()
        failures += check_predicates(spark, d, case, indexes, spark_built=True, stats=stats)
        change_randomly(spark, d, case.path, case, next_id, indexes)
        lance.dataset(case.path).validate()
        failures += check_predicates(spark, d, case, indexes, spark_built=True, stats=stats)
    print(f"\nseed {SEED}, {N} tables: {stats}")
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:8])
    assert_through_indexes(stats)


# ------------------------------------------------------------------------------------------------------ lifecycle

# Options of the kinds sparklance builds that make keys and nulls span several pages or zones.
SMALL = {"btree": {"zone_size": 16}, "bitmap": {}, "zonemap": {"rows_per_zone": 16}}


def truth_of(path: str, where: Callable[[dict], bool], version: Optional[int] = None) -> List[int]:
    """The ids of the rows of a full pylance read (no filter, so no index) for which `where` holds."""
    return sorted(r["id"] for r in lance.dataset(path, version=version).to_table().to_pylist() if where(r))


def test_python_api_create_list_optimize_drop(spark, wh):
    path = str(wh / "db" / "api.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    before = t.version()
    made = t.create_index("k", zone_size=64)
    assert (made["name"], made["type"], made["columns"], made["fragments"]) == ("k_idx", "BTREE", ["k"], 3)
    assert t.version() == before + 1
    listed = t.list_indices()
    assert [(i["name"], i["type"], i["columns"], i["uuid"], i["fragments"]) for i in listed] == \
        [("k_idx", "BTREE", ["k"], made["uuid"], 3)]
    assert listed[0]["created_at"] is not None
    assert [(i["name"], i["type"], i["uuid"], i["fields"], set(i["fragment_ids"]), i["version"])
            for i in lance.dataset(path).list_indices()] == [("k_idx", "BTree", made["uuid"], ["k"], {0, 1, 2}, before)]

    # An append is not indexed: its rows are scanned, the others still come through the index.
    lance.write_dataset(pa.table({"id": pa.array([1000, 1001], pa.int64()), "k": pa.array([5, 1000], pa.int64()),
                                  "s": ["new", None]}), path, mode="append")
    assert t.list_indices()[0]["fragments"] == 3
    for where, want in (("k = 1000", [1001]), ("k = 5", truth_of(path, lambda r: r["k"] == 5))):
        ids, plan = spark_read(spark, path, where)
        assert ids == want and 1000 in truth_of(path, lambda r: r["k"] == 5) and uses(plan, "k_idx", "k"), plan

    optimized = t.optimize_index("k_idx")
    assert (optimized["name"], optimized["columns"], optimized["fragments"]) == ("k_idx", ["k"], 4)
    assert optimized["uuid"] != made["uuid"]
    assert [(i["uuid"], set(i["fragment_ids"])) for i in lance.dataset(path).list_indices()] == \
        [(optimized["uuid"], {0, 1, 2, 3})]
    ids, plan = spark_read(spark, path, "k = 1000")
    assert ids == [1001] and "index 'k_idx' on k = 1000" in plan
    ds = lance.dataset(path)
    assert "ScalarIndexQuery: query=[k = 1000]@k_idx(BTree)" in ds.scanner(filter="k = 1000").explain_plan(True)
    assert pylance_ids(path, "k = 1000") == [1001] and pylance_ids(path, "k = 5") == truth_of(path, lambda r: r["k"] == 5)
    ds.validate()

    version = t.drop_index("k_idx")
    assert version == t.version() and t.list_indices() == [] and lance.dataset(path).list_indices() == []
    ids, plan = spark_read(spark, path, "k = 1000")
    assert ids == [1001] and "using" not in plan
    with pytest.raises(sparklance.InvalidArgumentError, match="has no index named 'k_idx'. Its indexes: none."):
        t.drop_index("k_idx")
    with pytest.raises(sparklance.InvalidArgumentError, match="has no index named 'nope'"):
        t.optimize_index("nope")


@pytest.mark.parametrize("kind, option, file, key", [("btree", "zone_size", "page_lookup.lance", b"batch_size"),
                                                     ("zonemap", "rows_per_zone", "zonemap.lance", b"rows_per_zone")])
def test_optimize_index_keeps_the_options(spark, wh, kind, option, file, key):
    path = str(wh / "db" / f"options_{kind}.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    t.create_index("k", kind, **{option: 16})
    assert LanceFileReader(str(index_dir(path, "k_idx") / file)).read_all().to_table().schema.metadata[key] == b"16"
    t.optimize_index("k_idx")
    assert LanceFileReader(str(index_dir(path, "k_idx") / file)).read_all().to_table().schema.metadata[key] == b"16"


def test_sql_statements(spark, wh):
    path = str(wh / "db" / "sql.lance")
    simple_table(path)
    rows = spark.sql("ALTER TABLE lance.db.sql CREATE INDEX s_idx USING BTREE (s) WITH (zone_size = 16)").collect()
    assert [(r.name, r.type, r.columns, r.fragments) for r in rows] == [("s_idx", "BTREE", ["s"], 3)]
    uuid = rows[0].uuid
    for statement in ("SHOW INDEXES FROM lance.db.sql", "SHOW INDEXES IN lance.db.sql"):
        # lance-spark's columns (pylance's index statistics), then ours.
        assert [tuple(r) for r in spark.sql(statement).collect()] == \
            [("s_idx", ["s"], "btree", 3, 600, 0, 0, 1, [uuid], rows[0].created_at)]
        stats = lance.dataset(path).stats.index_stats("s_idx")
        assert (stats["num_indexed_fragments"], stats["num_indexed_rows"]) == (3, 600)
    lookup, _ = index_files(path, "s_idx")
    assert lookup.schema.metadata[b"batch_size"] == b"16"

    with pytest.raises(Exception, match="already has an index named 's_idx'"):
        spark.sql("ALTER TABLE lance.db.sql CREATE INDEX s_idx USING btree (s)")
    replaced = spark.sql("ALTER TABLE lance.db.sql CREATE INDEX s_idx USING btree (s) WITH (replace = true)").collect()
    assert replaced[0].uuid != uuid
    assert [i["uuid"] for i in lance.dataset(path).list_indices()] == [replaced[0].uuid]

    ids, plan = spark_read(spark, path, "s = 's3'")
    assert ids == truth_of(path, lambda r: r["s"] == "s3") and "index 's_idx' on s = s3" in plan
    explained = spark.sql("EXPLAIN SELECT id FROM lance.db.sql WHERE s IN ('s1', 's2')").collect()[0][0]
    assert "using BTREE index 's_idx' on s IN (s1, s2)" in explained

    version = spark.sql("DROP INDEX s_idx ON lance.db.sql").collect()[0][0]
    assert version == lance.dataset(path).version and spark.sql("SHOW INDEXES FROM lance.db.sql").collect() == []
    spark.sql("ALTER TABLE lance.db.sql CREATE INDEX `k idx` USING btree (k)")
    assert [i["name"] for i in lance.dataset(path).list_indices()] == ["k idx"]
    spark.sql("ALTER TABLE lance.db.sql DROP INDEX `k idx`")
    assert lance.dataset(path).list_indices() == []
    lance.dataset(path).validate()


def test_vacuum_removes_the_files_of_a_dropped_index(spark, wh):
    path = str(wh / "db" / "vacuum.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    uuid = t.create_index("k")["uuid"]
    t.drop_index("k_idx")
    time.sleep(0.05)
    t.vacuum(retain_hours=0).collect()
    assert not (Path(path) / "_indices" / uuid).exists()


@pytest.mark.parametrize("kind", ["btree", "bitmap", "zonemap"])
def test_delete_keeps_the_index(spark, wh, kind):
    path = str(wh / "db" / f"del_{kind}.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    uuid = t.create_index("k", kind, **SMALL[kind])["uuid"]
    t.delete("k = 5 OR id < 50")
    lance.dataset(path).delete("k = 6")
    assert [(i["uuid"], i["fragments"]) for i in t.list_indices()] == [(uuid, 3)]
    for where, keep in (("k = 5", lambda r: r["k"] == 5), ("k = 6", lambda r: r["k"] == 6),
                        ("k IN (7, 8)", lambda r: r["k"] in (7, 8)), ("k IS NULL", lambda r: r["k"] is None),
                        ("k <= 3", lambda r: r["k"] is not None and r["k"] <= 3)):
        want = truth_of(path, keep)
        ids, plan = spark_read(spark, path, where)
        assert ids == want and uses(plan, "k_idx", "k"), (where, plan)
        assert pylance_ids(path, where) == want
    assert spark_read(spark, path, "k = 5")[0] == [] and min(truth_of(path, lambda r: r["k"] is None)) >= 50
    lance.dataset(path).validate()


@needs_update_and_merge
@pytest.mark.parametrize("kind", ["btree", "bitmap", "zonemap"])
def test_update_and_merge_move_rows_out_of_the_index(spark, wh, kind):
    path = str(wh / "db" / f"upd_{kind}.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    t.create_index("k", kind, **SMALL[kind])
    moved = truth_of(path, lambda r: r["k"] == 5)
    t.update("k = 5", {"k": "500"})
    merged = spark.createDataFrame([(1, 777, "m"), (2, 777, "m"), (5000, 777, "new")], "id BIGINT, k BIGINT, s STRING")
    t.merge(merged, "t.id = s.id").when_matched_update_all().when_not_matched_insert_all().execute()
    assert t.list_indices()[0]["fragments"] == 3
    checks = (("k = 5", []), ("k = 500", moved), ("k = 777", [1, 2, 5000]),
              ("k IN (1, 2, 500)", truth_of(path, lambda r: r["k"] in (1, 2, 500))),
              ("k > 30", truth_of(path, lambda r: r["k"] is not None and r["k"] > 30)),
              ("k IS NULL", truth_of(path, lambda r: r["k"] is None)))
    for where, want in checks:
        ids, plan = spark_read(spark, path, where)
        assert ids == want and uses(plan, "k_idx", "k"), (where, plan)
        assert pylance_ids(path, where) == want, where
    lance.dataset(path).validate()


def test_schema_changes(spark, wh):
    """Dropping an indexed column drops its index (as pylance does); renaming one keeps it."""
    path = str(wh / "db" / "schema.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    t.create_index("k")
    t.create_index("s", zone_size=16)
    spark.sql("ALTER TABLE lance.db.schema DROP COLUMN k")
    assert [i["name"] for i in t.list_indices()] == ["s_idx"]
    assert [i["name"] for i in lance.dataset(path).list_indices()] == ["s_idx"]
    spark.sql("ALTER TABLE lance.db.schema RENAME COLUMN s TO label")
    assert [(i["name"], i["columns"]) for i in t.list_indices()] == [("s_idx", ["label"])]
    ids, plan = spark_read(spark, path, "label = 's4'")
    want = truth_of(path, lambda r: r["label"] == "s4")
    assert ids == want and "index 's_idx' on label = s4" in plan
    ds = lance.dataset(path)
    assert "@s_idx(BTree)" in ds.scanner(filter="label = 's4'").explain_plan(True) and pylance_ids(path, "label = 's4'") == want
    ds.validate()


def compact_fragment_1(spark, path: str, kind: str) -> LanceTable:
    """Fragments 0..3 of 200 rows with index k_idx; half of fragment 1 deleted, then compacted into fragment 4."""
    simple_table(path, n=800)
    t = LanceTable.for_path(spark, path)
    t.create_index("k", kind, **SMALL[kind])
    t.delete("id >= 200 AND id < 400 AND id % 2 = 0")
    r = t.optimize(target_rows_per_fragment=200).collect()[0]
    assert (r.fragments_removed, r.fragments_added) == (1, 1)
    assert [f.fragment_id for f in lance.dataset(path).get_fragments()] == [0, 2, 3, 4]
    return t


@pytest.mark.parametrize("kind", ["btree", "bitmap", "zonemap"])
def test_compaction_remaps_or_leaves_the_index(spark, wh, kind):
    """A compaction remaps a B-tree or bitmap (a new uuid covering the new fragment in place of the old one, as
    pylance's compact_files does) and keeps a zone map's bitmap as it is (nor does pylance remap those): the zone
    map still covers the fragments it was built over that remain, and the new fragment is read whole. The
    fragments stay in id order, which pylance's validate() requires."""
    path = str(wh / "db" / f"compact_{kind}.lance")
    t = compact_fragment_1(spark, path, kind)
    ds = lance.dataset(path)
    ds.validate()
    remapped = kind != "zonemap"
    assert [(i["name"], set(i["fragment_ids"])) for i in ds.list_indices()] == \
        [("k_idx", {0, 2, 3, 4} if remapped else {0, 1, 2, 3})]
    assert covered(ds, "k_idx") == ({0, 2, 3, 4} if remapped else {0, 2, 3})
    for where, keep in (("k = 5", lambda r: r["k"] == 5), ("k IS NULL", lambda r: r["k"] is None),
                        ("k >= 30 AND k < 33", lambda r: r["k"] is not None and 30 <= r["k"] < 33)):
        want = truth_of(path, keep)
        ids, plan = spark_read(spark, path, where)
        assert ids == want and uses(plan, "k_idx", "k"), (where, plan)
        assert pylance_ids(path, where) == want, where
        assert f"@k_idx({Index('k_idx', kind.upper()).pylance_kind})" in ds.scanner(filter=where).explain_plan(True)
    assert t.optimize_index("k_idx")["fragments"] == 4
    assert covered(lance.dataset(path), "k_idx") == {0, 2, 3, 4}
    assert spark_read(spark, path, "k = 5")[0] == truth_of(path, lambda r: r["k"] == 5)
    lance.dataset(path).validate()


def test_show_indexes_counts_the_fragments_an_index_covers(spark, wh):
    t = compact_fragment_1(spark, str(wh / "db" / "compact_count.lance"), "zonemap")
    assert t.list_indices()[0]["fragments"] == 3


def test_pylance_delta_segments(spark, wh):
    """An index pylance extended with a delta segment (same name, the new fragments) is searched as one."""
    path = str(wh / "db" / "delta.lance")
    simple_table(path)
    pylance_btree(lance.dataset(path), "k", 16)
    lance.write_dataset(pa.table({"id": pa.array([1000, 1001], pa.int64()), "k": pa.array([5, 1000], pa.int64()),
                                  "s": ["new", None]}), path, mode="append")
    lance.dataset(path).optimize.optimize_indices(num_indices_to_merge=0)
    t = LanceTable.for_path(spark, path)
    assert sorted((i["name"], i["fragments"]) for i in t.list_indices()) == [("k_idx", 1), ("k_idx", 3)]
    for where in ("k = 5", "k = 1000", "k IS NULL", "k > 35"):
        ids, plan = spark_read(spark, path, where)
        assert ids == pylance_ids(path, where) and uses(plan, "k_idx", "k"), (where, plan)
    assert spark_read(spark, path, "k = 1000")[0] == [1001]
    assert t.optimize_index("k_idx")["fragments"] == 4 and len(t.list_indices()) == 1
    t.drop_index("k_idx")
    assert lance.dataset(path).list_indices() == []


def test_spark_changes_keep_pylance_indexes_of_other_kinds(spark, wh):
    """Full-text, n-gram, label list and bloom filter indexes built by pylance stay correct for pylance through
    sparklance's DELETE, append and compaction, and OPTIMIZE INDEX rebuilds the bloom filter."""
    path = str(wh / "db" / "kinds.lance")
    words = ["apple", "banana", "cherry", "date", "elder", "fig"]
    n = 800
    lance.write_dataset(pa.table({
        "id": pa.array(range(n), pa.int64()), "k": pa.array([i % 37 for i in range(n)], pa.int64()),
        "text": [f"{words[i % 6]} {words[i * 7 % 5]} w{i % 11}" for i in range(n)],
        "tags": pa.array([[words[i % 6], words[i % 4]] if i % 9 else None for i in range(n)], pa.list_(pa.string()))}),
        path, max_rows_per_file=200)
    ds = lance.dataset(path)
    ds.create_scalar_index("k", "BLOOMFILTER")
    ds.create_scalar_index("tags", "LABEL_LIST")
    ds.create_scalar_index("text", "INVERTED")
    ds.create_scalar_index("text", "NGRAM", name="text_ngram")
    t = LanceTable.for_path(spark, path)
    assert sorted((i["name"], i["type"], i["columns"], i["fragments"]) for i in t.list_indices()) == [
        ("k_idx", "BLOOMFILTER", ["k"], 4), ("tags_idx", "LABEL_LIST", ["tags"], 4),
        ("text_idx", "INVERTED", ["text"], 4), ("text_ngram", "NGRAM", ["text"], 4)]

    def answers():
        ds = lance.dataset(path)
        return [sorted(ds.to_table(full_text_query="banana", columns=["id"]).column("id").to_pylist()),
                pylance_ids(path, "array_has_any(tags, ['fig'])"), pylance_ids(path, "contains(text, 'w1')"),
                pylance_ids(path, "k = 5")]

    kept = [[i for i in ids if i % 10 != 3] for ids in answers()]
    assert all(kept)
    t.delete("id % 10 = 3")
    arrow_df(spark, pa.table({"id": pa.array([5000], pa.int64()), "k": pa.array([5], pa.int64()),
                              "text": ["zebra"], "tags": pa.array([["zebra"]], pa.list_(pa.string()))})) \
        .write.format("lance").mode("append").save(path)
    t.optimize(target_rows_per_fragment=300).collect()
    kept[3].append(5000)
    assert answers() == kept
    lance.dataset(path).validate()
    assert spark_read(spark, path, "k = 5")[0] == kept[3]
    assert t.optimize_index("k_idx")["type"] == "BLOOMFILTER"
    assert covered(lance.dataset(path), "k_idx") == {f.fragment_id for f in lance.dataset(path).get_fragments()}
    ids, plan = spark_read(spark, path, "k = 5")
    assert answers() == kept and ids == kept[3] and uses(plan, "k_idx", "k"), plan
    lance.dataset(path).validate()


def test_time_travel_restore_and_overwrite(spark, wh):
    path = str(wh / "db" / "tt.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    before = t.version()
    t.create_index("k")
    t.delete("id < 100")
    want_before = truth_of(path, lambda r: r["k"] == 5, version=before)
    ids, plan = spark_read(spark, path, "k = 5", version=before)
    assert ids == want_before and "using" not in plan and min(ids) < 100
    ids, plan = spark_read(spark, path, "k = 5", version=before + 1)
    assert ids == want_before and uses(plan, "k_idx", "k")

    t.restore(before)
    assert t.list_indices() == [] and lance.dataset(path).list_indices() == []
    assert spark_read(spark, path, "k = 5")[0] == want_before
    t.restore(before + 1)
    assert [i["name"] for i in t.list_indices()] == ["k_idx"]
    assert spark_read(spark, path, "k = 5")[0] == want_before

    spark.createDataFrame([(1, 5, "a"), (2, 6, "b")], "id BIGINT, k BIGINT, s STRING") \
        .write.format("lance").mode("overwrite").save(path)
    assert t.list_indices() == [] and lance.dataset(path).list_indices() == []
    ids, plan = spark_read(spark, path, "k = 5")
    assert ids == [1] and "using" not in plan
    lance.dataset(path).validate()


# -------------------------------------------------------------------------------------------------- refused input

@pytest.fixture(scope="module")
def typed(wh) -> str:
    """A table with a column of each kind the checks need: keys, a float, a date, a struct and a list."""
    path = str(wh / "db" / "typed.lance")
    n = 300
    lance.write_dataset(pa.table({
        "id": pa.array(range(n), pa.int64()),
        "k": pa.array([i % 10 for i in range(n)], pa.int64()),
        "f": pa.array([[0.5, -0.0, 0.0, 1.5, float("nan"), None][i % 6] for i in range(n)], pa.float64()),
        "d": pa.array([None if i % 9 == 0 else 18262 + i % 5 for i in range(n)], pa.date32()),
        "st": pa.array([{"x": i, "y": str(i)} for i in range(n)], pa.struct([("x", pa.int64()), ("y", pa.string())])),
        "tags": pa.array([[str(i % 3)] for i in range(n)], pa.list_(pa.string()))}), path, max_rows_per_file=100)
    return path


@pytest.mark.parametrize("call, error, message", [
    (lambda t: t.create_index("nope"), sparklance.InvalidArgumentError,
     "has no column 'nope' \\(its columns: id, k, f, d, st, tags\\)"),
    (lambda t: t.create_index("k", foo=1), sparklance.InvalidArgumentError,
     "Unknown option foo for a BTREE index; it takes: batch_size, zone_size"),
    (lambda t: t.create_index("k", zone_size=0), sparklance.InvalidArgumentError,
     "zone_size must be a positive number of rows, not '0'"),
    (lambda t: t.create_index("k", zone_size="many"), sparklance.InvalidArgumentError,
     "zone_size must be a positive number of rows, not 'many'"),
    (lambda t: t.create_index("k", "bitmap", zone_size=64), sparklance.InvalidArgumentError,
     "Unknown option zone_size for a BITMAP index; it takes none."),
    (lambda t: t.create_index("k", "zonemap", zone_size=64), sparklance.InvalidArgumentError,
     "Unknown option zone_size for a ZONEMAP index; it takes: rows_per_zone"),
    (lambda t: t.create_index("k", "inverted"), sparklance.UnsupportedFeatureError,
     "Cannot create full-text index 'k_idx' on column 'k' of .*: it is .*; full-text \\(FTS / INVERTED\\) indexes take "
     "string columns"),
    (lambda t: t.create_index("k", "vector"), sparklance.UnsupportedFeatureError,
     "it builds BTREE, .* and the vector indexes IVF_FLAT, IVF_PQ, IVF_SQ"),
    (lambda t: t.create_index("k", "label-list"), sparklance.InvalidArgumentError, "'label-list' is not an index type"),
    (lambda t: t.create_index("st"), sparklance.UnsupportedFeatureError,
     "Cannot create a BTREE index on column 'st' of .*: its type Struct cannot be indexed"),
    (lambda t: t.create_index("tags"), sparklance.UnsupportedFeatureError,
     "Cannot create a BTREE index on column 'tags' of .*: its type List cannot be indexed"),
    (lambda t: t.create_index("k", name="a`b"), sparklance.InvalidArgumentError, "'a`b' is not a valid index name"),
    (lambda t: t.create_index("k", name="a/b"), sparklance.InvalidArgumentError, "'a/b' is not a valid index name"),
], ids=["missing column", "unknown option", "zero zone_size", "zone_size not a number", "bitmap option",
        "zone map option", "inverted on a number", "vector", "kind not a word", "struct", "list", "backtick in name",
        "slash in name"])
def test_refused(spark, typed, call, error, message):
    t = LanceTable.for_path(spark, typed)
    before = t.version()
    with pytest.raises(error, match=message):
        call(t)
    assert t.version() == before and t.list_indices() == []
    assert not (Path(typed) / "_indices").exists() or not any((Path(typed) / "_indices").iterdir())


def test_refused_in_sql(spark, typed):
    with lance_raises(sparklance.UnsupportedFeatureError, match="does not build MINHASHLSH indexes; it builds BTREE"):
        spark.sql(f"ALTER TABLE lance.`{typed}` CREATE INDEX x USING minhashlsh (k)")
    with lance_raises(sparklance.InvalidArgumentError, match="Cannot read index option 'zone_size'"):
        spark.sql(f"ALTER TABLE lance.`{typed}` CREATE INDEX x USING btree (k) WITH (zone_size)")
    with lance_raises(sparklance.InvalidArgumentError, match="replace must be true or false, not 'maybe'"):
        spark.sql(f"ALTER TABLE lance.`{typed}` CREATE INDEX x USING btree (k) WITH (replace = maybe)")
    with lance_raises(sparklance.InvalidArgumentError, match="has no index named 'x'"):
        spark.sql(f"DROP INDEX x ON lance.`{typed}`")


def test_duplicate_name(spark, wh):
    path = str(wh / "db" / "dup.lance")
    simple_table(path)
    t = LanceTable.for_path(spark, path)
    first = t.create_index("k")
    with pytest.raises(sparklance.InvalidArgumentError, match="already has an index named 'k_idx'. Drop it first"):
        t.create_index("k")
    with pytest.raises(sparklance.InvalidArgumentError, match="already has an index named 'k_idx'"):
        t.create_index("s", name="k_idx")
    second = t.create_index("s", name="k_idx", replace=True)
    assert [(i["name"], i["columns"], i["uuid"]) for i in t.list_indices()] == [("k_idx", ["s"], second["uuid"])]
    assert second["uuid"] != first["uuid"]
    assert [(i["name"], i["fields"]) for i in lance.dataset(path).list_indices()] == [("k_idx", ["s"])]
    lance.dataset(path).validate()


def test_spark_builds_large_string_keys(spark, wh):
    path = str(wh / "db" / "large_strings.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(100), pa.int64()),
                                  "s": pa.array([f"s{i % 7}" for i in range(100)], pa.large_string())}), path)
    LanceTable.for_path(spark, path).create_index("s", zone_size=16)
    ids, plan = spark_read(spark, path, "s = 's3'")
    assert ids == list(range(3, 100, 7)) and uses(plan, "s_idx", "s")
    assert pylance_ids(path, "s = 's3'") == ids
    lance.dataset(path).validate()


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_label_list_built_by_spark(spark, wh, stable_row_ids):
    """A label list index on a list column (null lists, empty lists, null items) holds what pylance's holds, and
    pylance answers array_has_any / array_has_all through it as a full scan does."""
    path = str(wh / "db" / f"labels_{stable_row_ids}.lance")
    labels = [["a"], None, [], ["a", "b"], ["b", None], ["c", "a", "c"], [None], ["d"]]
    lance.write_dataset(pa.table({"id": pa.array(range(400), pa.int64()),
                                  "tags": pa.array([labels[i % 8] for i in range(400)], pa.list_(pa.string()))}),
                        path, max_rows_per_file=90, enable_stable_row_ids=stable_row_ids)
    lance.dataset(path).delete("id % 13 = 2")
    twin = path.replace(".lance", "_pylance.lance")
    shutil.copytree(path, twin)
    made = LanceTable.for_path(spark, path).create_index("tags", "label_list")
    assert (made["name"], made["type"], made["columns"]) == ("tags_idx", "LABEL_LIST", ["tags"])
    lance.dataset(twin).create_scalar_index("tags", "LABEL_LIST")
    ds = lance.dataset(path)
    ds.validate()
    rows = ds.to_table().to_pylist()
    for where, keep in (("array_has_any(tags, ['a'])", lambda t: "a" in t),
                        ("array_has_any(tags, ['b', 'd'])", lambda t: "b" in t or "d" in t),
                        ("array_has_all(tags, ['a', 'b'])", lambda t: "a" in t and "b" in t),
                        ("NOT array_has_any(tags, ['a'])", lambda t: "a" not in t)):   # null lists are neither
        want = sorted(r["id"] for r in rows if r["tags"] is not None and keep(r["tags"]))
        assert "@tags_idx(LabelList)" in ds.scanner(filter=where).explain_plan(True), where
        assert pylance_ids(path, where) == want and want, where
    assert same_files(index_dir(path, "tags_idx"), index_dir(twin, "tags_idx")) == []
    assert spark_read(spark, path, "array_contains(tags, 'a')")[0] == \
        sorted(r["id"] for r in rows if r["tags"] is not None and "a" in r["tags"])


def test_no_bloom_filter_on_booleans(spark, wh):
    path = str(wh / "db" / "bloom_bool.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(50), pa.int64()), "b": [i % 3 == 0 for i in range(50)]}), path)
    with pytest.raises(sparklance.UnsupportedFeatureError, match="Cannot create a BLOOMFILTER index on column 'b'"):
        LanceTable.for_path(spark, path).create_index("b", "bloomfilter")
    assert pylance_ids(path, "b = true") == list(range(0, 50, 3))


@pytest.fixture(scope="module")
def spaced(spark, wh) -> str:
    """A table with a B-tree on a column whose name needs quoting in SQL: `my col`."""
    path = str(wh / "db" / "spaced.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(300), pa.int64()),
                                  "my col": pa.array([i % 7 for i in range(300)], pa.int64())}), path,
                        max_rows_per_file=100)
    assert LanceTable.for_path(spark, path).create_index("my col", zone_size=16)["name"] == "my col_idx"
    return path


def test_a_column_name_that_needs_quoting(spark, spaced):
    want = list(range(3, 300, 7))
    ids, plan = spark_read(spark, spaced, "`my col` = 3")
    assert ids == want and uses(plan, "my col_idx", "my col"), plan
    assert "@my col_idx(BTree)" in lance.dataset(spaced).scanner(filter="`my col` = 3").explain_plan(True)
    assert pylance_ids(spaced, "`my col` = 3") == want


def test_float_and_date_keys(spark, wh, typed):
    """B-trees on a double (NaN, -0.0) and a date column answer Spark's comparisons with SQL's semantics, and
    pylance's; tests/test_index_types.py draws many more."""
    path = str(wh / "db" / "floats.lance")
    shutil.copytree(typed, path)
    t = LanceTable.for_path(spark, path)
    t.create_index("f", zone_size=8)
    t.create_index("d", zone_size=8)
    checks = (("f = 1.5", lambda r: r["f"] == 1.5), ("f < 0.5", lambda r: r["f"] is not None and r["f"] < 0.5),
              ("f IS NULL", lambda r: r["f"] is None), ("f = 0.0", lambda r: r["f"] == 0.0),
              ("f > 1.0", lambda r: r["f"] is not None and (r["f"] != r["f"] or r["f"] > 1.0)),
              ("d = DATE'2020-01-03'", lambda r: r["d"] is not None and r["d"].isoformat() == "2020-01-03"),
              ("d IS NULL", lambda r: r["d"] is None))
    for where, keep in checks:
        ids, plan = spark_read(spark, path, where)
        column = where.split()[0]
        assert ids == truth_of(path, keep) and uses(plan, f"{column}_idx", column), (where, plan)
    ds = lance.dataset(path)
    assert "@f_idx(BTree)" in ds.scanner(filter="f = 1.5").explain_plan(True)
    assert pylance_ids(path, "f = 1.5") == truth_of(path, lambda r: r["f"] == 1.5)
    ds.validate()


# ------------------------------------------------------------------------------------------------ damaged indexes

def _delete(d: Path, name: str) -> None:
    (d / name).unlink()


def _truncate(d: Path, name: str) -> None:
    data = (d / name).read_bytes()
    (d / name).write_bytes(data[: len(data) // 2])


def _scramble(d: Path, name: str) -> None:
    data = (d / name).read_bytes()
    (d / name).write_bytes(bytes(random.Random(name).randrange(256) for _ in range(len(data))))


DAMAGES = {
    "page_data deleted": lambda d: _delete(d, "page_data.lance"),
    "page_lookup deleted": lambda d: _delete(d, "page_lookup.lance"),
    "index directory deleted": lambda d: shutil.rmtree(d),
    "page_data truncated": lambda d: _truncate(d, "page_data.lance"),
    "page_lookup truncated": lambda d: _truncate(d, "page_lookup.lance"),
    "page_data scrambled": lambda d: _scramble(d, "page_data.lance"),
}


@pytest.mark.parametrize("builder", ["pylance", "spark"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_index_falls_back_to_a_scan(spark, wh, builder, damage):
    path = str(wh / "db" / f"damaged_{builder}_{damage.replace(' ', '_')}.lance")
    simple_table(path)
    if builder == "pylance":
        pylance_btree(lance.dataset(path), "k", 16)
    else:
        LanceTable.for_path(spark, path).create_index("k", zone_size=16)
    lance.dataset(path).delete("id % 10 = 0")
    checks = {"k = 5": lambda r: r["k"] == 5, "k IS NULL": lambda r: r["k"] is None,
              "k >= 10 AND k < 20": lambda r: r["k"] is not None and 10 <= r["k"] < 20,
              "k IN (1, 2, 36)": lambda r: r["k"] in (1, 2, 36)}
    want = {where: truth_of(path, keep) for where, keep in checks.items()}
    assert all(uses(spark_read(spark, path, w)[1], "k_idx", "k") for w in checks)
    DAMAGES[damage](index_dir(path, "k_idx"))
    for where in checks:
        ids, plan = spark_read(spark, path, where)
        assert ids == want[where] and "using" not in plan, (where, plan)
