"""Arrow IPC deletion files (`_deletions/*.arrow`) as Arrow writers other than pylance write them, and as the damage
fuzz (tests/fuzz/test_damage_fuzz.py) damaged them.

pylance 14 writes their buffers zstd-compressed (stored as they are when that does not make them smaller) and reads
either codec of the Arrow format, LZ4_FRAME too, or none: the JVM core must read the rows pylance reads. Batch
metadata that is not valid Arrow but that pylance reads anyway (checks listed in the damage fuzz's STRICTER) is
refused with an error naming the file and what is wrong.

``SPARKLANCE_FUZZ_SEED`` and ``SPARKLANCE_FUZZ_N`` draw the tables (rows, fragment sizes, deleted rows) and the
codec each deletion file is rewritten with.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from sparklance._jvm import java_command  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261421"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))


def _table_with_deletions(path: Path, rnd: random.Random, rows: int = 0) -> pa.Table:
    """A pylance table of a few fragments with Arrow deletion files (`rows` rows, else a random number); returns the
    rows pylance reads."""
    rows = rows or rnd.randint(50, 4000)
    lance.write_dataset(pa.table({"x": pa.array(range(rows), pa.int64()),
                                  "s": pa.array([f"v{i % 97}" for i in range(rows)])}),
                        str(path), max_rows_per_file=rnd.randint(rows // 4 + 1, rows))
    k = rnd.randint(5, 40)
    lance.dataset(str(path)).delete(f"x % {k} = {rnd.randrange(k)}")
    return lance.dataset(str(path)).to_table().sort_by("x")


def _arrow_deletion_files(path: Path):
    files = sorted((path / "_deletions").glob("*.arrow"))
    assert files, f"pylance wrote no Arrow deletion file under {path}"
    return files


def _jvm_read(table: Path, out: Path):
    """The JVM core's rows of a table (sorted by x), or its error message."""
    subprocess.run(java_command("io.sparklance.cli.ReadTable", [str(table), str(out)]), check=True, timeout=120)
    err = Path(str(out) + ".err")
    if err.exists():
        return err.read_text()
    with pa.memory_map(str(out)) as src:
        return ipc.open_file(src).read_all().sort_by("x")


def test_deletion_files_with_either_arrow_codec_read_as_pylance_reads_them(tmp_path):
    """pyarrow (Arrow C++) rewrites each deletion file with LZ4_FRAME, ZSTD or no compression; pylance and the JVM
    read the same rows. LZ4_FRAME was refused as unsupported before (damage fuzz seed 20261421)."""
    codecs = ["lz4", "zstd", None]
    used = set()
    for case in range(N):
        rnd = random.Random(SEED * 1000 + case)
        path = tmp_path / f"t{case}.lance"
        want = _table_with_deletions(path, rnd)
        for i, f in enumerate(_arrow_deletion_files(path)):
            codec = codecs[(case + i) % 3] if i < 3 else rnd.choice(codecs)
            used.add(codec)
            offsets = ipc.open_file(str(f)).read_all()
            with pa.OSFile(str(f), "wb") as sink, \
                    ipc.new_file(sink, offsets.schema, options=ipc.IpcWriteOptions(compression=codec)) as writer:
                writer.write_table(offsets)
        assert lance.dataset(str(path)).to_table().sort_by("x").equals(want), "pylance reads other rows"
        got = _jvm_read(path, tmp_path / f"t{case}.arrow")
        assert isinstance(got, pa.Table), f"seed {SEED} case {case}: {got}"
        assert got.equals(want), f"seed {SEED} case {case}: {got.num_rows} rows, pylance {want.num_rows}"
    assert len(used) == 3 or N < 3


# --- the fuzz's damage, at the same places in pylance's own files ----------------------------------------------

def _u32(data: bytes, pos: int) -> int:
    return struct.unpack_from("<I", data, pos)[0]


def _table(data: bytes, pos: int):
    """The field positions of the flatbuffer table at `pos`: field(i) is the absolute offset of field i, or None."""
    vtable = pos - struct.unpack_from("<i", data, pos)[0]
    vsize = struct.unpack_from("<H", data, vtable)[0]

    def field(i: int):
        if 4 + 2 * i >= vsize:
            return None
        off = struct.unpack_from("<H", data, vtable + 4 + 2 * i)[0]
        return pos + off if off else None
    return field


