"""Filters on data columns pushed into the scan (batches where no row can match are skipped before the other
columns are decoded): results must equal the rows Python selects from the data pylance wrote, for every
supported comparison, with nulls, NaN, -0.0 and strings; unsupported filters still give exact results."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))


N = 20000


def value(i):
    return {
        "id": i,
        "i32": None if i % 97 == 0 else (i * 7) % 1000 - 500,
        "f64": float("nan") if i % 501 == 0 else (-0.0 if i % 503 == 0 else (None if i % 89 == 0 else i / 3)),
        "s": None if i % 83 == 0 else f"k{i % 250:03d}",
        "b": None if i % 7 == 0 else i % 2 == 0,
        "pad": "x" * (i % 13),
    }


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    rows = [value(i) for i in range(N)]
    path = str(tmp_path_factory.mktemp("filters") / "t.lance")
    lance.write_dataset(pa.Table.from_pylist(rows, pa.schema([("id", pa.int64()), ("i32", pa.int32()), ("f64", pa.float64()),
                                                             ("s", pa.string()), ("b", pa.bool_()), ("pad", pa.string())])),
                        path, max_rows_per_file=7000)
    spark.read.format("lance").option("batch_size", 512).load(path).createOrReplaceTempView("ft")
    return rows


def eq(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


CASES = [
    ("id = 12345", lambda r: r["id"] == 12345),
    ("id IN (3, 19999, 77777)", lambda r: r["id"] in (3, 19999)),
    ("id > 19990 OR id < 5", lambda r: r["id"] > 19990 or r["id"] < 5),
    ("i32 = -493", lambda r: r["i32"] == -493),
    ("i32 >= 498 AND id < 3000", lambda r: r["i32"] is not None and r["i32"] >= 498 and r["id"] < 3000),
    ("i32 IS NULL", lambda r: r["i32"] is None),
    ("f64 = 0.0", lambda r: r["f64"] is not None and not math.isnan(r["f64"]) and r["f64"] == 0.0),
    ("f64 = double('NaN')", lambda r: r["f64"] is not None and math.isnan(r["f64"])),
    ("f64 > 6666.0", lambda r: r["f64"] is not None and (math.isnan(r["f64"]) or r["f64"] > 6666.0)),
    ("s = 'k007'", lambda r: r["s"] == "k007"),
    ("s < 'k002'", lambda r: r["s"] is not None and r["s"] < "k002"),
    ("s IS NOT NULL AND id < 100", lambda r: r["s"] is not None and r["id"] < 100),
    ("b = true AND id < 50", lambda r: r["b"] is True and r["id"] < 50),
    ("pad LIKE 'xxxxxxxxxxxx%'", lambda r: r["pad"].startswith("x" * 12)),
    ("s LIKE 'k00%'", lambda r: r["s"] is not None and r["s"].startswith("k00")),
    ("s LIKE '%7'", lambda r: r["s"] is not None and r["s"].endswith("7")),
    ("s LIKE '%02%' OR id < 10", lambda r: (r["s"] is not None and "02" in r["s"]) or r["id"] < 10),
    ("s NOT LIKE 'k1%' AND id < 3000", lambda r: r["s"] is not None and not r["s"].startswith("k1") and r["id"] < 3000),
    ("s LIKE 'k%2_'", lambda r: r["s"] is not None and len(r["s"]) == 4 and r["s"][2] == "2"),      # not pushed
    ("NOT (id > 10)", lambda r: not r["id"] > 10),                                   # Spark makes it id <= 10
    ("i32 <> -493", lambda r: r["i32"] is not None and r["i32"] != -493),
    ("NOT (s = 'k007') AND id < 3000", lambda r: r["s"] is not None and r["s"] != "k007" and r["id"] < 3000),
    ("f64 <> 0.0", lambda r: r["f64"] is not None and (math.isnan(r["f64"]) or r["f64"] != 0.0)),
    ("f64 != double('NaN')", lambda r: r["f64"] is not None and not math.isnan(r["f64"])),
    ("b <> true", lambda r: r["b"] is False),
    ("id NOT IN (3, 19999, 77777)", lambda r: r["id"] not in (3, 19999)),
    ("s NOT IN ('k001', 'k002') AND id < 2000", lambda r: r["s"] is not None and r["s"] not in ("k001", "k002")
     and r["id"] < 2000),
    ("i32 NOT IN (1, NULL)", lambda r: False),
]


@pytest.mark.parametrize("where,keep", CASES, ids=[c[0] for c in CASES])
def test_filter_results(spark, table, where, keep):
    got = sorted((r.asDict() for r in spark.sql(f"SELECT * FROM ft WHERE {where}").collect()), key=lambda r: r["id"])
    want = [r for r in table if keep(r)]
    assert [r["id"] for r in got] == [r["id"] for r in want]
    for g, w in zip(got, want):
        assert all(eq(g[k], w[k]) for k in w), (g, w)


def test_not_equal_and_not_in_reach_the_scan(spark, table):
    for where, part in (("i32 <> -493", "Not(EqualTo(i32,-493))"), ("id NOT IN (3, 19999)", "Not(In(id, [")):
        plan = spark.sql(f"SELECT id FROM ft WHERE {where}")._jdf.queryExecution().executedPlan().toString()
        assert part in plan.split("batches where ")[1], plan


def test_pushed_filters_are_reported(spark, table):
    plan = spark.sql("SELECT s FROM ft WHERE id = 12345 AND pad LIKE 'x%'")._jdf.queryExecution().executedPlan().toString()
    pushed = plan.split("batches where ")[1].split(")) ")[0]
    assert "EqualTo(id,12345" in pushed and "IsNotNull(pad)" in pushed
    assert "StringStartsWith(pad,x" in pushed


def test_like_of_a_prefix_suffix_or_infix_reaches_the_scan(spark, table):
    for where, part in (("s LIKE 'k00%'", "StringStartsWith(s,k00)"), ("s LIKE '%7'", "StringEndsWith(s,7)"),
                        ("s LIKE '%02%'", "StringContains(s,02)")):
        plan = spark.sql(f"SELECT id FROM ft WHERE {where}")._jdf.queryExecution().executedPlan().toString()
        assert part in plan.split("batches where ")[1], plan


def test_filtered_batches_keep_column_order_metadata_columns_and_deletions(spark, tmp_path):
    """The filtered columns are read first and kept for the batch: the batch must still have the projection's
    order, the metadata columns and the rows the deletion files leave."""
    path = str(tmp_path / "d.lance")
    rows = [value(i) for i in range(N)]
    lance.write_dataset(pa.Table.from_pylist(rows), path, max_rows_per_file=7000)
    lance.dataset(path).delete("id % 5 = 0")
    got = (spark.read.format("lance").option("batch_size", 512).load(path)
           .where("s = 'k007' AND i32 > -400").select("pad", "s", "id", "_rowaddr", "i32", "_rowid").collect())
    want = lance.dataset(path).to_table(filter="s = 'k007' AND i32 > -400", with_row_id=True,
                                        with_row_address=True).to_pylist()
    assert len(want) > 10
    assert sorted((r.pad, r.s, r.id, r._rowaddr, r.i32, r._rowid) for r in got) == \
        sorted((w["pad"], w["s"], w["id"], w["_rowaddr"], w["i32"], w["_rowid"]) for w in want)


def test_date_timestamp_and_decimal_filters_are_pushed_and_exact(spark, tmp_path):
    """Dates and timestamps of every unit compare by the integer the column stores, translated from the literal
    as Spark reads the column (milliseconds of a date64 as their day, nanoseconds rounded down to microseconds);
    decimals by value. Results must equal the same query with the scan's filters off, with java.time literals too."""
    import datetime as dt
    from decimal import Decimal

    n = 3000
    day0 = 19000
    us0 = 1_700_000_000_123_456

    def col(i, v, every):
        return None if i % every == 0 else v

    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "d32": pa.array([col(i, day0 + i % 50, 37) for i in range(n)], pa.date32()),
        "d64": pa.array([col(i, (day0 + i % 50) * 86_400_000 + (i * 7919) % 86_400_000, 41) for i in range(n)], pa.date64()),
        "ts_s": pa.array([col(i, us0 // 1_000_000 + i * 3, 43) for i in range(n)], pa.timestamp("s", tz="UTC")),
        "ts_ms": pa.array([col(i, us0 // 1000 + i * 7, 47) for i in range(n)], pa.timestamp("ms", tz="UTC")),
        "ts_us": pa.array([col(i, us0 + i * 11, 53) for i in range(n)], pa.timestamp("us", tz="UTC")),
        "ts_ns": pa.array([col(i, us0 * 1000 + i * 1500, 59) for i in range(n)], pa.timestamp("ns", tz="UTC")),
        "ntz": pa.array([col(i, us0 + i * 13, 61) for i in range(n)], pa.timestamp("us")),
        "dec": pa.array([col(i, Decimal(i % 400 - 200) / 8, 67) for i in range(n)], pa.decimal128(10, 3)),
    })
    path = str(tmp_path / "temporal.lance")
    lance.write_dataset(table, path, max_rows_per_file=1000)

    def ts(us):
        return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=us)

    def lit(kind, us):
        return f"{kind} '{ts(us).isoformat(sep=' ')}'"

    day = (dt.date(1970, 1, 1) + dt.timedelta(days=day0 + 7)).isoformat()
    ns_row = us0 * 1000 + 3 * 1500          # rows 2 and 3 fall in the same microsecond
    cases = [
        f"d32 = DATE '{day}'", f"d32 > DATE '{day}'", f"d32 BETWEEN DATE '{day}' AND DATE '{day}' + 3",
        f"d32 IN (DATE '{day}', DATE '2000-01-01')",
        f"d64 = DATE '{day}'", f"d64 <= DATE '{day}'", f"d64 IN (DATE '{day}', DATE '2000-01-01')",
        f"ts_s = {lit('TIMESTAMP', (us0 // 1_000_000 + 30) * 1_000_000)}", f"ts_s > {lit('TIMESTAMP', us0 + 900_000_000)}",
        f"ts_ms = {lit('TIMESTAMP', (us0 // 1000 + 70) * 1000)}", f"ts_ms >= {lit('TIMESTAMP', us0 + 10_000_500)}",
        f"ts_ms < {lit('TIMESTAMP', us0 + 10_000_500)}", f"ts_ms = {lit('TIMESTAMP', (us0 // 1000 + 70) * 1000 + 1)}",
        f"ts_us = {lit('TIMESTAMP', us0 + 110)}", f"ts_us BETWEEN {lit('TIMESTAMP', us0 + 100)} AND {lit('TIMESTAMP', us0 + 500)}",
        f"ts_ns = {lit('TIMESTAMP', ns_row // 1000)}", f"ts_ns > {lit('TIMESTAMP', ns_row // 1000 + 2000)}",
        f"ts_ns IN ({lit('TIMESTAMP', ns_row // 1000)}, {lit('TIMESTAMP', ns_row // 1000 + 30)})",
        f"ntz = {lit('TIMESTAMP_NTZ', us0 + 130)}", f"ntz < {lit('TIMESTAMP_NTZ', us0 + 1300)}",
        "dec = 3.125", "dec > -1.1", "dec <= 3.124",
        "dec IN (CAST(0 AS DECIMAL(10, 3)), CAST(2.5 AS DECIMAL(10, 3)), CAST(-7.125 AS DECIMAL(10, 3)))",
        # <> and NOT IN: below or above the stored range that reads as the literal.
        f"d64 <> DATE '{day}' AND id < 1000", f"ts_ns <> {lit('TIMESTAMP', ns_row // 1000)} AND id < 1000",
        f"ts_s NOT IN ({lit('TIMESTAMP', (us0 // 1_000_000 + 30) * 1_000_000)}, "
        f"{lit('TIMESTAMP', (us0 // 1_000_000 + 33) * 1_000_000)}) AND id < 1000",
        "dec <> 3.125 AND id < 1000",
    ]
    conf = spark.conf
    saved = {k: conf.get(k) for k in ("spark.sql.session.timeZone", "spark.sql.datetime.java8API.enabled")}
    try:
        conf.set("spark.sql.session.timeZone", "UTC")
        pushed = spark.read.format("lance").option("batch_size", 128).load(path)
        plain = spark.read.format("lance").option("pushDownFilters", "false").load(path)
        selected = set()
        for java8 in ("false", "true"):
            conf.set("spark.sql.datetime.java8API.enabled", java8)
            for where in cases:
                column = where.split(" ")[0]
                got = pushed.where(where).select("id")
                plan = got._jdf.queryExecution().executedPlan().toString()
                assert "batches where " in plan and f"({column}," in plan.split("batches where ")[1], (where, plan)
                want = sorted(r.id for r in plain.where(where).select("id").collect())
                assert sorted(r.id for r in got.collect()) == want, (where, java8)
                if 0 < len(want) < n * 0.9:
                    selected.add(where)
        # All but the equality with a timestamp between two of the column's milliseconds select some rows, not all.
        assert set(cases) - selected == {cases[12]}, f"cases selecting nothing or everything: {set(cases) - selected}"
    finally:
        for k, v in saved.items():
            conf.set(k, v)


@pytest.fixture
def cbo(spark):
    """Spark keeps a scan's row count in its statistics only with the cost-based optimizer on."""
    spark.conf.set("spark.sql.cbo.enabled", "true")
    yield
    spark.conf.unset("spark.sql.cbo.enabled")


def _stats(df):
    """(bytes, rows) of the plan's scan, as Spark's planner sees them."""
    stats = df._jdf.queryExecution().optimizedPlan().collectLeaves().head().stats()
    return int(str(stats.sizeInBytes())), int(str(stats.rowCount().get()))


def test_scan_statistics_follow_the_columns_rows_and_index_of_the_scan(spark, cbo, tmp_path):
    """Spark plans joins from a scan's statistics: they scale with the columns read, the live rows, and the rows an
    index selected; a column of one value repeated, a few bytes in the files, counts a byte per row at least."""
    rng = np.random.default_rng(3)
    n = 40_000
    rows = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                     "wide": pa.array([f"{v:x}" * 20 for v in rng.integers(0, 1 << 40, n)]),
                     "same": pa.array(np.full(n, 7, dtype=np.int64))})
    path = str(tmp_path / "stats.lance")
    lance.write_dataset(rows, path, max_rows_per_file=10_000)
    df = spark.read.format("lance").load(path)
    full_bytes, full_rows = _stats(df)
    assert full_rows == n
    narrow_bytes, _ = _stats(df.select("id"))
    assert narrow_bytes * 2 < full_bytes, (narrow_bytes, full_bytes)
    assert _page_bytes(path, ["same"]) < n // 10
    same_bytes, _ = _stats(df.select("same"))
    assert same_bytes == n, same_bytes

    lance.dataset(path).delete("id < 20000")
    df = spark.read.format("lance").load(path)
    half_bytes, half_rows = _stats(df)
    assert half_rows == n // 2 and half_bytes < full_bytes * 0.6, (half_bytes, half_rows)

    lance.dataset(path).create_scalar_index("id", "BTREE")
    point = spark.read.format("lance").load(path).where("id = 30001")
    assert "BTREE index" in point._jdf.queryExecution().executedPlan().toString()
    point_bytes, point_rows = _stats(point)
    assert point_rows == 1 and point_bytes < half_bytes / 1000, (point_bytes, point_rows)


def _page_bytes(path: str, columns) -> int:
    """The bytes of the pages and column buffers of `columns` in every data file of pylance's table at `path`."""
    from lance.file import LanceFileReader

    total = 0
    for fragment in lance.dataset(path).get_fragments():
        for f in fragment.metadata.files:
            m = LanceFileReader(f"{path}/data/{f.path}").metadata()
            names = [m.schema.field(i).name for i in range(len(m.schema))]
            for field_id, column in zip(f.fields, f.column_indices):
                if names[field_id] in columns:  # flat schemas: field ids are the fields' positions
                    c = m.columns[column]
                    total += sum(b.size for p in c.pages for b in p.buffers) + sum(b.size for b in c.column_buffers)
    return total


def test_scan_tasks_and_the_planner_count_the_bytes_of_the_columns_pages_pylance_wrote(spark, cbo, tmp_path):
    """A scan's tasks, and the size the planner gets, count the bytes of the pages of the columns it reads, as
    pylance's file metadata gives them (exactly for up to 8 fragments, sampled from 8 of them beyond), and the
    planner at least a byte per value read. Seeded tables of an integer, a string and a double column."""
    seed = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
    rng = np.random.default_rng(seed)
    conf = spark.conf
    keys = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes", "spark.sql.files.minPartitionNum")
    saved = {k: conf.get(k, None) for k in keys}
    try:
        for fragments in (1 + int(rng.integers(0, 8)), 9 + int(rng.integers(0, 12))):
            n = 2_000 * fragments
            table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                              "s": pa.array([f"{v:x}" * int(rng.integers(1, 8)) for v in rng.integers(0, 1 << 40, n)]),
                              "x": pa.array(rng.normal(size=n))})
            path = str(tmp_path / f"sizes{fragments}.lance")
            lance.write_dataset(table, path, max_rows_per_file=2_000)
            assert len(lance.dataset(path).get_fragments()) == fragments
            df = spark.read.format("lance").load(path)
            for columns in (["id"], ["s"], ["id", "x"], ["id", "s", "x"]):
                want = _page_bytes(path, columns)
                # Tasks of a third of the pages' bytes and a half: 4 of them, if the scan counts those bytes.
                conf.set("spark.sql.files.maxPartitionBytes", str(int(want / 3.5)))
                conf.set("spark.sql.files.openCostInBytes", "1")
                conf.set("spark.sql.files.minPartitionNum", "1")
                tasks = df.select(*columns).rdd.getNumPartitions()
                assert tasks == 4 if fragments <= 8 else 3 <= tasks <= 5, (seed, fragments, columns, want, tasks)
                for k, v in saved.items():
                    conf.unset(k) if v is None else conf.set(k, v)
                size, rows = _stats(df.select(*columns))
                assert rows == n
                floor = max(want, n * len(columns))
                if fragments <= 8:
                    assert abs(size - floor) <= fragments, (seed, fragments, columns, size, want)
                else:
                    assert abs(size - floor) <= 0.1 * floor, (seed, fragments, columns, size, want)
    finally:
        for k, v in saved.items():
            conf.unset(k) if v is None else conf.set(k, v)


