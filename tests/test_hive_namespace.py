"""A catalog with ``impl = hive2`` or ``impl = hive3`` (docs/reading.md, "Lance Namespaces") keeps its tables in a
Hive Metastore: here a real one, Hive 2.3's ``HiveMetaStore`` from pyspark's jars over embedded Derby in a temporary
directory. The other side is Hive's own metastore client (``HiveMetaStoreClient``, in the Spark JVM through py4j):
Lance tables it registers as lance-namespace-impls' Hive spec records them show in ``SHOW TABLES`` and read equal
(pylance wrote them); what Spark creates, inserts into, renames and drops shows in the metastore as the spec records
it, and pylance reads and validates it at its location. Hive tables that are not Lance's are refused by name.
Hive 3's catalogs (``impl = hive3``: created, holding tables, dropped) run against a stand-in in front of the same
metastore that adds Hive 3's catalog calls (``hive3_catalogs.py``), its databases being ``<catalog>__<db>`` there."""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import lance
import pyarrow as pa
import pyspark
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import arrow_df, lance_raises, new_catalog  # noqa: E402
from hive3_catalogs import Hive3Catalogs, text  # noqa: E402
from test_namespaces import random_table, rows, spark_rows  # noqa: E402

import sparklance  # noqa: E402
from pyspark.errors import AnalysisException  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
JARS = Path(pyspark.__file__).parent / "jars"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def metastore(tmp_path_factory):
    """A Hive 2.3 metastore on a free port (Derby in a temporary directory; no network needed); its thrift:// URI."""
    if not list(JARS.glob("hive-metastore-*.jar")):
        pytest.skip("pyspark ships no hive-metastore jar")
    home = tmp_path_factory.mktemp("hms")
    (home / "hive-site.xml").write_text(f"""<configuration>
<property><name>javax.jdo.option.ConnectionURL</name><value>jdbc:derby:;databaseName={home}/db;create=true</value></property>
<property><name>datanucleus.schema.autoCreateAll</name><value>true</value></property>
<property><name>hive.metastore.schema.verification</name><value>false</value></property>
<property><name>datanucleus.connectionPoolingType</name><value>none</value></property>
<property><name>hive.metastore.warehouse.dir</name><value>{home}/warehouse</value></property>
</configuration>""")
    port = free_port()
    log = open(home / "metastore.log", "w")
    selector = "org.apache.logging.log4j.core.selector.ClassLoaderContextSelector"
    proc = subprocess.Popen(["java", "-Xmx256m", f"-DLog4jContextSelector={selector}", f"-Dlog4j2.contextSelector={selector}",
                             "-cp", f"{home}{os.pathsep}{JARS}/*", "org.apache.hadoop.hive.metastore.HiveMetaStore",
                             "-p", str(port)], cwd=home, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 300
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"the Hive Metastore did not start: {(home / 'metastore.log').read_text()[-2000:]}")
            time.sleep(1)
    yield f"thrift://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def hive(spark, metastore):
    """Hive's own metastore client (HiveMetaStoreClient, from the Spark JVM's class path)."""
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("hive.metastore.uris", metastore)
    client = jvm.org.apache.hadoop.hive.metastore.HiveMetaStoreClient(conf)
    yield client
    client.close()


def catalog(spark, metastore, root, impl="hive2", **extra) -> str:
    return new_catalog(spark, "hive", impl=impl, **{"hadoop.hive.metastore.uris": metastore, "root": str(root), **extra})


def hive_database(spark, hive, name, location):
    db = spark.sparkContext._jvm.org.apache.hadoop.hive.metastore.api.Database()
    db.setName(name)
    db.setDescription("")
    db.setLocationUri(str(location))
    db.setParameters(spark.sparkContext._jvm.java.util.HashMap())
    hive.createDatabase(db)


