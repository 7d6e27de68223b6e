"""The rows a filtered scan reports to Spark's planner are those its pushed filters keep (estimated by a sample,
an upper bound), so a TPC-H q12-like join broadcasts the small filtered side at plan time, as AQE does over Parquet,
with the same results; `estimate_filtered_rows = false` reports every row read, and the plan does not broadcast."""

from __future__ import annotations

import datetime
import os

import lance
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import lance_raises, new_catalog

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))

Q12 = """
SELECT l_shipmode,
       sum(CASE WHEN o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS high,
       sum(CASE WHEN o_orderpriority NOT IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS low
FROM {orders} JOIN {lineitem} ON o_orderkey = l_orderkey
WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'
GROUP BY l_shipmode ORDER BY l_shipmode
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Seeded TPC-H-shaped `orders` (20k rows) and `lineitem` (4 lines an order, in order), by pylance and as
    Parquet: {name: (lance path, parquet path)}."""
    rng = np.random.default_rng(SEED)
    root = tmp_path_factory.mktemp("estimate")
    n_orders = 20_000
    orders = pa.table({
        "o_orderkey": pa.array(np.arange(n_orders, dtype=np.int64)),
        "o_orderpriority": pa.array([("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")[i]
                                     for i in rng.integers(0, 5, n_orders)]),
        "o_comment": pa.array([f"comment {v:x}" * 3 for v in rng.integers(0, 1 << 40, n_orders)]),
    })
    keys = np.repeat(np.arange(n_orders, dtype=np.int64), 4)
    n = len(keys)
    start = datetime.date(1992, 1, 1)
    ship = rng.integers(0, 7 * 365, n)
    commit = ship + rng.integers(-30, 60, n)
    receipt = ship + rng.integers(1, 31, n)
    modes = ("MAIL", "SHIP", "AIR", "RAIL", "TRUCK", "FOB", "REG AIR")
    lineitem = pa.table({
        "l_orderkey": pa.array(keys),
        "l_shipmode": pa.array([modes[i] for i in rng.integers(0, 7, n)]),
        "l_shipdate": pa.array([start + datetime.timedelta(days=int(d)) for d in ship], pa.date32()),
        "l_commitdate": pa.array([start + datetime.timedelta(days=int(d)) for d in commit], pa.date32()),
        "l_receiptdate": pa.array([start + datetime.timedelta(days=int(d)) for d in receipt], pa.date32()),
        "l_comment": pa.array([f"line {v:x}" * 2 for v in rng.integers(0, 1 << 40, n)]),
    })
    out = {}
    for name, table in (("orders", orders), ("lineitem", lineitem)):
        path = str(root / f"{name}.lance")
        lance.write_dataset(table, path, max_rows_per_file=30_000)
        parquet = str(root / f"{name}.parquet")
        pq.write_table(table, parquet)
        out[name] = (path, parquet)
    # Deleted lines: the live rows are those the estimate counts.
    lance.dataset(out["lineitem"][0]).delete("l_orderkey % 10 = 3")
    return out


def _joins(plan):
    """The Join nodes of an optimized logical plan (py4j tree walk)."""
    found = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.nodeName() == "Join":
            found.append(node)
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    return found


def _side_sizes(df):
    """(orders side bytes, lineitem side bytes) of the query's join, as Spark's planner sees them."""
    (join,) = _joins(df._jdf.queryExecution().optimizedPlan())
    left, right = join.left(), join.right()
    sides = {}
    for side in (left, right):
        name = "lineitem" if "l_orderkey" in side.output().toString() else "orders"
        sides[name] = int(str(side.stats().sizeInBytes()))
    return sides["orders"], sides["lineitem"]