def test_a_scan_of_small_pages_is_spread_over_the_cores_by_its_files_bytes(spark, tmp_path):
    """Decoding costs about as much per value whatever the pages' size, so a scan whose columns' pages are small
    (bitpacked small integers) still takes a task per core when its data files' bytes fill them
    (spark.sql.files.minPartitionNum) with openCostInBytes each, as Spark spreads a Parquet scan by its files' bytes
    whatever columns it reads; files that do not leave one task. Every row is read once either way. Seeded tables
    of a small integer and a double column."""
    seed = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
    rng = np.random.default_rng(seed)
    conf = spark.conf
    keys = ("spark.sql.files.openCostInBytes", "spark.sql.files.minPartitionNum")
    saved = {k: conf.get(k, None) for k in keys}
    try:
        for case in range(3):
            n = int(rng.integers(20_000, 60_000))
            k = rng.integers(0, int(rng.integers(2, 64)), n)
            path = str(tmp_path / f"spread{case}.lance")
            lance.write_dataset(pa.table({"k": pa.array(k, pa.int64()), "x": pa.array(rng.normal(size=n))}), path,
                                data_storage_version="2.1", max_rows_per_file=int(rng.integers(n // 3, n + 1)))
            pages = _page_bytes(path, ["k"])
            files = sum(f.file_size_bytes for fr in lance.dataset(path).get_fragments() for f in fr.metadata.files)
            assert pages * 3 < files, (seed, case, pages, files)
            # Two tasks of at least openCostInBytes: one by the pages' bytes, two by the files' bytes.
            conf.set("spark.sql.files.minPartitionNum", "2")
            for open_cost, want in ((int((pages + files) / 4) + pages, 2), (files + 1, 1)):
                conf.set("spark.sql.files.openCostInBytes", str(open_cost))
                got = spark.read.format("lance").load(path).select("k")
                assert got.rdd.getNumPartitions() == want, (seed, case, pages, files, open_cost)
                assert sorted(r[0] for r in got.collect()) == sorted(k.tolist()), (seed, case)
    finally:
        for key, v in saved.items():
            conf.unset(key) if v is None else conf.set(key, v)


def test_scan_statistics_without_recorded_file_sizes_are_not_zero(spark, cbo, tmp_path):
    """Manifests of older writers record no file sizes (DataFile.file_size_bytes, field 6): dropped here."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
    import damage_mutations

    path = tmp_path / "nosizes.lance"
    lance.write_dataset(pa.table({"id": pa.array(np.arange(5000, dtype=np.int64))}), str(path))
    manifest = next((path / "_versions").glob("*.manifest"))
    manifest.write_bytes(damage_mutations.apply(manifest.read_bytes(), ("proto", "2#0.2#0.6#0", "drop", None)))
    assert lance.dataset(str(path)).get_fragments()[0].metadata.files[0].file_size_bytes is None
    size, rows = _stats(spark.read.format("lance").load(str(path)))
    assert rows == 5000 and size >= 5000 * 8, size


def test_a_subtree_a_query_holds_twice_runs_once(spark, tmp_path):
    """Two scans of one version reading the same columns with the same filters are equal, so Spark runs a subtree a
    query holds twice once (ReusedExchange), as it does over Parquet; with other filters, both run."""
    path = str(tmp_path / "reuse.lance")
    lance.write_dataset(pa.table({"k": pa.array(np.arange(3000) % 10, pa.int64()),
                                  "v": pa.array(np.arange(3000), pa.int64())}), path)
    spark.read.format("lance").load(path).createOrReplaceTempView("reuse")
    sums = "(SELECT k, sum(v) AS s FROM reuse WHERE v > {} GROUP BY k)"
    want = {k: sum(v for v in range(3000) if v % 10 == k and v > 10) for k in range(10)}
    for other, reused in ((10, True), (11, False)):
        df = spark.sql(f"SELECT a.k, a.s, b.s AS t FROM {sums.format(10)} a JOIN {sums.format(other)} b ON a.k = b.k")
        got = df.collect()
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert ("ReusedExchange" in plan) == reused, plan
        assert {r.k: r.s for r in got} == want and len(got) == 10
        assert {r.k: r.t for r in got} == {k: sum(v for v in range(3000) if v % 10 == k and v > other) for k in range(10)}


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_seeded_filters_on_pylance_files_of_every_version_equal_spark_without_pushdown(spark, tmp_path, version):
    """pylance writes seeded rows with nulls (bit-packed integers and dates, dictionary-encoded decimals and
    strings, as TPC-H's lineitem has them, and in 2.2 doubles with NaN and -0.0) in each file version; conjunctions
    of random comparisons, ORs, IS [NOT] NULL and NOTs, keeping from none to all of the rows (few: the rows taken at
    their offsets; up to a quarter: batches read whole and cut to their matching rows; more: whole batches), must
    give the rows Spark gives with the scan's filters off. In 2.1 and 2.2 the scan evaluates the filters on
    dictionary-encoded columns once per dictionary item."""
    from decimal import Decimal

    rng = np.random.default_rng(int(version.replace(".", "")))
    n = 12000

    def nulls(values, every):
        return [None if rng.integers(every) == 0 else v for v in values]

    modes = ["AIR", "AIR REG", "REG AIR", "MAIL", "SHIP", "RAIL", "TRUCK", "FOB"]
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "qty": pa.array(nulls([Decimal(int(v)) for v in rng.integers(1, 51, n)], 13), pa.decimal128(15, 2)),
        "disc": pa.array(nulls([Decimal(int(v)) / 100 for v in rng.integers(0, 11, n)], 17), pa.decimal128(15, 2)),
        "ship": pa.array(nulls([int(v) for v in rng.integers(8000, 10500, n)], 19), pa.date32()),
        "mode": pa.array(nulls([modes[v] for v in rng.integers(0, len(modes), n)], 23), pa.string()),
        "key": pa.array(nulls([int(v) for v in rng.integers(0, 200_000, n)], 29), pa.int64()),
        "price": pa.array([float(v) for v in rng.random(n) * 1000], pa.float64()),
        "dbl": pa.array(nulls([[math.nan, -0.0, 0.0, 1.5, 2.25, -3.0][v] for v in rng.integers(0, 6, n)], 11), pa.float64()),
    })
    path = str(tmp_path / f"v{version}.lance")
    lance.write_dataset(table, path, max_rows_per_file=5000, data_storage_version=version)
    pushed = spark.read.format("lance").option("batch_size", 1024).load(path)
    plain = spark.read.format("lance").option("pushDownFilters", "false").load(path)

    def comparable(v):
        # NaN is not equal to itself, and 0.0 equals -0.0: floats are compared by their repr.
        return repr(v) if isinstance(v, float) else v

    DOUBLES = ["double('NaN')", "-0.0D", "0.0D", "1.5D", "2.0D", "-3.0D"]

    def comparison():
        column = ["qty", "disc", "ship", "mode", "key", "dbl"][rng.integers(6)]
        op = ["=", "<", "<=", ">", ">=", "<>"][rng.integers(6)]
        kind = rng.integers(10)
        if kind == 0:
            return f"({comparison()} OR {comparison()})"
        if kind == 1:
            return f"NOT ({comparison()})"
        if kind == 2:
            return f"{column} IS {'NOT ' if rng.integers(2) else ''}NULL"
        if kind == 3:
            return f"mode {'NOT ' if rng.integers(3) == 0 else ''}LIKE '{['A%', '%AIL', '%R%', 'REG%', '%', '%IR %'][rng.integers(6)]}'"
        if column == "dbl":
            return f"dbl {op} {DOUBLES[rng.integers(len(DOUBLES))]}"
        if column == "qty":
            return f"qty {op} {rng.integers(0, 52)}"
        if column == "disc":
            return f"disc {op} {rng.integers(0, 12) / 100:.2f}"
        if column == "ship":
            return f"ship {op} date_add(DATE '1970-01-01', {rng.integers(7990, 10510)})"
        if column == "mode":
            if rng.integers(3) == 0:
                return f"mode IN ({', '.join(repr(str(m)) for m in rng.choice(modes, rng.integers(1, 4)))})"
            return f"mode {op} '{modes[rng.integers(len(modes))]}'"
        return f"key {op} {rng.integers(0, 200_000)}"

    fractions = []
    for _ in range(60):
        where = " AND ".join(comparison() for _ in range(rng.integers(1, 4)))
        want = sorted(tuple(map(comparable, r)) for r in plain.where(where).collect())
        got = sorted(tuple(map(comparable, r)) for r in pushed.where(where).collect())
        assert got == want, (version, where)
        fractions.append(len(want) / n)
    # The cases cover each way a filtered batch comes back.
    assert any(0 < f < 1 / 32 for f in fractions) and any(1 / 32 < f < 1 / 4 for f in fractions) \
        and any(f > 1 / 4 for f in fractions), fractions
