"""Bytes per column of TPC-H lineitem written by pylance (file version 2.2) and by the JVM file writer, in one run.

    .venv/bin/python integration/bench/tpch_column_sizes.py OUT_DIR [--table NAME] [LABEL=JAR ...]

pylance writes lineitem, or the table NAME (SF0.1 from tpchgen-cli, generated into OUT_DIR if
/tmp/tpch01/NAME.parquet is missing; string_view columns cast to string) as one 2.2 file; each jar (default: the one `make jar` built) rewrites that table
with io.sparklance.cli.RewriteTable at 2.2, and pylance must read the same values back. Prints the bytes of every
column's pages (from ``LanceFileReader.metadata()``) and the ratio of the last jar's to pylance's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq
from lance.file import LanceFileReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402


def lineitem(out: Path, name: str = "lineitem") -> pa.Table:
    src = Path(f"/tmp/tpch01/{name}.parquet")
    if not src.exists():
        src = out / "tpch01" / f"{name}.parquet"
    if not src.exists():
        subprocess.run([str(ROOT / ".venv/bin/tpchgen-cli"), "parquet", "-s", "0.1", "-o", str(out / "tpch01")], check=True)
    t = pq.read_table(src)
    return t.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
                             for f in t.schema]))


def column_bytes(path: str) -> dict:
    ds = lance.dataset(path)
    out = {n: 0 for n in ds.schema.names}
    for frag in ds.get_fragments():
        for df in frag.data_files():
            md = LanceFileReader(os.path.join(path, "data", df.path)).metadata()
            for name, col in zip(ds.schema.names, md.columns):
                out[name] += sum(b.size for p in col.pages for b in p.buffers) + sum(b.size for b in col.column_buffers)
    return out


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    args = sys.argv[2:]
    name = "lineitem"
    if args[:1] == ["--table"]:
        name, args = args[1], args[2:]
    jars = dict(a.split("=", 1) for a in args) or {"sparklance": os.environ.get("SPARKLANCE_JAR", "")}
    src = str(out / "pylance.lance")
    shutil.rmtree(src, ignore_errors=True)
    lance.write_dataset(lineitem(out, name), src, data_storage_version="2.2")
    want = lance.dataset(src).to_table()
    results = {"pylance": column_bytes(src)}
    for label, jar in jars.items():
        dst = str(out / f"{label}.lance")
        shutil.rmtree(dst, ignore_errors=True)
        if jar:
            os.environ["SPARKLANCE_JAR"] = jar
        subprocess.run(java_command("io.sparklance.cli.RewriteTable", ["2.2", src, dst]), check=True)
        assert lance.dataset(dst).to_table().equals(want), f"{label}: pylance reads other values"
        results[label] = column_bytes(dst)
    print(f"{'column':16}" + "".join(f"{k:>14}" for k in results) + "   last/pylance")
    for c in list(results["pylance"]) + ["TOTAL"]:
        vals = [sum(r.values()) if c == "TOTAL" else r[c] for r in results.values()]
        print(f"{c:16}" + "".join(f"{v:14,d}" for v in vals) + f"   {vals[-1] / max(vals[0], 1):.2f}")


if __name__ == "__main__":
    main()
