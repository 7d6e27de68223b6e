"""UPDATE, MERGE INTO and DELETE through Spark SQL on tables whose columns are lists of structs and structs of lists,
with nulls at every level (a null list, an empty list, a null struct in a list, null fields, null list items), both
ways against pylance: pylance writes the table (file version 2.1 or 2.2: 2.0 has no struct validity; in several fragments, sometimes with stable row ids, and deletes rows
of its own); a seeded sequence of statements changes it through Spark, and after each one pylance must read exactly
the rows computed in Python from what the test wrote, Spark must read the same, and ``validate()`` must pass.

The statements change a flat column and carry the nested ones untouched (UPDATE ... SET k), set a nested column to
NULL, replace whole nested values from a source of rows (MERGE ... UPDATE SET * / INSERT *), and delete rows.
``SPARKLANCE_FUZZ_SEED`` draws the tables and statements; ``SPARKLANCE_FUZZ_N`` is how many tables.
"""

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

from conftest import arrow_df, cross_version, needs_update_and_merge, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version, needs_update_and_merge]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
STATEMENTS = 6

ITEM = pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string()), pa.field("c", pa.list_(pa.float64()))])
SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("k", pa.int32()),
    pa.field("tags", pa.list_(pa.field("item", ITEM))),
    pa.field("meta", pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.list_(pa.string())),
                                pa.field("z", pa.struct([pa.field("w", pa.string())]))])),
])


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "rowlevel_nested_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-rowlevel-nested", wh)
    yield session
    session.stop()


def _maybe(r: random.Random, p: float, make):
    return None if r.random() < p else make()


def _floats(r: random.Random):
    return [_maybe(r, 0.2, lambda: r.choice([0.5, -0.0, 1e300, -2.25, r.randint(-9, 9) / 4])) for _ in range(r.randint(0, 3))]


def _item(r: random.Random):
    return {"a": _maybe(r, 0.3, lambda: r.randint(-2**31, 2**31 - 1)),
            "b": _maybe(r, 0.3, lambda: r.choice(["", "x", "ü€", "long" * r.randint(1, 20)])),
            "c": _maybe(r, 0.3, lambda: _floats(r))}


def nested_row(r: random.Random, i: int) -> dict:
    """One row; each nested level is null, empty or filled at random."""
    tags = _maybe(r, 0.2, lambda: [_maybe(r, 0.25, lambda: _item(r)) for _ in range(r.choice([0, 0, 1, 2, 3, 5]))])
    meta = _maybe(r, 0.2, lambda: {
        "x": _maybe(r, 0.3, lambda: r.randint(-10**12, 10**12)),
        "y": _maybe(r, 0.3, lambda: [_maybe(r, 0.3, lambda: f"y{r.randint(0, 99)}") for _ in range(r.randint(0, 3))]),
        "z": _maybe(r, 0.3, lambda: {"w": _maybe(r, 0.4, lambda: f"w{r.randint(0, 9)}")})})
    return {"id": i, "k": _maybe(r, 0.2, lambda: r.randint(-100, 100)), "tags": tags, "meta": meta}


def table_of(rows) -> pa.Table:
    return pa.Table.from_pylist(sorted(rows, key=lambda row: row["id"]), schema=SCHEMA)


def statement(r: random.Random, want: dict, name: str, spark) -> str:
    """A random statement on ``name``; ``want`` (id -> row) is changed to what it must leave."""
    kind = r.choice(["update_k", "update_null", "merge", "merge", "delete"])
    m, rem = r.randint(2, 5), r.randint(0, 1)
    hit = [i for i in want if i % m == rem]
    if kind == "update_k":
        for i in hit:
            want[i]["k"] = None if want[i]["k"] is None else want[i]["k"] + 1
        return f"UPDATE lance.db.{name} SET k = k + 1 WHERE id % {m} = {rem}"
    if kind == "update_null":
        col = r.choice(["tags", "meta"])
        for i in hit:
            want[i][col] = None
        return f"UPDATE lance.db.{name} SET {col} = NULL WHERE id % {m} = {rem}"
    if kind == "delete":
        for i in hit:
            del want[i]
        return f"DELETE FROM lance.db.{name} WHERE id % {m} = {rem}"
    top = max(want, default=0)
    ids = r.sample(range(top + 10), min(top + 10, r.randint(1, 30)))
    source = [nested_row(r, i) for i in ids]
    view = f"src_{name}"
    arrow_df(spark, table_of(source)).createOrReplaceTempView(view)
    for row in source:
        want[row["id"]] = row
    return (f"MERGE INTO lance.db.{name} t USING {view} s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")


@pytest.mark.parametrize("seed", [SEED + i for i in range(N)])
def test_seeded_row_level_changes_keep_nested_nulls(spark, wh, seed):
    r = random.Random(seed)
    name = f"nested_{seed}"
    path = str(wh / "db" / f"{name}.lance")
    n = r.randint(1, 300)
    rows = [nested_row(r, i) for i in range(n)]
    lance.write_dataset(table_of(rows), path, max_rows_per_file=r.choice([7, 50, 1000]),
                        data_storage_version=r.choice(["2.1", "2.2"]), enable_stable_row_ids=r.random() < 0.4)
    want = {row["id"]: row for row in rows}
    dropped = [i for i in want if i % 7 == 3]
    if dropped and r.random() < 0.5:
        lance.dataset(path).delete("id % 7 = 3")
        for i in dropped:
            del want[i]
    done = []
    for _ in range(STATEMENTS):
        sql = statement(r, want, name, spark)
        done.append(sql)
        spark.sql(sql)
        ds = lance.dataset(path)
        ds.validate()
        expected = table_of(want.values()).to_pylist()
        assert ds.to_table().sort_by("id").to_pylist() == expected, done
        got = [row.asDict(recursive=True) for row in spark.table(f"lance.db.{name}").orderBy("id").collect()]
        assert table_of(got).to_pylist() == expected, done
