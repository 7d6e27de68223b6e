"""Spark sessions wired for sparklance."""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from sparklance._jvm import jar_path

CATALOG_CLASS = "io.sparklance.spark.LanceCatalog"
EXTENSIONS_CLASS = "io.sparklance.spark.LanceSqlExtensions"

# Spark 4 on Java 17 needs these opens for Arrow; the driver JVM is started by pyspark with them.
_JAVA_OPTIONS = " ".join(
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch", "java.lang.invoke", "java.util.concurrent")
)

# The JDK's Vector API, which sparklance's vector index kernels use where the JVM has it (docs/vector-search.md,
# "Vector instructions"); a JVM older than 16 refuses to start with it.
VECTOR_MODULE = "--add-modules=jdk.incubator.vector"

_JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")


def java_major_version(java: Optional[str] = None) -> Optional[int]:
    """The major version of the Java that pyspark starts (``$JAVA_HOME/bin/java``, else ``java`` on the PATH), from
    ``java -version``; None when it cannot be told."""
    import shutil
    import subprocess

    java = java or (os.path.join(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else None)
    java = java or shutil.which("java")
    if not java:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def vector_api_available() -> bool:
    """Whether the JVM pyspark starts has the Vector API module: Spark 4 needs Java 17, so it does; for Spark 3, the
    Java found is asked."""
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return True
    major = java_major_version()
    return major is not None and major >= 17


def java_options(user: Optional[str], vector_api: bool) -> str:
    """``user``'s JVM options (may be None) followed by those sparklance needs that they lack: the opens, and the
    Vector API module when ``vector_api``."""
    options = (user or "").split()
    needed = _JAVA_OPTIONS.split() + ([VECTOR_MODULE] if vector_api else [])
    added = [o for o in needed if o not in options]
    return " ".join(([user.strip()] if user and user.strip() else []) + added)


def configure(builder, warehouse: Optional[str] = None, catalog: str = "lance"):
    """Add the sparklance jar, a Lance catalog named ``catalog`` (over ``warehouse``) and sparklance's SQL extensions
    to an existing ``SparkSession.Builder``, and the Vector API module to the driver's and executors' JVM options
    already set on it (as :func:`session` does); returns the builder."""
    from pyspark.sql import SparkSession

    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(f"configure() takes a SparkSession.Builder (SparkSession.builder), not {type(builder).__name__}.")
    builder = (builder.config("spark.jars", jar_path())
               .config(f"spark.sql.catalog.{catalog}", CATALOG_CLASS)
               .config("spark.sql.extensions", EXTENSIONS_CLASS))
    if vector_api_available():
        given = getattr(builder, "_options", {})
        for key in _JAVA_OPTION_KEYS:
            options = (given.get(key) or "").split()
            if VECTOR_MODULE not in options:
                builder = builder.config(key, " ".join(options + [VECTOR_MODULE]))
    if warehouse is not None:
        builder = builder.config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
    return builder


def session(warehouse: Optional[str] = None, catalog: str = "lance", app_name: str = "sparklance", **conf: Any):
    """Return a local SparkSession with the sparklance jar on its classpath, the Lance catalog and sparklance's SQL
    extensions (OPTIMIZE, VACUUM, DESCRIBE HISTORY, tags, RESTORE) configured.

    ``warehouse`` is the directory (or URI) of the catalog: ``lance.db.tbl`` is the dataset ``<warehouse>/db/tbl.lance``.
    Extra keyword arguments are Spark settings; use their full names, e.g.
    ``session("/tmp/wh", **{"spark.sql.shuffle.partitions": "4"})``.

    The driver's and executors' JVM options (``spark.driver.extraJavaOptions``, ``spark.executor.extraJavaOptions``)
    are those given here, followed by what sparklance needs that they lack: the opens Spark 4 needs on Java 17, and
    ``--add-modules=jdk.incubator.vector`` where the JVM has the Vector API (Java 17 or later), so that vector
    indexes are built and searched with SIMD instructions. ``-Dsparklance.vector.plain=true`` in those options keeps
    the plain Java loops.
    """
    from pyspark.sql import SparkSession

    vector_api = vector_api_available()
    builder = (
        SparkSession.builder.master(conf.pop("master", "local[2]"))
        .appName(app_name)
        .config("spark.jars", jar_path())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config(f"spark.sql.catalog.{catalog}", CATALOG_CLASS)
        .config("spark.sql.extensions", EXTENSIONS_CLASS)
    )
    if warehouse is not None:
        builder = builder.config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
    for key in _JAVA_OPTION_KEYS:
        given = conf.pop(key, None)
        builder = builder.config(key, java_options(None if given is None else str(given), vector_api))
    for key, value in conf.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()
