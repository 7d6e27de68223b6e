"""Data evolution in SQL, as the other Lance connector writes it: ``ALTER TABLE t ADD COLUMNS c1, c2 FROM view``, where
the view holds ``_rowaddr`` (read from the table) and the new columns. Checked with pylance on seeded random tables
(several fragments and file versions, deletions): the rows the view has get its values, the others nulls; the other
columns' data files are untouched; one new version; validate() passes. Bad sources are refused before any commit.

``SPARKLANCE_FUZZ_SEED`` draws the tables; ``SPARKLANCE_FUZZ_N`` is how many.
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

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "add_columns_from_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-add-columns-from-tests", wh)
    yield session
    session.stop()


def make(r: random.Random, path: str) -> None:
    rows = 0
    version = r.choice(["2.0", "2.1", "2.2"])
    for i in range(r.randint(1, 4)):
        n = r.randint(1, 200)
        lance.write_dataset(pa.table({"id": pa.array(range(rows, rows + n), pa.int64()),
                                      "s": pa.array([f"s{j}" if j % 7 else None for j in range(rows, rows + n)])}),
                            path, mode="append" if i else "create", data_storage_version=version if i == 0 else None)
        rows += n
    lance.dataset(path).delete(f"id % {r.randint(2, 9)} = 0")


def refused(spark, view: str, select: str, statement: str, message: str) -> None:
    """`statement`, reading view `view` made of `select`, fails with `message`."""
    spark.sql(select).createOrReplaceTempView(view)
    with pytest.raises(Exception, match=message):
        spark.sql(statement)


def refused_with_duplicates(spark, select: str, statement: str) -> None:
    """`statement` fails on view `dup2`: the rows of `select` (as view `dup`), each twice."""
    spark.sql(select).createOrReplaceTempView("dup")
    refused(spark, "dup2", "SELECT * FROM dup UNION ALL SELECT * FROM dup", statement, "more than one row for row address")


def data_files(path: str) -> dict:
    return {f.fragment_id: sorted(d.path for d in f.data_files()) for f in lance.dataset(path).get_fragments()}


@pytest.mark.parametrize("case", range(N))
def test_add_columns_from_a_view_by_row_address(spark, wh, case):
    r = random.Random(SEED * 100 + case)
    name = f"evo{case}"
    path = str(wh / "db" / f"{name}.lance")
    make(r, path)
    before = lance.dataset(path)
    files_before = data_files(path)
    keep = r.choice([0.0, 0.3, 1.0])
    spark.sql(f"SELECT _rowaddr, id * 10 AS x, concat('v', id) AS `y z` FROM lance.db.{name} "
              f"WHERE pmod(hash(id, {case}), 100) < {int(keep * 100)} OR id % 5 = 1").createOrReplaceTempView("src")
    expected = {row.id: (row.id * 10, f"v{row.id}") for row in
                spark.sql(f"SELECT id FROM lance.db.{name} WHERE _rowaddr IN (SELECT _rowaddr FROM src)").collect()}
    # Rows of the view whose addresses are not rows of the table (deleted, past the end) are ignored.
    spark.sql("SELECT _rowaddr, x, `y z` FROM src UNION ALL SELECT shiftleft(1L, 40) + 3, -1L, 'ghost'").createOrReplaceTempView("src2")
    spark.sql(f"ALTER TABLE lance.db.{name} ADD COLUMNS x, `y z` FROM src2")
    after = lance.dataset(path)
    assert after.version == before.version + 1
    table = after.to_table().to_pylist()
    assert sorted(r_["id"] for r_ in table) == sorted(before.to_table().column("id").to_pylist())
    for row in table:
        assert (row["x"], row["y z"]) == expected.get(row["id"], (None, None)), row
        assert row["s"] == (f"s{row['id']}" if row["id"] % 7 else None)
    for fragment, files in data_files(path).items():
        assert set(files_before[fragment]) < set(files), "the old data files stay, one is added"
    after.validate()


def test_bad_sources_are_refused_before_any_commit(spark, wh):
    path = str(wh / "db" / "evo_bad.lance")
    make(random.Random(SEED), path)
    version = lance.dataset(path).version
    refused_with_duplicates(spark, "SELECT _rowaddr, id AS x FROM lance.db.evo_bad",
                            "ALTER TABLE lance.db.evo_bad ADD COLUMNS x FROM dup2")
    refused(spark, "noaddr", "SELECT id AS x FROM lance.db.evo_bad", "ALTER TABLE lance.db.evo_bad ADD COLUMNS x FROM noaddr",
            "noaddr has no column '_rowaddr'")
    with pytest.raises(Exception, match="has no column 'nope'"):
        spark.sql("ALTER TABLE lance.db.evo_bad ADD COLUMNS nope FROM dup")
    spark.sql("SELECT _rowaddr, s FROM lance.db.evo_bad").createOrReplaceTempView("again")
    with pytest.raises(Exception, match="already"):
        spark.sql("ALTER TABLE lance.db.evo_bad ADD COLUMNS s FROM again")
    assert lance.dataset(path).version == version
    assert not [f for f in os.listdir(os.path.join(path, "data")) if f not in
                {os.path.basename(d) for fs in data_files(path).values() for d in fs}], "no files left behind"


@pytest.mark.parametrize("case", range(N))
def test_update_columns_from_a_view_rewrites_them_in_place(spark, wh, case):
    """``ALTER TABLE t UPDATE COLUMNS c FROM view`` twice over a seeded table with a B-tree index on the updated column:
    matched rows take the view's values (nulls too), the others keep theirs; fragments without a matched row keep
    their files, the others keep theirs and gain one; pylance and Spark (through the index) filter on the new
    values; validate() passes."""
    r = random.Random(SEED * 100 + 50 + case)
    name = f"upd{case}"
    path = str(wh / "db" / f"{name}.lance")
    make(r, path)
    spark.sql(f"ALTER TABLE lance.db.{name} ADD COLUMNS (n BIGINT)")
    lance.dataset(path).create_scalar_index("id", "BTREE")
    model = {row["id"]: {"s": row["s"], "n": None} for row in lance.dataset(path).to_table().to_pylist()}
    for round_ in range(2):
        files_before = data_files(path)
        version = lance.dataset(path).version
        cut = r.randint(1, 20)
        spark.sql(f"SELECT _rowaddr, id, CAST(id * {round_ + 2} AS INT) AS n, "
                  f"CASE WHEN id % 3 = 0 THEN NULL ELSE concat('u{round_}-', id) END AS s "
                  f"FROM lance.db.{name} WHERE pmod(hash(id, {case}, {round_}), 20) < {cut}").createOrReplaceTempView("u")
        matched = {row.id: (row.n, row.s) for row in spark.sql("SELECT id, n, s FROM u").collect()}
        touched = {row.f for row in spark.sql("SELECT DISTINCT shiftright(_rowaddr, 32) AS f FROM u").collect()}
        spark.sql("SELECT _rowaddr, n, s FROM u UNION ALL SELECT shiftleft(1L, 40) + 1, 0, 'ghost'").createOrReplaceTempView("u2")
        spark.sql(f"ALTER TABLE lance.db.{name} UPDATE COLUMNS n, s FROM u2")
        for i, (n, s) in matched.items():
            model[i] = {"s": s, "n": n}
        ds = lance.dataset(path)
        # A view that matches no row (seed 20261413, case 2) commits nothing, as docs/maintenance.md says.
        assert ds.version == version + (1 if matched else 0)
        assert {row["id"]: {"s": row["s"], "n": row["n"]} for row in ds.to_table().to_pylist()} == model
        after = data_files(path)
        for fragment, files in after.items():
            if fragment in touched:
                assert set(files_before[fragment]) < set(files) and len(files) == len(files_before[fragment]) + 1
            else:
                assert files == files_before[fragment]
        ds.validate()
    some = sorted(model)[len(model) // 2]
    assert lance.dataset(path).to_table(filter=f"id = {some}").to_pylist()[0]["n"] == model[some]["n"]
    got = spark.sql(f"SELECT n, s FROM lance.db.{name} WHERE id = {some}").collect()
    assert [(row.n, row.s) for row in got] == [(model[some]["n"], model[some]["s"])]
    expected_s = sorted(i for i, v in model.items() if v["s"] is not None and v["s"].startswith("u1-"))
    assert sorted(row.id for row in spark.sql(f"SELECT id FROM lance.db.{name} WHERE s LIKE 'u1-%'").collect()) == expected_s


def test_update_columns_refuses_what_it_cannot_store(spark, wh):
    path = str(wh / "db" / "upd_bad.lance")
    make(random.Random(SEED + 1), path)
    version = lance.dataset(path).version
    refused(spark, "as_text", "SELECT _rowaddr, CAST(id AS STRING) AS id FROM lance.db.upd_bad",
            "ALTER TABLE lance.db.upd_bad UPDATE COLUMNS id FROM as_text",
            "Column 'id' of as_text is string, which cannot be stored in column 'id' of type bigint")
    refused(spark, "nope", "SELECT _rowaddr, id AS nope FROM lance.db.upd_bad",
            "ALTER TABLE lance.db.upd_bad UPDATE COLUMNS nope FROM nope", "has no column 'nope' to update")
    refused_with_duplicates(spark, "SELECT _rowaddr, id FROM lance.db.upd_bad",
                            "ALTER TABLE lance.db.upd_bad UPDATE COLUMNS id FROM dup2")
    assert lance.dataset(path).version == version


@pytest.mark.parametrize("case", range(N))
def test_update_columns_of_not_null_columns_in_fragments_with_deleted_rows(spark, wh, case):
    """NOT NULL columns of several types (integer, string, fixed-size list, struct, list) updated in fragments with
    deleted rows: the new file still holds a slot for each deleted row, which a NOT NULL column cannot hold as a null
    (session 10's review found this refused with "Cannot write a null"). pylance reads the model, validate() passes, a
    null for a NOT NULL column is still refused."""
    r = random.Random(SEED * 100 + 80 + case)
    name = f"nn{case}"
    path = str(wh / "db" / f"{name}.lance")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False),
                        pa.field("v", pa.int32(), nullable=False),
                        pa.field("s", pa.string(), nullable=False),
                        pa.field("e", pa.list_(pa.float32(), 3), nullable=False),
                        pa.field("st", pa.struct([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())]),
                                 nullable=False),
                        pa.field("l", pa.list_(pa.int32()), nullable=False)])
    version = r.choice(["2.0", "2.1", "2.2"])
    rows = 0

    def row(i: int, tag: str) -> dict:
        return {"id": i, "v": i * 3, "s": f"{tag}{i}", "e": [float(i), float(i) / 2, -1.0],
                "st": {"a": i * 7, "b": None if i % 4 == 0 else f"{tag}b{i}"}, "l": list(range(i % 4))}
    for k in range(r.randint(1, 3)):
        n = r.randint(5, 120)
        lance.write_dataset(pa.Table.from_pylist([row(i, "s") for i in range(rows, rows + n)], schema=schema), path,
                            mode="append" if k else "create", data_storage_version=version if k == 0 else None)
        rows += n
    lance.dataset(path).delete(f"id % {r.randint(2, 5)} = 1")
    model = {x["id"]: x for x in lance.dataset(path).to_table().to_pylist()}
    cut = r.randint(5, 20)
    spark.sql(f"SELECT _rowaddr, id, CAST(id * 3 + 1 AS INT) AS v, concat('u', id) AS s, "
              f"array(CAST(id AS FLOAT), CAST(id / 2 AS FLOAT), CAST(1 AS FLOAT)) AS e, "
              f"named_struct('a', id * 7 + 1, 'b', IF(id % 4 = 0, NULL, concat('ub', id))) AS st, "
              f"sequence(0, CAST(id % 3 AS INT)) AS l FROM lance.db.{name} "
              f"WHERE pmod(hash(id, {case}), 20) < {cut}").createOrReplaceTempView("nnu")
    for x in spark.sql("SELECT id FROM nnu").collect():
        model[x.id] = row(x.id, "u") | {"v": x.id * 3 + 1, "e": [float(x.id), float(x.id) / 2, 1.0],
                                       "st": {"a": x.id * 7 + 1, "b": None if x.id % 4 == 0 else f"ub{x.id}"},
                                       "l": list(range(x.id % 3 + 1))}
    before = lance.dataset(path).version
    spark.sql(f"ALTER TABLE lance.db.{name} UPDATE COLUMNS v, s, e, st, l FROM nnu")
    ds = lance.dataset(path)
    assert ds.version == before + 1
    assert ds.schema == schema
    assert {x["id"]: x for x in ds.to_table().to_pylist()} == model
    ds.validate()
    refused(spark, "nnull", f"SELECT _rowaddr, CAST(NULL AS INT) AS v FROM lance.db.{name} LIMIT 1",
            f"ALTER TABLE lance.db.{name} UPDATE COLUMNS v FROM nnull", "Cannot write a null to column 'v'")
    assert lance.dataset(path).version == before + 1
