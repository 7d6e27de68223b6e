"""sparklance's SQL extensions: OPTIMIZE, VACUUM, DESCRIBE HISTORY, tags and RESTORE on tables of the lance catalog,
checked with pylance. (The same operations are tested in depth through the API in test_table_ops.py.)"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, start_spark, warehouse_with  # noqa: E402

pytestmark = cross_version


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "maint_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-maintenance-tests", wh)
    yield session
    session.stop()


def test_maintenance_statements(spark, wh):
    path = str(wh / "db" / "m.lance")
    for i in range(4):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64())}), path,
                            mode="append" if i else "create")
    spark.sql("DELETE FROM lance.db.m WHERE id % 2 = 0")                       # v5
    spark.sql("ALTER TABLE lance.db.m CREATE TAG before_optimize")            # tags v5
    spark.sql("ALTER TABLE lance.db.m CREATE TAG first AS OF VERSION 1")
    assert lance.dataset(path).tags.list()["before_optimize"]["version"] == 5
    assert [(r.name, r.version) for r in spark.sql("SHOW TAGS lance.db.m").collect()] == [("before_optimize", 5), ("first", 1)]

    r = spark.sql("OPTIMIZE lance.db.m WITH (target_rows_per_fragment = 1000)").collect()[0]
    # lance-spark's columns (pylance's CompactionMetrics: the deletion files count as removed files), then ours.
    assert tuple(r) == (4, 1, 4 + 4, 1, 6)
    assert (r.version, r.fragments_removed, r.fragments_added) == (6, 4, 1)
    ds = lance.dataset(path)
    ds.validate()
    assert len(ds.get_fragments()) == 1 and sorted(ds.to_table().column("id").to_pylist()) == list(range(1, 40, 2))

    history = spark.sql("DESCRIBE HISTORY lance.db.m").collect()
    assert [(h.version, h.operation) for h in history][-3:] == [(4, "Append"), (5, "Delete"), (6, "Rewrite")]

    r = spark.sql("RESTORE TABLE lance.db.m TO VERSION AS OF 'first'").collect()[0]
    assert r.version == 7 and lance.dataset(path).count_rows() == 10
    spark.sql("RESTORE TABLE lance.db.m TO VERSION AS OF 6")
    assert lance.dataset(path).count_rows() == 20

    time.sleep(0.05)
    [dry] = spark.sql("VACUUM lance.db.m RETAIN 0 HOURS DRY RUN").collect()
    assert lance.dataset(path).versions()[0]["version"] == 1
    [done] = spark.sql("VACUUM lance.db.m RETAIN 0 HOURS").collect()
    # lance-spark's columns (bytes removed, versions removed), then ours: the versions and the files.
    assert done.old_versions == len(done.versions) == 5 and sorted(done.versions) == [2, 3, 4, 6, 7]
    assert tuple(done) == tuple(dry) and done.paths and done.bytes_removed > 0
    ds = lance.dataset(path)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == [1, 5, 8]                  # tagged ones and the latest
    assert lance.dataset(path, version=5).count_rows() == 20
    spark.sql("ALTER TABLE lance.db.m DROP TAG first")
    assert list(lance.dataset(path).tags.list()) == ["before_optimize"]
    # Default retention (7 days) removes nothing recent.
    assert [tuple(r) for r in spark.sql("VACUUM lance.db.m").collect()] == [(0, 0, [], [])]


def test_statements_need_a_lance_table(spark):
    with pytest.raises(Exception, match="is not a table of a Lance catalog"):
        spark.sql("OPTIMIZE spark_catalog.default.t")
    # Other SQL still goes to Spark's parser.
    assert spark.sql("SELECT 1 AS x").collect()[0].x == 1


def test_tag_statement_variants_against_a_model(spark, wh):
    """Seeded random CREATE [OR REPLACE] TAG [IF NOT EXISTS], REPLACE TAG, DROP TAG [IF EXISTS], AS OF VERSION / AS OF
    TAG, mixed with pylance's own tag changes: after each statement pylance lists the tags a model gives (or the
    statement failed, naming the tag, where the model says it must), and each tag reads its version's rows."""
    import os
    import random
    r = random.Random(int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126")))
    path = str(wh / "db" / "tags.lance")
    for i in range(4):
        lance.write_dataset(pa.table({"id": pa.array(range(i + 1), pa.int64())}), path, mode="append" if i else "create")
    model = {}
    names = ["a", "b-1", "c.2", "`d_3`"]
    for _ in range(30):
        name = r.choice(names)
        plain = name.strip("`")
        target = r.choice(["", " AS OF VERSION %d" % r.randint(1, 4), " AS OF TAG " + r.choice(names)])
        source = target.rsplit(" ", 1)[-1].strip("`") if "TAG" in target else None
        version = (int(target.rsplit(" ", 1)[-1]) if "VERSION" in target else model.get(source) if source else 4)
        verb = r.choice(["CREATE", "CREATE IF NOT EXISTS", "CREATE OR REPLACE", "REPLACE", "DROP", "DROP IF EXISTS",
                         "PYLANCE"])
        if verb == "PYLANCE":
            tags = lance.dataset(path).tags
            if plain in model:
                tags.delete(plain)
                del model[plain]
            else:
                v = r.randint(1, 4)
                tags.create(plain, v)
                model[plain] = v
            continue
        if verb.startswith("DROP"):
            sql = f"ALTER TABLE lance.db.tags DROP TAG {'IF EXISTS ' if 'IF' in verb else ''}{name}"
            fails = plain not in model and "IF" not in verb
            expected = {k: v for k, v in model.items() if k != plain}
        else:
            head, _, cond = verb.partition(" IF ")
            sql = f"ALTER TABLE lance.db.tags {head} TAG {'IF ' + cond + ' ' if cond else ''}{name}{target}"
            fails = (version is None or (verb == "CREATE" and plain in model) or (verb == "REPLACE" and plain not in model))
            expected = dict(model)
            if not fails and not (verb == "CREATE IF NOT EXISTS" and plain in model):
                expected[plain] = version
        if fails:
            with pytest.raises(Exception, match=r"tag|Tag"):
                spark.sql(sql)
        else:
            spark.sql(sql)
            model = expected
        listed = {t: v["version"] for t, v in lance.dataset(path).tags.list().items()}
        assert listed == model, sql
    for tag, v in model.items():
        assert spark.sql(f"SELECT count(*) AS n FROM lance.db.tags VERSION AS OF '{tag}'").first().n == v * (v + 1) // 2
    lance.dataset(path).validate()


def test_optimize_options(spark, wh):
    """OPTIMIZE ... WITH the compaction options of pylance's compact_files (the other connector's names): which
    fragments are rewritten follows them, the rows stay, validate() passes; unknown and unsupported ones are
    refused before anything is done."""
    path = str(wh / "db" / "opt.lance")
    for i in range(8):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 100, i * 100 + 100), pa.int64())}), path,
                            mode="append" if i else "create")
    lance.dataset(path).delete("id % 100 < 50 AND id < 200")                 # half of fragments 0 and 1
    rows = sorted(lance.dataset(path).to_table().column("id").to_pylist())

    def optimize(options: str):
        r = spark.sql(f"OPTIMIZE lance.db.opt WITH ({options})").collect()[0]
        ds = lance.dataset(path)
        ds.validate()
        assert sorted(ds.to_table().column("id").to_pylist()) == rows
        return r.version, r.fragments_removed, r.fragments_added

    # Fragments of 100 rows are at the target: only deletions can make them worth rewriting.
    assert optimize("target_rows_per_fragment = 100, materialize_deletions = false") == (None, 0, 0)
    assert optimize("target_rows_per_fragment = 100, materialize_deletions_threshold = 0.6") == (None, 0, 0)
    # More than the threshold's share deleted, as upstream's planner (pylance's compact_files leaves these at 0.5).
    assert optimize("target_rows_per_fragment = 100, materialize_deletions_threshold = 0.5") == (None, 0, 0)
    version, removed, added = optimize("target_rows_per_fragment = 100, materialize_deletions_threshold = 0.49, "
                                       "num_threads = 4, defer_index_remap = true")
    assert (removed, added) == (2, 1)                                        # 2 x 50 live rows into one fragment
    assert optimize("target_rows_per_fragment = 100000, max_source_fragments = 3, batch_size = 7")[1:] == (3, 1)
    assert len(lance.dataset(path).get_fragments()) == 5
    from sparklance import LanceTable
    r = LanceTable.for_path(spark, path).optimize(target_rows_per_fragment=100000, max_source_fragments=2,
                                                  materialize_deletions=True).collect()[0]
    assert (r.fragments_removed, r.fragments_added) == (2, 1) and len(lance.dataset(path).get_fragments()) == 4
    rows = sorted(lance.dataset(path).to_table().column("id").to_pylist())
    before = lance.dataset(path).version
    for options, message in [("target_rows_per_fragments = 5", "Unknown option target_rows_per_fragments"),
                             ("max_bytes_per_file = 1000", "max_bytes_per_file .* is not supported"),
                             ("materialize_deletions_threshold = 1.5", "must be a fraction above 0 and at most 1"),
                             ("max_source_fragments = 0", "must be a positive number"),
                             ("materialize_deletions = maybe", "must be true or false")]:
        with pytest.raises(Exception, match=message):
            spark.sql(f"OPTIMIZE lance.db.opt WITH ({options})")
    assert lance.dataset(path).version == before


