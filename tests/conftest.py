"""Shared fixtures for the interop tests: pylance-written tables and a runner for the JVM ``inspect`` CLI.

- ``tables`` (session): builds every table of ``tests/fixtures/make_tables.py`` once into a temporary directory and
  returns ``{name: path}``.
- ``inspect(path, *args) -> dict``: runs ``python -m sparklance inspect --json PATH ARGS`` (the JVM core, from
  ``build/jars/``, the jar of the Spark line pyspark runs) and returns its JSON. Results are cached per (path, args) for the session.
- ``inspect_error(path, *args) -> (returncode, stderr)``: the same for a run that is expected to fail.

Both helpers fail the test (not skip) with "run `make jars` first" when the jar has not been built.

The suite runs on whichever Spark line the running Python's pyspark is (the .venv has 4.3; `make test-lines` runs the
cross-version part, files marked ``pytestmark = cross_version``, on the other lines' venvs). ``SPARK_LINE`` is that
line, e.g. ``(3, 5)``; tests of what a line lacks skip with the reason, and the docs say what differs.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]
PYTHON_DIR = REPO / "python"
VERSION = (REPO / "VERSION").read_text().strip()
sys.path.insert(0, str(PYTHON_DIR))
from sparklance._jvm import jar_name, spark_line  # noqa: E402

# The jar `make jars` built for the Spark line the running pyspark is.
LINE, SCALA = spark_line()
SPARK_LINE = tuple(int(x) for x in LINE.split("."))
JAR = REPO / "build" / "jars" / jar_name(LINE, SCALA)
cross_version = pytest.mark.cross_version
# Spark 3.4 rewrites only DELETE for row-level sources; UPDATE and MERGE INTO came in 3.5 (docs/spark-versions.md).
# test_spark_rowlevel.test_update_and_merge_fail_clearly_on_spark_3_4 asserts what 3.4 says instead.
needs_update_and_merge = pytest.mark.skipif(SPARK_LINE < (3, 5), reason="Spark 3.4 has no UPDATE or MERGE INTO for "
                                            "row-level sources (they came in 3.5)")
CLI_TIMEOUT_S = 60


def _load_make_tables():
    spec = importlib.util.spec_from_file_location("make_tables", Path(__file__).parent / "fixtures" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_tables", module)
    spec.loader.exec_module(module)
    return module


make_tables = _load_make_tables()


def require_jar() -> None:
    if not JAR.is_file():
        pytest.fail(f"{JAR.relative_to(REPO)} does not exist: run `make jars` first", pytrace=False)


def start_spark(app_name: str, warehouse, **conf):
    """A local SparkSession from ``sparklance.session()`` over ``warehouse``, with exactly the jar `make jar` built;
    for module-scoped fixtures (the caller stops it)."""
    require_jar()
    os.environ["SPARKLANCE_JAR"] = str(JAR)
    import sparklance

    session = sparklance.session(warehouse=str(warehouse), app_name=app_name, **conf)
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextlib.contextmanager
def seeded_builds(spark, seed):
    """Inside the block our vector index builds draw their randoms (k-means, samples, PQ codebooks, HNSW levels) from
    ``seed``, and build each graph on one thread, so that a build repeats; outside it each build draws a fresh seed,
    as for users (and as pylance's builds do, which cannot be seeded)."""
    system = spark._jvm.java.lang.System
    system.setProperty("sparklance.vector-index.seed", str(seed))
    try:
        yield
    finally:
        system.clearProperty("sparklance.vector-index.seed")


def build_seed(*parts) -> int:
    """A vector index build's seed drawn from ``parts`` (the suite's seed, the case, the build's number): the tests
    that compare recall seed each of our builds, so that at one ``SPARKLANCE_FUZZ_SEED`` our side of a comparison is
    the same on every run and only pylance's unseeded builds vary."""
    return zlib.crc32("-".join(str(p) for p in parts).encode())


def recall_builds(default: int) -> int:
    """How many index builds a recall comparison averages on each side: ``default``, or ``SPARKLANCE_RECALL_BUILDS``
    (e.g. 20, with ``-s``, to measure the spread of one build's recall from the printed lists)."""
    return int(os.environ.get("SPARKLANCE_RECALL_BUILDS", default))


@pytest.fixture(scope="module")
def spark(request, tmp_path_factory):
    """The module's SparkSession (``start_spark``, named after the module) over a fresh default warehouse, stopped
    after the module; a test file that needs another session defines its own ``spark``."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    session = start_spark(f"sparklance-{module}", tmp_path_factory.mktemp(f"{module}_default_warehouse"))
    yield session
    session.stop()


_catalog_numbers = itertools.count()


def new_catalog(spark, prefix: str, **options) -> str:
    """The name of a new Lance catalog of ``spark`` with ``options`` (``spark.sql.catalog.<name>.<key>``), named
    ``<prefix><n>``: Spark makes a catalog on its first use, so each call gives a test a catalog of its own."""
    name = f"{prefix}{next(_catalog_numbers)}"
    spark.conf.set(f"spark.sql.catalog.{name}", "io.sparklance.spark.LanceCatalog")
    for key, value in options.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{key}", str(value))
    return name


@pytest.fixture(scope="module")
def stand(tmp_path_factory):
    """moto's S3, DynamoDB and Glue on loopback (``s3_support.Stand``), for the module."""
    from s3_support import Stand

    s = Stand(tmp_path_factory.mktemp("moto"))
    yield s
    s.stop()


def warehouse_with(tmp_path_factory, name: str, *namespaces: str) -> Path:
    """A fresh warehouse directory with the given namespace directories."""
    root = tmp_path_factory.mktemp(name)
    for ns in namespaces:
        (root / ns).mkdir()
    return root


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    # Test exactly the jar `make jar` built, not a copy inside the package or one named by the caller's environment.
    env["SPARKLANCE_JAR"] = str(JAR)
    return env


def run_cli(path, *args: str) -> subprocess.CompletedProcess:
    """Run the inspect CLI with --json and return the finished process (fails the test on a timeout)."""
    require_jar()
    cmd = [sys.executable, "-m", "sparklance", "inspect", "--json", str(path), *map(str, args)]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, env=_env(), cwd=str(REPO))
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(cmd[2:])}` did not finish within {CLI_TIMEOUT_S}s", pytrace=False)


_CACHE: Dict[Tuple[str, Tuple[str, ...]], dict] = {}


def inspect(path, *args) -> dict:
    """The JSON object the JVM core prints for ``inspect --json PATH ARGS`` (cached per session)."""
    key = (str(path), tuple(map(str, args)))
    if key not in _CACHE:
        proc = run_cli(path, *args)
        if proc.returncode != 0:
            pytest.fail(f"`sparklance inspect --json {path} {' '.join(key[1])}` exited {proc.returncode}:\n"
                        f"{proc.stderr[-4000:]}", pytrace=False)
        try:
            _CACHE[key] = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            pytest.fail(f"stdout of `inspect --json {path} {' '.join(key[1])}` is not one JSON object ({e}):\n"
                        f"{proc.stdout[:2000]}", pytrace=False)
        if not isinstance(_CACHE[key], dict):
            pytest.fail(f"stdout of `inspect --json {path}` is JSON but not an object", pytrace=False)
    return _CACHE[key]


def prefetch(calls, workers: int = 2) -> None:
    """Run several ``inspect`` calls concurrently to fill the cache (the JVM start dominates each call)."""
    todo = [(str(p), tuple(map(str, a))) for p, a in calls]
    todo = [c for c in dict.fromkeys(todo) if c not in _CACHE]
    if not todo:
        return
    require_jar()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        procs = list(pool.map(lambda c: run_cli(c[0], *c[1]), todo))
    for key, proc in zip(todo, procs):
        if proc.returncode == 0:
            try:
                _CACHE[key] = json.loads(proc.stdout)
            except json.JSONDecodeError:
                pass  # inspect() runs it again and reports the problem


def inspect_error(path, *args) -> Tuple[int, str]:
    """(exit code, stderr) of an ``inspect --json PATH ARGS`` run that is expected to fail."""
    proc = run_cli(path, *args)
    return proc.returncode, proc.stderr


@pytest.fixture(scope="session")
def tables(tmp_path_factory) -> Dict[str, str]:
    """Every fixture table, built once per session: {name: path}."""
    return make_tables.build_all(tmp_path_factory.mktemp("lance_tables"))


@pytest.fixture(name="inspect")
def inspect_fixture():
    return inspect


@pytest.fixture(name="inspect_error")
def inspect_error_fixture():
    return inspect_error


@contextlib.contextmanager
def lance_raises(cls, match=None):
    """``pytest.raises`` for a sparklance error class (``sparklance.InvalidArgumentError``, ...) raised by a JVM call
    in the block, translated by error class as the Python package translates them."""
    from sparklance.errors import translated

    with pytest.raises(cls, match=match) as info:
        with translated():
            yield info


def assert_pylance_reads(dst: str, table, version: str) -> None:
    """pylance opens the JVM's rewrite of ``table`` at ``dst`` (``io.sparklance.cli.RewriteTable``, which leaves
    ``dst.err`` on failure), ``validate()`` passes, and it reads exactly ``table`` at file version ``version``."""
    import lance

    assert not os.path.exists(dst + ".err"), open(dst + ".err").read()
    ds = lance.dataset(dst)
    ds.validate()
    assert ds.data_storage_version == version
    got = ds.to_table()
    assert got.schema == table.schema
    for name in table.schema.names:
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks()), name


def arrow_df(spark, table):
    """A DataFrame of the rows of a pyarrow Table, on every Spark line: pyspark 4 takes the Table itself; pyspark 3.5
    and 3.4 cannot, so they get the Table's rows as Python values and the Spark schema of its Arrow schema."""
    if SPARK_LINE >= (4, 0):
        return spark.createDataFrame(table)
    from pyspark.sql.pandas.types import from_arrow_schema

    try:
        schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
    except TypeError:   # pyspark 3.4 maps every timestamp to TIMESTAMP: top-level naive ones are TIMESTAMP_NTZ
        import pyarrow as pa
        from pyspark.sql.types import StructField, StructType, TimestampNTZType

        schema = StructType([
            StructField(f.name, TimestampNTZType(), f.nullable)
            if pa.types.is_timestamp(a.type) and a.type.tz is None else f
            for f, a in zip(from_arrow_schema(table.schema).fields, table.schema)])
    return spark.createDataFrame([tuple(r.values()) for r in table.to_pylist()], schema)


def pytest_configure(config):
    config.addinivalue_line("markers", "cross_version: runs on every Spark line (make test-lines, make test-all-sparks)")
