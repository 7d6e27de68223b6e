"""Every option and table-function argument lance-spark's documentation names (``docs/src/options.md``,
``operations/dql/select.md``, ``operations/dml/insert-into.md``, ``operations/ddl/optimize.md``,
``operations/dql/vector-search.md``, ``operations/dql/search.md``, the vector options of earlier versions of
``operations/ddl/create-index.md``, ``streaming.md``), one row each: sparklance honours it with the same meaning
(the result checked against pylance on the same table), accepts it as a tuning knob that cannot change what is
read or written (the result checked all the same), or refuses it with an error naming it. The inventory, with
the statements the pages' examples run (``test_lance_spark_docs.py``), is the table of docs/comparison.md.

``SPARKLANCE_FUZZ_SEED`` draws the tables.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
DIM = 8

HONOURED, NO_EFFECT, REFUSED = "honoured", "no effect", "refused"


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "lance_spark_options", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-lance-spark-options", wh)
    yield session
    session.stop()


def seeded_table(rng: np.random.Generator, rows: int) -> pa.Table:
    vectors = rng.standard_normal((rows, DIM)).astype(np.float32)
    return pa.table({
        "id": pa.array(np.arange(rows), pa.int64()),
        "x": pa.array(rng.integers(-1000, 1000, rows), pa.int64()),
        "s": pa.array([f"w{int(v)}" for v in rng.integers(0, 50, rows)]),
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM),
    })


@pytest.fixture(scope="module")
def versions(wh):
    """A pylance table of three versions (two appends, then a delete), several fragments: (path, dataset)."""
    rng = np.random.default_rng(SEED)
    path = str(wh / "db" / "items.lance")
    first = seeded_table(rng, 200 + int(rng.integers(0, 100)))
    lance.write_dataset(first, path, max_rows_per_file=64)
    more = seeded_table(rng, 100).set_column(0, "id", pa.array(np.arange(1000, 1100), pa.int64()))
    lance.write_dataset(more, path, mode="append", max_rows_per_file=64)
    ds = lance.dataset(path)
    ds.delete(f"x < {int(rng.integers(-900, -500))}")
    return path, lance.dataset(path)


def rows(df, cols=("id", "x", "s")) -> list:
    return sorted(tuple(r[c] for c in cols) for r in df.select(*cols).collect())


def pylance_rows(ds, cols=("id", "x", "s")) -> list:
    t = ds.to_table(columns=list(cols))
    return sorted(zip(*(t.column(c).to_pylist() for c in cols)))


# --------------------------------------------------------------------------------------------------- read options

READ_OPTIONS = [
    # (page, option, value, status)
    ("options.md", "batch_size", "1024", HONOURED),
    ("options.md", "batch_size", "7", HONOURED),
    ("options.md", "version", "1", HONOURED),
    ("options.md", "version", "2", HONOURED),
    ("options.md", "block_size", "65536", NO_EFFECT),
    ("options.md", "index_cache_size", "10", NO_EFFECT),
    ("options.md", "metadata_cache_size", "10", NO_EFFECT),
    ("options.md", "pushDownFilters", "false", HONOURED),
    ("options.md", "topN_push_down", "false", HONOURED),
    ("vector-search.md (removed there)", "nearest", '{"column": "embedding", "q": [1], "k": 1}', REFUSED),
]


@pytest.mark.parametrize("page, option, value, status", READ_OPTIONS, ids=[f"{r[1]}={r[2]}" for r in READ_OPTIONS])
def test_read_option(spark, versions, page, option, value, status):
    path, ds = versions
    reader = spark.read.format("lance").option(option, value)
    if status == REFUSED:
        with lance_raises(sparklance.UnsupportedFeatureError) as e:
            reader.load(path).collect()
        assert f"Option {option}" in str(e.value) and "VECTOR_SEARCH" in str(e.value)
        return
    df = reader.load(path)
    expected = lance.dataset(path, version=int(value)) if option == "version" else ds
    assert rows(df) == pylance_rows(expected)
    # A filter and an ORDER BY ... LIMIT give pylance's rows with the option too (pushed down or not).
    assert rows(df.where("x > 0")) == pylance_rows_filtered(expected, "x > 0")
    top = [r.id for r in df.orderBy("x", "id").limit(5).collect()]
    t = expected.to_table(columns=["id", "x"]).sort_by([("x", "ascending"), ("id", "ascending")])
    assert top == t.column("id").to_pylist()[:5]
    if option == "pushDownFilters":
        plan = df.where("x > 0")._jdf.queryExecution().executedPlan().toString()
        assert "batches where" not in plan


def pylance_rows_filtered(ds, condition: str) -> list:
    t = ds.to_table(columns=["id", "x", "s"], filter=condition)
    return sorted(zip(t.column("id").to_pylist(), t.column("x").to_pylist(), t.column("s").to_pylist()))


# -------------------------------------------------------------------------------------------------- write options

WRITE_OPTIONS = [
    # (page, options, status, what the error names)
    ("options.md", {"write_mode": "append"}, HONOURED, None),
    ("options.md", {"write_mode": "overwrite"}, HONOURED, None),
    ("options.md", {"max_row_per_file": "37"}, HONOURED, None),
    ("options.md", {"max_rows_per_group": "10000"}, NO_EFFECT, None),
    ("options.md", {"max_row_per_file": "100000", "max_rows_per_group": "10000"}, HONOURED, None),
    ("options.md", {"max_bytes_per_file": "1000000"}, REFUSED, "max_bytes_per_file"),
    ("options.md", {"data_storage_version": "STABLE"}, HONOURED, None),
    ("options.md", {"data_storage_version": "LEGACY"}, REFUSED, "legacy Lance file format"),
    ("insert-into.md", {"batch_size": "13"}, HONOURED, None),
    ("insert-into.md", {"use_queued_write_buffer": "true", "queue_depth": "4"}, NO_EFFECT, None),
    ("streaming.md", {"streamingQueryId": "q1"}, REFUSED, "streamingQueryId"),
]


@pytest.mark.parametrize("page, options, status, names", WRITE_OPTIONS,
                         ids=[",".join(f"{k}={v}" for k, v in r[1].items()) for r in WRITE_OPTIONS])
def test_write_option(spark, tmp_path, page, options, status, names):
    rng = np.random.default_rng(SEED + len(str(options)))
    data = seeded_table(rng, 150 + int(rng.integers(0, 100))).drop_columns(["embedding"])
    df = spark.createDataFrame(list(zip(*(data.column(c).to_pylist() for c in ("id", "x", "s")))),
                               "id BIGINT, x BIGINT, s STRING").coalesce(1)
    out = str(tmp_path / "out.lance")
    writer = df.write.format("lance")
    for k, v in options.items():
        writer = writer.option(k, v)
    if status == REFUSED:
        with lance_raises(sparklance.UnsupportedFeatureError) as e:
            writer.save(out)
        assert names.lower() in str(e.value).lower()
        assert not Path(out).exists()
        return
    if options.get("write_mode") == "overwrite":
        lance.write_dataset(data.slice(0, 5), out)
    writer.save(out)
    ds = lance.dataset(out)
    ds.validate()
    assert pylance_rows(ds) == sorted(zip(*(data.column(c).to_pylist() for c in ("id", "x", "s"))))
    sizes = [f.count_rows() for f in ds.get_fragments()]
    per_file = int(options.get("max_row_per_file", 1 << 20))
    assert sizes == [min(per_file, data.num_rows - i) for i in range(0, data.num_rows, per_file)]
    if "data_storage_version" in options:
        # pylance 14 writes "stable" as file version 2.2.
        assert ds.data_storage_version == "2.2"


# ------------------------------------------------------------------------------------------------ OPTIMIZE options

# Lance's planner cuts a run of small fragments into bins of at least target_rows_per_fragment rows (a bin takes
# fragments until it holds that many, and keeps the rest when what is left would hold fewer), and pylance 14 writes
# a bin as one fragment however many rows it holds (147 and 157 rows for a target of 100 here); sparklance closes a
# group before it would pass the target and writes fragments of at most the target. The rows are the same; the
# fragments differ when the target is below the runs' sizes. Known, not yet matched: these rows are strict xfails.
LAYOUT = pytest.mark.xfail(strict=True, reason="fragment layout for a target below the runs' sizes differs from "
                                              "pylance 14's compact_files (docs/comparison.md)")

OPTIMIZE_OPTIONS = [
    # (option clause, pylance's compact_files arguments or None when refused)
    ("target_rows_per_fragment = 1000000", {"target_rows_per_fragment": 1000000}),
    pytest.param("target_rows_per_fragment = 100", {"target_rows_per_fragment": 100}, marks=LAYOUT),
    pytest.param("target_rows_per_fragment = 60", {"target_rows_per_fragment": 60}, marks=LAYOUT),
    ("target_rows_per_fragment = 60, materialize_deletions = false",
     {"target_rows_per_fragment": 60, "materialize_deletions": False}),
    pytest.param("target_rows_per_fragment = 60, materialize_deletions_threshold = 0.05",
                 {"target_rows_per_fragment": 60, "materialize_deletions_threshold": 0.05}, marks=LAYOUT),
    ("target_rows_per_fragment = 60, materialize_deletions_threshold = 0.9",
     {"target_rows_per_fragment": 60, "materialize_deletions_threshold": 0.9}),
    ("materialize_deletions = false", {"materialize_deletions": False}),
    ("batch_size = 50", {"batch_size": 50}),
    pytest.param("batch_size = 50, target_rows_per_fragment = 120", {"batch_size": 50, "target_rows_per_fragment": 120},
                 marks=LAYOUT),
    ("num_threads = 4", {"num_threads": 4}),
    ("max_rows_per_group = 10000", {"max_rows_per_group": 10000}),
    ("defer_index_remap = false", {}),
    ("max_bytes_per_file = 100000", None),
]


@pytest.mark.parametrize("clause, theirs", OPTIMIZE_OPTIONS)
def test_optimize_option(spark, wh, versions, clause, theirs):
    """OPTIMIZE ... WITH (clause) on a copy of the table leaves the fragments pylance's compact_files leaves on
    another copy, and the same rows."""
    path, _ = versions
    ours, peer = wh / "db" / "opt_ours.lance", wh / "db" / "opt_peer.lance"
    for p in (ours, peer):
        shutil.rmtree(p, ignore_errors=True)
        shutil.copytree(path, p)
    statement = f"OPTIMIZE lance.db.opt_ours WITH ({clause})"
    if theirs is None:
        with lance_raises(sparklance.UnsupportedFeatureError) as e:
            spark.sql(statement).collect()
        assert clause.split(" =")[0] in str(e.value)
        return
    spark.sql(statement).collect()
    lance.dataset(str(peer)).optimize.compact_files(**theirs)
    a, b = lance.dataset(str(ours)), lance.dataset(str(peer))
    a.validate()
    def shape(ds):
        return sorted((f.count_rows(), f.metadata.physical_rows, f.metadata.deletion_file is None)
                      for f in ds.get_fragments())
    assert shape(a) == shape(b)
    assert pylance_rows(a) == pylance_rows(b)


# --------------------------------------------------------------------------------------- VECTOR_SEARCH arguments

def nearest_ids(ds, q, k, metric="l2") -> list:
    t = ds.to_table(nearest={"column": "embedding", "q": q, "k": k, "metric": metric, "use_index": False},
                    columns=["id"])
    return t.column("id").to_pylist()


@pytest.mark.skipif(SPARK_LINE < (3, 5), reason="named arguments need Spark 3.5")
@pytest.mark.parametrize("count", ["num_results", "limit", "k"])
def test_vector_search_result_count_names(spark, versions, count):
    """vector-search.md: `num_results`, `limit` or `k` is the number of results."""
    path, ds = versions
    rng = np.random.default_rng(SEED + 1)
    for _ in range(3):
        q = rng.standard_normal(DIM).astype(np.float32)
        k = 1 + int(rng.integers(0, 12))
        metric = ["l2", "cosine", "dot"][int(rng.integers(0, 3))]
        got = spark.sql(f"SELECT id FROM VECTOR_SEARCH(table => 'lance.db.items', query_vector => array("
                        f"{', '.join(repr(float(v)) for v in q)}), vector_column => 'embedding', {count} => {k}, "
                        f"distance_type => '{metric}', columns => array('id')) ORDER BY _distance, id").collect()
        assert [r.id for r in got] == nearest_ids(ds, q, k, metric)


@pytest.mark.skipif(SPARK_LINE < (3, 5), reason="named arguments need Spark 3.5")
def test_vector_search_fast_search(spark, versions):
    """vector-search.md's `fast_search`: false is what sparklance does (every fragment searched); true is refused."""
    _, ds = versions
    q = "array(" + ", ".join(["0.5"] * DIM) + ")"
    call = f"VECTOR_SEARCH(table => 'lance.db.items', query_vector => {q}, vector_column => 'embedding', k => 4, " \
           "columns => array('id'), fast_search => {})"
    got = spark.sql(f"SELECT id FROM {call.format('false')} ORDER BY _distance, id").collect()
    assert [r.id for r in got] == nearest_ids(ds, np.full(DIM, 0.5, np.float32), 4)
    with lance_raises(sparklance.UnsupportedFeatureError) as e:
        spark.sql(f"SELECT * FROM {call.format('true')}").collect()
    assert "fast_search => true" in str(e.value) and "not supported" in str(e.value)
    with lance_raises(sparklance.InvalidArgumentError, match="argument 'num_results' is given 2 times"):
        spark.sql(f"SELECT * FROM VECTOR_SEARCH(table => 'lance.db.items', query_vector => {q}, "
                  "vector_column => 'embedding', k => 4, limit => 3)").collect()


