"""sparklance: a pure-JVM Spark connector for the Lance table format."""

from sparklance._jvm import jar_path
from sparklance._session import session
from sparklance._version import __version__

__all__ = ["jar_path", "session", "__version__"]
