"""`spark-submit --packages`: after `make publish-local`, a PySpark script submitted with the sparklance coordinates of
the Spark line it runs on (io.sparklance:sparklance-spark-<line>_<scala>, resolved from the repository in build/m2,
no network needed for it) writes and reads a Lance table; pylance reads what it wrote. Part of the cross-version
suite: `make test-lines` runs it on Spark 3.5 and 4.0 too."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lance
import pytest

from conftest import LINE, SCALA, cross_version

pytestmark = cross_version

REPO = Path(__file__).resolve().parents[1]
VERSION = (REPO / "VERSION").read_text().strip()
M2 = REPO / "build" / "m2"
ARTIFACT = f"sparklance-spark-{LINE}_{SCALA}"
COORDINATES = f"io.sparklance:{ARTIFACT}:{VERSION}"

JOB = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    path = sys.argv[1]
    spark = SparkSession.builder.appName("packages-job").getOrCreate()
    spark.range(100).selectExpr("id", "id * 2 AS twice").write.format("lance").save(path)
    assert spark.read.format("lance").load(path).selectExpr("sum(twice) AS s").collect()[0].s == 9900
    spark.sql(f"SELECT count(*) AS n FROM lance.`{path}`").show()
    spark.stop()
""")


def test_spark_submit_with_packages(tmp_path):
    if not (M2 / "io" / "sparklance" / ARTIFACT).is_dir():
        pytest.fail("build/m2 has no sparklance: run `make publish-local` first", pytrace=False)
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    job = tmp_path / "job.py"
    job.write_text(JOB)
    table = tmp_path / "t.lance"
    opens = " ".join(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in ("java.lang", "java.nio", "java.util", "sun.nio.ch"))
    env = {k: v for k, v in os.environ.items() if k not in ("SPARKLANCE_JAR", "PYTHONPATH")}
    env["PYSPARK_PYTHON"] = sys.executable
    cmd = [str(submit), "--master", "local[2]", "--packages", COORDINATES, "--repositories", M2.as_uri(),
           "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}",
           "--conf", "spark.sql.catalog.lance=io.sparklance.spark.LanceCatalog",
           "--conf", f"spark.sql.catalog.lance.warehouse={tmp_path / 'wh'}",
           "--conf", f"spark.driver.extraJavaOptions={opens}",
           str(job), str(table)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    assert f"{COORDINATES} from" in out.stderr or ARTIFACT in out.stderr
    ds = lance.dataset(str(table))
    ds.validate()
    assert ds.count_rows() == 100
