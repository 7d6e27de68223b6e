"""Dictionary pages of the JVM file writer against pylance: low-cardinality columns (decimals, strings, binaries,
64-bit values) that pylance writes as mini-block pages of bitpacked indices into a page dictionary. pylance writes a
table, the JVM rewrites it (RewriteTable), and pylance must read the JVM's table with the same values, pass
``validate()``, and find dictionary pages where the writer's rule (docs/file-writer.md) says there are some."""

from __future__ import annotations

import decimal
import os
import random
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

N = 3000


def _pick(r: random.Random, pool, n: int, null_p: float = 0.0):
    return [None if r.random() < null_p else r.choice(pool) for _ in range(n)]


def _table(seed: int) -> pa.Table:
    r = random.Random(seed)
    decs = [decimal.Decimal(r.randint(1, 5000)).scaleb(-2) for _ in range(50)]
    words = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN", "", "é日本", "x"]
    big = ["long " * r.randint(100, 400) + str(i) for i in range(3)]
    cols = {
        "dec": pa.array(_pick(r, decs, N), pa.decimal128(15, 2)),
        "dec_nulls": pa.array(_pick(r, decs[:7], N, 0.3), pa.decimal128(15, 2)),
        "dec_one": pa.array(_pick(r, decs[:1], N), pa.decimal128(15, 2)),
        "dec_all_null": pa.array([None] * N, pa.decimal128(15, 2)),
        "fsb16": pa.array(_pick(r, [bytes([i]) * 16 for i in range(5)], N, 0.1), pa.binary(16)),
        "str": pa.array(_pick(r, words, N)),
        "str_nulls": pa.array(_pick(r, words, N, 0.5)),
        "str_empty": pa.array(_pick(r, ["", "a"], N, 0.05)),
        "large_str": pa.array(_pick(r, words[:4], N, 0.1), pa.large_string()),
        "big_str": pa.array(_pick(r, big, N, 0.1)),
        "bin": pa.array(_pick(r, [b"\x00", b"\xff\xfe", b""], N), pa.binary()),
        "large_bin": pa.array(_pick(r, [b"\x00", b"\xff\xfe", b"abc"], N, 0.2), pa.large_binary()),
        "i64": pa.array(_pick(r, [i * 10_000_000_003 for i in range(40)], N, 0.1), pa.int64()),
        "f64": pa.array(_pick(r, [i * 1.5 for i in range(40)], N), pa.float64()),
        "ts": pa.array(_pick(r, [i * 86_400_000_000 for i in range(20)], N, 0.1), pa.timestamp("us", "UTC")),
        "st": pa.array([None if r.random() < 0.2 else {"s": r.choice(words), "d": r.choice(decs)} for _ in range(N)],
                       pa.struct([("s", pa.string()), ("d", pa.decimal128(15, 2))])),
        "lst": pa.array([None if r.random() < 0.1 else _pick(r, words, r.randint(0, 4), 0.1) for _ in range(N)],
                        pa.list_(pa.string())),
        # Cardinality at the rule's edge (one page of 3000 rows): 2118 distinct decimals take 2118 * 16 + 3000 * 12 / 8
        # = 38388 bytes as a dictionary page, under 0.8 of the 48000 plain bytes; 2119 take 38404, over it.
        "edge_in": pa.array([decimal.Decimal(i % 2118) for i in range(N)], pa.decimal128(15, 2)),
        "edge_out": pa.array([decimal.Decimal(i % 2119) for i in range(N)], pa.decimal128(15, 2)),
        # Distinct values: never a dictionary.
        "dec_distinct": pa.array([decimal.Decimal(i) for i in range(N)], pa.decimal128(15, 2)),
        "str_distinct": pa.array([f"value {i}" for i in range(N)]),
        # 32-bit values are left to bitpacking, as pylance does.
        "i32": pa.array(_pick(r, [i * 1_000_003 for i in range(40)], N), pa.int32()),
    }
    return pa.table(cols)


