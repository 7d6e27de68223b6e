"""Lance Namespaces (docs/reading.md, "Lance Namespaces"; layout in docs/dev/namespaces.md): a catalog with
``impl = dir`` shares a directory namespace with pylance's and LanceDB's (the ``__manifest`` table, flat
``<root>/<name>.lance`` tables), one with ``impl = rest`` talks to a Lance Namespace REST server (here pylance's
``RestAdapter`` over a directory namespace, started on loopback). Both ways: what lance_namespace creates shows in
``SHOW ...`` and reads equal; what Spark creates lance_namespace lists and pylance reads and validates."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import lance
import lance_namespace as ln
import pyarrow as pa
import pytest
from lance_namespace import (CreateNamespaceRequest, CreateTableRequest, DescribeNamespaceRequest,
                             DescribeTableRequest, DropTableRequest, ListNamespacesRequest, ListTablesRequest)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import arrow_df, lance_raises, new_catalog  # noqa: E402

import sparklance  # noqa: E402
from pyspark.errors import AnalysisException  # noqa: E402



def catalog(spark, **props) -> str:
    """A new catalog configured with ``props``."""
    return new_catalog(spark, "ns", **props)


def ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def random_table(rng: random.Random) -> pa.Table:
    n = rng.randint(1, 50)
    return pa.table({
        "id": pa.array(rng.sample(range(10_000), n), pa.int64()),
        "x": pa.array([rng.random() if rng.random() > 0.2 else None for _ in range(n)], pa.float64()),
        "s": pa.array(["".join(rng.choice("abcxyz") for _ in range(rng.randint(0, 6))) for _ in range(n)]),
    })


def rows(table: pa.Table) -> list:
    return sorted(tuple(r.values()) for r in table.to_pylist())


def spark_rows(df) -> list:
    return sorted(tuple(r) for r in df.select("id", "x", "s").collect())


def names(df, column) -> list:
    return sorted(r[column] for r in df.collect())


def manifest_rows(root) -> list:
    ds = lance.dataset(str(Path(root) / "__manifest"))
    ds.validate()
    return sorted((r["object_id"], r["object_type"]) for r in ds.to_table().to_pylist())


def lance_location(ns, table_id) -> str:
    return ns.describe_table(DescribeTableRequest(id=table_id)).location


# ------------------------------------------------------------------------------------------------ impl = dir


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pylance_namespaces_show_in_spark_and_read_equal(spark, tmp_path, seed):
    rng = random.Random(seed)
    root = tmp_path / "root"
    ns = ln.connect("dir", {"root": str(root)})
    namespaces = [[]]
    for i in range(rng.randint(1, 4)):
        parent = rng.choice(namespaces)
        if len(parent) < 2:
            child = parent + [f"n{i}"]
            ns.create_namespace(CreateNamespaceRequest(id=child, properties={"k": f"v{i}"}))
            namespaces.append(child)
    written = {}
    for i in range(rng.randint(2, 6)):
        where = rng.choice(namespaces)
        data = random_table(rng)
        ns.create_table(CreateTableRequest(id=where + [f"t{i}"]), ipc(data))
        written[tuple(where + [f"t{i}"])] = data
    # A table pylance wrote at the root without the namespace API: found by directory listing.
    plain = random_table(rng)
    lance.write_dataset(plain, str(root / "plain.lance"))
    written[("plain",)] = plain

    cat = catalog(spark, impl="dir", root=root)
    for parent in namespaces:
        children = sorted(n[-1] for n in namespaces if len(n) == len(parent) + 1 and n[:len(parent)] == parent)
        shown = spark.sql(f"SHOW NAMESPACES IN {'.'.join([cat] + parent)}")
        assert sorted(r[0].split(".")[-1] for r in shown.collect()) == children
        tables = sorted(k[-1] for k in written if list(k[:-1]) == parent)
        assert names(spark.sql(f"SHOW TABLES IN {'.'.join([cat] + parent)}"), "tableName") == tables
    for key, data in written.items():
        assert spark_rows(spark.table(".".join((cat,) + key))) == rows(data)
    for n in namespaces[1:]:
        props = dict((r[0], r[1]) for r in spark.sql(f"DESCRIBE NAMESPACE EXTENDED {'.'.join([cat] + n)}").collect())
        assert f"(k,v{n[-1][1:]})" in str(props.get("Properties")), props


def test_spark_tables_are_visible_to_lance_namespace(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE NAMESPACE {cat}.db COMMENT 'sales' WITH PROPERTIES ('team' = 'ads')")
    spark.sql(f"CREATE NAMESPACE {cat}.db.inner")
    rng = random.Random(7)
    data = random_table(rng)
    arrow_df(spark, data).createOrReplaceTempView("src")
    spark.sql(f"CREATE TABLE {cat}.db.ctas AS SELECT * FROM src")
    spark.sql(f"CREATE TABLE {cat}.db.inner.empty (id BIGINT, name STRING)")
    spark.sql(f"INSERT INTO {cat}.db.inner.empty VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"CREATE TABLE {cat}.top AS SELECT * FROM src WHERE id % 2 = 0")

    ns = ln.connect("dir", {"root": str(root)})
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["db"]
    assert ns.list_namespaces(ListNamespacesRequest(id=["db"])).namespaces == ["inner"]
    assert ns.describe_namespace(DescribeNamespaceRequest(id=["db"])).properties["team"] == "ads"
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["ctas"]
    assert ns.list_tables(ListTablesRequest(id=["db", "inner"])).tables == ["empty"]
    assert ns.list_tables(ListTablesRequest(id=[])).tables == ["top"]
    # Locations as lance-namespace names them: flat at the root, <hash>_<object id> in a child namespace.
    assert lance_location(ns, ["top"]).rstrip("/").endswith("/top.lance")
    assert Path(lance_location(ns, ["db", "ctas"]).replace("file://", "")).name.endswith("_db$ctas")
    ctas = lance.dataset(lance_location(ns, ["db", "ctas"]))
    ctas.validate()
    assert rows(ctas.to_table()) == rows(data)
    empty = lance.dataset(lance_location(ns, ["db", "inner", "empty"]))
    empty.validate()
    assert sorted(empty.to_table().to_pylist(), key=lambda r: r["id"]) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert rows(lance.dataset(lance_location(ns, ["top"])).to_table()) == rows(data.filter(pa.compute.equal(
        pa.compute.bit_wise_and(data["id"], 1), 0)))
    assert manifest_rows(root) == [("db", "namespace"), ("db$ctas", "table"), ("db$inner", "namespace"),
                                   ("db$inner$empty", "table"), ("top", "table")]

    # pylance keeps using the namespace we wrote, and we see its changes.
    ns.create_table(CreateTableRequest(id=["db", "from_lance"]), ipc(data))
    assert names(spark.sql(f"SHOW TABLES IN {cat}.db"), "tableName") == ["ctas", "from_lance"]

    # DROP TABLE removes the entry and keeps the files (lance-spark's deregistration); DROP NAMESPACE needs CASCADE
    # while the namespace holds anything, and CASCADE deregisters the tables too.
    ctas_dir = Path(lance_location(ns, ["db", "ctas"]).replace("file://", ""))
    spark.sql(f"DROP TABLE {cat}.db.ctas")
    assert rows(lance.dataset(str(ctas_dir)).to_table()) == rows(data)
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["from_lance"]
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.db")
    from_lance_dir = Path(lance_location(ns, ["db", "from_lance"]).replace("file://", ""))
    spark.sql(f"DROP NAMESPACE {cat}.db CASCADE")
    assert rows(lance.dataset(str(from_lance_dir)).to_table()) == rows(data)
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == []
    assert manifest_rows(root) == [("top", "table")]
    assert names(spark.sql(f"SHOW NAMESPACES IN {cat}"), "namespace") == []


def test_failed_ctas_leaves_no_entry(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"CREATE TABLE {cat}.db.t AS SELECT id, assert_true(id < 5, 'boom') AS ok FROM range(10)").collect()
    assert names(spark.sql(f"SHOW TABLES IN {cat}.db"), "tableName") == []
    assert manifest_rows(root) == [("db", "namespace")]
    assert [p.name for p in root.iterdir() if p.name != "__manifest"] == []


def table_in_dir_namespace(spark, tmp_path, seed, *namespaces):
    """A dir namespace catalog at ``tmp_path/root`` with namespace ``db`` (and ``namespaces``) and a seeded random
    table ``db.t`` written by CTAS from the view ``src``: (root, catalog, pylance's namespace, rows, location)."""
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    for n in ("db",) + namespaces:
        spark.sql(f"CREATE NAMESPACE {cat}.{n}")
    data = random_table(random.Random(seed))
    arrow_df(spark, data).createOrReplaceTempView("src")
    spark.sql(f"CREATE TABLE {cat}.db.t AS SELECT * FROM src")
    ns = ln.connect("dir", {"root": str(root)})
    return root, cat, ns, data, lance_location(ns, ["db", "t"])


def test_failed_replace_keeps_the_table(spark, tmp_path):
    """A CREATE OR REPLACE / REPLACE refused before it writes leaves the table it would have replaced as it was."""
    root, cat, ns, data, location = table_in_dir_namespace(spark, tmp_path, 5)
    for statement in ["CREATE OR REPLACE TABLE", "REPLACE TABLE"]:
        with lance_raises(sparklance.UnsupportedFeatureError, match="legacy Lance file format"):
            spark.sql(f"{statement} {cat}.db.t TBLPROPERTIES ('file_format_version' = 'legacy') AS SELECT * FROM src")
        with pytest.raises(Exception, match="boom"):
            spark.sql(f"{statement} {cat}.db.t AS SELECT id, assert_true(id < 0, 'boom') AS ok FROM range(3)").collect()
        assert spark_rows(spark.table(f"{cat}.db.t")) == rows(data)
        assert lance_location(ns, ["db", "t"]) == location
        ds = lance.dataset(location)
        ds.validate()
        assert rows(ds.to_table()) == rows(data)


@pytest.mark.parametrize("seed", [1, 2])
def test_drop_keeps_files_register_finds_them_purge_deletes(spark, tmp_path, seed):
    """lance-spark's DROP TABLE semantics in a namespace catalog: DROP deregisters, CREATE TABLE ... LOCATION
    registers a table that exists (or creates one there), PURGE deletes; pylance's namespace sees each step."""
    rng = random.Random(seed)
    root, cat, ns, data, location = table_in_dir_namespace(spark, tmp_path, seed)
    directory = Path(location.replace("file://", ""))

    spark.sql(f"DROP TABLE {cat}.db.t")
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == []
    assert not spark.catalog.tableExists(f"{cat}.db.t")
    assert rows(lance.dataset(location).to_table()) == rows(data)

    # Registered again under another name: by a path relative to the root, or absolute under it.
    given = directory.name if rng.random() < 0.5 else str(directory)
    spark.sql(f"CREATE TABLE {cat}.db.again LOCATION '{given}'")
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["again"]
    assert lance_location(ns, ["db", "again"]).rstrip("/") == location.rstrip("/")
    assert spark_rows(spark.table(f"{cat}.db.again")) == rows(data)
    spark.sql(f"INSERT INTO {cat}.db.again SELECT * FROM src")
    ds = lance.dataset(location)
    ds.validate()
    assert rows(ds.to_table()) == sorted(rows(data) * 2)

    # Columns, when given, must be the table's; a second name for the same location is refused; so is a CTAS there.
    lance.write_dataset(pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["x", None]}), str(root / "sub" / "theirs.lance"))
    with lance_raises(sparklance.InvalidArgumentError, match="names columns"):
        spark.sql(f"CREATE TABLE {cat}.db.wrong (k INT, v INT) LOCATION 'sub/theirs.lance'")
    spark.sql(f"CREATE TABLE {cat}.db.theirs (K INT, v STRING) LOCATION 'sub/theirs.lance'")
    assert sorted(map(tuple, spark.table(f"{cat}.db.theirs").collect()), key=str) == [(1, "x"), (2, None)]
    spark.sql(f"DROP TABLE {cat}.db.theirs")
    with lance_raises(sparklance.InvalidArgumentError, match="location of table db.again"):
        spark.sql(f"CREATE TABLE {cat}.db.twice LOCATION '{directory.name}'")
    with lance_raises(sparklance.InvalidArgumentError, match="(?i)a Lance table is there already"):
        spark.sql(f"CREATE TABLE {cat}.db.ctas LOCATION 'sub/theirs.lance' AS SELECT * FROM src")
    with lance_raises(sparklance.InvalidArgumentError, match="under its root"):
        spark.sql(f"CREATE TABLE {cat}.db.out LOCATION '{tmp_path / 'elsewhere.lance'}'")
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["again"]
    assert not (tmp_path / "elsewhere.lance").exists()

    # A new table at a LOCATION under the root: created there, and registered.
    spark.sql(f"CREATE TABLE {cat}.db.fresh (id BIGINT, name STRING) LOCATION 'mine/fresh.lance'")
    spark.sql(f"INSERT INTO {cat}.db.fresh VALUES (1, 'a')")
    fresh = lance.dataset(str(root / "mine" / "fresh.lance"))
    fresh.validate()
    assert fresh.to_table().to_pylist() == [{"id": 1, "name": "a"}]
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["again", "fresh"]

    # PURGE deletes the files as well.
    spark.sql(f"DROP TABLE {cat}.db.again PURGE")
    assert not directory.exists()
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["fresh"]
    spark.sql(f"DROP TABLE IF EXISTS {cat}.db.again")
    spark.sql(f"DROP TABLE IF EXISTS {cat}.db.again PURGE")


