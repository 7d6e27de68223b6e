"""Regression tests for the damage the fuzzer (`test_damage_fuzz.py`) found the JVM reader answering with values
where pylance fails: each case damages one file of a pylance-written table the way the fuzzer's reproducer says
and requires the error class and message the fix gives. Read with `io.sparklance.cli.ReadTable` in one JVM."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import damage_mutations  # noqa: E402
import damage_tables  # noqa: E402
from test_damage_fuzz import _files_of, _read_ipc, jvm_reader  # noqa: E402
from sparklance._jvm import java_command  # noqa: E402

CORRUPT = "LANCE_CORRUPT_FILE"
# (case, recipe, file kind, file index, mutation, expected start of the .err file, expected part of the message)
CASES = [
    # Byte 847 of the second file is the 's' of "s41-x": 0xFF is never UTF-8.
    ("string bytes not UTF-8", "mixed-2.1", "data", 1, ("byte", 847, 0xFF), CORRUPT,
     "field 's': byte 11 of the string data is not valid UTF-8"),
    # An end of 2^63 or more (negative as a signed 64-bit number) is caught where the decoder checks that ends never
    # go back.
    ("2.0 string offsets going backwards", "mixed-2.0", "data", 2, ("huge8", 573, 2 ** 31 - 1), CORRUPT,
     "field 's' (encoding binary): string end"),
    # Was a ClassCastException (the damaged encoding tree decoded string bytes as a struct).
    ("2.0 string bytes decoded as a struct", "strings-2.0", "data", 0, ("flip", 1956, 6), CORRUPT,
     "the encoding of page 0 of field 'item' has fields with unknown numbers or wire types"),
    ("a 2.0 encoding with a field protobuf cannot place", "strings-2.0", "data", 1, ("flip", 2064, 3), CORRUPT,
     "has fields with unknown numbers or wire types"),
    ("an out-of-line bitpacked payload of the wrong length", "bitmap-2.1", "data", 0, ("flip", 32671, 6), CORRUPT,
     "out-of-line bitpacked payload of 128 bytes"),
    # Byte 3853 of the first file is the 'e' of "/lance.encodings21.PageLayout" in the first page's encoding.
    ("an encoding type URL that names no Lance encoding", "mixed-2.1", "data", 0, ("byte", 3853, ord("d")), CORRUPT,
     "has encoding type '/lancd.encodings21.PageLayout', which is not the name of a Lance encoding"),
    ("mini-block levels the header miscounts", "strings-2.2", "data", 0, ("flip", 307, 3), CORRUPT,
     "levels hold"),
    # Byte 2674 of the third file is in the id of field 'a' in the file's own schema: 'st.a' read as nulls.
    ("a struct child the file's schema does not have", "mixed-2.1", "data", 2, ("flip", 2674, 6), CORRUPT,
     "which the table's manifest says the file holds"),
    # pylance: "No field named "ki.d"": a top-level name with a '.' is not a Lance field name.
    ("a top-level field name with a dot", "strings-2.1", "manifest", 0, ("proto", "1#1.2#0", "bytes", (2, 46)),
     CORRUPT, "top-level names cannot contain '.'"),
    # Bytes 1664-1666 of the second file are the level count and definition-level size of the chunk of 'st.a':
    # zeroed, the chunk's values were read from its levels (pylance panics in miniblock_decode).
    ("a mini-block chunk with fewer definition levels than items", "mixed-2.1", "data", 1,
     ("huge8", 1659, 4294967303), CORRUPT, "chunk 0 holds 30 items but 0 definition levels"),
    ("repetition level above the maximum", "strings-2.2", "data", 0, ("byte", 667, 179), CORRUPT,
     "repetition level"),
    ("roaring headers and containers disagree", "bitmap-2.1", "deletion", 0, ("flip", 1121, 2), CORRUPT,
     "its container headers state 6000 deleted rows, its containers hold 6001"),
    ("fragment without data files", "strings-2.1", "manifest", 0, ("proto", "2#0.2#0", "drop", None), CORRUPT,
     "fragment 0 has no data files"),
    ("field ids without column indices", "strings-2.0", "manifest", 0, ("proto", "2#0.2#0.2#0", "drop", None),
     CORRUPT, "lists 0 field ids but 5 column indices"),
    ("a list given a column in 2.1", "strings-2.1", "manifest", 0, ("proto", "2#0.2#0.2#0", "bytes", (0, 2)),
     CORRUPT, "gives field 'tags' (id 2) column index 0"),
    ("a field id listed twice", "strings-2.2", "manifest", 0, ("proto", "2#0.2#0.2#0", "bytes", (2, 0)), CORRUPT,
     "lists a field id twice"),
    ("two fragments with one id", "mixed-2.0", "manifest", 0, ("proto", "2#2.1#0", "varint", 0), CORRUPT,
     "fragment ids repeat: 0"),
    # pylance: "Manifest.version: invalid wire type: LengthDelimited (expected Varint)".
    ("a manifest field with the wrong wire type", "mixed-2.1", "manifest", 0, ("proto", "3#0", "as-bytes", None),
     CORRUPT, "the manifest protobuf holds field lance.table.Manifest.version with the wrong wire type"),
    ("a fragment id past 32 bits", "mixed-2.0", "manifest", 0, ("proto", "2#2.1#0", "varint", 2 ** 32 + 1), CORRUPT,
     "fragment 4294967297 has an id that does not fit in 32 bits"),
    ("physical rows the file does not hold", "mixed-2.1", "manifest", 0, ("proto", "2#0.4#0", "varint", 41),
     CORRUPT, "it holds 40 rows, but the manifest of version 4 says fragment 0 has 41"),
    ("a field without a name", "strings-2.1", "manifest", 0, ("proto", "1#2.2#0", "drop", None), CORRUPT,
     "has the name '' (empty or with control characters)"),
    ("a NUL in a field name", "strings-2.2", "manifest", 0, ("proto", "1#1.2#0", "bytes", (0, 0)), CORRUPT,
     "has the name '\\u0000ind'"),
    ("a negative field id", "mixed-2.2", "manifest", 0, ("proto", "1#1.3#0", "varint", 2 ** 31), CORRUPT,
     "of the table schema has id -2147483648"),
    ("a damaged logical type", "mixed-2.2", "manifest", 0, ("proto", "1#1.5#0", "bytes", (0, 0)), CORRUPT,
     "has logical type '\\u0000nt32', which is not a well-formed Lance logical type"),
    ("a NUL in a data file name", "mixed-2.2", "manifest", 0, ("proto", "2#0.2#0.1#0", "bytes", (3, 0)), CORRUPT,
     "which is not a valid file name"),
    ("nulls in a field made not nullable", "mixed-2.1", "manifest", 0, ("proto", "1#7.6#0", "drop", None), CORRUPT,
     "field 'st.b' holds nulls, but the table schema declares it not nullable"),
    # Fuzz seed 29, mutant 66: byte 328 is the length of the values buffer of a zstd-bodied batch (8 bytes of "not
    # compressed" marker, then the 4-byte row offset 14): 12 became 8. Arrow's Java loader grew the empty buffer
    # with zeros, and row 0 was deleted instead of row 14; pyarrow: "Buffer #1 too small".
    ("an Arrow deletion file whose values buffer lost its bytes", "strings-2.1", "deletion", 1, ("flip", 328, 2),
     CORRUPT, "a batch of its Arrow IPC data has 1 rows, but its values buffer holds 0 bytes"),
    # Fuzz seed 20261421 #2752 (session 21's build): the item of list 'tags' (id 3) listed as 67 for the second
    # fragment's file; was LANCE_UNSUPPORTED_FEATURE ("spread over 1 data files") without the table's path.
    ("a list whose items no data file holds", "strings-2.0", "manifest", 0, ("proto", "2#1.2#0.2#0", "bytes", (3, 67)),
     CORRUPT, "lists field 'tags' (id 2) in it but not its child 'item' (id 3)"),
    # Fuzz seed 20261421 #2960 (session 20's build): physical_rows 12000 flipped to 11872, below a deleted row;
    # pylance read 5936 rows instead of 6000.
    ("physical rows below a row the deletion file deletes", "bitmap-2.1", "manifest", 0,
     ("proto", "2#0.4#0", "varint", 11872), CORRUPT,
     "it deletes row offset 11999, but the fragment has only 11872 rows (physical_rows in the manifest)"),
    # Fuzz seed 11, mutant 753: the deletion file's allocator bound overflowed ("maximum allocation limit must be
    # non-negative") before the row count was checked.
    ("physical rows of 2^63 - 1 with a deletion file", "mixed-2.0", "manifest", 0,
     ("proto", "2#0.4#0", "varint", 2 ** 63 - 1), CORRUPT, "it holds 40 rows, but the manifest of version 4 says fragment 0 "
     "has 9223372036854775807"),
]


@pytest.fixture(scope="module")
def jvm_errors(tmp_path_factory):
    base = tmp_path_factory.mktemp("damage_regressions")
    pristine = {}
    for recipe in sorted({c[1] for c in CASES}):
        damage_tables.build(recipe, str(base / "pristine" / recipe))
        pristine[recipe] = base / "pristine" / recipe
    args = []
    for i, (_, recipe, kind, index, spec, _, _) in enumerate(CASES):
        target = _files_of(pristine[recipe], kind)[index]
        table = base / f"case{i}"
        shutil.copytree(pristine[recipe], table)
        rel = target.relative_to(pristine[recipe])
        (table / rel).write_bytes(damage_mutations.apply(target.read_bytes(), spec))
        args += [str(table), str(base / f"case{i}.arrow")]
    done = subprocess.run(jvm_reader() + args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return {c[0]: (args[2 * i], args[2 * i + 1]) for i, c in enumerate(CASES)}


@pytest.mark.parametrize("case, recipe, kind, index, spec, error_class, detail", CASES, ids=[c[0] for c in CASES])
def test_damage_is_an_error_naming_the_file(jvm_errors, case, recipe, kind, index, spec, error_class, detail):
    table, out = jvm_errors[case]
    assert os.path.exists(out + ".err"), f"{case}: the JVM read the damaged table"
    message = open(out + ".err", encoding="utf-8").read()
    assert message.startswith(f"{error_class}: Cannot read {table}/"), message
    assert detail in message, message


def test_a_renamed_struct_child_is_read_under_its_new_name(tmp_path):
    """Not damage: pylance renames `st.b` to `st.c` in the manifest only; the data files keep `b`."""
    path = str(tmp_path / "t")
    damage_tables.build("mixed-2.1", path)
    lance.dataset(path).alter_columns({"path": "st.b", "name": "c"})
    out = str(tmp_path / "t.arrow")
    subprocess.run(jvm_reader() + [path, out], check=True, timeout=120)
    assert not os.path.exists(out + ".err"), open(out + ".err").read()
    want = lance.dataset(path).to_table()
    got = _read_ipc(out)
    assert got.schema.field("st").type == pa.struct([("a", pa.int32()), ("c", pa.string())])
    assert got.column("st").to_pylist() == want.column("st").to_pylist()


def test_a_manifest_without_row_counts_is_read_as_lance_reads_it(tmp_path):
    """Not damage: manifests written by older Lance versions record neither a fragment's physical rows nor a deletion file's
    deleted rows (protobuf's 0), and Lance then counts them from the files (upstream `migrate_fragments`). Fuzz seeds
    20261312 (#138) and 20261412 (#64, #357) dropped `physical_rows`; we refused such tables, pylance read them."""
    path = tmp_path / "t"
    damage_tables.build("mixed-2.1", str(path))
    want = lance.dataset(str(path)).to_table()
    frags = [f.metadata for f in lance.dataset(str(path)).get_fragments()]
    assert [f.deletion_file is not None for f in frags] == [True, True, False]
    manifest = _files_of(path, "manifest")[0]
    data = manifest.read_bytes()
    for spec in (("proto", "2#0.4#0", "drop", None), ("proto", "2#1.4#0", "drop", None),
                 ("proto", "2#2.4#0", "drop", None), ("proto", "2#0.3#0.4#0", "drop", None),
                 ("proto", "2#1.3#0.4#0", "drop", None)):
        data = damage_mutations.apply(data, spec)
    manifest.write_bytes(data)
    assert lance.dataset(str(path)).to_table().equals(want), "pylance reads the table without counts"
    out = str(tmp_path / "t.arrow")
    subprocess.run(jvm_reader() + [str(path), out], check=True, timeout=120)
    assert not os.path.exists(out + ".err"), open(out + ".err").read()
    assert _read_ipc(out).equals(want)
    shown = subprocess.run(java_command("io.sparklance.cli.Inspect", [str(path), "--json"]), capture_output=True,
                           text=True, timeout=120, check=True)
    fragments = json.loads(shown.stdout)["fragments"]
    assert [f["physical_rows"] for f in fragments] == [f.physical_rows for f in frags] == [40, 30, 25]
    deleted = [f.deletion_file.num_deleted_rows if f.deletion_file else 0 for f in frags]
    assert [f["num_deleted_rows"] for f in fragments] == deleted == [6, 4, 0]