def _first_record_batch(data: bytes):
    """The RecordBatch table of an Arrow IPC file's first batch and where the batch's body starts (File.fbs:
    Footer.recordBatches[0] is a Block: offset i64, metaDataLength i32; Message.fbs: Message.header is field 2)."""
    footer_len = struct.unpack_from("<i", data, len(data) - 10)[0]
    start = len(data) - 10 - footer_len
    blocks = _table(data, start + _u32(data, start))(3)
    blocks += _u32(data, blocks)
    offset, meta_len = struct.unpack_from("<qi", data, blocks + 4)
    meta = offset + 8 if _u32(data, offset) == 0xFFFFFFFF else offset + 4
    header = _table(data, meta + _u32(data, meta))(2)
    return _table(data, header + _u32(data, header)), offset + meta_len


def _damaged(tmp_path: Path, how, rows: int = 0):
    """A pylance table whose first Arrow deletion file `how(bytearray, record batch fields, body start)` damaged;
    returns (table, that file's name, the undamaged rows)."""
    path = tmp_path / "t.lance"
    want = _table_with_deletions(path, random.Random(SEED), rows)
    f = _arrow_deletion_files(path)[0]
    data = bytearray(f.read_bytes())
    how(data, *_first_record_batch(bytes(data)))
    f.write_bytes(bytes(data))
    return path, f.name, want


def test_a_zstd_file_whose_codec_says_lz4_frame_reads_as_pylance_reads_it(tmp_path):
    """Damage fuzz seed 20261421 #181, #3630: the codec byte of pylance's zstd file turned to LZ4_FRAME (0). Its
    buffers are stored uncompressed (length -1: few deleted rows do not compress), so both codecs give the same
    rows, and pylance reads them."""
    def lz4(data, batch, body):
        buffers = batch(2)
        buffers += _u32(data, buffers)
        values_at = body + struct.unpack_from("<q", data, buffers + 4 + 16)[0]
        assert struct.unpack_from("<q", data, values_at)[0] == -1, "pylance compressed the values: no longer the case"
        compression = batch(3)
        codec = _table(data, compression + _u32(data, compression))(0)
        assert data[codec] == 1, "pylance's deletion file is not ZSTD-compressed"
        data[codec] = 0
    path, _, want = _damaged(tmp_path, lz4, rows=200)
    assert lance.dataset(str(path)).to_table().sort_by("x").equals(want)
    got = _jvm_read(path, tmp_path / "out.arrow")
    assert isinstance(got, pa.Table) and got.equals(want), got


@pytest.mark.parametrize("damage, message", [
    # Damage fuzz seed 20261421 #1344: a negative null count; pylance takes nulls from the validity bitmap.
    ("null-count", r"record batch 0 of its Arrow IPC data has a column of \d+ rows with -256 nulls\."),
    # #424: the buffer count 2 flipped to 10, the extra entries past the message; pylance uses the first two.
    ("buffer-count", r"record batch 0 of its Arrow IPC data lists 1 column\(s\) and 10 buffers; "),
])
def test_batch_metadata_pylance_reads_anyway_is_refused_by_name(tmp_path, damage, message):
    import re

    def damage_it(data, batch, body):
        if damage == "null-count":
            nodes = batch(1)
            nodes += _u32(data, nodes)
            struct.pack_into("<q", data, nodes + 4 + 8, -256)
        else:
            buffers = batch(2)
            buffers += _u32(data, buffers)
            assert _u32(data, buffers) == 2
            struct.pack_into("<I", data, buffers, 10)
    path, name, want = _damaged(tmp_path, damage_it)
    assert lance.dataset(str(path)).to_table().sort_by("x").equals(want), "pylance no longer reads it: see STRICTER"
    got = _jvm_read(path, tmp_path / "out.arrow")
    assert isinstance(got, str) and got.startswith("LANCE_CORRUPT_FILE: Cannot read "), got
    assert name in got and re.search(message, got), got