# ------------------------------------------------------------------------ CREATE INDEX: the earlier camel-case names

@pytest.mark.parametrize("kind, clause, expected", [
    ("ivf_pq", "numPartitions = 2, numSubVectors = 2, numBits = 8, sampleRate = 256, maxIters = 50, "
               "distanceType = 'cosine'",
     {"index_type": "IVF_PQ", "metric_type": "cosine", "num_partitions": 2, "num_sub_vectors": 2, "nbits": 8}),
    ("ivf_flat", "numPartitions = 3, maxIters = 20, distanceType = 'dot'",
     {"index_type": "IVF_FLAT", "metric_type": "dot", "num_partitions": 3}),
    ("ivf_sq", "numPartitions = 2, numBits = 8, sampleRate = 256, maxIters = 50, distanceType = 'L2'",
     {"index_type": "IVF_SQ", "metric_type": "l2", "num_partitions": 2}),
])
def test_create_index_camel_case_vector_options(spark, wh, versions, kind, clause, expected):
    """create-index.md (earlier versions) names the vector options numPartitions, maxIters, distanceType, numBits,
    sampleRate and numSubVectors: they are pylance's num_partitions, ... and build the index pylance describes so."""
    path, _ = versions
    copy = wh / "db" / f"camel_{kind}.lance"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    spark.sql(f"ALTER TABLE lance.db.camel_{kind} CREATE INDEX vec_idx USING {kind} (embedding) WITH ({clause})").collect()
    ds = lance.dataset(str(copy))
    ds.validate()
    stats = ds.stats.index_stats("vec_idx")
    seg = stats["indices"][0]
    got = {"index_type": stats["index_type"], "metric_type": seg["metric_type"], "num_partitions": seg["num_partitions"]}
    if "num_sub_vectors" in expected:
        got.update(num_sub_vectors=seg["sub_index"]["num_sub_vectors"], nbits=seg["sub_index"]["nbits"])
    assert got == expected
    with lance_raises(sparklance.InvalidArgumentError) as e:
        spark.sql(f"ALTER TABLE lance.db.camel_{kind} CREATE INDEX vec_idx2 USING {kind} (embedding) "
                  "WITH (numPartitions = 2, num_partitions = 3)").collect()
    assert "numpartitions is another name for num_partitions, and both are given" in str(e.value)


