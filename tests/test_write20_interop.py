"""We write, pylance reads: pylance writes a table with file version 2.0 for every type of
fixtures/make_files.py (plus blobs, packed structs, several fragments and an empty table); the JVM reads each
table and writes it again with its own 2.0 writer (``io.sparklance.cli.RewriteTable``), once with default
pages and once with 4 KiB pages; pylance must read the rewritten table back equal, and ``validate()`` must pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import make_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402

VERSION = "2.0"
PAGES = {"default": [], "small": ["--max-page-bytes", "4096"]}
BLOBS = [b"x" * 10, None, b"", b"y" * 70000, bytes(range(256)) * 3] * 8


def _extra_cases():
    """Tables beyond make_files: name -> (table, write_dataset kwargs)."""
    fsl_child = pa.struct([("a", pa.int32()), ("v", pa.list_(pa.float32(), 2)), ("d", pa.float64())])
    packed = pa.Table.from_arrays(
        [pa.array([{"a": i, "v": [i / 2, -i], "d": i * 1.5} for i in range(3000)], fsl_child)],
        schema=pa.schema([pa.field("p", fsl_child, metadata={"lance-encoding:packed": "true"})]))
    blob = pa.Table.from_arrays(
        [pa.array(range(len(BLOBS)), pa.int32()), pa.array(BLOBS, pa.large_binary())],
        schema=pa.schema([pa.field("id", pa.int32()), pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})]))
    n = 4000
    wide = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "s": pa.array([None if i % 7 == 0 else f"s{i}" for i in range(n)]),
        "l": pa.array([None if i % 5 == 0 else [[j] * (j % 3) for j in range(i % 4)] for i in range(n)], pa.list_(pa.list_(pa.int32()))),
        "st": pa.array([{"x": i, "y": [str(i)] * (i % 3)} for i in range(n)],
                       pa.struct([("x", pa.int32()), ("y", pa.large_list(pa.string()))])),
    })
    empty = pa.table({"a": pa.array([], pa.int32()), "s": pa.array([], pa.string())})
    return {
        "packed_fsl_child": (packed, {}),
        "blob": (blob, {}),
        "fragments": (wide, {"max_rows_per_file": 1500}),
        "empty": (empty, {}),
    }


def _cases():
    cases = {}
    for name, (make, versions, _kw) in make_files.CASES.items():
        if VERSION in versions and name != "blob":
            cases[name] = (make, {})
    for name, (table, kw) in _extra_cases().items():
        cases[name] = ((lambda t=table: t), kw)
    return cases


CASES = _cases()


@pytest.fixture(scope="session")
def rewritten(tmp_path_factory):
    """Builds every source table, rewrites them all in one JVM per page size; returns {name: (src, {pages: dst})}
    and the tool's stderr."""
    base = tmp_path_factory.mktemp("write20")
    out, stderr = {}, {}
    for name, (make, kw) in CASES.items():
        src = str(base / "src" / f"{name}.lance")
        lance.write_dataset(make(), src, data_storage_version=VERSION, **kw)
        out[name] = (src, {p: str(base / p / f"{name}.lance") for p in PAGES})
    for pages, opts in PAGES.items():
        args = [*opts, VERSION]
        for src, dsts in out.values():
            args += [src, dsts[pages]]
        subprocess.run(java_command("io.sparklance.cli.RewriteTable", args), check=True, timeout=1200)
        stderr[pages] = {src: open(dsts[pages] + ".err").read() for src, dsts in out.values()
                         if os.path.exists(dsts[pages] + ".err")}
    return out, stderr


def _normalized(ds: lance.LanceDataset) -> pa.Table:
    table = ds.to_table()
    fields = [pa.field(f.name, f.type.value_type, f.nullable, f.metadata) if pa.types.is_dictionary(f.type) else f
              for f in table.schema]
    return table.cast(pa.schema(fields, table.schema.metadata)).combine_chunks()


@pytest.mark.parametrize("pages", list(PAGES))
@pytest.mark.parametrize("case", list(CASES))
def test_pylance_reads_what_we_write(rewritten, case, pages):
    tables, stderr = rewritten
    src_path, dsts = tables[case]
    assert src_path not in stderr[pages], stderr[pages][src_path]
    src, dst = lance.dataset(src_path), lance.dataset(dsts[pages])
    dst.validate()
    for frag in dst.get_fragments():
        for f in frag.data_files():
            assert (f.file_major_version, f.file_minor_version) == (2, 0)
    assert dst.schema == src.schema
    assert dst.count_rows() == src.count_rows()
    want, got = _normalized(src), _normalized(dst)
    if case == "blob":
        rows = list(range(src.count_rows()))
        assert got.column("id").equals(want.column("id"))
        got_bytes = [None if b is None else b.readall() for b in dst.take_blobs("b", indices=rows)]
        assert got_bytes == [None if b is None else b.readall() for b in src.take_blobs("b", indices=rows)]
        return
    assert got.schema == want.schema
    for name in want.column_names:
        g, w = got.column(name), want.column(name)
        if not g.equals(w):
            for i in range(len(w)):
                if g[i] != w[i]:
                    pytest.fail(f"{case}.{name}: first difference at row {i}: {g[i]} != {w[i]}")
            pytest.fail(f"{case}.{name}: arrays differ (null layout?)")


def test_pages_are_bounded(rewritten):
    """With 4 KiB pages, a 5000-row int64 column is split into several pages that pylance reads back."""
    tables, _ = rewritten
    _, dsts = tables["int64_random"]
    ds = lance.dataset(dsts["small"])
    path = str(Path(dsts["small"]) / "data" / ds.get_fragments()[0].data_files()[0].path)
    meta = lance.file.LanceFileReader(path).metadata()
    assert len(meta.columns[0].pages) >= 9
