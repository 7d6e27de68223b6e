"""Python exceptions for sparklance errors, chosen by the error class the JVM reports (never by message text)."""

from __future__ import annotations

import contextlib
import re
from typing import Dict, Iterator, Optional, Tuple, Type


class LanceError(Exception):
    """A sparklance error. ``error_class`` is the stable class (``LANCE_...``), ``sql_state`` its SQLSTATE."""

    def __init__(self, message: str, error_class: Optional[str] = None, sql_state: Optional[str] = None):
        super().__init__(message)
        self.error_class = error_class
        self.sql_state = sql_state


class TableNotFoundError(LanceError):
    """The path holds no Lance table (``LANCE_NOT_A_TABLE``)."""


class TableExistsError(LanceError):
    """A table was to be created where one exists (``LANCE_TABLE_EXISTS``)."""


class VersionNotFoundError(LanceError, LookupError):
    """The version asked for does not exist (``LANCE_VERSION_NOT_FOUND``)."""


class TagNotFoundError(LanceError, LookupError):
    """The tag asked for does not exist (``LANCE_TAG_NOT_FOUND``)."""


class CommitConflictError(LanceError):
    """Another writer committed a change this one cannot be combined with (``LANCE_COMMIT_CONFLICT``)."""


class CommitStateUnknownError(LanceError):
    """The commit may or may not have happened (``LANCE_COMMIT_STATE_UNKNOWN``)."""


class InvalidArgumentError(LanceError, ValueError):
    """An option, name or value is not valid (``LANCE_INVALID_ARGUMENT``)."""


class UnsupportedFeatureError(LanceError, NotImplementedError):
    """A feature this version does not implement (``LANCE_UNSUPPORTED_FEATURE``)."""


class ValueOutOfRangeError(LanceError, ValueError):
    """A value does not fit the type it is read or written as (``LANCE_VALUE_OUT_OF_RANGE``)."""


class CorruptFileError(LanceError):
    """A file of the table is damaged (``LANCE_CORRUPT_FILE``)."""


class StorageError(LanceError, OSError):
    """A storage operation failed (``LANCE_STORAGE_ERROR``)."""


class InconsistentTableError(LanceError):
    """The table's files break a rule of the format (``LANCE_INCONSISTENT_TABLE``)."""


BY_CLASS: Dict[str, Type[LanceError]] = {
    "LANCE_NOT_A_TABLE": TableNotFoundError,
    "LANCE_TABLE_EXISTS": TableExistsError,
    "LANCE_VERSION_NOT_FOUND": VersionNotFoundError,
    "LANCE_TAG_NOT_FOUND": TagNotFoundError,
    "LANCE_COMMIT_CONFLICT": CommitConflictError,
    "LANCE_COMMIT_STATE_UNKNOWN": CommitStateUnknownError,
    "LANCE_INVALID_ARGUMENT": InvalidArgumentError,
    "LANCE_UNSUPPORTED_FEATURE": UnsupportedFeatureError,
    "LANCE_VALUE_OUT_OF_RANGE": ValueOutOfRangeError,
    "LANCE_CORRUPT_FILE": CorruptFileError,
    "LANCE_STORAGE_ERROR": StorageError,
    "LANCE_INCONSISTENT_TABLE": InconsistentTableError,
}


def _lance_throwable(java_exc):
    """The first exception in a Java cause chain that carries a LANCE_ error class, or None."""
    seen = 0
    while java_exc is not None and seen < 20:
        try:
            condition = java_exc.getCondition()
        except Exception:  # not a SparkThrowable, or one of Spark 3.x, which has only getErrorClass
            try:
                condition = java_exc.getErrorClass()
            except Exception:
                condition = None
        if condition and str(condition).startswith("LANCE_"):
            return java_exc, str(condition)
        java_exc = java_exc.getCause()
        seen += 1
    return None


# How a sparklance error appears in a Java stack trace: the Spark boundary's exception prints its class first in
# brackets, and the core's exceptions print their Java class name, which fixes their error class.
_SPARK_LINE = re.compile(r"io\.sparklance\.spark\.LanceSparkException: \[(LANCE_[A-Z_]+)\] ?([^\n]*)")
_CORE_LINE = re.compile(r"io\.sparklance\.core\.([A-Za-z]+Exception): ([^\n]*)")
CORE_CLASSES: Dict[str, str] = {
    "StorageException": "LANCE_STORAGE_ERROR",
    "CorruptFileException": "LANCE_CORRUPT_FILE",
    "NotATableException": "LANCE_NOT_A_TABLE",
    "VersionNotFoundException": "LANCE_VERSION_NOT_FOUND",
    "TagNotFoundException": "LANCE_TAG_NOT_FOUND",
    "InconsistentTableException": "LANCE_INCONSISTENT_TABLE",
    "UnsupportedFeatureException": "LANCE_UNSUPPORTED_FEATURE",
    "ValueOutOfRangeException": "LANCE_VALUE_OUT_OF_RANGE",
    "CommitConflictException": "LANCE_COMMIT_CONFLICT",
    "CommitStateUnknownException": "LANCE_COMMIT_STATE_UNKNOWN",
    "InvalidArgumentException": "LANCE_INVALID_ARGUMENT",
    "TableExistsException": "LANCE_TABLE_EXISTS",
}


def _from_stack_trace(text: str) -> Optional[Tuple[str, str]]:
    """(error class, message) of the outermost sparklance exception named in a Java stack trace, or None.

    For failures whose cause objects did not reach the driver: Spark reports a failed task as a SparkException
    whose message carries the executor's stack trace as text. Only exception class names and the bracketed error
    class are read, never message prose.
    """
    found = []
    m = _SPARK_LINE.search(text)
    if m:
        found.append((m.start(), m.group(1), m.group(2)))
    for m in _CORE_LINE.finditer(text):
        if m.group(1) in CORE_CLASSES:
            found.append((m.start(), CORE_CLASSES[m.group(1)], m.group(2)))
            break
    if not found:
        return None
    _, condition, message = min(found)
    return condition, message


def _trace_text(e: BaseException) -> str:
    """The Java stack trace a py4j or pyspark exception carries, as text ("" if none)."""
    parts = []
    trace = getattr(e, "_stackTrace", None)  # pyspark's captured exceptions
    if trace:
        parts.append(str(trace))
    if getattr(e, "java_exception", None) is not None:  # py4j's Py4JJavaError prints the Java trace
        try:
            parts.append(str(e))
        except Exception:  # the gateway is gone
            pass
    return "\n".join(parts)


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Runs a block, re-raising sparklance errors from the JVM as the Python class of their error class."""
    try:
        yield
    except Exception as e:
        if isinstance(e, LanceError):
            raise
        java_exc = getattr(e, "java_exception", None)
        if java_exc is None:
            # pyspark 4 names the error class getCondition; pyspark 3.5 has only getErrorClass.
            getter = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
            condition = getter() if callable(getter) else None
            if condition and str(condition).startswith("LANCE_"):
                raise BY_CLASS.get(str(condition), LanceError)(str(e), str(condition), None) from e
        else:
            found = _lance_throwable(java_exc)
            if found is not None:
                throwable, condition = found
                cls = BY_CLASS.get(condition, LanceError)
                raise cls(str(throwable.getMessage()), condition, str(throwable.getSqlState())) from e
        from_trace = _from_stack_trace(_trace_text(e))
        if from_trace is None:
            raise
        condition, message = from_trace
        raise BY_CLASS.get(condition, LanceError)(message, condition, None) from e
