"""Stages the runtime jars and the version into the package before setuptools builds it, so that `pip install
./python` and `pip wheel ./python` in a checkout ship the jars `make jars` built (build/jars/, one per Spark line:
sparklance-spark-<line>_<scala>-<VERSION>.jar) and the checkout's VERSION; the package picks the jar of the Spark
it runs on. Outside a checkout (an unpacked sdist) the staged files are used as they are.

`make venv` installs the package in editable mode with SPARKLANCE_NO_JAR=1, before any jar is built: only VERSION
is staged then, and the package finds the jar in the checkout's build/ directory (see `sparklance._jvm.jar_path`)."""

import os

import shutil
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
PACKAGE = HERE / "sparklance"


def stage(with_jar: bool) -> None:
    if (CHECKOUT / "VERSION").is_file():
        shutil.copyfile(CHECKOUT / "VERSION", PACKAGE / "VERSION")
    if not (PACKAGE / "VERSION").is_file():
        raise SystemExit("sparklance: no VERSION file: build the package from a sparklance checkout.")
    jars = PACKAGE / "jars"
    jars.mkdir(exist_ok=True)
    if not with_jar:
        return
    version = (PACKAGE / "VERSION").read_text().strip()
    built = sorted((CHECKOUT / "build" / "jars").glob(f"sparklance-spark-*-{version}.jar"))
    if built:
        for old in jars.glob("*.jar"):
            old.unlink()
        for jar in built:
            shutil.copyfile(jar, jars / jar.name)
    if not list(jars.glob(f"sparklance-spark-*-{version}.jar")):
        raise SystemExit(f"sparklance: no runtime jar in {CHECKOUT / 'build' / 'jars'}. Run `make jars` in the checkout "
                         "first (the package carries the jars), or install a wheel built by `make wheel`.")

stage(with_jar=not os.environ.get("SPARKLANCE_NO_JAR"))
setup()
