"""Damaged data files: truncated, with flipped bytes, or with offsets pointing outside the file. The JVM reader
must answer each with a clear error (or, when the damage happens to be harmless, with data), never a crash, a
hang, an out-of-memory error or an internal error."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import make_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402

# A spread of encodings: mini-block, full-zip, constant, dictionary, lists, structs, 2.0 and 2.1/2.2.
SOURCES = ["int32_nulls", "string_highcard", "string_lowcard", "string_300_nulls", "list_str", "struct_nested",
           "fsl_f32_64_nulls", "int64_const_nulls", "int64_zstd", "multipage_list", "list_allnull"]
MUTANTS_PER_FILE = 40
ALLOWED = ("LANCE_CORRUPT_FILE", "LANCE_UNSUPPORTED_FEATURE")


def _mutate(data: bytes, rnd: random.Random) -> bytes:
    kind = rnd.randrange(4)
    b = bytearray(data)
    if kind == 0:  # truncate
        return bytes(b[: rnd.randrange(len(b))])
    if kind == 1:  # flip a few random bytes anywhere
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        return bytes(b)
    if kind == 2:  # damage the metadata region at the end (footer, offset tables, column metadata)
        tail = min(len(b), 400)
        for _ in range(rnd.randint(1, 4)):
            b[len(b) - 1 - rnd.randrange(tail)] = rnd.randrange(256)
        return bytes(b)
    # overwrite an 8-byte little-endian integer in the tail with a huge value (an offset or length out of range)
    pos = len(b) - 8 - rnd.randrange(min(len(b) - 8, 200))
    b[pos:pos + 8] = rnd.choice([2 ** 62, 2 ** 40, 2 ** 31 - 1, 2 ** 32 + 7]).to_bytes(8, "little")
    return bytes(b)


def test_damaged_files_fail_cleanly(tmp_path):
    paths = make_files.build(str(tmp_path / "files"))
    rnd = random.Random(20261122)
    args = []
    for case, path in sorted(paths.items()):
        if case.split("/", 1)[1] not in SOURCES:
            continue
        data = open(path, "rb").read()
        for m in range(MUTANTS_PER_FILE):
            bad = tmp_path / "bad" / f"{case.replace('/', '_')}_{m}.lance"
            bad.parent.mkdir(parents=True, exist_ok=True)
            bad.write_bytes(_mutate(data, rnd))
            args += [str(bad), str(bad) + ".arrow"]
    assert len(args) >= 2 * 20 * MUTANTS_PER_FILE
    cmd = java_command("io.sparklance.cli.ReadFiles", args)
    cmd.insert(1, "-Xmx1g")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"the JVM died: {done.stderr[-3000:]}"
    errors, bad = 0, []
    for out in args[1::2]:
        if os.path.exists(out + ".err"):
            errors += 1
            msg = open(out + ".err").read()
            if not msg.startswith(ALLOWED) or ".lance" not in msg:
                bad.append(f"{os.path.basename(out)}: {msg[:300]}")
        elif not os.path.exists(out):
            bad.append(f"{out}: neither data nor an error")
    assert not bad, "\n".join(bad)
    assert errors > len(args) // 4, "most damage must be detected"


@pytest.mark.parametrize("ends, detail", [
    # pylance panics on both ("End is less than start in window [2, 1]"); we must not return values.
    ([2, 1, 10, 6, 6], "list 1 ends at item 1, outside [2, 6]"),
    ([2, 3, 10, 6, 16], "list 4 ends at item 9, outside [6, 6]"),
])
def test_20_list_offsets_going_backwards_or_past_the_items_are_corrupt(tmp_path, ends, detail):
    import struct

    import pyarrow as pa
    from lance.file import LanceFileWriter

    path = tmp_path / "l20.lance"
    with LanceFileWriter(str(path), version="2.0") as w:
        w.write_batch(pa.table({"l": pa.array([[1, 2], [3], None, [4, 5, 6], []], pa.list_(pa.int64()))}))
    data = bytearray(path.read_bytes())
    # The list column's one page: its offsets buffer comes first, one 8-byte end per list, null lists + 7.
    assert struct.unpack_from("<5q", data, 0) == (2, 3, 10, 6, 6)
    struct.pack_into("<5q", data, 0, *ends)
    path.write_bytes(bytes(data))
    out = str(tmp_path / "out.arrow")
    subprocess.run(java_command("io.sparklance.cli.ReadFiles", [str(path), out]), check=True, timeout=120)
    assert not os.path.exists(out)
    message = open(out + ".err").read()
    assert message.startswith(f"LANCE_CORRUPT_FILE: Cannot read {path}: page 0 of list field 'l': {detail} "
                              "(offsets go backwards or past the page's items)"), message
