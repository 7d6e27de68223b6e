"""Schema evolution through Spark SQL (ALTER TABLE ... ADD/DROP/RENAME COLUMN, ALTER COLUMN ... DROP NOT NULL) on
Lance tables pylance wrote: each change is one new version that only changes the schema; pylance reads the result
(old rows with null in added columns), appends to it, and validate() passes; field ids are never reused; earlier
versions keep their schema. Unsupported changes are refused with a message saying so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "alter_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-alter-tests", wh)
    yield session
    session.stop()


def make(wh: Path, name: str) -> str:
    path = str(wh / "db" / f"{name}.lance")
    lance.write_dataset(pa.table({
        "id": pa.array(range(4), pa.int64()),
        "st": pa.array([{"a": i} for i in range(4)], pa.struct([("a", pa.int32())])),
        "s": pa.array(["w", "x", "y", "z"]),
    }), path)
    return path


def ids(path: str) -> dict:
    return {f.name(): f.id() for f in lance.dataset(path).lance_schema.fields()}


def test_add_columns_top_level_and_nested(spark, wh):
    path = make(wh, "add")
    spark.sql("ALTER TABLE lance.db.add ADD COLUMNS (note STRING, tags ARRAY<STRING>)")
    spark.sql("ALTER TABLE lance.db.add ADD COLUMN st.b DOUBLE")
    ds = lance.dataset(path)
    assert ds.version == 3
    assert ds.schema.names == ["id", "st", "s", "note", "tags"]
    assert ds.schema.field("st").type == pa.struct([("a", pa.int32()), ("b", pa.float64())])
    rows = ds.to_table().to_pylist()
    assert rows[0] == {"id": 0, "st": {"a": 0, "b": None}, "s": "w", "note": None, "tags": None}
    ds.validate()
    # Both writers append under the new schema.
    spark.sql("INSERT INTO lance.db.add VALUES (9, named_struct('a', 9, 'b', 1.5), 'n', 'hi', array('t'))")
    lance.write_dataset(pa.table({"id": pa.array([10], pa.int64()),
                                  "st": pa.array([{"a": 10, "b": 2.5}], ds.schema.field("st").type),
                                  "s": ["p"], "note": ["py"], "tags": pa.array([["u"]], pa.list_(pa.string()))}),
                        path, mode="append")
    ds = lance.dataset(path)
    ds.validate()
    got = {r["id"]: r for r in ds.to_table().to_pylist()}
    assert got[9] == {"id": 9, "st": {"a": 9, "b": 1.5}, "s": "n", "note": "hi", "tags": ["t"]}
    assert got[10]["note"] == "py"
    assert [r.note for r in spark.sql("SELECT note FROM lance.db.add ORDER BY id").collect()] == [None] * 4 + ["hi", "py"]
    # The version before the change keeps its schema.
    assert lance.dataset(path, version=1).schema.names == ["id", "st", "s"]
    assert spark.sql("SELECT * FROM lance.db.add VERSION AS OF 1").columns == ["id", "st", "s"]


def test_drop_rename_and_ids_never_reused(spark, wh):
    path = make(wh, "drop")
    before = ids(path)
    spark.sql("ALTER TABLE lance.db.drop DROP COLUMN s")
    spark.sql("ALTER TABLE lance.db.drop RENAME COLUMN id TO key")
    spark.sql("ALTER TABLE lance.db.drop ADD COLUMN s STRING")
    ds = lance.dataset(path)
    ds.validate()
    assert ds.schema.names == ["key", "st", "s"]
    after = ids(path)
    assert after["key"] == before["id"]
    assert after["s"] > max(before.values())          # the dropped column's id is not reused
    assert [r["s"] for r in ds.to_table().to_pylist()] == [None] * 4   # the old values of 's' do not come back
    assert [r.key for r in spark.sql("SELECT key FROM lance.db.drop ORDER BY key").collect()] == [0, 1, 2, 3]


def test_drop_not_null(spark, wh):
    spark.sql("CREATE TABLE lance.db.nn (id BIGINT NOT NULL, s STRING)")
    path = str(wh / "db" / "nn.lance")
    assert not lance.dataset(path).schema.field("id").nullable
    spark.sql("ALTER TABLE lance.db.nn ALTER COLUMN id DROP NOT NULL")
    assert lance.dataset(path).schema.field("id").nullable
    spark.sql("INSERT INTO lance.db.nn VALUES (NULL, 'x')")
    assert lance.dataset(path).to_table().to_pylist() == [{"id": None, "s": "x"}]


@pytest.mark.parametrize("sql,message", [
    ("ALTER TABLE lance.db.refuse ADD COLUMN n INT NOT NULL", "Cannot add column 'n' as NOT NULL"),
    ("ALTER TABLE lance.db.refuse ALTER COLUMN id TYPE INT", "not supported"),
    ("ALTER TABLE lance.db.refuse ADD COLUMN n INT FIRST", "ADD COLUMN ... FIRST/AFTER is not supported"),
    ("ALTER TABLE lance.db.refuse ADD COLUMN s STRING", "already exists"),
    ("ALTER TABLE lance.db.refuse DROP COLUMN nope", "nope"),
])
def test_unsupported_changes_are_refused(spark, wh, sql, message):
    refused_with_no_version(spark, wh, "refuse", sql, message)


def refused_with_no_version(spark, wh, name: str, sql: str, message: str) -> None:
    """`sql` on table `name` (made once) fails with `message`, and the table is still at its first version."""
    path = str(wh / "db" / f"{name}.lance")
    if not os.path.exists(path):
        make(wh, name)
    with pytest.raises(Exception, match=message):
        spark.sql(sql)
    assert lance.dataset(path).version == 1


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_a_field_added_to_a_struct_keeps_the_struct_nulls(spark, wh, version):
    """After ALTER TABLE ADD COLUMN st.c, rows whose struct is null stay null (they read as a struct of nulls: the
    struct's validity was not taken from the file that holds it), in the old fragment and beside a new one."""
    path = str(wh / "db" / f"stnulls{version.replace('.', '')}.lance")
    struct = pa.struct([("a", pa.int32()), ("b", pa.string())])
    lance.write_dataset(pa.table({"id": pa.array([0, 1, 2, 3], pa.int64()),
                                  "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": None}, None], struct)}),
                        path, data_storage_version=version)
    name = f"lance.db.stnulls{version.replace('.', '')}"
    spark.sql(f"ALTER TABLE {name} ADD COLUMN st.c INT")
    spark.sql(f"INSERT INTO {name} VALUES (4, named_struct('a', 5, 'b', 'y', 'c', 6)), (5, NULL)")
    want = {r["id"]: r["st"] for r in lance.dataset(path).to_table().to_pylist()}
    assert want[1] is None and want[2] == {"a": None, "b": None, "c": None}
    got = {r.id: (r.st.asDict() if r.st is not None else None) for r in spark.sql(f"SELECT * FROM {name}").collect()}
    assert got == want
    # The struct alone, a child alone, and with a deletion (take).
    assert {r.id: r.st is None for r in spark.sql(f"SELECT id, st FROM {name}").collect()} == \
        {k: v is None for k, v in want.items()}
    assert {r.id: r.c for r in spark.sql(f"SELECT id, st.c AS c FROM {name}").collect()} == \
        {k: (v or {}).get("c") for k, v in want.items()}
    spark.sql(f"DELETE FROM {name} WHERE id = 0")
    got = {r.id: (r.st.asDict() if r.st is not None else None) for r in spark.sql(f"SELECT * FROM {name}").collect()}
    assert got == {k: v for k, v in want.items() if k != 0}


