"""The built wheel on its own: a fresh virtualenv gets `pip install` of build/dist's wheel and nothing else from the
project (pyspark and pylance come from the test environment's site-packages, as PyPI would provide them), and a
script using only the documented API runs green: the jar comes from inside the installed package, the one built for
the Spark line the environment's pyspark is. Part of the cross-version suite (make test-lines)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import LINE, SCALA, cross_version

pytestmark = cross_version

REPO = Path(__file__).resolve().parents[1]
LINES = ["3.4_2.12", "3.4_2.13", "3.5_2.12", "3.5_2.13", "4.0_2.13", "4.1_2.13", "4.2_2.13", "4.3_2.13"]
VERSION = (REPO / "VERSION").read_text().strip()
WHEEL = REPO / "build" / "dist" / f"sparklance-{VERSION}-py3-none-any.whl"

SCRIPT = textwrap.dedent("""
    import os, sys
    import sparklance
    from sparklance import LanceTable
    wh, jar = sys.argv[1], sys.argv[2]
    assert sparklance.jar_path() == os.path.join(os.path.dirname(sparklance.__file__), "jars", jar), sparklance.jar_path()
    spark = sparklance.session(warehouse=wh)
    spark.range(10).write.format("lance").save(wh + "/t.lance")
    assert spark.read.format("lance").load(wh + "/t.lance").count() == 10
    spark.sql("CREATE NAMESPACE lance.db")
    spark.sql("CREATE TABLE lance.db.x AS SELECT 1 AS a")
    assert LanceTable.for_name(spark, "lance.db.x").versions() == [1]
    try:
        LanceTable.for_path(spark, wh + "/missing.lance").history()
        raise SystemExit("no error for a missing table")
    except sparklance.TableNotFoundError:
        pass
    spark.stop()
    print("OK", sparklance.__version__)
""")


def test_fresh_virtualenv_runs_the_documented_api(tmp_path):
    if not WHEEL.is_file():
        pytest.fail(f"{WHEEL.relative_to(REPO)} does not exist: run `make wheel` first", pytrace=False)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # Third-party dependencies (pyspark) from this environment, the project only from the wheel.
    deps = [p for p in sys.path if p.endswith("site-packages")]
    Path(site, "test-deps.pth").write_text("\n".join(deps) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(WHEEL)], check=True)
    assert (venv / "bin" / "sparklance").exists()
    env = {k: v for k, v in os.environ.items() if k not in ("SPARKLANCE_JAR", "PYTHONPATH")}
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    jar = f"sparklance-spark-{LINE}_{SCALA}-{VERSION}.jar"
    out = subprocess.run([str(py), str(script), str(tmp_path / "wh"), jar], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith(f"OK {VERSION}")


def test_pip_builds_from_the_source_tree_with_the_checkouts_jars(tmp_path):
    """`pip wheel ./python` (what `pip install ./python` runs) stages build/jars/'s jars and VERSION into the package."""
    import zipfile

    jars = sorted((REPO / "build" / "jars").glob(f"sparklance-spark-*-{VERSION}.jar"))
    if len(jars) != len(LINES):
        pytest.fail(f"build/jars holds {len(jars)} of the {len(LINES)} jars: run `make jars` first", pytrace=False)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                          str(tmp_path), str(REPO / "python")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    wheel = tmp_path / f"sparklance-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        for jar in jars:
            assert z.read(f"sparklance/jars/{jar.name}") == jar.read_bytes()
        assert z.read("sparklance/VERSION").decode().strip() == VERSION


def test_the_wheel_carries_every_lines_jar():
    import zipfile

    if not WHEEL.is_file():
        pytest.fail(f"{WHEEL.relative_to(REPO)} does not exist: run `make wheel` first", pytrace=False)
    names = {os.path.basename(n) for n in zipfile.ZipFile(WHEEL).namelist() if n.endswith(".jar")}
    assert names == {f"sparklance-spark-{line}-{VERSION}.jar" for line in LINES}


def test_no_jar_for_an_unsupported_spark_says_so(monkeypatch):
    sys.path.insert(0, str(REPO / "python"))
    from sparklance import _jvm

    monkeypatch.delenv("SPARKLANCE_JAR", raising=False)
    monkeypatch.setattr(_jvm, "spark_line", lambda: ("3.3", "2.12"))
    with pytest.raises(RuntimeError) as e:
        _jvm.jar_path()
    assert str(e.value).startswith(f"sparklance {VERSION} has no jar for Spark 3.3 with Scala 2.12, the Spark pyspark "
                                   "runs here. It is built for Spark 3.4 (Scala 2.12 and 2.13), 3.5 (Scala 2.12 and "
                                   "2.13), 4.0 (Scala 2.13)")
    monkeypatch.setattr(_jvm, "spark_line", lambda: ("4.0", "2.12"))
    with pytest.raises(RuntimeError, match="no jar for Spark 4.0 with Scala 2.12"):
        _jvm.jar_path()
