"""Decimal columns of the JVM file writer against pylance, at every file version it writes. In 2.1 and 2.2 a page of
decimal128 values whose sample chunk LZ4 shrinks by a fifth stores its mini-block chunks as ``General(lz4,
Flat(128))`` (decimal256: ``Flat(256)``), as pylance 14 writes a decimal column marked
``lance-encoding:compression=lz4``; 2.0 stays flat.

pylance writes seeded random decimal columns (precisions 1-38, any scale, narrow and full-range values, negatives,
nulls, all equal, all null, the extremes of the precision), the JVM rewrites them (RewriteTable), and pylance must
read the same values and pass ``validate()``; the JVM reads its own files back to the same values; and the JVM reads
pylance's own LZ4- and zstd-compressed decimal pages. ``SPARKLANCE_FUZZ_SEED`` draws the columns, ``SPARKLANCE_FUZZ_N`` is how
many tables."""

from __future__ import annotations

import decimal
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
from sparklance._jvm import java_command  # noqa: E402
from conftest import assert_pylance_reads  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20262201"))
TABLES = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))
VERSIONS = ["2.0", "2.1", "2.2"]
ROWS = 5000
COLUMNS = 12
# 38 digits, which Python's default context (28) would round.
CONTEXT = decimal.Context(prec=40)


def _column(r: random.Random) -> pa.Array:
    """A column of ROWS decimals of a random precision and scale, drawn from one of the shapes a writer must keep."""
    p = r.randint(1, 38)
    s = r.randint(0, p)
    top = 10 ** p - 1
    shape = r.choice(["full", "narrow", "small", "equal", "extremes", "null", "sorted"])
    null_p = r.choice([0.0, 0.0, 0.05, 0.5])
    if shape == "full":
        draw = lambda: r.randint(-top, top)  # noqa: E731
    elif shape == "narrow":
        lo = r.randint(-top, top)
        width = min(top - lo, 10 ** r.randint(0, min(p, 9)))
        draw = lambda: lo + r.randint(0, width)  # noqa: E731
    elif shape == "small":
        draw = lambda: r.randint(-min(top, 10 ** 6), min(top, 10 ** 6))  # noqa: E731
    elif shape == "equal":
        one = r.randint(-top, top)
        draw = lambda: one  # noqa: E731
    elif shape == "extremes":
        draw = lambda: r.choice([-top, top, 0, 1, -1])  # noqa: E731
    elif shape == "null":
        null_p = 1.0
        draw = lambda: 0  # noqa: E731
    else:
        start = r.randint(-top, max(-top, top - ROWS * 10))
        values = sorted(min(top, start + r.randint(0, ROWS * 10)) for _ in range(ROWS))
        it = iter(values)
        draw = lambda: next(it)  # noqa: E731
    unscaled = [draw() for _ in range(ROWS)]
    return pa.array([None if r.random() < null_p else decimal.Decimal(u).scaleb(-s, CONTEXT) for u in unscaled],
                    pa.decimal128(p, s))


def _table(seed: int) -> pa.Table:
    r = random.Random(seed)
    cols = {f"c{i}": _column(r) for i in range(COLUMNS)}
    # TPC-DS's money: DECIMAL(7,2) prices, each column compressible, one of them with nulls.
    cols["price"] = pa.array([decimal.Decimal(r.randint(100, 30000)).scaleb(-2) for _ in range(ROWS)],
                             pa.decimal128(7, 2))
    cols["net"] = pa.array([None if r.random() < 0.05 else decimal.Decimal(r.randint(-999999, 999999)).scaleb(-2)
                            for _ in range(ROWS)], pa.decimal128(7, 2))
    # decimal256: 32-byte values, compressed the same way.
    cols["wide"] = pa.array([None if r.random() < 0.05 else decimal.Decimal(r.randint(-10**9, 10**9)).scaleb(-3)
                             for _ in range(ROWS)], pa.decimal256(40, 3))
    return pa.table(cols)


