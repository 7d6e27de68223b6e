"""Round-trip fuzzing against pylance: random schemas and values (gen.py), at file versions 2.0, 2.1 and 2.2, in
three directions:

1. ``jvm_read``: pylance writes a table; the JVM core (ReadFiles) reads each data file and must return exactly the
   values pylance's file reader returns.
2. ``jvm_rewrite``: the JVM core reads pylance's table (deletions applied) and writes it again (RewriteTable);
   pylance must read our copy with the same values, and ``validate()`` must pass.
3. ``spark``: Spark reads pylance's table and writes it with ``df.write.format("lance")``; pylance must read the
   values the documented type mapping keeps (docs/types.md), and ``validate()`` must pass.
4. ``filters``: Spark reads pylance's table with random predicates on every atomic column (top-level or in a
   struct) pushed to the scan; it must return the rows Spark's own evaluation keeps on the table read whole.

Spark's reads in 3 and 4 are cut into tasks of a few hundred to a few thousand bytes of data files
(``spark.sql.files.maxPartitionBytes``), so that fragments are read by several tasks, each a range of rows.

``SPARKLANCE_FUZZ_SEED`` and ``SPARKLANCE_FUZZ_N`` (cases per file version) choose the run; `make test` runs a small
fixed budget, `make fuzz SEED=... N=...` a long one. Each direction runs all cases of a version in one JVM start.
A failing case is shrunk (columns, rows, nesting dropped while it still fails) and printed as a pylance snippet.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import gen  # noqa: E402
import roundtrip as rt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import start_spark  # noqa: E402

VERSIONS = ["2.0", "2.1", "2.2"]
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "10"))
# Failures shrunk per test; the others are listed by case number.
SHRINK_AT_MOST = 3
# Spark's scans are cut into tasks of at most this many bytes of data files (spark.sql.files.maxPartitionBytes),
# small enough that most fragments are read by several tasks.
TASK_BYTES = [300, 2048, 16384]
FILTERS_PER_CASE = 3


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """{version: [Source]}: every generated case pylance could write, and how many columns pylance refused."""
    base = tmp_path_factory.mktemp("fuzz_src")
    out = {}
    for v in VERSIONS:
        out[v] = rt.write_sources([gen.random_case(rt.SEED, v, i) for i in range(N)], str(base / v))
    return out


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = start_spark("roundtrip-fuzz", tmp_path_factory.mktemp("fuzz_warehouse"))
    yield session
    session.stop()


def _knobs(version: str, direction: str) -> random.Random:
    return random.Random(f"{rt.SEED}/{version}/{direction}/knobs")


def _check(direction: str, version: str, sources, runner, then: str) -> None:
    if not sources:
        pytest.skip(f"pylance wrote none of the {N} cases at {version}")
    work = os.path.dirname(sources[0].path)
    results = runner(sources, work)
    ours = [s.case.index for s, e in zip(sources, results) if rt.refused(e)]
    failures = [(s, e) for s, e in zip(sources, results) if e is not None and not rt.refused(e)]
    theirs = sum(len(s.refused) for s in sources)
    print(f"\nfuzz {direction} {version}: seed {rt.SEED}, {len(sources)} cases, {len(failures)} failed, "
          f"{len(ours)} refused by sparklance as documented (cases {ours}), {theirs} columns refused by pylance")
    if not failures:
        return
    report = []
    for i, (source, error) in enumerate(failures):
        if i < SHRINK_AT_MOST:
            source, error = rt.shrink(source, error, runner)
            report.append(rt.reproducer(source, error, then))
        else:
            report.append(f"case {source.case.index}: {error[:300]}")
    pytest.fail(f"{len(failures)} of {len(sources)} {direction} cases at file version {version} failed "
                f"(seed {rt.SEED}):\n\n" + "\n\n".join(report), pytrace=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_jvm_reads_what_pylance_wrote(sources, version):
    batch_rows = _knobs(version, "read").choice([1, 3, 7, 64, 1000])
    _check("jvm_read", version, sources[version],
           lambda srcs, work: rt.run_jvm_read(srcs, work, batch_rows),
           f"ReadFiles --batch-rows {batch_rows} on each data file; compare with lance.file.LanceFileReader")


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_what_the_jvm_rewrote(sources, version, tmp_path):
    k = _knobs(version, "rewrite")
    options = ["--max-page-bytes", str(k.choice([512, 4096, 65536])), "--batch-rows", str(k.choice([2, 5, 100])),
               "--max-rows-per-file", str(k.choice([3, 50, 100000]))]
    _check("jvm_rewrite", version, sources[version],
           lambda srcs, work: rt.run_jvm_rewrite(srcs, work, version, options),
           f"RewriteTable {' '.join(options)} {version} src.lance dst.lance; lance.dataset('dst.lance') reads other values")


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_what_spark_wrote(spark, sources, version):
    k = _knobs(version, "spark")
    options = {"max_page_bytes": str(k.choice([512, 4096, 65536])), "batch_rows": str(k.choice([2, 5, 100])),
               "max_rows_per_file": str(k.choice([3, 50, 100000]))}
    task_bytes = k.choice(TASK_BYTES)
    stats = rt.SplitStats()
    _check("spark", version, sources[version],
           lambda srcs, work: rt.run_spark(spark, srcs, work, version, options, task_bytes, stats),
           f"spark.conf.set('spark.sql.files.maxPartitionBytes', {task_bytes}); "
           f"spark.conf.set('spark.sql.files.openCostInBytes', {task_bytes // 4}); "
           f"spark.read.format('lance').load('src.lance').write.format('lance')"
           + "".join(f".option({key!r}, {value!r})" for key, value in options.items())
           + f".option('file_format_version', {version!r}).save('dst.lance'); lance.dataset('dst.lance')")
    print(f"fuzz spark {version}: tasks of at most {task_bytes} bytes: {stats}")
    # A fragment of four tasks' bytes is cut into several tasks (docs/reading.md): if none was, the scans were not
    # sized by bytes and the round trips above did not test reads of fragments split across tasks.
    assert not stats.large_fragments or stats.split_fragments, stats


@pytest.mark.parametrize("version", VERSIONS)
def test_spark_filters_keep_the_rows_they_hold(spark, sources, version):
    task_bytes = _knobs(version, "filters").choice(TASK_BYTES)
    stats = rt.FilterStats()
    _check("filters", version, sources[version],
           lambda srcs, work: rt.run_spark_filters(spark, srcs, work, rt.SEED, task_bytes, FILTERS_PER_CASE, stats),
           f"spark.conf.set('spark.sql.files.maxPartitionBytes', {task_bytes}); "
           f"spark.conf.set('spark.sql.files.openCostInBytes', {task_bytes // 4}); "
           "spark.read.format('lance').load('src.lance').where(...) against the same predicate on the table read "
           "whole and checkpointed")
    print(f"fuzz filters {version}: tasks of at most {task_bytes} bytes: {stats}")
    # If no drawn predicate was compared, every literal failed and the filters went untested.
    assert not stats.drawn or stats.compared, stats
