"""The ``sparklance`` command line.

- ``sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json] [-q]``: a table's history,
  schema and fragments as the JVM core reads them (no Spark).
- ``sparklance sql [--warehouse DIR] [-q] [--progress-interval SECONDS] [STATEMENT]``: runs a SQL statement (or,
  without one, reads statements from an interactive prompt, one per line) in a local Spark session with the
  ``lance`` catalog over DIR, printing results.
- ``sparklance history [-q] PATH``: a table's versions with their operations and row counts.

Results go to stdout. Progress of long work (Spark starting, a statement's stages and tasks, an inspection) goes to
stderr, as described in :mod:`sparklance._progress`; ``-q``/``--quiet`` turns it off. Errors go to stderr as
``error [LANCE_...]: message`` and make the exit code 1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys
from typing import List, Optional

from sparklance._jvm import java_command, run_tool
from sparklance._progress import DEFAULT_INTERVAL_SECONDS, Progress

INSPECT = "io.sparklance.cli.Inspect"

USAGE = """usage: sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json] [-q]
       sparklance sql [--warehouse DIR] [-q] [--progress-interval SECONDS] [STATEMENT]
       sparklance history [-q] PATH"""


def _session(warehouse: Optional[str], progress: Progress):
    from sparklance._session import session

    with progress.phase("starting Spark"):
        spark = session(warehouse=warehouse, app_name="sparklance-cli")
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _shown(df) -> str:
    """What ``df.show()`` prints, all rows up to 1000, untruncated; the jobs run here, inside the progress report,
    and the text is printed once the report's line is gone."""
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        df.show(n=1000, truncate=False)
    return text.getvalue()


def _run_sql(spark, statement: str, progress: Progress) -> int:
    from sparklance.errors import LanceError, translated

    try:
        with translated(), progress.spark_work(spark.sparkContext, "sql"):
            df = spark.sql(statement)
            text = _shown(df) if df.columns else ""
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    except LanceError as e:
        print(f"error [{e.error_class}]: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # Spark's own errors (parse errors, missing tables)
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1


def _sql(rest: List[str]) -> int:
    p = argparse.ArgumentParser(prog="sparklance sql")
    p.add_argument("--warehouse", help="directory of the `lance` catalog's tables")
    p.add_argument("-q", "--quiet", action="store_true", help="show no progress on stderr")
    p.add_argument("--progress-interval", type=float, default=DEFAULT_INTERVAL_SECONDS, metavar="SECONDS",
                   help="least time between progress lines when stderr is not a terminal (default %(default)s)")
    p.add_argument("statement", nargs="?")
    args = p.parse_args(rest)
    progress = Progress(enabled=not args.quiet, interval=args.progress_interval)
    spark = _session(args.warehouse, progress)
    try:
        if args.statement:
            return _run_sql(spark, args.statement, progress)
        status = 0
        prompt = "sparklance> " if sys.stdin.isatty() else ""   # statements from a file: stdout holds only results
        while True:
            try:
                line = input(prompt).strip().rstrip(";")
            except EOFError:
                return status
            if line.lower() in ("exit", "quit"):
                return status
            if line:
                status = _run_sql(spark, line, progress)
    finally:
        spark.stop()


def _history(rest: List[str]) -> int:
    p = argparse.ArgumentParser(prog="sparklance history")
    p.add_argument("-q", "--quiet", action="store_true", help="show no progress on stderr")
    p.add_argument("path")
    args = p.parse_args(rest)
    from sparklance.errors import LanceError
    from sparklance.table import LanceTable

    spark = _session(None, Progress(enabled=not args.quiet))
    try:
        LanceTable.for_path(spark, args.path).history().show(n=10000, truncate=False)
        return 0
    except LanceError as e:
        print(f"error [{e.error_class}]: {e}", file=sys.stderr)
        return 1
    finally:
        spark.stop()


def _inspect(rest: List[str]) -> int:
    quiet = any(a in ("-q", "--quiet") for a in rest)
    args = [a for a in rest if a not in ("-q", "--quiet")]
    progress = Progress(enabled=not quiet)
    if not progress.live:
        # Inspection is short and its stderr is read by scripts: no plain progress lines.
        return run_tool(INSPECT, args)
    # On a terminal the JVM's output is held while the status line shows, then written once the line is erased.
    with progress.phase("inspect: starting the JVM core and reading the table"):
        proc = subprocess.run(java_command(INSPECT, args), capture_output=True)
    sys.stdout.buffer.write(proc.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(proc.stderr)
    sys.stderr.flush()
    return proc.returncode


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "inspect":
        return _inspect(rest)
    if command == "sql":
        return _sql(rest)
    if command == "history":
        return _history(rest)
    print(USAGE, file=sys.stderr)
    return 2
