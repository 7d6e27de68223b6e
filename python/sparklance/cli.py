"""The ``sparklance`` command line.

``sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]`` prints a table's history,
schema and fragments as the JVM core reads them.
"""

from __future__ import annotations

import sys
from typing import List, Optional

from sparklance._jvm import run_tool

_TOOLS = {"inspect": "io.sparklance.cli.Inspect"}


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in _TOOLS:
        print("usage: sparklance inspect PATH [--version N | --tag NAME | --as-of TIMESTAMP] [--json]",
              file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return run_tool(_TOOLS[argv[0]], argv[1:])