def config_seen_by_spark(spark, name: str) -> dict:
    """The table properties Spark shows that are the table's config (not those the connector adds)."""
    rows = spark.sql(f"SHOW TBLPROPERTIES lance.db.{name}").collect()
    described = {"provider", "latest_version", "owner", "location", "version", "committed_at", "fragments", "rows",
                 "file_format_version", "manifest_naming", "reader_feature_flags", "writer_feature_flags", "written_by"}
    return {r.key: r.value for r in rows if r.key not in described}


def test_table_properties_set_and_unset_as_pylance_sees_them(spark, wh):
    """Seeded random SET/UNSET TBLPROPERTIES from Spark and update_config/delete_config_keys from pylance, in turn:
    after each step both see the config a model of the changes gives; each Spark change is one UpdateConfig version
    that pylance reads as one, and validate() passes. The table's index stays through every change (config changes
    once dropped the manifest's index section)."""
    import random
    r = random.Random(int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126")))
    path = make(wh, "props")
    lance.dataset(path).create_scalar_index("id", "BTREE", name="id_idx")
    indexes = [(i["name"], i["uuid"]) for i in lance.dataset(path).list_indices()]
    model: dict = {}
    keys = ["k1", "k.2", "note", "Mixed", "lance.x", "rows_per_partition"]
    for step in range(8):
        version = lance.dataset(path).version
        if r.random() < 0.6:
            upserts = {k: str(r.randrange(1, 99)) for k in r.sample(keys, r.randint(1, 3))}
            sets = ", ".join(f"'{k}' = '{v}'" for k, v in upserts.items())
            spark.sql(f"ALTER TABLE lance.db.props SET TBLPROPERTIES ({sets})")
            model.update(upserts)
            txn = lance.dataset(path).read_transaction(version + 1)
            assert type(txn.operation).__name__ == "UpdateConfig", txn
        elif model and r.random() < 0.5:
            gone = r.sample(sorted(model), r.randint(1, len(model)))
            spark.sql(f"ALTER TABLE lance.db.props UNSET TBLPROPERTIES ({', '.join(repr(k) for k in gone)})")
            for k in gone:
                del model[k]
        elif model:
            gone = r.sample(sorted(model), 1)
            lance.dataset(path).delete_config_keys(gone)
            del model[gone[0]]
        else:
            lance.dataset(path).update_config({"from_pylance": str(step)})
            model["from_pylance"] = str(step)
        ds = lance.dataset(path)
        assert ds.version == version + 1, "each change is one version"
        assert ds.config() == model
        assert config_seen_by_spark(spark, "props") == model
        assert [(i["name"], i["uuid"]) for i in ds.list_indices()] == indexes
        ds.validate()
    # A property the reads use takes effect: rows_per_partition splits the 4 rows into that many partitions.
    spark.sql("ALTER TABLE lance.db.props SET TBLPROPERTIES ('rows_per_partition' = '1')")
    assert spark.table("lance.db.props").rdd.getNumPartitions() == 4
    assert lance.dataset(path).to_table().num_rows == 4


@pytest.mark.parametrize("sql,message", [
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('batch_size' = 'lots')",
     "Table property batch_size must be a positive number, not 'lots'"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('max_rows_per_file' = '0')",
     "Table property max_rows_per_file must be a positive number, not '0'"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('columnar' = 'maybe')",
     "Table property columnar must be true or false, not 'maybe'"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('file_format_version' = '2.1')",
     "Table property file_format_version shapes the table when it is created"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('s.lance.encoding' = 'blob')",
     "Table property s.lance.encoding cannot be set or removed on lance.db.badprops: column s exists"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('later.lance.encoding' = 'dict')",
     "Table property later.lance.encoding must be 'blob', not 'dict'"),
    ("ALTER TABLE lance.db.badprops SET TBLPROPERTIES ('driver_lookup_rows' = '-2')",
     "Table property driver_lookup_rows must be a whole number, 0 or more, not '-2'"),
])
def test_bad_table_properties_are_refused_before_any_commit(spark, wh, sql, message):
    refused_with_no_version(spark, wh, "badprops", sql, message)


