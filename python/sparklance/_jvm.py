"""Locating the sparklance runtime jar and running JVM-side tools."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from typing import List, Optional

from sparklance._version import __version__

# Spark 4 on Java 17 needs these opens; Arrow's memory module needs java.nio.
_JAVA_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch")
]


def jar_path() -> str:
    """Return the path of the sparklance runtime jar.

    Looks, in order, at the ``SPARKLANCE_JAR`` environment variable, the repository's ``build/`` directory when the
    package runs from a source checkout (after ``make jar``: the newest build, also for the editable install in
    the checkout's ``.venv``), and the jar shipped inside this package.
    """
    env = os.environ.get("SPARKLANCE_JAR")
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError(f"SPARKLANCE_JAR points at {env}, which is not a file.")
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    name = f"sparklance-{__version__}.jar"
    for candidate in (os.path.join(here, "..", "..", "build", name), os.path.join(here, "jars", name)):
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    raise FileNotFoundError(
        f"Cannot find {name}: build it with `make jar` in the sparklance checkout, or set SPARKLANCE_JAR.")


def spark_jars_dir() -> str:
    """Return the jars directory of the installed pyspark (Spark's own libraries: Arrow, Hadoop, ...)."""
    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    if not os.path.isdir(jars):
        raise FileNotFoundError(f"pyspark at {os.path.dirname(pyspark.__file__)} has no jars/ directory.")
    return jars


def java_command(main_class: str, args: List[str], java: Optional[str] = None) -> List[str]:
    """Build the command line that runs ``main_class`` of the runtime jar with Spark's libraries."""
    java = java or (os.path.join(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else None)
    java = java or shutil.which("java")
    if not java:
        raise FileNotFoundError("Cannot find `java`: install Java 17 or set JAVA_HOME.")
    classpath = os.pathsep.join([jar_path(), os.path.join(spark_jars_dir(), "*")])
    # Tools are short-lived: the C1 compiler and the serial collector start fastest.
    return [java, "-Xss4m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", *_JAVA_OPENS, "-cp", classpath, main_class, *args]


def run_tool(main_class: str, args: List[str]) -> int:
    """Run a JVM tool of the runtime jar in the foreground and return its exit code."""
    return subprocess.call(java_command(main_class, args), stdout=sys.stdout, stderr=sys.stderr)
