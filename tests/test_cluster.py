"""sparklance on a real Spark standalone cluster: a master and two workers on loopback, each executor in a JVM of
its own, so that everything the connector ships to executors is serialized, fetched and run away from the driver.

The cluster is started from the pyspark installation (its ``jars/`` directory is ``SPARK_HOME/jars``); logs and work
directories live under the test's temporary directory and every process is stopped at the end, also on failure.
Tables are written by pylance and read by Spark, written and changed by Spark (path writes, CREATE TABLE AS SELECT,
INSERT, DELETE, UPDATE, MERGE, add_columns) and read back by pylance, which must see exactly the expected rows and
pass ``validate()``; every version stays readable by time travel. Jobs are checked to have run tasks on both
executors. The session uses the Kryo serializer, as clusters often do, and relative paths are resolved as the driver
sees them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import JAR, require_jar  # noqa: E402

# Daemons are started with fork and exec right away, which is safe with lance loaded.
pytestmark = pytest.mark.filterwarnings("ignore:lance is not fork-safe")

WORKERS = 2
START_TIMEOUT_S = 90
# What Spark's launcher passes to its own JVMs on Java 17.
JAVA_OPENS = [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
    "sun.util.calendar")]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError as e:
        return f"({path} cannot be read: {e})"
    return "\n".join(text[-lines:])


class Daemon:
    """One Spark daemon JVM (master or worker), its output going to a log file. It leads a process group of its
    own, so that stopping it also stops the executor JVMs a worker started."""

    def __init__(self, name: str, log: Path, proc: subprocess.Popen):
        self.name, self.log, self.proc = name, log, proc

    def exit_status(self) -> Optional[int]:
        """The exit status once the JVM has exited, else None. The process is not reaped, so its id, which is also
        the id of its process group, cannot be reused until :meth:`stop`."""
        info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        return None if info is None else info.si_status

    def stop(self, timeout: float = 15) -> None:
        if self.proc.returncode is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # a worker's shutdown stops its executors
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        while self.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # whatever of the group is left
        except ProcessLookupError:
            pass
        self.proc.wait()


class StandaloneCluster:
    """A Spark standalone master and workers on 127.0.0.1, started from the installed pyspark."""

    def __init__(self, root: Path):
        import pyspark

        self.root = root
        self.spark_home = Path(pyspark.__file__).resolve().parent
        self.daemons: List[Daemon] = []
        self.master_port = free_port()
        self.master_ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.master_port}"
        java_home = os.environ.get("JAVA_HOME")
        self.java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
        if not self.java:
            pytest.fail("Cannot find `java` to start the Spark cluster: install Java 17 or set JAVA_HOME.",
                        pytrace=False)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
        self.env.update(SPARK_HOME=str(self.spark_home), SPARK_SCALA_VERSION="2.13", SPARK_LOCAL_IP="127.0.0.1",
                        SPARK_NO_DAEMONIZE="1", PYSPARK_PYTHON=sys.executable)

    def _start(self, name: str, main_class: str, args: List[str], env: Optional[Dict[str, str]] = None,
               java_options: List[str] = ()) -> Daemon:
        log = self.root / f"{name}.log"
        # spark.port.maxRetries=0: a port taken since free_port() fails the start instead of moving elsewhere.
        cmd = [self.java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dspark.port.maxRetries=0",
               *java_options, *JAVA_OPENS, "-cp", str(self.spark_home / "jars" / "*"), main_class, *args]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env={**self.env, **(env or {})}, cwd=str(self.root), start_new_session=True)
        daemon = Daemon(name, log, proc)
        self.daemons.append(daemon)
        return daemon

    def start(self, workers: int = WORKERS) -> None:
        # No REST submission server: it would take the fixed port 6066.
        self._start("master", "org.apache.spark.deploy.master.Master",
                    ["--host", "127.0.0.1", "--port", str(self.master_port), "--webui-port", str(self.master_ui_port)],
                    java_options=["-Dspark.master.rest.enabled=false"])
        # A worker that finds no master waits several seconds before it tries again.
        self.wait_for(lambda: self.alive_workers() is not None, "the master to start")
        for i in range(workers):
            work = self.root / f"worker-{i}"
            (work / "local").mkdir(parents=True)
            self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                        ["--host", "127.0.0.1", "--port", str(free_port()), "--webui-port", str(free_port()),
                         "--cores", "1", "--memory", "1g", "--work-dir", str(work / "work"), self.url],
                        env={"SPARK_LOCAL_DIRS": str(work / "local")})
        self.wait_for(lambda: (self.alive_workers() or 0) >= workers, f"{workers} workers to register with the master")

    def alive_workers(self) -> Optional[int]:
        """The number of workers registered with the master; None while the master does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui_port}/json/", timeout=5) as r:
                state = json.load(r)
        except (OSError, ValueError):
            return None
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def wait_for(self, condition, what: str, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            for d in self.daemons:
                if d.exit_status() is not None:
                    self.fail(f"{d.name} exited with status {d.exit_status()} while waiting for {what}")
            time.sleep(0.5)
        self.fail(f"timed out after {timeout:.0f}s waiting for {what}")

    def fail(self, message: str):
        executor_logs = sorted(self.root.glob("worker-*/work/app-*/*/stderr"))
        logs = "\n\n".join(f"--- last lines of {log} ---\n{tail(log)}"
                           for log in [d.log for d in self.daemons] + executor_logs)
        pytest.fail(f"Spark standalone cluster at {self.url}: {message}.\n\n{logs}", pytrace=False)

    def stop(self) -> None:
        for d in reversed(self.daemons):
            d.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    require_jar()
    c = StandaloneCluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cluster_warehouse")
    (root / "db").mkdir()
    return root


@pytest.fixture(scope="module")
def spark(cluster, wh):
    from pyspark.sql import SparkSession

    if SparkSession.getActiveSession() is not None:
        pytest.fail("Another SparkSession is still active in this process; the cluster test needs its own.",
                    pytrace=False)
    os.environ["SPARKLANCE_JAR"] = str(JAR)
    import sparklance

    # As docs/cluster.md shows: the builder of an existing cluster, with the jar, catalog and extensions added.
    builder = SparkSession.builder.master(cluster.url).appName("sparklance-cluster-tests")
    settings = {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "512m",
        "spark.executor.cores": "1",
        "spark.cores.max": str(WORKERS),
        # As clusters often do. Broadcasts go through it: a scan's Hadoop configuration must survive Kryo.
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        # Small jobs on a shared machine: the client compiler and the serial collector keep executors light. (Spark
        # adds the --add-opens that Arrow needs itself.)
        "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        # Tasks go to whichever executor is free: after a shuffle, reducers would otherwise wait for the executor
        # holding the map output, and a small job could run on one executor only.
        "spark.locality.wait": "0s",
        # Jobs start only once every executor has registered.
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": f"{START_TIMEOUT_S}s",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = sparklance.configure(builder, warehouse=str(wh)).getOrCreate()
    try:
        session.sparkContext.setLogLevel("WARN")
        if session.sparkContext.master != cluster.url:
            pytest.fail(f"The SparkSession runs on {session.sparkContext.master}, not on {cluster.url}: another "
                        "SparkContext of this process was still running.", pytrace=False)
        cluster.wait_for(lambda: len(executor_tasks(session)) >= WORKERS, f"{WORKERS} executors of the application")
        yield session
    finally:
        session.stop()


def executor_tasks(spark) -> Dict[str, int]:
    """Tasks completed so far per executor (the driver excluded), from the application's status store (the data
    of Spark's UI and REST API, kept even with the UI disabled)."""
    executors = spark.sparkContext._jsc.sc().statusStore().executorList(True)
    out = {}
    for i in range(executors.size()):
        e = executors.apply(i)
        if e.id() != "driver":
            out[e.id()] = e.completedTasks()
    return out


def on_executors(spark, action):
    """Runs ``action()`` and returns (its result, the number of tasks each executor completed meanwhile)."""
    before = executor_tasks(spark)
    result = action()
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(10_000)  # task ends reach the store asynchronously
    after = executor_tasks(spark)
    return result, {e: after[e] - before.get(e, 0) for e in after}


def assert_spread(tasks: Dict[str, int], what: str) -> None:
    assert len(tasks) == WORKERS and all(n > 0 for n in tasks.values()), \
        f"{what}: expected tasks on each of the {WORKERS} executors, got {tasks}"


# -------------------------------------------------------------------------------------------- data and checks

def source_table(n: int = 8000) -> pa.Table:
    """Rows with scalar, nested and vector columns; ``id`` is the key."""
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "s": pa.array([f"s{i}" for i in range(n)]),
        "x": pa.array([i * 0.5 for i in range(n)], pa.float64()),
        "tags": pa.array([[f"t{i % 3}"] * (i % 4) for i in range(n)], pa.list_(pa.string())),
        "p": pa.array([{"a": i % 100, "b": None if i % 9 == 0 else f"b{i}"} for i in range(n)],
                      pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "v": pa.FixedSizeListArray.from_arrays(pa.array([i * 0.25 for i in range(n * 4)], pa.float32()), 4),
    })


def utc_now() -> str:
    """The current instant as a Spark timestamp literal in UTC (the session's time zone), to the microsecond."""
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds)) + f".{micros:06d}"


