"""`python damage_pylance_reader.py TABLE OUT [TABLE OUT ...]`: reads each table's latest version with pylance and
writes its rows to OUT as an Arrow IPC file, or pylance's error to OUT.err as `PYLANCE: type: message`.

The damage fuzzer's pylance side, in a process of its own so that a pylance crash or hang on a damaged file ends
only this process: like the JVM's `ReadTable`, it prints `READ TABLE` before each table.
"""

from __future__ import annotations

import os
import sys

import lance
import pyarrow as pa


def main(argv) -> None:
    for table, out in zip(argv[0::2], argv[1::2]):
        print(f"READ {table}", flush=True)
        try:
            data = lance.dataset(table).to_table()
            with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, data.schema) as writer:
                writer.write_table(data)
        except BaseException as e:  # noqa: B902 - pyo3 panics are BaseExceptions; every failure is an outcome here
            if isinstance(e, KeyboardInterrupt):
                raise
            if os.path.exists(out):
                os.remove(out)
            with open(out + ".err", "w") as f:
                f.write(f"PYLANCE: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
