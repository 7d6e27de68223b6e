"""Lance tables read as a stream (``spark.readStream.format("lance")``, ``readStream.table``): the table as of the
query's first batch, then the rows each later version appends, exactly once. Tables are written by pylance (appends,
compactions, indexes, deletes) on seeded random schedules, interleaved with runs of the query (``availableNow``)
into a Lance table through sparklance's streaming sink; the sink's rows are checked against a model of what was
appended, and pylance reads them back.

``SPARKLANCE_FUZZ_SEED`` draws the schedules; ``SPARKLANCE_FUZZ_N`` is how many.
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = [cross_version]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "2"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "streaming_read_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-streaming-read-tests", wh)
    yield session
    session.stop()


class Table:
    """A table pylance writes; `appended` is every row an append added, in order."""

    def __init__(self, path: str, r: random.Random):
        self.path, self.r, self.next_id, self.appended = path, r, 0, []
        self.version = r.choice(["2.0", "2.1", "2.2"])

    def append(self) -> None:
        n = self.r.randint(1, 30)
        rows = [(self.next_id + i, self.r.choice([None, "a", "bb", "é"]), self.r.choice([None, self.r.random()]))
                for i in range(n)]
        self.next_id += n
        self.appended += rows
        t = pa.table({"id": pa.array([x[0] for x in rows], pa.int64()), "s": pa.array([x[1] for x in rows], pa.string()),
                      "x": pa.array([x[2] for x in rows], pa.float64())})
        exists = os.path.exists(self.path)
        lance.write_dataset(t, self.path, mode="append" if exists else "create",
                            data_storage_version=None if exists else self.version, max_rows_per_file=self.r.randint(5, 40))

    def live(self) -> Counter:
        t = lance.dataset(self.path).to_table()
        return Counter(zip(t["id"].to_pylist(), t["s"].to_pylist(), t["x"].to_pylist()))


def run(spark, source: str, sink: str, checkpoint: Path, **options) -> None:
    reader = spark.readStream.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    q = (reader.load(source).writeStream.format("lance").option("checkpointLocation", str(checkpoint))
         .trigger(availableNow=True).start(sink))
    q.awaitTermination()


def rows_of(path: str) -> Counter:
    t = lance.dataset(path).to_table()
    return Counter(zip(t["id"].to_pylist(), t["s"].to_pylist(), t["x"].to_pylist()))


@pytest.mark.parametrize("case", range(N))
def test_random_schedules_read_the_start_then_every_append_once(spark, tmp_path, case):
    r = random.Random(SEED * 1000 + case)
    src = Table(str(tmp_path / "src.lance"), r)
    sink, ckpt = str(tmp_path / "sink.lance"), tmp_path / "ckpt"
    for _ in range(r.randint(1, 3)):
        src.append()
    expected = None
    for _ in range(r.randint(2, 4)):
        if expected is None:
            run(spark, src.path, sink, ckpt, skipChangeCommits="true")
            expected = src.live()  # the first batch reads the table as it is
            seen = len(src.appended)
        else:
            run(spark, src.path, sink, ckpt, skipChangeCommits="true")
            expected += Counter(src.appended[seen:])
            seen = len(src.appended)
        assert rows_of(sink) == expected, f"seed {SEED} case {case}"
        for _ in range(r.randint(0, 4)):
            op = r.choice(["append", "append", "compact", "index", "delete"])
            ds = lance.dataset(src.path)
            if op == "append":
                src.append()
            elif op == "compact":
                ds.optimize.compact_files(target_rows_per_fragment=r.randint(10, 80))
            elif op == "index":
                ds.create_scalar_index("id", r.choice(["BTREE", "BITMAP", "ZONEMAP"]), replace=True)
            else:
                ds.delete(f"id % {r.randint(2, 7)} = 0")
    run(spark, src.path, sink, ckpt, skipChangeCommits="true")
    expected += Counter(src.appended[seen:])
    assert rows_of(sink) == expected, f"seed {SEED} case {case}"
    lance.dataset(sink).validate()


def test_a_version_that_changes_rows_stops_the_stream_unless_skipped(spark, tmp_path):
    src = Table(str(tmp_path / "src.lance"), random.Random(SEED))
    src.append()
    sink, ckpt = str(tmp_path / "sink.lance"), tmp_path / "ckpt"
    run(spark, src.path, sink, ckpt)
    lance.dataset(src.path).delete("id = 0")
    with pytest.raises(Exception, match=r"Version 2 of .* changes existing rows \(Delete\).*skipChangeCommits"):
        run(spark, src.path, sink, ckpt)
    src.append()
    run(spark, src.path, sink, ckpt, skipChangeCommits="true")
    assert sum(rows_of(sink).values()) == len(src.appended)


def test_starting_version_reads_only_later_appends(spark, tmp_path, wh):
    r = random.Random(SEED + 3)
    src = Table(str(tmp_path / "src.lance"), r)
    for _ in range(3):
        src.append()
    first = len(src.appended)
    src.append()  # version 4
    # Version 1 created the table: from there, every row appended.
    run(spark, src.path, str(tmp_path / "from1.lance"), tmp_path / "c1", startingVersion="1")
    assert rows_of(str(tmp_path / "from1.lance")) == Counter(src.appended)
    run(spark, src.path, str(tmp_path / "from4.lance"), tmp_path / "c4", startingVersion="4")
    assert rows_of(str(tmp_path / "from4.lance")) == Counter(src.appended[first:])
    # A running query started at the latest version reads only what is appended while it runs.
    latest = str(tmp_path / "latest.lance")
    q = (spark.readStream.format("lance").option("startingVersion", "latest").load(src.path).writeStream
         .format("lance").option("checkpointLocation", str(tmp_path / "cl")).start(latest))
    try:
        q.processAllAvailable()
        before = len(src.appended)
        src.append()
        q.processAllAvailable()
    finally:
        q.stop()
    assert rows_of(latest) == Counter(src.appended[before:])


def test_a_catalog_table_is_read_as_a_stream(spark, tmp_path, wh):
    spark.sql("CREATE TABLE lance.db.events (id BIGINT, s STRING, x DOUBLE)")
    spark.sql("INSERT INTO lance.db.events VALUES (1, 'a', 0.5), (2, NULL, NULL)")
    ckpt = tmp_path / "ckpt"
    q = (spark.readStream.table("lance.db.events").writeStream.format("lance").option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start(str(tmp_path / "copy.lance")))
    q.awaitTermination()
    spark.sql("INSERT INTO lance.db.events VALUES (3, 'c', 1.5)")
    q = (spark.readStream.table("lance.db.events").writeStream.format("lance").option("checkpointLocation", str(ckpt))
         .trigger(availableNow=True).start(str(tmp_path / "copy.lance")))
    q.awaitTermination()
    assert rows_of(str(tmp_path / "copy.lance")) == Counter([(1, "a", 0.5), (2, None, None), (3, "c", 1.5)])


@pytest.mark.parametrize("version", ["2.1", "2.2"])
def test_blob_columns_stream_as_their_bytes(spark, tmp_path, version):
    """A blob column (blob v2 in 2.2) streams as its bytes, as a batch read shows it: seeded sizes around the inline
    (64 KiB) and shared-sidecar (4 MiB) limits and nulls, over appends; the sink's blobs are pylance's take_blobs of
    the source."""
    r = random.Random(SEED + 7)
    src, sink, ckpt = str(tmp_path / "src.lance"), str(tmp_path / "sink.lance"), tmp_path / "ckpt"
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})])
    want = {}

    def append(mode):
        ids = list(range(len(want), len(want) + r.randint(1, 4)))
        blobs = [None if r.random() < 0.2 else bytes([i % 251]) * r.choice([0, 1, 65535, 65537, 300000, 4194305])
                 for i in ids]
        want.update(zip(ids, blobs))
        lance.write_dataset(pa.table({"id": pa.array(ids, pa.int64()), "b": pa.array(blobs, pa.large_binary())},
                                     schema=schema), src, mode=mode, data_storage_version=version)

    append("create")
    for _ in range(2):
        run(spark, src, sink, ckpt)
        append("append")
    run(spark, src, sink, ckpt)
    ds = lance.dataset(sink)
    ids = ds.to_table(columns=["id"])["id"].to_pylist()
    got = dict(zip(ids, [None if b is None else b.readall() for b in ds.take_blobs("b", indices=list(range(len(ids))))]))
    assert got == want, f"seed {SEED}, file version {version}"
    ds.validate()


def test_stream_options_are_checked(spark, tmp_path):
    src = Table(str(tmp_path / "src.lance"), random.Random(SEED))
    src.append()
    with pytest.raises(Exception, match="Option startingVersion applies to a stream"):
        spark.read.format("lance").option("startingVersion", "1").load(src.path).collect()
    with pytest.raises(Exception, match="Option startingVersion applies to a stream"):
        spark.read.format("lance").option("startingVersion", "1").load(src.path).count()
    with pytest.raises(Exception, match="startingVersion must be a table version"):
        run(spark, src.path, str(tmp_path / "s.lance"), tmp_path / "c1", startingVersion="zero")
    with pytest.raises(Exception, match="Option version does not apply to a stream"):
        run(spark, src.path, str(tmp_path / "s.lance"), tmp_path / "c2", version="1")
    with pytest.raises(Exception, match="skipChangeCommits must be true or false"):
        run(spark, src.path, str(tmp_path / "s.lance"), tmp_path / "c3", skipChangeCommits="maybe")
