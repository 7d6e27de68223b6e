"""File-reader conformance: pylance writes Lance data files (every type x file version x shape in
fixtures/make_files.py); the JVM reader must read exactly the values pylance reads back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from lance.file import LanceFileReader

sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
import make_files  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402


@pytest.fixture(scope="session")
def jvm_reads(tmp_path_factory):
    """Builds every fixture file, reads them all in one JVM, and returns {case_id: (path, out_ipc)}."""
    base = tmp_path_factory.mktemp("file_conformance")
    paths = make_files.build(str(base / "files"))
    args, outs = [], {}
    for case, path in paths.items():
        out = str(base / "out" / (case.replace("/", "_") + ".arrow"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        args += [path, out]
        outs[case] = (path, out)
    subprocess.run(java_command("io.sparklance.cli.ReadFiles", ["--batch-rows", "3000", *args]), check=True, timeout=600)
    return outs


def _expected(path: str) -> pa.Table:
    table = LanceFileReader(path).read_all().to_table()
    # The JVM reader decodes dictionaries to their values.
    fields = [pa.field(f.name, f.type.value_type, f.nullable) if pa.types.is_dictionary(f.type) else f for f in table.schema]
    return table.cast(pa.schema(fields)).combine_chunks()


@pytest.mark.parametrize("case", make_files.case_ids())
def test_reads_what_pylance_reads(jvm_reads, case):
    path, out = jvm_reads[case]
    if os.path.exists(out + ".err"):
        pytest.fail(f"the JVM reader failed on {case}: {open(out + '.err').read()}")
    with pa.memory_map(out) as src:
        got = pa.ipc.open_file(src).read_all().combine_chunks()
    want = _expected(path)
    assert got.num_rows == want.num_rows
    for name in want.column_names:
        g, w = got.column(name), want.column(name)
        assert g.type == w.type, f"{case}.{name}: type {g.type} != {w.type}"
        if not g.equals(w):
            for i in range(len(w)):
                if g[i] != w[i]:
                    pytest.fail(f"{case}.{name}: first difference at row {i}: {g[i]} != {w[i]}")
            pytest.fail(f"{case}.{name}: arrays differ (null layout?)")


def _read_jvm(tmp_path, path: str, *options: str) -> pa.Table:
    out = str(tmp_path / "out.arrow")
    subprocess.run(java_command("io.sparklance.cli.ReadFiles", [*options, path, out]), check=True, timeout=120)
    if os.path.exists(out + ".err"):
        pytest.fail(open(out + ".err").read())
    with pa.memory_map(out) as src:
        return pa.ipc.open_file(src).read_all().combine_chunks()


@pytest.mark.parametrize("version", make_files.VERSIONS)
def test_projects_nested_leaves(jvm_reads, tmp_path, version):
    path, _ = jvm_reads[f"{version}/struct_nested"]
    got = _read_jvm(tmp_path, path, "--columns", "c.p.q")
    full = _expected(path).column("c").combine_chunks()
    q = full.field("p").field("q")
    want = pa.StructArray.from_arrays([pa.StructArray.from_arrays([q], ["q"])], ["p"])
    assert got.column_names == ["c"]
    assert got.column("c").type == want.type
    assert got.column("c").combine_chunks().equals(want)


@pytest.mark.parametrize("case", ["multipage_int64", "multipage_string", "multipage_list", "list_struct", "string_300_nulls"])
@pytest.mark.parametrize("version", ["2.0", "2.2"])
def test_takes_rows_by_offset(jvm_reads, tmp_path, case, version):
    path, _ = jvm_reads[f"{version}/{case}"]
    want_all = _expected(path)
    n = want_all.num_rows
    rows = [n - 1, 0, 17, 17, n // 2, n // 3, n // 3 + 1, 5, n - 2]
    got = _read_jvm(tmp_path, path, "--take", ",".join(map(str, rows)))
    want = want_all.take(pa.array(rows))
    assert got.num_rows == len(rows)
    assert got.column("c").combine_chunks().equals(want.column("c").combine_chunks())


@pytest.mark.parametrize("version,named", [("2.3", "2.3"), ("legacy", "legacy")])
def test_unsupported_file_versions_are_named(tmp_path, version, named):
    import lance

    ds = lance.write_dataset(pa.table({"a": pa.array([1, 2, 3])}), str(tmp_path / "t.lance"), data_storage_version=version)
    data_file = ds.get_fragments()[0].data_files()[0].path
    path = str(tmp_path / "t.lance" / "data" / data_file)
    out = str(tmp_path / "out.arrow")
    subprocess.run(java_command("io.sparklance.cli.ReadFiles", [path, out]), check=True, timeout=120)
    message = open(out + ".err").read()
    assert message.startswith("LANCE_UNSUPPORTED_FEATURE: ")
    assert named in message and data_file in message


def test_blob_v2_descriptors_and_bytes(tmp_path):
    """2.2 blob columns: the data file holds descriptors (pylance's dataset read returns them), and the bytes are
    fetched from the data file (kind 0) or a sidecar file (kind 1) on request."""
    import lance

    values = [b"a" * 10, None, b"", b"z" * 70000, b"q" * 200, bytes(range(256)) * 300]
    schema = pa.schema([pa.field("id", pa.int32()),
                        pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    table = pa.Table.from_arrays([pa.array(range(len(values)), pa.int32()), pa.array(values, pa.large_binary())], schema=schema)
    ds = lance.write_dataset(table, str(tmp_path / "t.lance"), data_storage_version="2.2")
    want = ds.to_table().column("b").combine_chunks()
    want = want.storage if hasattr(want, "storage") else want
    assert {d["kind"] for d in want.to_pylist() if d} >= {0, 1}, "the fixture must exercise in-file and sidecar blobs"
    path = str(tmp_path / "t.lance" / "data" / ds.get_fragments()[0].data_files()[0].path)
    got = _read_jvm(tmp_path, path, "--columns", "b")
    assert got.column("b").combine_chunks().equals(want)
    got_bytes = _read_jvm(tmp_path, path, "--blob-bytes", "b")
    assert got_bytes.column("b").to_pylist() == values


JSON_VALUES = [
    '{"b":{"c":[1,2,{"d":null}]},"a":"x","z":true,"y":false}', '{"k10":1,"k2":2,"a":3,"B":4,"":5}', "[]", "{}",
    "[[],[[]],{}]", '"x"', "3", "null", None, "true", "false",
    '"esc \\" \\\\ \\/ \\b\\f\\n\\r\\t \\u0001 \\u001f \\u007f \u00e9 \u4e2d \U0001F600 \\ud83d\\ude00"',
    "-1", "-129", "255", "65536", "-2147483648", "4294967296", "-9223372036854775808", "18446744073709551615",
    "18446744073709551616", "0", "-0", "0.0", "-0.0", "0.1", "1e300", "1E-7", "1e15", "1e16", "2.5e-5", "5e-324",
    "1.7976931348623157e308", "123e4", '[1,-1,1.5,"s",null,true,false,{"x":[]}]', ' { "a" : 1 , "b" : [ 1 , 2 ] } ',
    '"\\u0000"', None, '{"nested":{"deep":{"deeper":[1,[2,[3,[4]]]]}}}',
]


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_json_reads_as_pylance_text(tmp_path, version):
    """Lance stores json values in the binary JSONB encoding; the JVM reader returns the JSON text pylance returns."""
    import lance

    values = JSON_VALUES * 3
    table = pa.table({"id": pa.array(range(len(values)), pa.int32()), "j": pa.array(values, pa.json_())})
    ds = lance.write_dataset(table, str(tmp_path / "t.lance"), data_storage_version=version)
    want = ds.to_table().column("j").combine_chunks()
    path = str(tmp_path / "t.lance" / "data" / ds.get_fragments()[0].data_files()[0].path)
    got = _read_jvm(tmp_path, path, "--batch-rows", "7").column("j").combine_chunks()
    assert got.type == want.type
    assert got.to_pylist() == want.to_pylist()
    assert want.to_pylist()[:3] == ['{"a":"x","b":{"c":[1,2,{"d":null}]},"y":false,"z":true}',
                                    '{"":5,"B":4,"a":3,"k10":1,"k2":2}', "[]"]
