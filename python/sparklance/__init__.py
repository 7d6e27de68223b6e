"""sparklance: a pure-JVM Spark connector for the Lance table format."""

from sparklance._jvm import jar_path

__all__ = ["jar_path", "__version__"]

from sparklance._version import __version__