def test_vacuum_options_remove_what_pylance_cleanup_removes(spark, wh, tmp_path):
    """VACUUM ... WITH (before_timestamp_millis | before_version, delete_unverified, error_if_tagged_old_versions) on
    one copy of a table and pylance's cleanup_old_versions with the same policy on another: the same versions and
    the same files remain (both validate()); a tagged version in the way is an error on both when asked for."""
    import datetime as dt
    import shutil
    src = tmp_path / "src.lance"
    times = []
    for i in range(5):
        lance.write_dataset(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64())}), str(src),
                            mode="append" if i else "create")
        times.append(time.time())
        time.sleep(0.3)
    lance.dataset(str(src)).delete("id % 3 = 0")                              # v6
    lance.dataset(str(src)).tags.create("keep", 2)

    def copies(name: str):
        ours, theirs = wh / "db" / f"{name}.lance", tmp_path / f"{name}-pylance.lance"
        for d in (ours, theirs):
            shutil.copytree(src, d)
        return str(ours), str(theirs)

    def remaining(path: str):
        files = sorted(str(p.relative_to(path)) for p in Path(path).rglob("*") if p.is_file() and "_versions" not in p.parts)
        return [v["version"] for v in lance.dataset(path).versions()], files

    cut = (times[2] + times[3]) / 2                                           # between v3 and v4
    ours, theirs = copies("vac_time")
    spark.sql(f"VACUUM lance.db.vac_time WITH (before_timestamp_millis = {int(cut * 1000)}, delete_unverified = true)")
    lance.dataset(theirs).cleanup_old_versions(older_than=dt.timedelta(seconds=time.time() - cut),
                                               delete_unverified=True, error_if_tagged_old_versions=False)
    assert remaining(ours) == remaining(theirs) and remaining(ours)[0] == [2, 4, 5, 6]
    lance.dataset(ours).validate()

    ours, theirs = copies("vac_version")
    spark.sql("VACUUM lance.db.vac_version WITH (before_version = 5, delete_unverified = true)")
    lance.dataset(theirs).cleanup_old_versions(retain_versions=2, delete_unverified=True,
                                               error_if_tagged_old_versions=False)
    assert remaining(ours) == remaining(theirs) and remaining(ours)[0] == [2, 5, 6]
    lance.dataset(ours).validate()

    ours, theirs = copies("vac_tagged")
    with pytest.raises(Exception, match="tags keep"):
        spark.sql("VACUUM lance.db.vac_tagged WITH (before_version = 5, error_if_tagged_old_versions = true)")
    with pytest.raises(Exception, match="keep"):
        lance.dataset(theirs).cleanup_old_versions(retain_versions=2)
    assert remaining(ours)[0] == [1, 2, 3, 4, 5, 6]
    for statement, message in [("VACUUM lance.db.vac_tagged RETAIN 1 HOURS WITH (before_timestamp_millis = 5)", "not both"),
                               ("VACUUM lance.db.vac_tagged WITH (older_than = 5)", "Unknown option older_than"),
                               ("VACUUM lance.db.vac_tagged WITH (before_version = 0)", "must be a positive number")]:
        with pytest.raises(Exception, match=message):
            spark.sql(statement)
    assert remaining(ours)[0] == [1, 2, 3, 4, 5, 6]