def _pages(path: str):
    """{column name: [(page layout text, bytes)]} of the table's data files."""
    ds = lance.dataset(path)
    out = {n: [] for n in ds.schema.names}
    for frag in ds.get_fragments():
        for df in frag.data_files():
            md = LanceFileReader(os.path.join(path, "data", df.path)).metadata()
            for name, col in zip(ds.schema.names, md.columns):
                for p in col.pages:
                    out[name].append((re.sub(r"\s+", "", str(p.encoding)), sum(b.size for b in p.buffers)))
    return out


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    base = tmp_path_factory.mktemp("decimals")
    out = {}
    for v in VERSIONS:
        args = []
        for t in range(TABLES):
            src, dst = str(base / v / f"src{t}.lance"), str(base / v / f"dst{t}.lance")
            table = _table(SEED + t)
            lance.write_dataset(table, src, data_storage_version=v)
            args += [src, dst]
            out[(v, t)] = (table, src, dst)
        # Pages of 64 KiB: most columns span several pages, of several chunks.
        subprocess.run(java_command("io.sparklance.cli.RewriteTable",
                                    ["--max-page-bytes", "65536", "--batch-rows", "1500", v, *args]),
                       check=True, timeout=900)
    return out


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("t", range(TABLES))
def test_pylance_reads_jvm_decimals(rewritten, version, t):
    table, _, dst = rewritten[(version, t)]
    assert_pylance_reads(dst, table, version)


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_compressible_decimals_are_lz4_pages(rewritten, version):
    # DECIMAL(7,2) values use 4 of their 16 bytes (the decimal256 ones 4 of 32): every page of them is
    # LZ4-compressed, to at most 7 bytes a value (10 for decimal256).
    for t in range(TABLES):
        table, _, dst = rewritten[(version, t)]
        pages = _pages(dst)
        for name, bits, most in (("price", 128, 7), ("net", 128, 7), ("wide", 256, 10)):
            assert pages[name] and all("General" in e and "CompressionAlgorithmLz4" in e and f"bits_per_value:{bits}" in e
                                       for e, _ in pages[name]), (name, pages[name][0][0][:400])
            assert sum(b for _, b in pages[name]) < most * ROWS, (name, sum(b for _, b in pages[name]))


def test_version_20_decimals_stay_flat(rewritten):
    # 2.0 has no general compression of values: decimals stay 16 bytes each, as pylance writes them.
    for t in range(TABLES):
        _, _, dst = rewritten[("2.0", t)]
        for name, pages in _pages(dst).items():
            assert all("General" not in e for e, _ in pages), name


@pytest.mark.parametrize("version", VERSIONS)
def test_jvm_reads_its_decimals(rewritten, version, tmp_path):
    # The JVM reads its own tables back and writes them again; the copies must hold the same values.
    args = []
    for t in range(TABLES):
        args += [rewritten[(version, t)][2], str(tmp_path / f"again{t}.lance")]
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", ["--batch-rows", "777", version, *args]),
                   check=True, timeout=900)
    for t in range(TABLES):
        table = rewritten[(version, t)][0]
        got = lance.dataset(str(tmp_path / f"again{t}.lance")).to_table()
        for name in table.schema.names:
            assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks()), name


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("scheme", ["zstd", "lz4"])
def test_jvm_reads_pylance_compressed_decimals(version, scheme, tmp_path):
    # pylance compresses decimal chunks itself when a field asks for it: the JVM must read its pages.
    table = _table(SEED + 100)
    schema = pa.schema([f.with_metadata({"lance-encoding:compression": scheme}) for f in table.schema])
    src, dst = str(tmp_path / "src.lance"), str(tmp_path / "dst.lance")
    lance.write_dataset(table.cast(schema), src, data_storage_version=version)
    assert any("General" in e for e, _ in _pages(src)["price"])
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", [version, src, dst]), check=True, timeout=900)
    assert not os.path.exists(dst + ".err"), open(dst + ".err").read()
    got = lance.dataset(dst).to_table()
    for name in table.schema.names:
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks()), name
