"""Tables created from Spark with stable row ids (lance-spark's `TBLPROPERTIES ('enable_stable_row_ids' = 'true')`,
pylance's `enable_stable_row_ids=True`, also as a write option): the manifest has the feature, rows keep their row
ids through updates, merges and compaction, and the same statements give the same row ids, creation and update
versions as on a table pylance created with stable row ids. Asking for stable row ids where a table exists without
them (or the other way round) is refused; nothing is ever silently ignored."""

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

ROW_COLUMNS = ["id", "v", "_rowid", "_row_created_at_version", "_row_last_updated_at_version"]


# Seeded statements: `make test` runs a small budget, `make fuzz` more (SPARKLANCE_FUZZ_SEED, SPARKLANCE_FUZZ_N).
SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "1"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))

@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "stable_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-stable-row-ids", wh)
    yield session
    session.stop()


def rows(path: str) -> list:
    """Every live row with its row id and row versions, as pylance reads them, in id order."""
    ds = lance.dataset(path)
    t = ds.scanner(columns=["id", "v", "_row_created_at_version", "_row_last_updated_at_version"],
                   with_row_id=True).to_table()
    return sorted(zip(*[t.column(c).to_pylist() for c in ROW_COLUMNS]))


def test_created_with_stable_row_ids_in_sql_and_kept_through_changes(spark, wh):
    spark.sql("CREATE TABLE lance.db.users (id BIGINT, v STRING) TBLPROPERTIES ('enable_stable_row_ids' = 'true')")
    path = str(wh / "db" / "users.lance")
    ds = lance.dataset(path)
    assert ds.has_stable_row_ids
    assert "enable_stable_row_ids" not in ds.config()   # a property that shapes the table, not table config
    spark.sql("INSERT INTO lance.db.users VALUES (1, 'a'), (2, 'b')")
    spark.sql("INSERT INTO lance.db.users VALUES (3, 'c')")
    before = {r[0]: r[2] for r in rows(path)}
    assert sorted(before.values()) == [0, 1, 2]       # row ids, not addresses (the second fragment is 1 << 32)
    spark.sql("UPDATE lance.db.users SET v = 'B' WHERE id = 2")
    spark.sql("OPTIMIZE lance.db.users")
    after = rows(path)
    assert {r[0]: r[2] for r in after} == before
    assert [r[1] for r in after] == ["a", "B", "c"]
    lance.dataset(path).validate()
    with pytest.raises(Exception, match="enable_stable_row_ids shapes the table"):
        spark.sql("ALTER TABLE lance.db.users SET TBLPROPERTIES ('enable_stable_row_ids' = 'true')")


def test_ctas_writeto_and_dataframe_writes_create_them(spark, wh):
    spark.sql("CREATE TABLE lance.db.ctas TBLPROPERTIES ('enable_stable_row_ids' = 'true') AS "
              "SELECT id, CAST(id AS STRING) AS v FROM range(5)")
    spark.range(3).selectExpr("id", "'x' AS v").writeTo("lance.db.wt") \
        .tableProperty("enable_stable_row_ids", "true").create()
    by_path = str(wh / "by_path.lance")
    spark.range(4).selectExpr("id", "'p' AS v").repartition(2).write.format("lance") \
        .option("enable_stable_row_ids", "true").save(by_path)
    spark.range(2).selectExpr("id", "'q' AS v").write.format("lance").option("enable_stable_row_ids", "false") \
        .save(str(wh / "plain.lance"))
    for path, n in ((str(wh / "db" / "ctas.lance"), 5), (str(wh / "db" / "wt.lance"), 3), (by_path, 4)):
        ds = lance.dataset(path)
        assert ds.has_stable_row_ids, path
        assert sorted(r[2] for r in rows(path)) == list(range(n))
        ds.validate()
    assert not lance.dataset(str(wh / "plain.lance")).has_stable_row_ids


def test_a_table_keeps_what_it_was_created_with(spark, wh):
    plain = str(wh / "keep_plain.lance")
    stable = str(wh / "keep_stable.lance")
    lance.write_dataset(pa.table({"id": [1], "v": ["a"]}), plain)
    lance.write_dataset(pa.table({"id": [1], "v": ["a"]}), stable, enable_stable_row_ids=True)
    df = spark.createDataFrame([(2, "b")], "id bigint, v string")
    for path, asked in ((plain, "true"), (stable, "false")):
        version = lance.dataset(path).version
        for mode in ("append", "overwrite"):
            with pytest.raises(Exception, match="stable row ids"):
                df.write.format("lance").mode(mode).option("enable_stable_row_ids", asked).save(path)
        assert lance.dataset(path).version == version
    with pytest.raises(Exception, match="must be true or false, not 'maybe'"):
        df.write.format("lance").option("enable_stable_row_ids", "maybe").save(str(wh / "never.lance"))
    assert not (wh / "never.lance").exists()
    # The same value as the table's is accepted.
    df.write.format("lance").mode("append").option("enable_stable_row_ids", "true").save(stable)
    assert sorted(r[2] for r in rows(stable)) == [0, 1]


def statements(rnd: random.Random, name: str, n: int) -> list:
    out, next_id = [], 0
    for _ in range(n):
        kind = rnd.choice(["insert", "insert", "update", "delete", "merge", "optimize"])
        if kind == "insert":
            k = rnd.randint(1, 5)
            out.append(f"INSERT INTO lance.db.{name} VALUES " +
                       ", ".join(f"({next_id + i}, 'v{next_id + i}')" for i in range(k)))
            next_id += k
        elif kind == "update":
            out.append(f"UPDATE lance.db.{name} SET v = concat(v, 'u') WHERE id % {rnd.randint(2, 4)} = {rnd.randint(0, 1)}")
        elif kind == "delete":
            out.append(f"DELETE FROM lance.db.{name} WHERE id = {rnd.randint(0, max(next_id, 1))}")
        elif kind == "merge":
            a = rnd.randint(0, next_id + 2)
            out.append(f"MERGE INTO lance.db.{name} t USING (SELECT id, 'm' AS v FROM range({a}, {a + 3})) s "
                       "ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
            next_id = max(next_id, a + 3)
        else:
            out.append(f"OPTIMIZE lance.db.{name}")
    return out


@pytest.mark.parametrize("seed", [SEED + i for i in range(2 * N)])
def test_seeded_statements_give_pylance_created_tables_row_ids(spark, wh, seed):
    """The twin of each table is created by pylance with stable row ids; the same seeded statements run on both;
    row ids and row versions of every row are equal, and pylance validates both."""
    rnd = random.Random(seed)
    ours, theirs = f"ours_{seed}", f"theirs_{seed}"
    spark.sql(f"CREATE TABLE lance.db.{ours} (id BIGINT, v STRING) TBLPROPERTIES ('enable_stable_row_ids' = 'true')")
    lance.write_dataset(pa.table({"id": pa.array([], pa.int64()), "v": pa.array([], pa.string())}),
                        str(wh / "db" / f"{theirs}.lance"), enable_stable_row_ids=True)
    for statement in statements(rnd, "{name}", 12):
        for name in (ours, theirs):
            spark.sql(statement.replace("{name}", name))
    ours_rows, theirs_rows = rows(str(wh / "db" / f"{ours}.lance")), rows(str(wh / "db" / f"{theirs}.lance"))
    assert ours_rows == theirs_rows
    assert len(ours_rows) > 0
    for name in (ours, theirs):
        lance.dataset(str(wh / "db" / f"{name}.lance")).validate()
