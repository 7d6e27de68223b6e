"""The ``sparklance`` command line.

- ``sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]``: a table's history, schema and
  fragments as the JVM core reads them (no Spark).
- ``sparklance sql [--warehouse DIR] [STATEMENT]``: runs a SQL statement (or, without one, reads statements from an
  interactive prompt, one per line) in a local Spark session with the ``lance`` catalog over DIR, printing results.
- ``sparklance history PATH``: a table's versions with their operations and row counts.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from sparklance._jvm import run_tool

USAGE = """usage: sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]
       sparklance sql [--warehouse DIR] [STATEMENT]
       sparklance history PATH"""


def _session(warehouse: Optional[str]):
    from sparklance._session import session

    print("starting Spark ...", file=sys.stderr, flush=True)
    spark = session(warehouse=warehouse, app_name="sparklance-cli")
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _run_sql(spark, statement: str) -> int:
    from sparklance.errors import LanceError, translated

    try:
        with translated():
            df = spark.sql(statement)
            if df.columns:
                df.show(n=1000, truncate=False)
        return 0
    except LanceError as e:
        print(f"error [{e.error_class}]: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # Spark's own errors (parse errors, missing tables)
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "inspect":
        return run_tool("io.sparklance.cli.Inspect", rest)
    if command == "sql":
        p = argparse.ArgumentParser(prog="sparklance sql")
        p.add_argument("--warehouse")
        p.add_argument("statement", nargs="?")
        args = p.parse_args(rest)
        spark = _session(args.warehouse)
        try:
            if args.statement:
                return _run_sql(spark, args.statement)
            status = 0
            while True:
                try:
                    line = input("sparklance> ").strip().rstrip(";")
                except EOFError:
                    return status
                if line.lower() in ("exit", "quit"):
                    return status
                if line:
                    status = _run_sql(spark, line)
        finally:
            spark.stop()
    if command == "history":
        if len(rest) != 1:
            print(USAGE, file=sys.stderr)
            return 2
        from sparklance.errors import LanceError
        from sparklance.table import LanceTable

        spark = _session(None)
        try:
            LanceTable.for_path(spark, rest[0]).history().show(n=10000, truncate=False)
            return 0
        except LanceError as e:
            print(f"error [{e.error_class}]: {e}", file=sys.stderr)
            return 1
        finally:
            spark.stop()
    print(USAGE, file=sys.stderr)
    return 2
