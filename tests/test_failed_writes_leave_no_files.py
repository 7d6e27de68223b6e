"""A statement whose job fails leaves no file behind and no version, while another task of the job goes on.

Each statement here runs two tasks at once: one fails at its first row, the other sleeps at its last row, then
finishes its file after the job has failed. Spark drops such a task's result (or, with its commit coordinator,
denies the commit); the abort must still delete its file. CI once found a file of ADD COLUMNS ... FROM left
behind: a task that finished just as another failed, whose result came after the job's failure. That timing is too
narrow to force from SQL; ``JobWatchSuite`` (the abort waits for the failed job's tasks) and ``TableSuite`` (an abort
deletes the files named with its tag, also those it was never told of) test the two halves of the fix.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version]

ROWS = 2000
SLEEP_MS = 1500


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "failed_writes_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-failed-writes-tests", wh)
    yield session
    session.stop()


def fail_one_delay_other(column: str, first_of_slow: int) -> str:
    """An expression failing at row 0 and sleeping at `first_of_slow` (a row of the other task), else `column`."""
    return (f"CASE WHEN {column} = 0 THEN CAST(raise_error('boom at the first row') AS BIGINT) "
            f"WHEN {column} = {first_of_slow} THEN {column} + "
            f"CAST(length(CAST(reflect('java.lang.Thread', 'sleep', CAST({SLEEP_MS} AS BIGINT)) AS STRING)) AS BIGINT) "
            f"ELSE {column} END")


def make(path: str) -> None:
    """Two fragments of ROWS / 2 rows: ids 0.. and ROWS / 2..."""
    half = ROWS // 2
    lance.write_dataset(pa.table({"id": pa.array(range(ROWS), pa.int64())}), path, max_rows_per_file=half)


def referenced(path: str) -> set:
    return {os.path.basename(d.path) for f in lance.dataset(path).get_fragments() for d in f.data_files()}


def leftovers(path: str) -> list:
    data = os.path.join(path, "data")
    return sorted(set(os.listdir(data)) - referenced(path)) if os.path.isdir(data) else []


def refused_without_trace(wh, name: str, run) -> None:
    """A table ``name`` made by :func:`make`; ``run(path)`` fails with the planted error and leaves no version and no
    file."""
    path = str(wh / "db" / f"{name}.lance")
    make(path)
    version = lance.dataset(path).version
    with pytest.raises(Exception, match="boom at the first row"):
        run(path)
    assert lance.dataset(path).version == version
    assert leftovers(path) == []


SLOW = fail_one_delay_other("id", ROWS - 1)


def test_path_write(spark, wh):
    df = spark.range(0, ROWS, 1, 2).selectExpr(f"{SLOW} AS id")
    refused_without_trace(wh, "by_path", lambda path: df.write.format("lance").mode("append").save(path))


def test_insert_into_a_catalog_table(spark, wh):
    refused_without_trace(wh, "by_insert", lambda _: spark.sql(
        f"INSERT INTO lance.db.by_insert SELECT {SLOW} FROM range(0, {ROWS}, 1, 2)").collect())


def test_update(spark, wh):
    refused_without_trace(wh, "by_update", lambda _: spark.sql(f"UPDATE lance.db.by_update SET id = {SLOW}").collect())


def test_add_columns_from_a_view(spark, wh):
    def run(_):
        spark.sql(f"SELECT _rowaddr, {SLOW} AS x FROM lance.db.by_add_columns").createOrReplaceTempView("failing")
        spark.sql("ALTER TABLE lance.db.by_add_columns ADD COLUMNS x FROM failing").collect()
    refused_without_trace(wh, "by_add_columns", run)
