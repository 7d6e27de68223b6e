"""The sparklance demo: make a small Lance warehouse with pylance, then read it back with sparklance's JVM core.

Usage: python integration/demo.py WAREHOUSE_DIR

Today the demo covers the table-format core: history, schema, fragments, deletions and time travel, as read by
``sparklance inspect``. It grows into a Spark pipeline as the read and write paths land.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]


def make_table(path: Path) -> None:
    """Four versions: create, append, delete some rows, add a computed column; tag version 2 as 'launch'."""
    events = pa.table({
        "id": pa.array(range(1000), pa.int64()),
        "kind": pa.array(["click", "view", "buy", "share"] * 250),
        "score": pa.array([i * 0.5 for i in range(1000)], pa.float64()),
        "embedding": pa.array([[float(i), float(i) / 2, 0.0, 1.0] for i in range(1000)], pa.list_(pa.float32(), 4)),
    })
    ds = lance.write_dataset(events, str(path), max_rows_per_file=400)
    more = events.slice(0, 200).set_column(0, "id", pa.array(range(1000, 1200), pa.int64()))
    ds = lance.write_dataset(more, str(path), mode="append")
    ds.tags.create("launch", 2)
    ds.delete("kind = 'share' AND id < 600")
    ds.add_columns({"double_score": "score * 2"})


def inspect(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [sys.executable, "-m", "sparklance", "inspect", *args]
    print(f"$ sparklance inspect {' '.join(args)}", flush=True)
    subprocess.run(cmd, check=True, env=env)
    print(flush=True)


def main() -> int:
    warehouse = Path(sys.argv[1] if len(sys.argv) > 1 else "build/demo-warehouse").resolve()
    table = warehouse / "demo" / "events.lance"
    if table.exists():
        shutil.rmtree(table)
    table.parent.mkdir(parents=True, exist_ok=True)
    make_table(table)
    print(f"pylance wrote {table} ({len(lance.dataset(str(table)).versions())} versions)\n", flush=True)
    inspect(str(table))
    inspect(str(table), "--tag", "launch")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
