"""`sparklance.errors.translated` maps JVM errors to Python classes by error class, also when the exception that
reaches the driver lost its cause objects and carries the executor's failure only as stack trace text (Spark's
"Job aborted due to stage failure" SparkException)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import sparklance  # noqa: E402
from sparklance.errors import translated  # noqa: E402

STAGE_FAILURE = """An error occurred while calling o87.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most recent \
failure: Lost task 0.0 in stage 3.0 (TID 3) (10.0.0.5 executor 1): io.sparklance.spark.LanceSparkException: \
[LANCE_CORRUPT_FILE] Cannot read /w/t.lance/data/ab.lance: page 0 of list field 'l': list 3 ends at item 9, outside \
[4, 7]. The file is damaged.
\tat io.sparklance.spark.LanceSparkException$.translate(LanceSparkException.scala:27)
\tat io.sparklance.spark.LanceColumnarReader.next(LanceReaderFactory.scala:93)
Caused by: io.sparklance.core.CorruptFileException: Cannot read /w/t.lance/data/ab.lance: page 0 of list field 'l'
\tat io.sparklance.core.file.FieldReader20.listRange(FieldReader20.scala:110)

Driver stacktrace:
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
"""


class FakeJavaThrowable:
    """A py4j JavaObject standing for a Java exception that is not a SparkThrowable and has no cause."""

    def getCondition(self):
        raise AttributeError("not a SparkThrowable")

    def getCause(self):
        return None


class FakePy4JJavaError(Exception):
    """Like py4j's Py4JJavaError: `java_exception`, and a str() that is the Java stack trace."""

    def __init__(self, trace: str):
        super().__init__("An error occurred")
        self.java_exception = FakeJavaThrowable()
        self.trace = trace

    def __str__(self):
        return self.trace


class FakeCapturedException(Exception):
    """Like pyspark's captured exceptions: no `java_exception`, the trace in `_stackTrace`."""

    def __init__(self, trace: str):
        super().__init__("org.apache.spark.SparkException: Job aborted")
        self._stackTrace = trace

    def getCondition(self):
        return None


@pytest.mark.parametrize("wrapper", [FakePy4JJavaError, FakeCapturedException])
def test_error_class_is_read_from_the_stack_trace_when_causes_are_lost(wrapper):
    with pytest.raises(sparklance.CorruptFileError) as raised:
        with translated():
            raise wrapper(STAGE_FAILURE)
    assert raised.value.error_class == "LANCE_CORRUPT_FILE"
    assert str(raised.value).startswith("Cannot read /w/t.lance/data/ab.lance: page 0 of list field 'l'")


def test_core_exception_names_map_to_their_class():
    trace = ("An error occurred while calling o1.load.\n: io.sparklance.core.StorageException: Cannot open "
             "/w/t.lance/data/x.lance: no such file\n\tat io.sparklance.core.storage.HadoopStorage.open")
    with pytest.raises(sparklance.StorageError) as raised:
        with translated():
            raise FakePy4JJavaError(trace)
    assert raised.value.error_class == "LANCE_STORAGE_ERROR"


def test_other_errors_pass_through_unchanged():
    trace = ("An error occurred while calling o1.collectToPython.\n: org.apache.spark.SparkException: Job aborted: "
             "java.lang.IllegalStateException: the word LANCE_CORRUPT_FILE in prose is not an error class\n\tat x.y")
    with pytest.raises(FakePy4JJavaError):
        with translated():
            raise FakePy4JJavaError(trace)
