"""File-writer interoperability: pylance writes a table of every type and shape in fixtures/make_files.py, the JVM
reads it and writes it again with its own file writer (file versions 2.1 and 2.2), and pylance must read the JVM's
table back with exactly the original values and pass ``validate()``. Types the writer does not support yet must be
refused with a clear error, never written wrong."""

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

WRITER_VERSIONS = ["2.1", "2.2"]
# Written by pylance but refused by the JVM writer, with the words the error must contain.
REFUSED: dict = {}


def _cases():
    return [(v, name) for name, (_, versions, _) in make_files.CASES.items() for v in versions if v in WRITER_VERSIONS]


@pytest.fixture(scope="session")
def rewritten(tmp_path_factory):
    """Writes every case as a pylance table, rewrites them all in one JVM per version; {(version, case): (src, dst)}."""
    base = tmp_path_factory.mktemp("file_writer")
    out = {}
    for version in WRITER_VERSIONS:
        args = []
        for v, name in _cases():
            if v != version:
                continue
            src, dst = str(base / v / "src" / f"{name}.lance"), str(base / v / "dst" / f"{name}.lance")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            lance.write_dataset(make_files.CASES[name][0](), src, data_storage_version=v)
            args += [src, dst]
            out[(v, name)] = (src, dst)
        # Small pages, so that most columns span several pages.
        subprocess.run(java_command("io.sparklance.cli.RewriteTable",
                                    ["--max-page-bytes", "65536", "--batch-rows", "3000", version, *args]),
                       check=True, timeout=900)
    return out


@pytest.mark.parametrize("version,case", _cases())
def test_pylance_reads_what_the_jvm_wrote(rewritten, version, case):
    src, dst = rewritten[(version, case)]
    err = dst + ".err"
    if case == "blob":
        # to_table() shows blob descriptors, which differ by where each writer put the bytes: compare the bytes.
        src_ds, dst_ds = lance.dataset(src), lance.dataset(dst)
        dst_ds.validate()
        rows = list(range(src_ds.count_rows()))
        col = src_ds.schema.names[0]
        read = lambda d: [None if b is None else b.readall() for b in d.take_blobs(col, indices=rows)]
        assert read(dst_ds) == read(src_ds)
        return
    if case in REFUSED:
        assert os.path.exists(err), f"{case} was written although the writer does not support it"
        text = open(err).read()
        assert "not supported" in text and REFUSED[case] in text, text
        return
    if os.path.exists(err):
        pytest.fail(f"the JVM writer failed on {version}/{case}: {open(err).read()}")
    want = lance.dataset(src).to_table()
    ds = lance.dataset(dst)
    ds.validate()
    got = ds.to_table()
    assert got.schema == want.schema
    assert ds.data_storage_version == version
    for name in want.column_names:
        g, w = got.column(name).combine_chunks(), want.column(name).combine_chunks()
        if pa.types.is_dictionary(w.type):
            # Each writer builds its own page dictionaries: compare the values.
            g, w = g.cast(w.type.value_type), w.cast(w.type.value_type)
        if not g.equals(w):
            for i in range(len(w)):
                if g[i] != w[i]:
                    pytest.fail(f"{version}/{case}.{name}: first difference at row {i}: {g[i]} != {w[i]}")
            pytest.fail(f"{version}/{case}.{name}: arrays differ")


@pytest.fixture(scope="session")
def jvm_reads_back(rewritten, tmp_path_factory):
    """The JVM reader's view of every data file the JVM writer wrote: {(version, case): [(file, ipc_out)]}."""
    base = tmp_path_factory.mktemp("file_writer_read")
    args, outs = [], {}
    for key, (_, dst) in rewritten.items():
        if not os.path.isdir(os.path.join(dst, "data")):
            continue
        for i, name in enumerate(sorted(os.listdir(os.path.join(dst, "data")))):
            out = str(base / f"{key[0]}_{key[1]}_{i}.arrow")
            args += [os.path.join(dst, "data", name), out]
            outs.setdefault(key, []).append((os.path.join(dst, "data", name), out))
    subprocess.run(java_command("io.sparklance.cli.ReadFiles", ["--batch-rows", "2500", *args]), check=True, timeout=900)
    return outs


# Blob files are compared through datasets (take_blobs above, and Spark in test_spark_blobs.py): pylance's file
# reader does not read a 2.2 blob column on its own.
@pytest.mark.parametrize("version,case", [c for c in _cases() if c[1] not in REFUSED and c[1] != "blob"])
def test_jvm_reads_what_the_jvm_wrote(jvm_reads_back, version, case):
    from lance.file import LanceFileReader
    for path, out in jvm_reads_back[(version, case)]:
        if os.path.exists(out + ".err"):
            pytest.fail(f"the JVM reader failed on its own {version}/{case} file: {open(out + '.err').read()}")
        with pa.memory_map(out) as src:
            got = pa.ipc.open_file(src).read_all().combine_chunks()
        want = LanceFileReader(path).read_all().to_table().combine_chunks()
        assert got.num_rows == want.num_rows
        for name in want.column_names:
            w = want.column(name)
            if pa.types.is_dictionary(w.type):
                w = w.cast(w.type.value_type)   # the JVM reader decodes dictionaries
            assert got.column(name).equals(w), f"{version}/{case}.{name}"


@pytest.mark.parametrize("version", WRITER_VERSIONS)
def test_json_columns(tmp_path, version):
    """json values (stored as JSONB) written by the JVM read back as the text pylance returns for its own."""
    from test_file_conformance import JSON_VALUES

    values = JSON_VALUES * 40
    table = pa.table({"id": pa.array(range(len(values)), pa.int32()), "j": pa.array(values, pa.json_())})
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table, src, data_storage_version=version)
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", [version, src, dst]), check=True, timeout=300)
    assert not os.path.exists(dst + ".err"), open(dst + ".err").read() if os.path.exists(dst + ".err") else ""
    ds = lance.dataset(dst)
    ds.validate()
    assert ds.to_table().column("j").to_pylist() == lance.dataset(src).to_table().column("j").to_pylist()
