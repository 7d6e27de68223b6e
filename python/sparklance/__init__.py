"""sparklance: a pure-JVM Spark connector for the Lance table format."""

from sparklance._jvm import jar_path
from sparklance._session import configure, session
from sparklance._version import __version__
from sparklance.errors import (CommitConflictError, CommitStateUnknownError, CorruptFileError, InvalidArgumentError,
                               LanceError, StorageError, TableExistsError, TableNotFoundError, TagNotFoundError,
                               UnsupportedFeatureError, ValueOutOfRangeError, VersionNotFoundError)
from sparklance.table import LanceTable

__all__ = ["jar_path", "session", "configure", "LanceTable", "LanceError", "TableNotFoundError", "TableExistsError",
           "VersionNotFoundError", "TagNotFoundError", "CommitConflictError", "CommitStateUnknownError",
           "InvalidArgumentError", "UnsupportedFeatureError", "ValueOutOfRangeError", "CorruptFileError",
           "StorageError", "__version__"]