# ------------------------------------------------------------------------------------- CREATE INDEX: B-tree builds

@pytest.mark.parametrize("clause", ["build_mode = 'fragment'", "build_mode = 'range', rows_per_range = 1000",
                                    "rows_per_range = 50, zone_size = 64"])
def test_create_index_btree_build_options(spark, wh, versions, clause):
    """create-index.md's `build_mode` and `rows_per_range` choose how lance-spark splits a B-tree build; the index
    is one B-tree either way: accepted, and the index answers as pylance's B-tree on a copy does."""
    path, _ = versions
    copy = wh / "db" / "btree_modes.lance"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    spark.sql(f"ALTER TABLE lance.db.btree_modes CREATE INDEX x_idx USING btree (x) WITH ({clause})").collect()
    ds = lance.dataset(str(copy))
    ds.validate()
    assert ds.stats.index_stats("x_idx")["index_type"] == "BTree"
    rng = np.random.default_rng(SEED + 2)
    for _ in range(3):
        lo = int(rng.integers(-1000, 900))
        cond = f"x >= {lo} AND x < {lo + 100}"
        got = rows(spark.table("lance.db.btree_modes").where(cond))
        assert got == pylance_rows_filtered(ds, cond)
    with lance_raises(sparklance.InvalidArgumentError, match="option build_mode must be 'fragment' or 'range', not 'x'"):
        spark.sql("ALTER TABLE lance.db.btree_modes CREATE INDEX x2 USING btree (x) WITH (build_mode = 'x')").collect()
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown option"):
        spark.sql("ALTER TABLE lance.db.btree_modes CREATE INDEX x3 USING zonemap (x) WITH (build_mode = 'range')").collect()


def test_writeto_using_lance_with_a_table_property(spark, wh):
    """dataframe-write.md (a79269f): writeTo(...).using("lance").tableProperty("content.arrow.large_var_char",
    "true").createOrReplace() makes a table whose column is a large string, as pylance reads it."""
    rng = np.random.default_rng(SEED + 3)
    data = [(i, f"Article {i}", "x" * int(rng.integers(1, 5000))) for i in range(1 + int(rng.integers(1, 20)))]
    df = spark.createDataFrame(data, "id INT, title STRING, content STRING")
    df.writeTo("lance.db.articles_using").using("lance").tableProperty("content.arrow.large_var_char", "true") \
        .createOrReplace()
    ds = lance.dataset(str(wh / "db" / "articles_using.lance"))
    ds.validate()
    assert ds.schema.field("content").type == pa.large_string()
    assert sorted(zip(*(ds.to_table().column(c).to_pylist() for c in ("id", "title", "content")))) == sorted(data)
