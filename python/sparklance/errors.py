"""Python exceptions for sparklance errors, chosen by the error class the JVM reports (never by message text)."""

from __future__ import annotations

import contextlib
from typing import Dict, Iterator, Optional, Type


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
        except Exception:  # not a SparkThrowable
            condition = None
        if condition and str(condition).startswith("LANCE_"):
            return java_exc, str(condition)
        java_exc = java_exc.getCause()
        seen += 1
    return None


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Runs a block, re-raising sparklance errors from the JVM as the Python class of their error class."""
    try:
        yield
    except Exception as e:
        java_exc = getattr(e, "java_exception", None)
        if java_exc is None:
            getter = getattr(e, "getCondition", None)
            condition = getter() if callable(getter) else None
            if condition and str(condition).startswith("LANCE_"):
                raise BY_CLASS.get(str(condition), LanceError)(str(e), str(condition), None) from e
            raise
        found = _lance_throwable(java_exc)
        if found is None:
            raise
        throwable, condition = found
        cls = BY_CLASS.get(condition, LanceError)
        raise cls(str(throwable.getMessage()), condition, str(throwable.getSqlState())) from e
