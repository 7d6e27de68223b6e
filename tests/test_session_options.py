"""``sparklance.session()`` starts the driver's and executors' JVMs with the JDK's Vector API module on Java 17 and
later, after the options a caller gives (kept), so that vector indexes use the Vector API kernels by default."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402

from sparklance._session import VECTOR_MODULE, java_major_version, java_options  # noqa: E402


def test_java_options_keep_the_callers_and_add_what_is_missing():
    merged = java_options("-Xss8m  -Dx=1", vector_api=True).split()
    assert merged[:2] == ["-Xss8m", "-Dx=1"] and VECTOR_MODULE in merged
    assert "--add-opens=java.base/java.nio=ALL-UNNAMED" in merged
    # Nothing twice, and no module where the JVM cannot take it.
    assert java_options(" ".join(merged), vector_api=True).split() == merged
    assert VECTOR_MODULE not in java_options("-Xss8m", vector_api=False).split()
    assert java_major_version() >= 17


def test_session_runs_the_vector_api_kernels(tmp_path_factory):
    spark = start_spark("test_session_options", warehouse_with(tmp_path_factory, "so_wh"),
                        **{"spark.executor.extraJavaOptions": "-Xss8m"})
    try:
        conf = spark.sparkContext.getConf()
        executor = conf.get("spark.executor.extraJavaOptions").split()
        assert "-Xss8m" in executor and VECTOR_MODULE in executor, executor
        assert VECTOR_MODULE in conf.get("spark.driver.extraJavaOptions").split()
        kernels = spark._jvm.io.sparklance.core.index.FloatKernels.best().describe()
        assert kernels.startswith("vector-api"), kernels
        # The executors (local mode: the driver's JVM) run them too: a task asks its JVM.
        assert spark.sparkContext.parallelize([0], 1).map(lambda _: 1).count() == 1
    finally:
        spark.stop()
