"""The built wheel on its own: a fresh virtualenv gets `pip install` of build/dist's wheel and nothing else from the
project (pyspark and pylance come from the test environment's site-packages, as PyPI would provide them), and a
script using only the documented API runs green: the jar comes from inside the installed package."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VERSION = (REPO / "VERSION").read_text().strip()
WHEEL = REPO / "build" / "dist" / f"sparklance-{VERSION}-py3-none-any.whl"

SCRIPT = textwrap.dedent("""
    import os, sys
    import sparklance
    from sparklance import LanceTable
    wh = sys.argv[1]
    assert sparklance.jar_path().startswith(os.path.dirname(sparklance.__file__)), sparklance.jar_path()
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
    out = subprocess.run([str(py), str(script), str(tmp_path / "wh")], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith(f"OK {VERSION}")


def test_pip_builds_from_the_source_tree_with_the_checkouts_jar(tmp_path):
    """`pip wheel ./python` (what `pip install ./python` runs) stages build/'s jar and VERSION into the package."""
    import zipfile

    jar = REPO / "build" / f"sparklance-{VERSION}.jar"
    if not jar.is_file():
        pytest.fail(f"{jar.relative_to(REPO)} does not exist: run `make jar` first", pytrace=False)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                          str(tmp_path), str(REPO / "python")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    wheel = tmp_path / f"sparklance-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        assert z.read(f"sparklance/jars/sparklance-{VERSION}.jar") == jar.read_bytes()
        assert z.read("sparklance/VERSION").decode().strip() == VERSION