def test_rename_moves_the_table_with_its_history(spark, wh):
    """ALTER TABLE ... RENAME TO in a warehouse catalog: the directory moves, with its versions and tags;
    pylance reads and validates it at the new place; a name without a namespace stays in the table's namespace."""
    path = make(wh, "before")
    spark.sql("INSERT INTO lance.db.before (id, s) VALUES (9, 'n')")
    spark.sql("ALTER TABLE lance.db.before CREATE TAG first AS OF VERSION 1")
    spark.sql("ALTER TABLE lance.db.before CREATE BRANCH dev")
    spark.sql("INSERT INTO lance.db.before.branch_dev (id, s) VALUES (10, 'b')")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lance.other")
    # A branch's versions name the table's directory: refused until the branch is gone.
    with pytest.raises(Exception, match="has branches \\(dev\\)"):
        spark.sql("ALTER TABLE lance.db.before RENAME TO after")
    assert sorted(r.id for r in spark.table("lance.db.before.branch_dev").collect()) == [0, 1, 2, 3, 9, 10]
    spark.sql("ALTER TABLE lance.db.before DROP BRANCH dev")
    spark.sql("ALTER TABLE lance.db.before RENAME TO after")
    assert not os.path.exists(path)
    moved = lance.dataset(str(wh / "db" / "after.lance"))
    moved.validate()
    assert sorted(moved.to_table().column("id").to_pylist()) == [0, 1, 2, 3, 9]
    spark.sql("ALTER TABLE lance.db.after RENAME TO other.elsewhere")
    assert sorted(r.id for r in spark.table("lance.other.elsewhere").collect()) == [0, 1, 2, 3, 9]
    assert sorted(r.id for r in spark.sql("SELECT id FROM lance.other.elsewhere VERSION AS OF 'first'").collect()) == [0, 1, 2, 3]
    assert not spark.catalog.tableExists("lance.db.after")

    make(wh, "taken")
    with pytest.raises(Exception, match="(?i)already exists"):
        spark.sql("ALTER TABLE lance.other.elsewhere RENAME TO db.taken")
    with pytest.raises(Exception, match="(?i)nowhere"):
        spark.sql("ALTER TABLE lance.other.elsewhere RENAME TO nowhere.t")
    with pytest.raises(Exception, match="(?i)cannot be found|TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("ALTER TABLE lance.db.missing RENAME TO m2")
    assert sorted(lance.dataset(str(wh / "other" / "elsewhere.lance")).to_table().column("id").to_pylist()) == [0, 1, 2, 3, 9]