def test_root_tables_found_by_listing_are_not_deregistered(spark, tmp_path):
    """A root table at <root>/<name>.lance stays visible through directory listing, so DROP (keep the files) is
    refused with the way out, and PURGE deletes it."""
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE TABLE {cat}.top AS SELECT id FROM range(3)")
    lance.write_dataset(pa.table({"id": [1, 2]}), str(root / "plain.lance"))
    for name in ["top", "plain"]:
        with lance_raises(sparklance.UnsupportedFeatureError, match="PURGE"):
            spark.sql(f"DROP TABLE {cat}.{name}")
        assert spark.catalog.tableExists(f"{cat}.{name}")
        spark.sql(f"DROP TABLE {cat}.{name} PURGE")
        assert not (root / f"{name}.lance").exists()
    assert names(spark.sql(f"SHOW TABLES IN {cat}"), "tableName") == []


def test_rename_changes_the_name_and_keeps_the_files(spark, tmp_path):
    """ALTER TABLE ... RENAME TO in a dir namespace: the row gets the new name (pylance follows it to the same
    location); a root table known only by its directory is refused, and its old directory name stays taken."""
    root, cat, ns, data, location = table_in_dir_namespace(spark, tmp_path, 13, "other")
    spark.sql(f"USE {cat}")
    spark.sql("ALTER TABLE db.t RENAME TO other.t2")
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == []
    assert lance_location(ns, ["other", "t2"]) == location
    assert rows(lance.dataset(location).to_table()) == rows(data)
    assert spark_rows(spark.table(f"{cat}.other.t2")) == rows(data)
    spark.sql(f"CREATE TABLE {cat}.db.t (id BIGINT)")       # the old name is free, at a new directory
    assert lance_location(ns, ["db", "t"]) != location
    with pytest.raises(AnalysisException, match="(?i)already exists"):
        spark.sql("ALTER TABLE other.t2 RENAME TO db.t")
    with pytest.raises(AnalysisException, match="(?i)nowhere"):
        spark.sql("ALTER TABLE other.t2 RENAME TO nowhere.t")

    # pylance finds a root table by its <root>/<name>.lance directory only: a root name elsewhere is refused.
    spark.sql(f"CREATE TABLE {cat}.top AS SELECT id FROM range(2)")
    with lance_raises(sparklance.UnsupportedFeatureError, match="dir_listing_enabled"):
        spark.sql("ALTER TABLE top RENAME TO top2")
    spark.sql("ALTER TABLE other.t2 RENAME TO t3")            # a name without a namespace stays in the table's
    assert lance_location(ns, ["other", "t3"]) == location
    with lance_raises(sparklance.UnsupportedFeatureError, match="dir_listing_enabled"):
        spark.sql("ALTER TABLE top RENAME TO db.moved")
    lance.write_dataset(pa.table({"id": [1]}), str(root / "plain.lance"))
    with lance_raises(sparklance.UnsupportedFeatureError, match="dir_listing_enabled"):
        spark.sql("ALTER TABLE plain RENAME TO db.plain2")
    assert ns.list_tables(ListTablesRequest(id=[])).tables == ["plain", "top"]
    # Without listing, root tables have rows like any other, and move freely.
    nolist = catalog(spark, impl="dir", root=root, dir_listing_enabled="false")
    spark.sql(f"CREATE TABLE {nolist}.r AS SELECT id FROM range(3)")
    spark.sql(f"ALTER TABLE {nolist}.r RENAME TO r2")
    spark.sql(f"ALTER TABLE {nolist}.r2 RENAME TO db.r3")
    assert spark.table(f"{nolist}.db.r3").count() == 3
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == ["r3", "t"]
    spark.sql("USE spark_catalog")


