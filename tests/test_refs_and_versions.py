"""Versions as pylance 14 makes them: branches (`tree/<branch>/`), tags that point at a branch's version, detached
versions (numbered above 2^63), and time travel by timestamp in the forms Spark users write. Each is made by
pylance; Spark must read exactly the rows pylance reads for the same version, or refuse clearly."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402

pytestmark = cross_version


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "refs_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-refs-tests", wh, **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def ids(df) -> list:
    return sorted(r.id for r in df.collect())


def pylance_ids(ds) -> list:
    return sorted(ds.to_table(columns=["id"]).column("id").to_pylist())


@pytest.fixture(scope="module")
def branched(wh):
    """main: v1 [0, 1], v2 +[2], v3 +[100]; branch dev from v2: v3 +[10, 11, 12], v4 deletes 0; tags on both."""
    path = str(wh / "db" / "branched.lance")
    lance.write_dataset(pa.table({"id": pa.array([0, 1], pa.int64())}), path)
    ds = lance.write_dataset(pa.table({"id": pa.array([2], pa.int64())}), path, mode="append")
    dev = ds.create_branch("dev", 2)
    dev = lance.write_dataset(pa.table({"id": pa.array([10, 11, 12], pa.int64())}), dev.uri, mode="append")
    dev.delete("id = 0")
    lance.write_dataset(pa.table({"id": pa.array([100], pa.int64())}), path, mode="append")
    main = lance.dataset(path)
    main.tags.create("on_dev", ("dev", 3))
    main.tags.create("on_dev_latest", ("dev", 4))
    main.tags.create("on_main", 3)
    return path


def test_tag_on_a_branch_reads_the_branch_version(spark, branched):
    for tag in ["on_dev", "on_dev_latest", "on_main"]:
        want = pylance_ids(lance.dataset(branched, version=tag))
        assert ids(spark.read.format("lance").option("tag", tag).load(branched)) == want, tag
        assert ids(spark.sql(f"SELECT id FROM lance.db.branched VERSION AS OF '{tag}'")) == want, tag
    # The branch's version 3 is not main's version 3: the tag must not fall back to main.
    assert pylance_ids(lance.dataset(branched, version="on_dev")) != pylance_ids(lance.dataset(branched, version=3))


def test_branch_option_reads_the_branch(spark, branched):
    dev = lance.dataset(branched).checkout_version(("dev", 4))
    assert ids(spark.read.format("lance").option("branch", "dev").load(branched)) == pylance_ids(dev)
    dev3 = lance.dataset(branched).checkout_version(("dev", 3))
    assert ids(spark.read.format("lance").option("branch", "dev").option("version", 3).load(branched)) == \
        pylance_ids(dev3)
    assert ids(spark.read.format("lance").option("branch", "main").load(branched)) == \
        pylance_ids(lance.dataset(branched))


def test_missing_or_bad_branches_are_clear_errors(spark, branched):
    with lance_raises(sparklance.VersionNotFoundError, match="branch 'nope' does not exist"):
        spark.read.format("lance").option("branch", "nope").load(branched).collect()
    with lance_raises(sparklance.InvalidArgumentError, match="not a valid branch name"):
        spark.read.format("lance").option("branch", "../db").load(branched).collect()
    with lance_raises(sparklance.InvalidArgumentError, match="a tag names its branch"):
        spark.read.format("lance").option("branch", "dev").option("tag", "on_dev").load(branched).collect()


def test_detached_version(spark, wh):
    path = str(wh / "db" / "detached.lance")
    lance.write_dataset(pa.table({"id": pa.array([1, 2], pa.int64())}), path)
    frag = lance.fragment.LanceFragment.create(path, pa.table({"id": pa.array([7, 8, 9], pa.int64())}))
    detached = lance.LanceDataset.commit(path, lance.LanceOperation.Append([frag]), read_version=1, detached=True)
    assert detached.version >= 2 ** 63
    want = pylance_ids(lance.dataset(path, version=detached.version))
    assert want == [1, 2, 7, 8, 9]
    got = spark.read.format("lance").option("version", str(detached.version)).load(path)
    assert ids(got) == want
    assert ids(spark.sql(f"SELECT id FROM lance.db.detached VERSION AS OF {detached.version}")) == want
    # The latest version is still main's: a detached version is in no listing.
    assert ids(spark.read.format("lance").load(path)) == [1, 2]
    with lance_raises(sparklance.VersionNotFoundError, match="detached version"):
        spark.read.format("lance").option("version", str(detached.version + 1)).load(path).collect()


def test_timestamp_as_of_forms(spark, wh):
    path = str(wh / "db" / "stamped.lance")
    lance.write_dataset(pa.table({"id": pa.array([1], pa.int64())}), path)
    time.sleep(1.1)
    between = time.time()
    time.sleep(1.1)
    lance.write_dataset(pa.table({"id": pa.array([2], pa.int64())}), path, mode="append")
    micros = int(between * 1_000_000)
    assert ids(spark.sql(f"SELECT id FROM lance.db.stamped TIMESTAMP AS OF timestamp_micros({micros})")) == [1]
    # A bare number is seconds to Spark; epoch microseconds overflow that: a clear error, not an overflow.
    with lance_raises(sparklance.InvalidArgumentError, match="timestamp_micros"):
        spark.sql("SELECT id FROM lance.db.stamped TIMESTAMP AS OF 1705314600000000").collect()
    # Seconds since the epoch work as Spark reads them.
    assert ids(spark.sql(f"SELECT id FROM lance.db.stamped TIMESTAMP AS OF {int(between)}")) == [1]
    assert ids(spark.sql("SELECT id FROM lance.db.stamped")) == [1, 2]