# Columns whose pages are all dictionary pages in a JVM-written file of the version (leaf column name -> versions).
DICTIONARY = {"dec": {"2.1", "2.2"}, "dec_nulls": {"2.1", "2.2"}, "dec_one": {"2.1", "2.2"},
              "fsb16": {"2.1", "2.2"}, "str": {"2.1", "2.2"}, "str_nulls": {"2.1", "2.2"},
              "str_empty": {"2.1", "2.2"}, "large_str": {"2.1", "2.2"}, "big_str": {"2.1", "2.2"},
              "bin": {"2.1", "2.2"}, "large_bin": {"2.1", "2.2"}, "i64": {"2.2"}, "f64": {"2.2"}, "ts": {"2.2"},
              "st.s": {"2.1", "2.2"}, "st.d": {"2.1", "2.2"}, "lst.item": {"2.1", "2.2"}, "edge_in": {"2.1", "2.2"}}


def _leaf_names(schema: pa.Schema):
    out = []
    def walk(prefix, t):
        if pa.types.is_struct(t):
            for f in t:
                walk(f"{prefix}.{f.name}", f.type)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(f"{prefix}.item", t.value_type)
        else:
            out.append(prefix)
    for f in schema:
        walk(f.name, f.type)
    return out


def _dictionary_pages(path: str, schema: pa.Schema):
    """{leaf: (dictionary pages, mini-block or full-zip pages with values)} over the data files of a dataset."""
    leaves = _leaf_names(schema)
    counts = {name: [0, 0] for name in leaves}
    for frag in lance.dataset(path).get_fragments():
        for df in frag.data_files():
            md = LanceFileReader(os.path.join(path, "data", df.path)).metadata()
            for name, col in zip(leaves, md.columns):
                for page in col.pages:
                    enc = str(page.encoding)
                    if "ConstantLayout" in enc:
                        continue
                    counts[name][1] += 1
                    if "dictionary: Some(" in enc:
                        counts[name][0] += 1
    return counts


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    base = tmp_path_factory.mktemp("dictionary")
    out = {}
    args = {v: [] for v in ("2.1", "2.2")}
    for v in args:
        for seed in (1, 2):
            src, dst = str(base / v / f"src{seed}.lance"), str(base / v / f"dst{seed}.lance")
            table = _table(seed)
            lance.write_dataset(table, src, data_storage_version=v)
            args[v] += [src, dst]
            out[(v, seed)] = (table, src, dst)
        # Pages of up to 1 MiB: one page per column of 3000 rows, except the long strings.
        subprocess.run(java_command("io.sparklance.cli.RewriteTable",
                                    ["--max-page-bytes", str(1 << 20), "--batch-rows", "1000", v, *args[v]]),
                       check=True, timeout=900)
    return out


@pytest.mark.parametrize("version", ["2.1", "2.2"])
@pytest.mark.parametrize("seed", [1, 2])
def test_pylance_reads_jvm_dictionary_pages(rewritten, version, seed):
    table, _, dst = rewritten[(version, seed)]
    assert not os.path.exists(dst + ".err"), open(dst + ".err").read()
    ds = lance.dataset(dst)
    ds.validate()
    assert ds.data_storage_version == version
    got = ds.to_table()
    assert got.schema == table.schema
    for name in table.schema.names:
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks()), name


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_dictionary_pages_where_the_rule_says(rewritten, version):
    table, _, dst = rewritten[(version, 1)]
    counts = _dictionary_pages(dst, table.schema)
    for leaf, (dictionary, pages) in counts.items():
        if leaf == "dec_all_null":
            assert pages == 0, counts
        elif version in DICTIONARY.get(leaf, ()):
            assert pages > 0 and dictionary == pages, (leaf, counts[leaf])
        else:
            assert dictionary == 0, (leaf, counts[leaf])


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_jvm_reads_its_dictionary_pages(rewritten, version, tmp_path):
    # The JVM reads its own table back and writes it again; the second copy must hold the same values.
    table, _, dst = rewritten[(version, 2)]
    again = str(tmp_path / "again.lance")
    subprocess.run(java_command("io.sparklance.cli.RewriteTable", ["--batch-rows", "777", version, dst, again]),
                   check=True, timeout=900)
    got = lance.dataset(again).to_table()
    for name in table.schema.names:
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks()), name