def by_id(rows: List[dict]) -> Dict[int, tuple]:
    """{id: the other values} of rows given as dicts, nested values as plain Python values."""
    out = {}
    for r in rows:
        r = dict(r)
        key = r.pop("id")
        assert key not in out, f"id {key} appears twice"
        out[key] = tuple(r[k] for k in sorted(r))
    return out


def spark_rows(df) -> Dict[int, tuple]:
    return by_id([r.asDict(recursive=True) for r in df.collect()])


def lance_rows(path, version=None) -> Dict[int, tuple]:
    ds = lance.dataset(str(path), version=version)
    ds.validate()
    return by_id(ds.to_table().to_pylist())


# ----------------------------------------------------------------------------------------------------- tests

def test_read_of_a_pylance_table_spreads_over_both_executors(spark, tmp_path):
    path = str(tmp_path / "src.lance")
    table = source_table()
    lance.write_dataset(table, path, max_rows_per_file=1000)
    assert len(lance.dataset(path).get_fragments()) == 8
    want = by_id(table.to_pylist())

    df = spark.read.format("lance").option("rows_per_partition", 1000).load(path)
    assert df.rdd.getNumPartitions() == 8
    got, tasks = on_executors(spark, lambda: spark_rows(df))
    assert_spread(tasks, "columnar read")
    assert got == want

    rows = spark.read.format("lance").option("rows_per_partition", 1000).option("columnar", "false").load(path)
    got, tasks = on_executors(spark, lambda: spark_rows(rows))
    assert_spread(tasks, "row read")
    assert got == want

    # Pushed filters and metadata columns travel with the partitions.
    filtered = df.where("x >= 1000.0 AND x < 1100.5").select("id", "_fragid", "_rowaddr", "_rowid")
    got = sorted((r.id, r._fragid, r._rowaddr, r._rowid) for r in filtered.collect())
    assert got == [(i, i // 1000, (i // 1000 << 32) | (i % 1000), (i // 1000 << 32) | (i % 1000))
                   for i in range(2000, 2201)]
    assert df.count() == 8000
    assert spark.sql(f"SELECT count(*) FROM lance.`{path}` WHERE _fragid >= 6").first()[0] == 2000


def test_path_writes_are_read_by_pylance(spark, tmp_path):
    path = str(tmp_path / "written.lance")

    def rows(lo, hi, parts):
        return spark.range(lo, hi, 1, parts).selectExpr(
            "id", "concat('r', id) AS s", "id * 0.5 AS x", "array(id, id + 1) AS arr",
            "named_struct('a', CAST(id % 1000 AS INT), 'b', IF(id % 7 = 0, NULL, CAST(id AS STRING))) AS st")

    def want(lo, hi, scale=0.5, prefix="r"):
        return {i: ([i, i + 1], f"{prefix}{i}", {"a": i % 1000, "b": None if i % 7 == 0 else str(i)}, i * scale)
                for i in range(lo, hi)}

    _, tasks = on_executors(spark, lambda: rows(0, 20000, 4).write.format("lance").save(path))
    assert_spread(tasks, "path write")
    ds = lance.dataset(path)
    assert ds.version == 1 and len(ds.get_fragments()) == 4     # one data file per task
    assert lance_rows(path) == want(0, 20000)

    rows(20000, 25000, 2).write.format("lance").mode("append").save(path)
    assert lance_rows(path) == {**want(0, 20000), **want(20000, 25000)}

    rows(0, 100, 2).selectExpr("id", "concat('o', id) AS s", "id * 2.0 AS x", "arr", "st") \
        .write.format("lance").mode("overwrite").save(path)
    assert lance.dataset(path).version == 3
    assert lance_rows(path) == want(0, 100, scale=2.0, prefix="o")

    # Every version stays readable, by Spark (on the executors) and by pylance.
    for version, expected in ((1, 20000), (2, 25000), (3, 100)):
        df = spark.read.format("lance").option("version", version).load(path)
        assert spark_rows(df) == lance_rows(path, version), f"version {version}"
        assert len(lance_rows(path, version)) == expected


def test_add_columns_writes_new_files_on_the_executors(spark, tmp_path):
    from sparklance import LanceTable

    path = str(tmp_path / "evolve.lance")
    lance.write_dataset(source_table(4000).select(["id", "x"]), path, max_rows_per_file=500)
    lance.dataset(path).delete("id % 10 = 3")
    version, tasks = on_executors(spark, lambda: LanceTable.for_path(spark, path).add_columns(
        {"y": "x * 2", "label": "concat('id-', CAST(id AS STRING))"}))
    assert_spread(tasks, "add_columns")
    assert version == lance.dataset(path).version == 3
    assert lance_rows(path) == {i: (f"id-{i}", i * 0.5, i * 1.0) for i in range(4000) if i % 10 != 3}

def test_catalog_writes_and_row_level_changes(spark, wh, tmp_path):
    src = str(tmp_path / "catalog_src.lance")
    lance.write_dataset(source_table(8000).select(["id", "s", "x"]), src, max_rows_per_file=2000)
    path = wh / "db" / "t.lance"
    versions: Dict[int, Dict[int, tuple]] = {}
    between: Dict[int, str] = {}   # an instant after each version was committed, before the next one

    def step(version: int, sql: str, rows: Dict[int, tuple], spread: bool = True) -> Dict[str, int]:
        _, tasks = on_executors(spark, lambda: spark.sql(sql).collect())
        if spread:
            assert_spread(tasks, sql.split()[0])
        assert lance.dataset(str(path)).version == version, sql
        versions[version] = dict(rows)
        time.sleep(0.01)
        between[version] = utc_now()
        time.sleep(0.01)
        return tasks

    rows = {i: (f"s{i}", i * 0.5) for i in range(8000)}
    # DELETE, UPDATE and MERGE take no read options: the table property splits their scans into 1000-row partitions.
    step(1, "CREATE TABLE lance.db.t TBLPROPERTIES ('rows_per_partition' = '1000') AS "
            f"SELECT /*+ REPARTITION(4) */ id, s, x FROM lance.`{src}`", rows)
    rows.update({i: (f"n{i}", i * 2.0) for i in range(8000, 10000)})
    step(2, "INSERT INTO lance.db.t SELECT id, concat('n', id), id * 2.0 FROM range(8000, 10000, 1, 4)", rows)
    rows = {i: r for i, r in rows.items() if i % 7 != 0}
    step(3, "DELETE FROM lance.db.t WHERE id % 7 = 0", rows)
    rows.update({i: (s.upper(), -x) for i, (s, x) in rows.items() if i % 5 == 1})
    step(4, "UPDATE lance.db.t SET s = upper(s), x = -x WHERE id % 5 = 1", rows)
    spark.range(9500, 10500, 1, 4).selectExpr("id", "concat('m', id) AS s", "id * 3.0 AS x") \
        .createOrReplaceTempView("cluster_merge_src")
    for i in range(9500, 10500):
        if i in rows and i % 11 == 0:
            del rows[i]
        else:
            rows[i] = (f"m{i}", i * 3.0)
    step(5, """MERGE INTO lance.db.t AS t USING cluster_merge_src AS u ON t.id = u.id
               WHEN MATCHED AND u.id % 11 = 0 THEN DELETE
               WHEN MATCHED THEN UPDATE SET t.s = u.s, t.x = u.x
               WHEN NOT MATCHED THEN INSERT *""", rows)
    # A condition on fragments only drops them by metadata: no tasks run.
    fragments = {f.fragment_id for f in lance.dataset(str(path)).get_fragments()}
    in_first = set(lance.dataset(str(path)).get_fragment(0).to_table(columns=["id"]).column(0).to_pylist())
    rows = {i: r for i, r in rows.items() if i not in in_first}
    tasks = step(6, "DELETE FROM lance.db.t WHERE _fragid = 0", rows, spread=False)
    assert sum(tasks.values()) == 0, tasks
    assert {f.fragment_id for f in lance.dataset(str(path)).get_fragments()} == fragments - {0}

    for version, expected in versions.items():
        assert lance_rows(path, version) == expected, f"pylance, version {version}"
        got = spark_rows(spark.sql(f"SELECT id, s, x FROM lance.db.t VERSION AS OF {version}"))
        assert got == expected, f"VERSION AS OF {version}"
    for version in (2, 4):
        got = spark_rows(spark.sql(f"SELECT id, s, x FROM lance.db.t TIMESTAMP AS OF '{between[version]}'"))
        assert got == versions[version], f"TIMESTAMP AS OF '{between[version]}' (after version {version})"
    assert spark_rows(spark.table("lance.db.t")) == versions[6]


def test_update_and_merge_keep_stable_row_ids(spark, wh):
    path = wh / "db" / "stable.lance"
    table = source_table(4000).select(["id", "s", "x"])
    lance.write_dataset(table, str(path), max_rows_per_file=1000, enable_stable_row_ids=True)
    lance.dataset(str(path)).update_config({"rows_per_partition": "1000"})

    def ids() -> Dict[int, int]:
        t = lance.dataset(str(path)).to_table(columns=["id"], with_row_id=True)
        return dict(zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist()))

    before = ids()

    _, tasks = on_executors(spark, lambda: spark.sql("UPDATE lance.db.stable SET x = x + 1 WHERE id % 3 = 0").collect())
    assert_spread(tasks, "UPDATE")
    spark.range(3990, 4010, 1, 2).selectExpr("id", "'m' AS s", "0.0 AS x").createOrReplaceTempView("cluster_stable_src")
    spark.sql("MERGE INTO lance.db.stable t USING cluster_stable_src m ON t.id = m.id "
              "WHEN MATCHED THEN UPDATE SET s = m.s WHEN NOT MATCHED THEN INSERT *")

    want = {i: (f"s{i}", i * 0.5 + (1 if i % 3 == 0 else 0)) for i in range(4000)}
    want.update({i: ("m", want[i][1]) for i in range(3990, 4000)})
    want.update({i: ("m", 0.0) for i in range(4000, 4010)})
    assert lance_rows(path) == want
    after = ids()
    assert {i: after[i] for i in before} == before                  # updated rows keep their row ids
    assert sorted(after[i] for i in range(4000, 4010)) == list(range(4000, 4010))
    assert {r.id: r._rowid for r in spark.sql("SELECT id, _rowid FROM lance.db.stable").collect()} == after


