"""Spark sessions wired for sparklance."""

from __future__ import annotations

from typing import Any, Optional

from sparklance._jvm import jar_path

CATALOG_CLASS = "io.sparklance.spark.LanceCatalog"
EXTENSIONS_CLASS = "io.sparklance.spark.LanceSqlExtensions"

# Spark 4 on Java 17 needs these opens for Arrow; the driver JVM is started by pyspark with them.
_JAVA_OPTIONS = " ".join(
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch", "java.lang.invoke", "java.util.concurrent")
)


def configure(builder, warehouse: Optional[str] = None, catalog: str = "lance"):
    """Add the sparklance jar, a Lance catalog named ``catalog`` (over ``warehouse``) and sparklance's SQL extensions
    to an existing ``SparkSession.Builder``; returns the builder."""
    from pyspark.sql import SparkSession

    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(f"configure() takes a SparkSession.Builder (SparkSession.builder), not {type(builder).__name__}.")
    builder = (builder.config("spark.jars", jar_path())
               .config(f"spark.sql.catalog.{catalog}", CATALOG_CLASS)
               .config("spark.sql.extensions", EXTENSIONS_CLASS))
    if warehouse is not None:
        builder = builder.config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
    return builder


def session(warehouse: Optional[str] = None, catalog: str = "lance", app_name: str = "sparklance", **conf: Any):
    """Return a local SparkSession with the sparklance jar on its classpath, the Lance catalog and sparklance's SQL
    extensions (OPTIMIZE, VACUUM, DESCRIBE HISTORY, tags, RESTORE) configured.

    ``warehouse`` is the directory (or URI) of the catalog: ``lance.db.tbl`` is the dataset ``<warehouse>/db/tbl.lance``.
    Extra keyword arguments are Spark settings; use their full names, e.g.
    ``session("/tmp/wh", **{"spark.sql.shuffle.partitions": "4"})``.
    """
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(conf.pop("master", "local[2]"))
        .appName(app_name)
        .config("spark.jars", jar_path())
        .config("spark.driver.extraJavaOptions", _JAVA_OPTIONS)
        .config("spark.executor.extraJavaOptions", _JAVA_OPTIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config(f"spark.sql.catalog.{catalog}", CATALOG_CLASS)
        .config("spark.sql.extensions", EXTENSIONS_CLASS)
    )
    if warehouse is not None:
        builder = builder.config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
    for key, value in conf.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()