def hive_table(spark, hive, db, name, location, parameters):
    """A table as lance-namespace-impls' Hive namespaces register one: EXTERNAL_TABLE, Hive's text formats,
    a placeholder column, the Lance table's directory as the location."""
    jvm = spark.sparkContext._jvm
    api = jvm.org.apache.hadoop.hive.metastore.api
    cols = jvm.java.util.ArrayList()
    cols.add(api.FieldSchema("__placeholder_id", "bigint", "Placeholder column for empty table"))
    serde = api.SerDeInfo()
    serde.setSerializationLib("org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
    serde.setParameters(jvm.java.util.HashMap())
    sd = api.StorageDescriptor()
    sd.setCols(cols)
    sd.setLocation(str(location))
    sd.setInputFormat("org.apache.hadoop.mapred.TextInputFormat")
    sd.setOutputFormat("org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat")
    sd.setSerdeInfo(serde)
    params = jvm.java.util.HashMap()
    for k, v in parameters.items():
        params.put(k, v)
    table = api.Table()
    table.setTableName(name)
    table.setDbName(db)
    table.setSd(sd)
    table.setParameters(params)
    table.setPartitionKeys(jvm.java.util.ArrayList())
    table.setTableType("EXTERNAL_TABLE")
    hive.createTable(table)


def test_tables_the_metastore_registers_show_and_read_equal(spark, metastore, hive, tmp_path):
    rng = random.Random(SEED)
    hive_database(spark, hive, "sales", tmp_path / "sales.db")
    hive_database(spark, hive, "empty_db", tmp_path / "empty_db.db")
    tables = {}
    for i in range(rng.randint(2, 4)):
        name = f"t{i}"
        tables[name] = random_table(rng)
        location = tmp_path / "sales.db" / name
        lance.write_dataset(tables[name], str(location))
        hive_table(spark, hive, "sales", name, location, {"table_type": rng.choice(["lance", "LANCE", "Lance"]),
                                                          "managed_by": "storage", "EXTERNAL": "TRUE"})
    # A Hive table that is not Lance's (a Parquet table) is not listed, and refused by name.
    hive_table(spark, hive, "sales", "parquet_t", tmp_path / "elsewhere", {"EXTERNAL": "TRUE"})

    cat = catalog(spark, metastore, tmp_path)
    assert {"sales", "empty_db"} <= {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()}
    assert sorted(r["tableName"] for r in spark.sql(f"SHOW TABLES IN {cat}.sales").collect()) == sorted(tables)
    assert spark.sql(f"SHOW TABLES IN {cat}.empty_db").collect() == []
    for name, table in tables.items():
        assert spark_rows(spark.table(f"{cat}.sales.{name}")) == rows(table)
    with lance_raises(sparklance.UnsupportedFeatureError, match=r"Hive table sales.parquet_t .* is not a Lance table"):
        spark.table(f"{cat}.sales.parquet_t").collect()
    with lance_raises(sparklance.UnsupportedFeatureError, match="is not a Lance table"):
        spark.sql(f"DROP TABLE {cat}.sales.parquet_t")
    assert hive.tableExists("sales", "parquet_t")
    # A table whose versions the metastore commits (managed_by = impl) is refused, not read past its versions.
    hive_table(spark, hive, "sales", "by_hive", tmp_path / "sales.db" / "t0",
               {"table_type": "lance", "managed_by": "impl", "version": "1"})
    with lance_raises(sparklance.UnsupportedFeatureError, match="managed_by = impl"):
        spark.table(f"{cat}.sales.by_hive").collect()
    # Registered without EXTERNAL = TRUE (as lance-namespace-impls' Python hive2 does), a Hive 2 metastore records
    # an EXTERNAL_TABLE as a managed one: why sparklance's tables carry EXTERNAL = TRUE.
    assert hive.getTable("sales", "by_hive").getTableType() == "MANAGED_TABLE"
    props = {r[0]: r[1] for r in spark.sql(f"DESCRIBE NAMESPACE EXTENDED {cat}.sales").collect()}
    assert str(tmp_path / "sales.db") in " ".join(str(v) for v in props.values())


def test_spark_tables_are_metastore_tables_pylance_reads(spark, metastore, hive, tmp_path):
    rng = random.Random(SEED + 1)
    cat = catalog(spark, metastore, tmp_path)
    spark.sql(f"CREATE NAMESPACE {cat}.lake COMMENT 'from spark' WITH DBPROPERTIES ('team' = 'ml')")
    db = hive.getDatabase("lake")
    assert db.getLocationUri().endswith(f"{tmp_path}/lake.db")
    assert db.getDescription() == "from spark" and db.getParameters().get("team") == "ml"
    expected = random_table(rng)
    arrow_df(spark, expected).createOrReplaceTempView("hive_src")
    spark.sql(f"CREATE TABLE {cat}.lake.items AS SELECT * FROM hive_src")
    spark.sql(f"INSERT INTO {cat}.lake.items SELECT * FROM hive_src")

    assert list(hive.getAllTables("lake")) == ["items"]
    entry = hive.getTable("lake", "items")
    # The spec's <root>/<database>.db/<table>, which the metastore qualifies (file:/...).
    assert entry.getSd().getLocation() == f"file:{tmp_path}/lake.db/items"
    location = f"{tmp_path}/lake.db/items"
    assert entry.getTableType() == "EXTERNAL_TABLE"
    assert entry.getParameters().get("table_type") == "lance" and entry.getParameters().get("managed_by") == "storage"
    ds = lance.dataset(location)
    ds.validate()
    assert rows(ds.to_table()) == sorted(rows(expected) * 2)

    spark.sql(f"ALTER TABLE {cat}.lake.items RENAME TO lake.goods")
    assert list(hive.getAllTables("lake")) == ["goods"]
    assert hive.getTable("lake", "goods").getSd().getLocation() == f"file:{location}"
    assert Path(location).exists()  # an external table: the metastore moved nothing
    assert spark_rows(spark.table(f"{cat}.lake.goods")) == sorted(rows(expected) * 2)

    with pytest.raises(AnalysisException, match="(?i)not empty|NON_EMPTY|SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.lake")
    spark.sql(f"DROP TABLE {cat}.lake.goods")  # deregisters; the files stay
    assert list(hive.getAllTables("lake")) == []
    assert rows(lance.dataset(location).to_table()) == sorted(rows(expected) * 2)
    spark.sql(f"CREATE TABLE {cat}.lake.back USING lance LOCATION '{location}'")
    assert hive.getTable("lake", "back").getSd().getLocation() == f"file:{location}"
    assert spark_rows(spark.table(f"{cat}.lake.back")) == sorted(rows(expected) * 2)
    spark.sql(f"DROP TABLE {cat}.lake.back PURGE")
    assert list(hive.getAllTables("lake")) == []
    assert not Path(location).exists()
    spark.sql(f"DROP NAMESPACE {cat}.lake")
    assert "lake" not in list(hive.getAllDatabases())


def test_hive3_with_parent_hive_is_the_default_catalog(spark, metastore, hive, tmp_path):
    rng = random.Random(SEED + 2)
    cat = catalog(spark, metastore, tmp_path, impl="hive3", parent="hive")
    spark.sql(f"CREATE NAMESPACE {cat}.h3")
    assert "h3" in list(hive.getAllDatabases())
    assert "h3" in {r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()}
    expected = random_table(rng)
    arrow_df(spark, expected).createOrReplaceTempView("hive3_src")
    spark.sql(f"CREATE TABLE {cat}.h3.t AS SELECT * FROM hive3_src")
    assert hive.getTable("h3", "t").getSd().getLocation() == f"file:{tmp_path}/h3.db/t"  # catalog hive: hive2's layout
    location = f"{tmp_path}/h3.db/t"
    lance.dataset(location).validate()
    assert rows(lance.dataset(location).to_table()) == rows(expected)
    # Without parent, the catalogs are Spark's first level: a Hive 2 metastore has only `hive`.
    whole = catalog(spark, metastore, tmp_path, impl="hive3")
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {whole}").collect()] == ["hive"]
    assert spark_rows(spark.table(f"{whole}.hive.h3.t")) == rows(expected)
    with lance_raises(sparklance.UnsupportedFeatureError, match="Creating Hive catalog c2 is not supported"):
        spark.sql(f"CREATE NAMESPACE {whole}.c2")
    with pytest.raises(AnalysisException, match="(?i)SCHEMA_NOT_FOUND|NAMESPACE_NOT_FOUND|not found"):
        spark.sql(f"CREATE NAMESPACE {whole}.c2.db")
    spark.sql(f"DROP TABLE {cat}.h3.t PURGE")
    spark.sql(f"DROP NAMESPACE {cat}.h3")
    assert "h3" not in list(hive.getAllDatabases())


@pytest.fixture(scope="module")
def hive3(metastore, tmp_path_factory):
    """Hive 3's catalogs in front of the Hive 2.3 metastore (tests/hive3_catalogs.py); its thrift:// URI."""
    host, port = metastore[len("thrift://"):].split(":")
    stand = Hive3Catalogs((host, int(port)), str(tmp_path_factory.mktemp("hive3_default")))
    yield stand
    stand.stop()


def test_hive3_catalogs_are_created_hold_tables_and_are_dropped(spark, hive, hive3, tmp_path):
    rng = random.Random(SEED + 3)
    cat = catalog(spark, hive3.uri, tmp_path, impl="hive3")
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()] == ["hive"]
    spark.sql(f"CREATE NAMESPACE {cat}.sales COMMENT 'from spark'")
    assert text(hive3.catalogs["sales"], 3) == f"{tmp_path}/sales"  # <root>/<catalog>
    assert text(hive3.catalogs["sales"], 2) == "from spark"
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()] == ["hive", "sales"]
    described = {r[0]: r[1] for r in spark.sql(f"DESCRIBE NAMESPACE {cat}.sales").collect()}
    assert described["Comment"] == "from spark" and described["Location"].endswith(f"{tmp_path}/sales")
    # Hive 3 gives every new catalog a database `default`.
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}.sales").collect()] == ["sales.default"]
    with pytest.raises(AnalysisException, match="(?i)already exists|SCHEMA_ALREADY_EXISTS"):
        spark.sql(f"CREATE NAMESPACE {cat}.sales")

    spark.sql(f"CREATE NAMESPACE {cat}.sales.q1")
    assert hive.getDatabase("sales__q1").getLocationUri().endswith(f"{tmp_path}/sales/q1.db")
    expected = {}
    for i in range(rng.randint(1, 3)):
        expected[f"t{i}"] = random_table(rng)
        arrow_df(spark, expected[f"t{i}"]).createOrReplaceTempView("hive3_src")
        spark.sql(f"CREATE TABLE {cat}.sales.q1.t{i} AS SELECT * FROM hive3_src")
    spark.sql(f"INSERT INTO {cat}.sales.q1.t0 SELECT * FROM hive3_src")
    expected["t0"] = pa.concat_tables([expected["t0"], expected[f"t{len(expected) - 1}"]])
    # pylance writes a table; it is registered in the metastore (Hive's own client) as lance-namespace-impls does.
    expected["theirs"] = random_table(rng)
    lance.write_dataset(expected["theirs"], str(tmp_path / "theirs"))
    hive_table(spark, hive, "sales__q1", "theirs", tmp_path / "theirs", {"table_type": "lance", "EXTERNAL": "TRUE"})

    assert sorted(r["tableName"] for r in spark.sql(f"SHOW TABLES IN {cat}.sales.q1").collect()) == sorted(expected)
    for name, table in expected.items():
        assert spark_rows(spark.table(f"{cat}.sales.q1.{name}")) == rows(table)
        if name != "theirs":
            assert hive.getTable("sales__q1", name).getSd().getLocation() == f"file:{tmp_path}/sales/q1.db/{name}"
            ds = lance.dataset(f"{tmp_path}/sales/q1.db/{name}")
            ds.validate()
            assert rows(ds.to_table()) == rows(table)
    # With parent = sales, Spark's namespaces are the catalog's databases.
    under = catalog(spark, hive3.uri, tmp_path, impl="hive3", parent="sales")
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {under}").collect()] == ["default", "q1"]
    assert spark_rows(spark.table(f"{under}.q1.t0")) == rows(expected["t0"])

    with pytest.raises(AnalysisException, match="(?i)not empty|NON_EMPTY|SCHEMA_NOT_EMPTY"):
        spark.sql(f"DROP NAMESPACE {cat}.sales")
    with lance_raises(sparklance.UnsupportedFeatureError, match="Dropping Hive catalog sales .* with its contents"):
        spark.sql(f"DROP NAMESPACE {cat}.sales CASCADE")
    assert "sales__q1" in list(hive.getAllDatabases())  # refused before anything was dropped
    with lance_raises(sparklance.UnsupportedFeatureError, match="Property team of Hive catalog other"):
        spark.sql(f"CREATE NAMESPACE {cat}.other WITH DBPROPERTIES ('team' = 'ml')")
    with lance_raises(sparklance.UnsupportedFeatureError, match="catalog hive .* the metastore's default catalog"):
        spark.sql(f"DROP NAMESPACE {cat}.hive")

    # DROP TABLE keeps t0's files below the catalog's location, which Hive 3 deletes with the catalog: refused.
    spark.sql(f"DROP TABLE {cat}.sales.q1.t0")
    for name in expected:
        if name != "t0":
            spark.sql(f"DROP TABLE {cat}.sales.q1.{name}" + (" PURGE" if name != "theirs" else ""))
    spark.sql(f"DROP NAMESPACE {cat}.sales.q1")
    with lance_raises(sparklance.UnsupportedFeatureError, match=f"files are below its location {tmp_path}/sales"):
        spark.sql(f"DROP NAMESPACE {cat}.sales")
    assert "sales" in hive3.catalogs and rows(lance.dataset(f"{tmp_path}/sales/q1.db/t0").to_table()) == rows(expected["t0"])
    shutil.rmtree(tmp_path / "sales")
    spark.sql(f"DROP NAMESPACE {cat}.sales")
    assert "sales" not in hive3.catalogs and "sales__default" not in list(hive.getAllDatabases())
    assert [r[0] for r in spark.sql(f"SHOW NAMESPACES IN {cat}").collect()] == ["hive"]

    # An empty catalog drops with CASCADE too; LOCATION places it.
    spark.sql(f"CREATE NAMESPACE {cat}.scratch LOCATION '{tmp_path}/elsewhere'")
    assert text(hive3.catalogs["scratch"], 3) == f"file:{tmp_path}/elsewhere"  # Spark qualifies LOCATION
    spark.sql(f"DROP NAMESPACE {cat}.scratch CASCADE")
    assert "scratch" not in hive3.catalogs


def test_bad_settings_are_clear_errors(spark, metastore, tmp_path):
    closed = free_port()
    unreachable = catalog(spark, f"thrift://127.0.0.1:{closed}", tmp_path)
    with lance_raises(sparklance.StorageError, match=f"thrift://127.0.0.1:{closed}"):
        spark.sql(f"SHOW NAMESPACES IN {unreachable}").collect()
    name = new_catalog(spark, "hive", impl="hive2")
    with lance_raises(sparklance.InvalidArgumentError, match="hive.metastore.uris"):
        spark.sql(f"SHOW NAMESPACES IN {name}").collect()
    cat = catalog(spark, metastore, tmp_path)
    with lance_raises(sparklance.UnsupportedFeatureError, match="namespaces that hold tables are database"):
        spark.sql(f"CREATE NAMESPACE {cat}.a.b")
    missing = catalog(spark, metastore, tmp_path, impl="hive3", parent="nope")
    with lance_raises(sparklance.LanceError, match="Namespace nope does not exist .*option parent"):
        spark.sql(f"SHOW NAMESPACES IN {missing}").collect()