def _broadcast_sides(df):
    """The tables broadcast in the physical plan Spark plans (before AQE runs anything)."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName() == "AdaptiveSparkPlan":
        plan = plan.initialPlan()
    found = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.nodeName() == "BroadcastExchange":
            found.append("lineitem" if "l_orderkey" in node.toString() else "orders")
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
    return found


def test_q12_broadcasts_the_filtered_lineitem_side_with_parquets_results(spark, tables):
    lance_orders, parquet_orders = tables["orders"]
    lance_lineitem, parquet_lineitem = tables["lineitem"]
    spark.read.parquet(parquet_orders).createOrReplaceTempView("p_orders")
    spark.read.parquet(parquet_lineitem).where("l_orderkey % 10 != 3").createOrReplaceTempView("p_lineitem")
    spark.read.format("lance").load(lance_orders).createOrReplaceTempView("l_orders")
    spark.read.format("lance").load(lance_lineitem).createOrReplaceTempView("l_lineitem")
    spark.read.format("lance").option("estimate_filtered_rows", "false").load(lance_lineitem) \
        .createOrReplaceTempView("l_lineitem_unestimated")
    query = Q12.format(orders="l_orders", lineitem="l_lineitem")
    unestimated = Q12.format(orders="l_orders", lineitem="l_lineitem_unestimated")

    orders_bytes, lineitem_bytes = _side_sizes(spark.sql(query))
    _, read_bytes = _side_sizes(spark.sql(unestimated))
    # The pushed filters keep about 2/7 * 1/7 of the live lines: an upper bound above that, well below all.
    live = lance.dataset(lance_lineitem).count_rows()
    kept = lance.dataset(lance_lineitem).count_rows(
        "l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= date '1994-01-01' AND l_receiptdate < date '1995-01-01'")
    assert kept < live * 0.06, (kept, live)
    assert lineitem_bytes * 4 < read_bytes, (lineitem_bytes, read_bytes)
    assert lineitem_bytes < orders_bytes, (lineitem_bytes, orders_bytes)

    threshold = (lineitem_bytes + orders_bytes) // 2
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(threshold))
    try:
        df = spark.sql(query)
        assert _broadcast_sides(df) == ["lineitem"], df._jdf.queryExecution().executedPlan().toString()
        assert _broadcast_sides(spark.sql(unestimated)) == [], "without the estimate, lineitem looks too large"
        want = spark.sql(Q12.format(orders="p_orders", lineitem="p_lineitem")).collect()
        assert [tuple(r) for r in df.collect()] == [tuple(r) for r in want]
        assert [tuple(r) for r in spark.sql(unestimated).collect()] == [tuple(r) for r in want]
        assert len(want) == 2 and sum(r.high + r.low for r in want) > 0
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


def test_unfiltered_scans_report_what_they_read_and_filtered_ones_at_least_what_they_keep(spark, tables):
    """Without filters the estimate is the rows read, whatever the option; with filters, never fewer rows than
    pass them and at most 5% of the live rows more (the sample's bound), whatever the date and mode."""
    path = tables["lineitem"][0]

    def leaf_stats(df):
        spark.conf.set("spark.sql.cbo.enabled", "true")
        try:
            leaf = df._jdf.queryExecution().optimizedPlan().collectLeaves().head()
            return int(str(leaf.stats().sizeInBytes())), int(str(leaf.stats().rowCount().get()))
        finally:
            spark.conf.unset("spark.sql.cbo.enabled")

    ds = lance.dataset(path)
    live = ds.count_rows()
    on = spark.read.format("lance").load(path)
    off = spark.read.format("lance").option("estimate_filtered_rows", "false").load(path)
    assert leaf_stats(on) == leaf_stats(off) and leaf_stats(on)[1] == live
    rng = np.random.default_rng(SEED + 1)
    for _ in range(6):
        day = datetime.date(1992, 1, 1) + datetime.timedelta(days=int(rng.integers(0, 7 * 365)))
        mode = ("MAIL", "SHIP", "AIR", "NONE")[int(rng.integers(0, 4))]
        where = f"l_receiptdate < date '{day}' AND l_shipmode = '{mode}'"
        kept = ds.count_rows(where)
        _, rows = leaf_stats(on.where(where))
        assert kept <= rows <= kept + live * 0.05, (where, kept, rows)
        assert leaf_stats(off.where(where))[1] == live


def test_a_bad_estimate_filtered_rows_value_is_an_error_naming_the_option(spark, tables):
    import sparklance

    with lance_raises(sparklance.InvalidArgumentError) as e:
        spark.read.format("lance").option("estimate_filtered_rows", "maybe").load(tables["orders"][0]).collect()
    assert "Option estimate_filtered_rows must be true or false, not 'maybe'" in str(e.value)


def test_a_catalog_turns_the_estimate_off_and_a_read_option_wins(spark, tables, tmp_path):
    """`spark.sql.catalog.<name>.estimate_filtered_rows = false`: the catalog's tables report every row they read;
    the read option, where given, wins over the catalog's setting."""
    import shutil

    root = tmp_path / "wh"
    (root / "db").mkdir(parents=True)
    shutil.copytree(tables["lineitem"][0], root / "db" / "lineitem.lance")
    on = new_catalog(spark, "est_on", warehouse=str(root))
    off = new_catalog(spark, "est_off", warehouse=str(root), estimate_filtered_rows="false")
    where = "l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= date '1994-01-01' AND l_receiptdate < date '1995-01-01'"

    def rows(df):
        spark.conf.set("spark.sql.cbo.enabled", "true")
        try:
            leaf = df._jdf.queryExecution().optimizedPlan().collectLeaves().head()
            return int(str(leaf.stats().rowCount().get()))
        finally:
            spark.conf.unset("spark.sql.cbo.enabled")

    live = lance.dataset(str(root / "db" / "lineitem.lance")).count_rows()
    assert rows(spark.table(f"{on}.db.lineitem").where(where)) < live // 4
    assert rows(spark.table(f"{off}.db.lineitem").where(where)) == live
    assert rows(spark.read.option("estimate_filtered_rows", "true").table(f"{off}.db.lineitem").where(where)) < live // 4
    bad = new_catalog(spark, "est_bad", warehouse=str(root), estimate_filtered_rows="often")
    with pytest.raises(Exception, match=rf"Option spark.sql.catalog.{bad}.estimate_filtered_rows must be true or false, not 'often'"):
        spark.sql(f"SHOW NAMESPACES IN {bad}").collect()
