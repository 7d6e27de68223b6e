"""Structured Streaming into Lance tables (``writeStream.format("lance")`` and ``toTable``), exactly once across
restarts. A query's batches are committed one version each, recording the query and batch ids in the transaction
(pylance reads them back); a batch Spark runs again after a restart (its checkpoint lost the commit) is not committed
again. Checked on seeded random runs against the source rows, with pylance reading the table and validate() passing.

``SPARKLANCE_FUZZ_SEED`` draws the runs; ``SPARKLANCE_FUZZ_N`` is how many.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "2"))

T0 = int(time.time())
SCHEMA = "id BIGINT, name STRING, score DOUBLE, tags ARRAY<STRING>"


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "streaming_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-streaming-tests", wh)
    yield session
    session.stop()


class Source:
    """A directory of Parquet files a file stream reads, one file per batch; `rows` is every row written to it."""

    def __init__(self, path: Path, r: random.Random):
        self.path, self.r, self.rows, self.files, self.sizes = path, r, [], 0, []
        path.mkdir(parents=True)

    def add(self, files: int) -> None:
        for _ in range(files):
            n = self.r.choice([0, self.r.randint(1, 40)])
            self.sizes.append(n)
            start = len(self.rows)
            rows = [(start + i, self.r.choice([None, f"n{self.r.randint(0, 9)}", "é"]),
                     self.r.choice([None, self.r.uniform(-1, 1)]),
                     self.r.choice([None, [], [f"t{self.r.randint(0, 3)}"], ["a", None]])) for i in range(n)]
            self.rows += rows
            table = pa.table({"id": pa.array([x[0] for x in rows], pa.int64()),
                              "name": pa.array([x[1] for x in rows], pa.string()),
                              "score": pa.array([x[2] for x in rows], pa.float64()),
                              "tags": pa.array([x[3] for x in rows], pa.list_(pa.string()))})
            f = self.path / f"part-{self.files:05d}.parquet"
            pq.write_table(table, f)
            # The file source orders files by modification time: one second apart, so batch i reads file i.
            os.utime(f, (T0 + self.files, T0 + self.files))
            self.files += 1


def run(spark, source: Path, checkpoint: Path, sink=None, table=None, fmt_options=None):
    """Runs the stream over every file there is now (one per batch), then stops."""
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source))
    w = stream.writeStream.format("lance").option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
    for k, v in (fmt_options or {}).items():
        w = w.option(k, v)
    q = w.toTable(table) if table else w.start(sink)
    q.awaitTermination()
    assert q.exception() is None


def forget_last_commit(checkpoint: Path) -> bool:
    """Removes the query's record of its last committed batch, as a crash after the table's commit leaves it."""
    commits = sorted((p for p in (checkpoint / "commits").iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    if not commits:
        return False
    commits[-1].unlink()
    crc = commits[-1].parent / f".{commits[-1].name}.crc"
    if crc.exists():
        crc.unlink()
    return True


def rows_of(path: str):
    t = lance.dataset(path).to_table()
    return Counter(zip(t["id"].to_pylist(), t["name"].to_pylist(), t["score"].to_pylist(),
                       [tuple(x) if x is not None else None for x in t["tags"].to_pylist()]))


def expected(rows):
    return Counter((a, b, c, tuple(d) if d is not None else None) for a, b, c, d in rows)


def query_batches(path: str):
    """(query id, batch id) of every version, oldest first, from pylance's reading of the transactions."""
    out = []
    for t in reversed(lance.dataset(path).get_transactions()):  # pylance lists the newest first
        p = t.transaction_properties or {} if t is not None else {}
        if "spark.sql.streaming.queryId" in p:
            # Also under the other Lance connector's names.
            assert (p["lance.streaming.queryId"], p["lance.streaming.epochId"]) == \
                (p["spark.sql.streaming.queryId"], p["spark.sql.streaming.epochId"])
            out.append((p["spark.sql.streaming.queryId"], int(p["spark.sql.streaming.epochId"])))
    return out


@pytest.mark.parametrize("case", range(N))
def test_random_restarts_commit_every_batch_once(spark, tmp_path, case):
    r = random.Random(SEED * 1000 + case)
    source, checkpoint, sink = Source(tmp_path / "src", r), tmp_path / "ckpt", str(tmp_path / "t.lance")
    forgotten = 0
    for _ in range(r.randint(2, 4)):
        source.add(r.randint(1, 3))
        run(spark, source.path, checkpoint, sink)
        if r.random() < 0.6:
            forgotten += forget_last_commit(checkpoint)
    run(spark, source.path, checkpoint, sink)
    assert rows_of(sink) == expected(source.rows), f"seed {SEED} case {case}, {forgotten} commits forgotten"
    lance.dataset(sink).validate()
    batches = query_batches(sink)
    # One version per batch with rows (the table is created by batch 0), none for a batch run again.
    with_rows = [0] + [i for i in range(1, source.files) if source.sizes[i]]
    assert [b for _, b in batches] == with_rows, batches
    assert len({q for q, _ in batches}) == 1
    assert lance.dataset(sink).version == len(with_rows)
    assert spark.read.format("lance").load(sink).count() == len(source.rows)


