"""Locating the sparklance runtime jar and running JVM-side tools."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from typing import List, Optional, Tuple

from sparklance._version import __version__

# Spark 4 on Java 17 needs these opens; Arrow's memory module needs java.nio.
_JAVA_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch")
]


# The Spark lines sparklance is built for, with the Scala versions of each line's builds (one runtime jar each).
SPARK_LINES = {
    "3.4": ("2.12", "2.13"),
    "3.5": ("2.12", "2.13"),
    "4.0": ("2.13",),
    "4.1": ("2.13",),
    "4.2": ("2.13",),
    "4.3": ("2.13",),
}


def spark_line() -> Tuple[str, str]:
    """Return the (Spark line, Scala version) of the Spark that pyspark runs here, e.g. ``("3.5", "2.12")``.

    The line comes from ``pyspark.__version__``, the Scala version from the Scala library among Spark's jars
    (``$SPARK_HOME/jars`` when ``SPARK_HOME`` is set, as pyspark itself then launches that Spark).
    """
    import pyspark

    line = ".".join(pyspark.__version__.split(".")[:2])
    libraries = sorted(glob.glob(os.path.join(spark_jars_dir(), "scala-library-*.jar")))
    if not libraries:
        raise FileNotFoundError(f"Cannot tell the Scala version of Spark {pyspark.__version__}: no scala-library jar "
                                f"in {spark_jars_dir()}.")
    scala = ".".join(os.path.basename(libraries[-1])[len("scala-library-"):].split(".")[:2])
    return line, scala


def jar_name(line: str, scala: str) -> str:
    """The file name of the runtime jar for a Spark line and Scala version."""
    return f"sparklance-spark-{line}_{scala}-{__version__}.jar"


def jar_path() -> str:
    """Return the path of the sparklance runtime jar for the installed Spark (see `spark_line`).

    Looks, in order, at the ``SPARKLANCE_JAR`` environment variable, the repository's ``build/jars/`` directory when
    the package runs from a source checkout (after ``make jar`` or ``make jars``: the newest build, also for the
    editable install in the checkout's ``.venv``), and the jars shipped inside this package.
    """
    env = os.environ.get("SPARKLANCE_JAR")
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError(f"SPARKLANCE_JAR points at {env}, which is not a file.")
        return env
    line, scala = spark_line()
    if scala not in SPARK_LINES.get(line, ()):
        supported = ", ".join(f"{l} (Scala {' and '.join(s)})" for l, s in SPARK_LINES.items())
        raise RuntimeError(f"sparklance {__version__} has no jar for Spark {line} with Scala {scala}, the Spark "
                           f"pyspark runs here. It is built for Spark {supported}: install a pyspark of one of those "
                           "lines, or set SPARKLANCE_JAR to a jar built for this Spark.")
    here = os.path.dirname(os.path.abspath(__file__))
    name = jar_name(line, scala)
    for candidate in (os.path.join(here, "..", "..", "build", "jars", name), os.path.join(here, "jars", name)):
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    raise FileNotFoundError(
        f"Cannot find {name}, the jar for Spark {line} (Scala {scala}): build it with `make jars` in the sparklance "
        "checkout, or set SPARKLANCE_JAR.")


def spark_jars_dir() -> str:
    """Return the jars directory of the Spark pyspark runs: ``$SPARK_HOME/jars``, else the installed pyspark's."""
    home = os.environ.get("SPARK_HOME")
    if home and os.path.isdir(os.path.join(home, "jars")):
        return os.path.join(home, "jars")
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
