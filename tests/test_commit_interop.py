"""The JVM commit protocol against pylance: data files written by pylance's file writer, committed by the JVM core
as new versions, read back by pylance with the same values and a passing validate()."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402


def commit(table: Path, *files: str, overwrite: bool = False) -> int:
    args = [str(table), *(["--overwrite"] if overwrite else []), *files]
    out = subprocess.run(java_command("io.sparklance.cli.CommitFiles", args), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def write_file(table: Path, name: str, t: pa.Table, version: str) -> str:
    from lance.file import LanceFileWriter

    (table / "data").mkdir(parents=True, exist_ok=True)
    with LanceFileWriter(str(table / "data" / name), t.schema, version=version) as w:
        w.write_batch(t)
    return name


def batch(start: int, n: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "name": pa.array([None if i % 7 == 0 else f"n{i}" for i in range(start, start + n)]),
        "s": pa.array([{"x": i, "y": float(i)} for i in range(start, start + n)],
                      pa.struct([("x", pa.int32()), ("y", pa.float64())])),
        "tags": pa.array([[str(i)] * (i % 3) for i in range(start, start + n)], pa.list_(pa.string())),
    })


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_jvm_commits_pylance_reads(tmp_path, version):
    import lance

    table = tmp_path / "t.lance"
    assert commit(table, write_file(table, "a.lance", batch(0, 100), version)) == 1
    assert commit(table, write_file(table, "b.lance", batch(100, 50), version),
                  write_file(table, "c.lance", batch(150, 25), version)) == 2
    ds = lance.dataset(str(table))
    ds.validate()
    assert ds.version == 2 and len(ds.versions()) == 2
    assert ds.to_table().sort_by("id").equals(pa.concat_tables([batch(0, 100), batch(100, 50), batch(150, 25)]))
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 1, 2]
    assert lance.dataset(str(table), version=1).count_rows() == 100

    # pylance appends on top of the JVM's versions, and the JVM overwrites on top of pylance's.
    lance.write_dataset(batch(175, 10), str(table), mode="append")
    assert commit(table, write_file(table, "d.lance", batch(1000, 5), version), overwrite=True) == 4
    ds = lance.dataset(str(table))
    ds.validate()
    assert ds.to_table().sort_by("id").equals(batch(1000, 5))
    assert [f.fragment_id for f in ds.get_fragments()] == [4], "fragment ids keep counting after an overwrite"
    assert lance.dataset(str(table), version=3).count_rows() == 185