def test_relative_paths_resolve_on_the_driver(spark, tmp_path):
    """Executors run in their own working directories: a relative path must mean what it means on the driver."""
    cwd = spark.sparkContext._jvm.java.lang.System.getProperty("user.dir")
    written = os.path.relpath(tmp_path / "relative.lance", cwd)
    spark.range(0, 1000, 1, 2).selectExpr("id", "id * 2 AS twice").write.format("lance").save(written)
    ds = lance.dataset(str(tmp_path / "relative.lance"))
    ds.validate()
    assert sorted(ds.to_table().column("id").to_pylist()) == list(range(1000))

    src = tmp_path / "relative_src.lance"
    lance.write_dataset(source_table(2000).select(["id", "s"]), str(src), max_rows_per_file=500)
    df = spark.read.format("lance").option("rows_per_partition", 500).load(os.path.relpath(src, cwd))
    assert sorted(r.id for r in df.collect()) == list(range(2000))

    # A catalog whose warehouse is given relative to the driver's directory.
    (tmp_path / "relative_wh" / "db").mkdir(parents=True)
    spark.conf.set("spark.sql.catalog.relwh", "io.sparklance.spark.LanceCatalog")
    spark.conf.set("spark.sql.catalog.relwh.warehouse", os.path.relpath(tmp_path / "relative_wh", cwd))
    spark.sql("CREATE TABLE relwh.db.t AS SELECT /*+ REPARTITION(2) */ id, id * 2 AS twice FROM range(100)")
    spark.sql("INSERT INTO relwh.db.t SELECT id, id * 2 FROM range(100, 150, 1, 2)")
    assert sorted(lance_rows(tmp_path / "relative_wh" / "db" / "t.lance")) == list(range(150))