def test_to_table_creates_and_appends(spark, tmp_path, wh):
    r = random.Random(SEED)
    source = Source(tmp_path / "src", r)
    source.add(2)
    run(spark, source.path, tmp_path / "ckpt", table="lance.db.streamed")
    source.add(1)
    run(spark, source.path, tmp_path / "ckpt", table="lance.db.streamed")
    assert forget_last_commit(tmp_path / "ckpt")
    run(spark, source.path, tmp_path / "ckpt", table="lance.db.streamed")
    got = Counter(tuple(tuple(v) if isinstance(v, list) else v for v in row)
                  for row in spark.table("lance.db.streamed").collect())
    assert got == expected(source.rows)
    path = str(wh / "db" / "streamed.lance")
    lance.dataset(path).validate()
    # The catalog created the table: a batch without rows commits nothing.
    assert [b for _, b in query_batches(path)] == [i for i in range(3) if source.sizes[i]]


def test_two_queries_into_one_table_keep_their_own_batches(spark, tmp_path):
    r = random.Random(SEED + 1)
    sink = str(tmp_path / "t.lance")
    a, b = Source(tmp_path / "a", r), Source(tmp_path / "b", r)
    a.add(2)
    b.add(1)
    run(spark, a.path, tmp_path / "ca", sink)
    run(spark, b.path, tmp_path / "cb", sink)
    assert forget_last_commit(tmp_path / "ca")
    run(spark, a.path, tmp_path / "ca", sink)  # batch 1 of query a is not the table's latest version any more
    assert rows_of(sink) == expected(a.rows) + expected(b.rows)
    # Query a's first batch created the table; b's batches found it there.
    assert len(query_batches(sink)) == 1 + bool(a.sizes[1]) + bool(b.sizes[0])


def test_streaming_query_id_option_names_the_batches_across_checkpoints(spark, tmp_path):
    """The other connector's `streamingQueryId`: a new checkpoint with the same id does not commit its batches again."""
    r = random.Random(SEED + 5)
    sink = str(tmp_path / "t.lance")
    source = Source(tmp_path / "src", r)
    source.add(2)
    run(spark, source.path, tmp_path / "c1", sink, fmt_options={"streamingQueryId": "events-1"})
    run(spark, source.path, tmp_path / "c2", sink, fmt_options={"streamingQueryId": "events-1"})
    assert rows_of(sink) == expected(source.rows)
    assert {q for q, _ in query_batches(sink)} == {"events-1"}
    run(spark, source.path, tmp_path / "c3", sink, fmt_options={"streamingQueryId": "events-2"})
    assert rows_of(sink) == expected(source.rows) + expected(source.rows)


def test_batches_the_other_connector_recorded_are_found(spark, tmp_path):
    """A version pylance commits with the other connector's properties counts as that query's batch."""
    sink = str(tmp_path / "t.lance")
    source = Source(tmp_path / "src", random.Random(SEED + 6))
    source.add(3)
    empty = pa.table({"id": pa.array([], pa.int64()), "name": pa.array([], pa.string()),
                      "score": pa.array([], pa.float64()), "tags": pa.array([], pa.list_(pa.string()))})
    lance.write_dataset(empty, sink, transaction_properties={"lance.streaming.queryId": "moved",
                                                            "lance.streaming.epochId": "1"})
    run(spark, source.path, tmp_path / "c", sink, fmt_options={"streamingQueryId": "moved"})
    # Batches 0 and 1 were committed by the other connector (as far as the table says): only batch 2's rows come.
    assert sum(rows_of(sink).values()) == source.sizes[2]


def count_names(spark, source: Source, sink: str, checkpoint: Path, mode: str) -> None:
    """Streams the rows per name of `source`, one file per batch, into `sink` in output mode `mode`."""
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(source.path))
    q = (stream.groupBy("name").count().writeStream.format("lance").outputMode(mode)
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start(sink))
    q.awaitTermination()


