"""lance-spark's `ALTER TABLE t SET UNENFORCED PRIMARY KEY (...)`: the key is recorded in the schema as pylance 14
records it (field metadata and the field's protobuf flags, positions from 1), in one new version; pylance sees the
same key, in the same order, and refuses to change it, as we refuse to change one pylance set. Bad columns (unknown,
nullable, nested, listed twice) are refused naming the column, and nothing is committed."""

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

from conftest import start_spark, warehouse_with  # noqa: E402

KEY = "lance-schema:unenforced-primary-key"


# Seeded statements: `make test` runs a small budget, `make fuzz` more (SPARKLANCE_FUZZ_SEED, SPARKLANCE_FUZZ_N).
SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "1"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))

@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "pk_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-pk-tests", wh)
    yield session
    session.stop()


def pylance_key(path: str) -> list:
    """The key as pylance orders it: (name, position)."""
    return [(f.name(), f.unenforced_primary_key_position()) for f in lance.dataset(path).lance_schema.unenforced_primary_key()]


def create(spark, wh: Path, name: str) -> str:
    spark.sql(f"CREATE TABLE lance.db.{name} (id BIGINT NOT NULL, name STRING NOT NULL, "
              "s STRUCT<x: INT NOT NULL, y: STRING> NOT NULL, loose STRUCT<x: INT NOT NULL>, v INT, "
              "tags ARRAY<STRING> NOT NULL)")
    spark.sql(f"INSERT INTO lance.db.{name} VALUES (1, 'a', named_struct('x', 1, 'y', 'p'), null, 7, array('t')), "
              "(1, 'a', named_struct('x', 2, 'y', null), named_struct('x', 3), null, array())")
    return str(wh / "db" / f"{name}.lance")


def test_documented_examples_and_pylance_sees_the_key(spark, wh):
    path = create(spark, wh, "users")
    before = lance.dataset(path)
    rows = spark.sql("ALTER TABLE lance.db.users SET UNENFORCED PRIMARY KEY (id, name);").collect()
    assert [tuple(r) for r in rows] == [("OK", "id,name")]
    ds = lance.dataset(path)
    assert ds.version == before.version + 1
    assert pylance_key(path) == [("id", 1), ("name", 2)]
    assert ds.schema.field("id").metadata == {KEY.encode(): b"true", (KEY + ":position").encode(): b"1"}
    assert ds.to_table() == before.to_table()  # duplicates are kept: the key is never checked
    ds.validate()
    assert lance.dataset(path, version=before.version).lance_schema.unenforced_primary_key() == []
    # Once set, neither writer changes it.
    with pytest.raises(Exception, match="cannot be changed once set"):
        spark.sql("ALTER TABLE lance.db.users SET UNENFORCED PRIMARY KEY (id)")
    with pytest.raises(Exception, match="cannot be changed"):
        ds.update_field_metadata({"v": {KEY: "true"}})
    # Later writes of ours keep it.
    spark.sql("INSERT INTO lance.db.users VALUES (2, 'b', named_struct('x', 5, 'y', 'q'), null, 1, array())")
    spark.sql("UPDATE lance.db.users SET v = 3 WHERE id = 2")
    spark.sql("ALTER TABLE lance.db.users ADD COLUMNS (extra DOUBLE)")
    assert pylance_key(path) == [("id", 1), ("name", 2)]
    lance.dataset(path).validate()
    # Dropping a key column drops it from the key, as in pylance.
    spark.sql("ALTER TABLE lance.db.users DROP COLUMN name")
    assert pylance_key(path) == [("id", 1)]
    lance.dataset(path).validate()


def test_a_key_pylance_set_is_kept_and_not_replaced(spark, wh):
    path = str(wh / "db" / "theirs.lance")
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("n", pa.int32(), nullable=False),
                        pa.field("v", pa.int32())])
    lance.write_dataset(pa.table({"k": ["a", "b"], "n": [1, 2], "v": [3, 4]}, schema=schema), path)
    lance.dataset(path).update_field_metadata({"n": {KEY: "true", KEY + ":position": "1"},
                                               "k": {KEY: "true", KEY + ":position": "2"}})
    with pytest.raises(Exception, match=r"already has an unenforced primary key \(n, k\)"):
        spark.sql("ALTER TABLE lance.db.theirs SET UNENFORCED PRIMARY KEY (k)")
    spark.sql("INSERT INTO lance.db.theirs VALUES ('c', 3, 5)")
    spark.sql("DELETE FROM lance.db.theirs WHERE n = 1")
    assert pylance_key(path) == [("n", 1), ("k", 2)]
    assert lance.dataset(path).count_rows() == 2


@pytest.mark.parametrize("columns, message", [
    ("(nope)", "No column 'nope'"),
    ("(v)", "'v' must not be nullable"),
    ("(loose.x)", "'loose' is"),
    ("(s)", "is a struct"),
    ("(tags)", "is a list"),
    ("(id, name, id)", "listed more than once"),
    ("id", "list them in parentheses"),
])
def test_bad_columns_are_refused_and_nothing_is_committed(spark, wh, columns, message):
    name = "bad_" + str(abs(hash(columns)))
    path = create(spark, wh, name)
    version = lance.dataset(path).version
    with pytest.raises(Exception, match=message):
        spark.sql(f"ALTER TABLE lance.db.{name} SET UNENFORCED PRIMARY KEY {columns}")
    assert lance.dataset(path).version == version
    assert pylance_key(path) == []


@pytest.mark.parametrize("seed", [SEED + i for i in range(3 * N)])
def test_seeded_keys_read_by_pylance_in_order(spark, wh, seed):
    """Random keys over random NOT NULL leaf columns (top level and in NOT NULL structs): pylance's order is ours."""
    rnd = random.Random(seed)
    types = ["BIGINT", "INT", "STRING", "DATE", "BOOLEAN", "DOUBLE", "TIMESTAMP", "BINARY", "DECIMAL(10,2)"]
    cols, leaves = [], []
    for i in range(rnd.randint(2, 6)):
        if rnd.random() < 0.3:
            members = [f"m{j}: {rnd.choice(types)} NOT NULL" for j in range(rnd.randint(1, 3))]
            cols.append(f"c{i} STRUCT<{', '.join(members)}> NOT NULL")
            leaves += [f"c{i}.m{j}" for j in range(len(members))]
        else:
            cols.append(f"c{i} {rnd.choice(types)} NOT NULL")
            leaves.append(f"c{i}")
    key = rnd.sample(leaves, rnd.randint(1, len(leaves)))
    name = f"seeded_{seed}"
    spark.sql(f"CREATE TABLE lance.db.{name} ({', '.join(cols)})")
    row = spark.sql(f"ALTER TABLE lance.db.{name} SET UNENFORCED PRIMARY KEY ({', '.join(key)})").collect()[0]
    assert row["primary_key_columns"] == ",".join(key)
    path = str(wh / "db" / f"{name}.lance")
    assert pylance_key(path) == [(k.split(".")[-1], i + 1) for i, k in enumerate(key)]
    lance.dataset(path).validate()