def test_concurrent_creates_lose_no_entries(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    ns = ln.connect("dir", {"root": str(root)})
    errors, theirs_failed = [], []

    def ours(i):
        try:
            spark.sql(f"CREATE TABLE {cat}.db.s{i} (id BIGINT)")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def theirs(i):
        try:
            ns.create_table(CreateTableRequest(id=["db", f"p{i}"]), ipc(pa.table({"id": pa.array([i], pa.int64())})))
        except Exception as e:  # noqa: BLE001 - pylance may give up on a manifest that changed under it
            theirs_failed.append(e)

    threads = [threading.Thread(target=ours, args=(i,)) for i in range(6)]
    threads += [threading.Thread(target=theirs, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    listed = names(spark.sql(f"SHOW TABLES IN {cat}.db"), "tableName")
    assert [t for t in listed if t.startswith("s")] == [f"s{i}" for i in range(6)]
    assert len([t for t in listed if t.startswith("p")]) == 2 - len(theirs_failed), theirs_failed
    assert ns.list_tables(ListTablesRequest(id=["db"])).tables == listed
    lance.dataset(str(root / "__manifest")).validate()


def test_same_name_created_concurrently_is_one_table(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    outcomes = []

    def create(i):
        try:
            spark.sql(f"CREATE TABLE {cat}.db.same AS SELECT {i} AS id")
            outcomes.append(("ok", i))
        except AnalysisException as e:
            outcomes.append(("exists", str(e)))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for kind, i in outcomes if kind == "ok"]
    assert len(winners) == 1, outcomes
    assert all("already exists" in str(o[1]) or "TABLE_OR_VIEW_ALREADY_EXISTS" in str(o[1])
               for o in outcomes if o[0] == "exists"), outcomes
    assert [r.id for r in spark.table(f"{cat}.db.same").collect()] == winners
    assert manifest_rows(root) == [("db", "namespace"), ("db$same", "table")]


def test_bad_names_and_options_are_clear_errors(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    with lance_raises(sparklance.InvalidArgumentError, match=r"'a\$b' is not a valid namespace name"):
        spark.sql(f"CREATE NAMESPACE {cat}.`a$b`")
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    with lance_raises(sparklance.InvalidArgumentError, match=r"'t\$1' is not a valid"):
        spark.sql(f"CREATE TABLE {cat}.db.`t$1` (id INT)")
    with pytest.raises(AnalysisException, match="(?i)not.*found|SCHEMA_NOT_FOUND|NAMESPACE_NOT_FOUND"):
        spark.sql(f"CREATE TABLE {cat}.nope.t (id INT)")
    with pytest.raises(AnalysisException, match="(?i)already exists|SCHEMA_ALREADY_EXISTS"):
        spark.sql(f"CREATE NAMESPACE {cat}.db")
    with lance_raises(sparklance.UnsupportedFeatureError, match="LOCATION"):
        spark.sql(f"CREATE NAMESPACE {cat}.other LOCATION '/tmp/elsewhere'")
    bad = catalog(spark, impl="dir", root=root, manifest_enbled="false")
    with lance_raises(sparklance.InvalidArgumentError, match="manifest_enbled"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, impl="dir", root=root, manifest_enabled="maybe")
    with lance_raises(sparklance.InvalidArgumentError, match="manifest_enabled must be true or false"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, impl="unity", root=root)
    with lance_raises(sparklance.UnsupportedFeatureError, match="'unity' are not supported"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, impl="dir", uri="http://localhost:1")
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown directory namespace property 'uri'"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, warehouse=root, manifest_enabled="false")
    with lance_raises(sparklance.InvalidArgumentError, match="manifest_enabled is a property of a Lance Namespace"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, impl="rest", root=root)
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown rest namespace property 'root'"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")


def test_manifest_off_is_flat_directories(spark, tmp_path):
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root, manifest_enabled="false")
    spark.sql(f"CREATE TABLE {cat}.flat AS SELECT id FROM range(5)")
    assert (root / "flat.lance" / "_versions").is_dir()
    assert not (root / "__manifest").exists()
    ns = ln.connect("dir", {"root": str(root), "manifest_enabled": "false"})
    assert ns.list_tables(ListTablesRequest(id=[])).tables == ["flat"]
    with lance_raises(sparklance.UnsupportedFeatureError, match="manifest_enabled = false"):
        spark.sql(f"CREATE NAMESPACE {cat}.db")
    assert names(spark.sql(f"SHOW TABLES IN {cat}"), "tableName") == ["flat"]
    # Without the manifest a table is its directory: it cannot leave the namespace and keep its files.
    with lance_raises(sparklance.UnsupportedFeatureError, match="manifest_enabled = false"):
        spark.sql(f"DROP TABLE {cat}.flat")
    spark.sql(f"DROP TABLE {cat}.flat PURGE")
    assert not (root / "flat.lance").exists()


def test_single_level_ns_is_one_virtual_default_namespace(spark, tmp_path):
    """The other connector's ``single_level_ns = true``: Spark sees the root's tables in one namespace, ``default``;
    pylance's root tables show there, ours are root tables pylance lists; namespaces cannot be made."""
    root = tmp_path / "root"
    rng = random.Random(7)
    theirs = random_table(rng)
    ns = ln.connect("dir", {"root": str(root)})
    ns.create_table(CreateTableRequest(id=["theirs"]), ipc(theirs))
    ns.create_namespace(CreateNamespaceRequest(id=["hidden"]))
    cat = catalog(spark, impl="dir", root=root, single_level_ns="true")
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()] == ["default"]
    spark.sql(f"CREATE TABLE {cat}.default.ours AS SELECT id FROM range(4)")
    assert names(spark.sql(f"SHOW TABLES IN {cat}.default"), "tableName") == ["ours", "theirs"]
    assert spark_rows(spark.table(f"{cat}.default.theirs")) == rows(theirs)
    assert sorted(ns.list_tables(ListTablesRequest(id=[])).tables) == ["ours", "theirs"]
    assert lance.dataset(lance_location(ns, ["ours"])).count_rows() == 4
    with lance_raises(sparklance.UnsupportedFeatureError, match="single_level_ns"):
        spark.sql(f"CREATE NAMESPACE {cat}.other")
    with pytest.raises(AnalysisException):
        spark.table(f"{cat}.hidden.t").collect()
    bad = catalog(spark, impl="dir", root=root, single_level_ns="yes")
    with lance_raises(sparklance.InvalidArgumentError, match="single_level_ns must be true or false"):
        spark.sql(f"SHOW NAMESPACES IN {bad}").collect()
    spark.sql(f"DROP TABLE {cat}.default.ours PURGE")
    assert ns.list_tables(ListTablesRequest(id=[])).tables == ["theirs"]


def test_dir_listing_off_names_root_tables_by_hash(spark, tmp_path):
    root = tmp_path / "root"
    lance.write_dataset(pa.table({"id": [1]}), str(root / "unlisted.lance"))
    cat = catalog(spark, impl="dir", root=root, dir_listing_enabled="false")
    spark.sql(f"CREATE TABLE {cat}.t AS SELECT id FROM range(3)")
    assert names(spark.sql(f"SHOW TABLES IN {cat}"), "tableName") == ["t"]
    ns = ln.connect("dir", {"root": str(root), "dir_listing_enabled": "false"})
    location = lance_location(ns, ["t"])
    assert Path(location.replace("file://", "")).name.endswith("_t")
    assert sorted(lance.dataset(location).to_table().column("id").to_pylist()) == [0, 1, 2]
    # With listing on, the unlisted table shows too.
    on = catalog(spark, impl="dir", root=root)
    assert names(spark.sql(f"SHOW TABLES IN {on}"), "tableName") == ["t", "unlisted"]


def test_default_layout_is_unchanged(spark, tmp_path):
    cat = catalog(spark, warehouse=tmp_path)
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    spark.sql(f"CREATE TABLE {cat}.db.t AS SELECT id FROM range(3)")
    assert (tmp_path / "db" / "t.lance" / "_versions").is_dir()
    assert not (tmp_path / "__manifest").exists()


# ------------------------------------------------------------------------------------------------ impl = rest


@pytest.fixture
def rest_server(tmp_path):
    import lance.namespace

    root = tmp_path / "rest_root"
    with lance.namespace.RestAdapter("dir", {"root": str(root)}, host="127.0.0.1", port=0) as adapter:
        yield root, f"http://127.0.0.1:{adapter.port}"


def test_rest_namespace_both_ways(spark, rest_server):
    root, uri = rest_server
    cat = catalog(spark, impl="rest", uri=uri)
    rng = random.Random(11)
    data = random_table(rng)
    client = ln.connect("rest", {"uri": uri})
    client.create_namespace(CreateNamespaceRequest(id=["theirs"], properties={"owner_team": "ml"}))
    client.create_table(CreateTableRequest(id=["theirs", "t"]), ipc(data))
    assert names(spark.sql(f"SHOW NAMESPACES IN {cat}"), "namespace") == ["theirs"]
    assert names(spark.sql(f"SHOW TABLES IN {cat}.theirs"), "tableName") == ["t"]
    assert spark_rows(spark.table(f"{cat}.theirs.t")) == rows(data)

    spark.sql(f"CREATE NAMESPACE {cat}.ours WITH PROPERTIES ('a' = 'b')")
    arrow_df(spark, data).writeTo(f"{cat}.ours.w").create()
    spark.sql(f"INSERT INTO {cat}.ours.w SELECT * FROM {cat}.theirs.t")
    spark.sql(f"CREATE TABLE {cat}.ours.e (id BIGINT)")
    assert client.list_tables(ListTablesRequest(id=["ours"])).tables == ["e", "w"]
    assert client.describe_namespace(DescribeNamespaceRequest(id=["ours"])).properties["a"] == "b"
    w = lance.dataset(client.describe_table(DescribeTableRequest(id=["ours", "w"])).location)
    w.validate()
    assert rows(w.to_table()) == sorted(rows(data) * 2)
    # The server's directory namespace is the same one a dir catalog (and pylance) sees.
    on_disk = ln.connect("dir", {"root": str(root)})
    assert on_disk.list_tables(ListTablesRequest(id=["ours"])).tables == ["e", "w"]
    dircat = catalog(spark, impl="dir", root=root)
    assert spark_rows(spark.table(f"{dircat}.ours.w")) == sorted(rows(data) * 2)

    # A CTAS that fails leaves no table on the server.
    with pytest.raises(Exception, match="boom"):
        spark.sql(f"CREATE TABLE {cat}.ours.bad AS SELECT id, assert_true(id < 5, 'boom') AS ok FROM range(10)").collect()
    assert client.list_tables(ListTablesRequest(id=["ours"])).tables == ["e", "w"]
    e_location = client.describe_table(DescribeTableRequest(id=["ours", "e"])).location
    spark.sql(f"DROP TABLE {cat}.ours.e")
    assert client.list_tables(ListTablesRequest(id=["ours"])).tables == ["w"]
    # Deregistered, files kept: registered again by its location relative to the server's root, then purged.
    relative = Path(e_location.replace("file://", "")).name
    spark.sql(f"CREATE TABLE {cat}.ours.e2 LOCATION '{relative}'")
    assert client.list_tables(ListTablesRequest(id=["ours"])).tables == ["e2", "w"]
    assert spark.table(f"{cat}.ours.e2").collect() == []
    with lance_raises(sparklance.StorageError, match="rename_table not implemented"):  # pylance 14.0.2's server
        spark.sql(f"ALTER TABLE {cat}.ours.e2 RENAME TO ours.e3")
    spark.sql(f"DROP TABLE {cat}.ours.e2 PURGE")
    assert client.list_tables(ListTablesRequest(id=["ours"])).tables == ["w"]
    assert not Path(e_location.replace("file://", "")).exists()
    with pytest.raises(AnalysisException, match="SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.ours")
    spark.sql(f"DROP NAMESPACE {cat}.ours CASCADE")
    assert client.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["theirs"]
    with pytest.raises(AnalysisException, match="(?i)cannot be found|TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"{cat}.ours.w").collect()
    with pytest.raises(AnalysisException, match="(?i)already exists"):
        spark.sql(f"CREATE TABLE {cat}.theirs.t (id BIGINT)")


def test_rest_server_errors_are_clear(spark, tmp_path):
    cat = catalog(spark, impl="rest", uri="http://127.0.0.1:9")
    with lance_raises(sparklance.StorageError, match="127.0.0.1:9"):
        spark.sql(f"SHOW NAMESPACES IN {cat}").collect()
    bad = catalog(spark, impl="rest", uri="localhost:2333")
    with lance_raises(sparklance.InvalidArgumentError, match="not an http"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")
    bad = catalog(spark, impl="rest", uri="http://127.0.0.1:9", **{"tls.cert_file": "x"})
    with lance_raises(sparklance.InvalidArgumentError, match="tls.cert_file"):
        spark.sql(f"SHOW NAMESPACES IN {bad}")


def test_namespace_tables_take_table_statements(spark, tmp_path):
    """A table of a namespace is an ordinary catalog table: writes, time travel, branches, properties."""
    root = tmp_path / "root"
    cat = catalog(spark, impl="dir", root=root)
    spark.sql(f"CREATE NAMESPACE {cat}.db")
    spark.sql(f"CREATE TABLE {cat}.db.t AS SELECT id FROM range(4)")
    spark.sql(f"INSERT INTO {cat}.db.t VALUES (10)")
    spark.sql(f"DELETE FROM {cat}.db.t WHERE id = 0")
    assert sorted(r.id for r in spark.table(f"{cat}.db.t").collect()) == [1, 2, 3, 10]
    assert sorted(r.id for r in spark.sql(f"SELECT * FROM {cat}.db.t VERSION AS OF 1").collect()) == [0, 1, 2, 3]
    spark.sql(f"ALTER TABLE {cat}.db.t CREATE BRANCH dev")
    spark.sql(f"INSERT INTO {cat}.db.t.branch_dev VALUES (20)")
    assert sorted(r.id for r in spark.table(f"{cat}.db.t.branch_dev").collect()) == [1, 2, 3, 10, 20]
    spark.sql(f"ALTER TABLE {cat}.db.t SET TBLPROPERTIES ('team' = 'ads')")
    location = lance_location(ln.connect("dir", {"root": str(root)}), ["db", "t"])
    ds = lance.dataset(location)
    ds.validate()
    assert sorted(ds.to_table().column("id").to_pylist()) == [1, 2, 3, 10]
    assert ds.config()["team"] == "ads"
    with lance_raises(sparklance.UnsupportedFeatureError, match="no operation for it"):
        spark.sql(f"ALTER NAMESPACE {cat}.db SET PROPERTIES ('a' = 'b')")
    with pytest.raises(AnalysisException, match="(?i)cannot be found|TABLE_OR_VIEW_NOT_FOUND"):
        spark.table(f"{cat}.db.missing").collect()
    assert not spark.catalog.tableExists(f"{cat}.db.missing")
    assert spark.catalog.tableExists(f"{cat}.db.t")