def test_update_mode_appends_the_updated_rows(spark, tmp_path):
    r = random.Random(SEED + 7)
    source, sink = Source(tmp_path / "src", r), str(tmp_path / "agg.lance")
    source.add(2)
    count_names(spark, source, sink, tmp_path / "ckpt", "update")
    first = Counter(x[1] for x in source.rows[:source.sizes[0]])
    second = Counter(x[1] for x in source.rows[source.sizes[0]:])
    total = first + second
    # Each batch appends the groups it changed, with their counts so far.
    want = Counter(first.items()) + Counter((k, total[k]) for k in second)
    t = lance.dataset(sink).to_table()
    assert Counter(zip(t["name"].to_pylist(), t["count"].to_pylist())) == want


def test_complete_mode_replaces_the_rows_each_batch(spark, tmp_path):
    r = random.Random(SEED + 2)
    source, sink = Source(tmp_path / "src", r), str(tmp_path / "agg.lance")
    source.add(3)
    count_names(spark, source, sink, tmp_path / "ckpt", "complete")
    counts = Counter(x[1] for x in source.rows)
    t = lance.dataset(sink).to_table()
    assert dict(zip(t["name"].to_pylist(), t["count"].to_pylist())) == dict(counts)
    lance.dataset(sink).validate()


REFUSED = "the stream's columns .* are not the table's"


# Spark 4 asks the sink's table for the stream's schema first, which names the first difference; Spark 3 does not, and
# the sink refuses the stream.
@pytest.mark.parametrize("table_columns, message", [
    ({"id": pa.int64(), "other": pa.string()}, "column 'name' is not in the table.*select and cast them before writeStream"),
    # The table's columns and more, or in another order: the sink refuses.
    ({"id": pa.int64(), "name": pa.string(), "score": pa.float64(), "tags": pa.list_(pa.string()),
      "extra": pa.int32()}, REFUSED),
    ({"name": pa.string(), "id": pa.int64(), "score": pa.float64(), "tags": pa.list_(pa.string())}, REFUSED),
    ({"id": pa.int32(), "name": pa.string(), "score": pa.float64(), "tags": pa.list_(pa.string())},
     "column 'id' is INT in the table but BIGINT"),
])
def test_stream_whose_columns_are_not_the_tables_is_refused(spark, tmp_path, table_columns, message):
    sink = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({k: pa.array([None], t) for k, t in table_columns.items()}), sink)
    source = Source(tmp_path / "src", random.Random(SEED))
    source.add(1)
    stream = spark.readStream.schema(SCHEMA).parquet(str(source.path))
    with pytest.raises(Exception, match=f"{message}|{REFUSED}"):
        q = stream.writeStream.format("lance").option("checkpointLocation", str(tmp_path / "ckpt")) \
            .trigger(availableNow=True).start(sink)
        q.awaitTermination()
    assert lance.dataset(sink).version == 1


def test_unknown_option_is_refused(spark, tmp_path):
    source = Source(tmp_path / "src", random.Random(SEED))
    source.add(1)
    stream = spark.readStream.schema(SCHEMA).parquet(str(source.path))
    with pytest.raises(Exception, match="Unknown option max_rows_per_flie"):
        q = stream.writeStream.format("lance").option("checkpointLocation", str(tmp_path / "ckpt")) \
            .option("max_rows_per_flie", 10).trigger(availableNow=True).start(str(tmp_path / "t.lance"))
        q.awaitTermination()
    assert not (tmp_path / "t.lance").exists()


def test_a_stream_writes_a_branch(spark, tmp_path):
    sink = str(tmp_path / "t.lance")
    source = Source(tmp_path / "src", random.Random(SEED + 8))
    source.add(1)
    run(spark, source.path, tmp_path / "c", sink)  # main: batch 0
    lance.dataset(sink).create_branch("dev")
    source.add(2)
    run(spark, source.path, tmp_path / "cdev", sink, fmt_options={"branch": "dev"})
    main = lance.dataset(sink)
    dev = main.checkout_version(("dev", None))
    assert rows_of(sink) == expected(source.rows[:source.sizes[0]])
    t = dev.to_table()
    got = Counter(zip(t["id"].to_pylist(), t["name"].to_pylist(), t["score"].to_pylist(),
                      [tuple(x) if x is not None else None for x in t["tags"].to_pylist()]))
    assert got == expected(source.rows[:source.sizes[0]]) + expected(source.rows)  # the branch's own query read all
    dev.validate()
    with pytest.raises(Exception, match="no table to stream into branch 'dev'"):
        run(spark, source.path, tmp_path / "cnew", str(tmp_path / "new.lance"), fmt_options={"branch": "dev"})
