"""An index's life after it is built, against pylance 14: OPTIMIZE INDEX (``LanceTable.optimize_index``) merges the
old index with the fragments appended since, reading only theirs, as pylance's ``optimize_indices`` does; the files
it writes must be the ones pylance writes for the same table, pylance must list, use and validate them, and each side
must optimize the other's indexes. Seeded random appends, deletes, updates and compactions compare every indexed
read with a full scan.

``SPARKLANCE_FUZZ_SEED`` and ``SPARKLANCE_FUZZ_N`` (cases) drive the random part, as in test_scalar_indexes.py.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path
from typing import Callable, List

import lance
import pyarrow as pa
import pytest
from lance.indices.builder import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, arrow_df, cross_version, start_spark, warehouse_with  # noqa: E402
from test_scalar_indexes import same_files  # noqa: E402

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

pytestmark = [cross_version,
              pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261125"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))

WORDS = ["a", "b", "c", "dd", "é", ""]
PYLANCE_KIND = {"btree": "BTree", "bitmap": "Bitmap", "label_list": "LabelList", "zonemap": "ZoneMap",
                "bloomfilter": "BloomFilter"}


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "index_life_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-index-life-tests", wh)
    yield session
    session.stop()


def rows(first: int, n: int, seed: int) -> pa.Table:
    """id, k (small integers, some null), s (strings, some null), tags (lists of words: null, empty, null items)."""
    r = random.Random(seed)

    def tags():
        x = r.random()
        return None if x < 0.1 else [] if x < 0.15 else [r.choice(WORDS) if r.random() > 0.1 else None
                                                         for _ in range(r.randint(1, 3))]
    return pa.table({
        "id": pa.array(range(first, first + n), pa.int64()),
        "k": pa.array([r.randint(-20, 60) if r.random() > 0.1 else None for _ in range(n)], pa.int64()),
        "s": pa.array([r.choice(WORDS + ["zz", "q"]) if r.random() > 0.1 else None for _ in range(n)], pa.string()),
        "tags": pa.array([tags() for _ in range(n)], pa.list_(pa.string()))})


def column_of(kind: str) -> str:
    return "tags" if kind == "label_list" else "k"


def conditions(kind: str):
    """(pylance/Spark SQL, the same in Python) that the index of `kind` answers."""
    if kind == "label_list":
        return [("array_has_any(tags, ['b'])", "array_contains(tags, 'b')", lambda r: r["tags"] is not None and "b" in r["tags"]),
                ("array_has_any(tags, ['é', 'zz'])", "arrays_overlap(tags, array('é', 'zz'))",
                 lambda r: r["tags"] is not None and ("é" in r["tags"] or "zz" in r["tags"]))]
    return [(w, w, f) for w, f in (
        ("k = 7", lambda r: r["k"] == 7),
        ("k = 55", lambda r: r["k"] == 55),
        ("k >= 50", lambda r: r["k"] is not None and r["k"] >= 50),
        ("k IS NULL", lambda r: r["k"] is None))]


def truth(path: str, keep: Callable[[dict], bool]) -> List[int]:
    return sorted(r["id"] for r in lance.dataset(path).to_table().to_pylist() if keep(r))


def spark_ids(spark, path: str, where: str):
    df = spark.read.format("lance").load(path).where(where).select("id")
    return sorted(r.id for r in df.collect()), df._jdf.queryExecution().executedPlan().toString()


def pylance_ids(path: str, where: str) -> List[int]:
    return sorted(lance.dataset(path).to_table(filter=where, columns=["id"]).column("id").to_pylist())


def build(spark, path: str, kind: str, by: str) -> None:
    column = column_of(kind)
    if by == "spark":
        LanceTable.for_path(spark, path).create_index(column, kind, name=f"{column}_idx")
    else:
        lance.dataset(path).create_scalar_index(column, kind.upper(), name=f"{column}_idx")


def tasks_of(spark, group: str) -> int:
    """How many Spark tasks the jobs of job group `group` ran."""
    tracker = spark.sparkContext.statusTracker()
    return sum(tracker.getStageInfo(s).numTasks for j in tracker.getJobIdsForGroup(group)
               for s in tracker.getJobInfo(j).stageIds)


def check_reads(spark, path: str, kind: str, name: str) -> None:
    """Spark and pylance through the index return the rows of a full scan; pylance plans the index; validate()."""
    ds = lance.dataset(path)
    for theirs, ours, keep in conditions(kind):
        want = truth(path, keep)
        got, plan = spark_ids(spark, path, ours)
        assert got == want, (ours, plan)
        answers = kind != "bloomfilter" or "=" in theirs and ">=" not in theirs or "IS NULL" in theirs
        if answers:
            assert f"index '{name}'" in plan, (ours, plan)
        assert pylance_ids(path, theirs) == want, theirs
        if answers:
            explained = ds.scanner(filter=theirs, columns=["id"]).explain_plan(True)
            assert "ScalarIndexQuery" in explained and f"@{name}({PYLANCE_KIND[kind]})" in explained, explained
    ds.validate()


@pytest.mark.parametrize("by", ["spark", "pylance"])
@pytest.mark.parametrize("kind", ["btree", "bitmap", "label_list", "zonemap", "bloomfilter"])
def test_optimize_index_merges_the_appended_fragments(spark, wh, kind, by):
    """Our OPTIMIZE INDEX of an index (built by Spark or pylance) after appends and deletes writes the files
    pylance's optimize_indices writes for the same table, reads only the new fragments (one Spark task each),
    commits in place of the old index, and both sides answer through it; then pylance optimizes ours."""
    path = str(wh / "db" / f"merge_{kind}_{by}.lance")
    lance.write_dataset(rows(0, 600, 1), path, max_rows_per_file=200)
    build(spark, path, kind, by)
    name = f"{column_of(kind)}_idx"
    old = lance.dataset(path).describe_indices()[0]
    lance.write_dataset(rows(600, 150, 2), path, mode="append", max_rows_per_file=100)
    lance.dataset(path).delete("id % 9 = 4")
    twin = path.replace(".lance", "_pylance.lance")
    shutil.copytree(path, twin)
    lance.dataset(twin).optimize.optimize_indices()

    t = LanceTable.for_path(spark, path)
    group = f"optimize-{kind}-{by}"
    spark.sparkContext.setJobGroup(group, "OPTIMIZE INDEX")
    try:
        made = t.optimize_index(name)
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert tasks_of(spark, group) == 2, "OPTIMIZE INDEX read other fragments than the two appended"
    ds = lance.dataset(path)
    [index] = ds.describe_indices()
    assert (made["name"], made["fragments"], index.name) == (name, 5, name)
    assert made["uuid"] != old.segments[0].uuid and index.segments[0].uuid == made["uuid"]
    assert sorted(index.segments[0].fragment_ids) == [0, 1, 2, 3, 4]
    [theirs] = lance.dataset(twin).describe_indices()
    problems = same_files(Path(path) / "_indices" / made["uuid"], Path(twin) / "_indices" / theirs.segments[0].uuid)
    assert not problems, "\n".join(problems)
    check_reads(spark, path, kind, name)

    # Nothing appended since: nothing to merge, nothing committed.
    version = ds.version
    assert t.optimize_index(name)["uuid"] == made["uuid"] and lance.dataset(path).version == version

    # pylance optimizes ours after another append.
    lance.write_dataset(rows(750, 80, 3), path, mode="append")
    lance.dataset(path).optimize.optimize_indices()
    [index] = lance.dataset(path).describe_indices()
    assert sorted(index.segments[0].fragment_ids) == [0, 1, 2, 3, 4, 5]
    check_reads(spark, path, kind, name)


@pytest.mark.parametrize("by", ["spark", "pylance"])
@pytest.mark.parametrize("kind", ["btree", "bitmap", "label_list", "zonemap", "bloomfilter"])
def test_untrained_index_is_filled_by_optimize_index(spark, wh, kind, by):
    """`CREATE INDEX ... WITH (train = false)` (lance-spark's statement) creates the index empty, as pylance's
    `train=False` does: pylance lists it covering nothing and validates it, and it changes no answer. After an append
    our OPTIMIZE INDEX (of our empty index or pylance's) covers every fragment with the files pylance's
    optimize_indices writes for the same table, and both sides answer through it."""
    table = f"untrained_{kind}_{by}"
    path = str(wh / "db" / f"{table}.lance")
    lance.write_dataset(rows(0, 400, 5), path, max_rows_per_file=200)
    column = column_of(kind)
    name = f"{column}_idx"
    if by == "spark":
        spark.sql(f"ALTER TABLE lance.db.{table} CREATE INDEX {name} USING {kind} ({column}) WITH (train = false)")
    else:
        lance.dataset(path).create_scalar_index(column, kind.upper(), name=name, train=False)
    [index] = lance.dataset(path).describe_indices()
    assert (index.name, index.num_rows_indexed, list(index.segments[0].fragment_ids)) == (name, 0, [])
    lance.dataset(path).validate()
    for theirs, ours, keep in conditions(kind):
        want = truth(path, keep)
        assert spark_ids(spark, path, ours)[0] == want, ours
        assert pylance_ids(path, theirs) == want, theirs

    lance.write_dataset(rows(400, 90, 6), path, mode="append")
    twin = path.replace(".lance", "_pylance.lance")
    shutil.copytree(path, twin)
    lance.dataset(twin).optimize.optimize_indices()
    [made] = spark.sql(f"ALTER TABLE lance.db.{table} REFRESH INDEX {name}").collect()
    [index] = lance.dataset(path).describe_indices()
    assert index.segments[0].uuid == made["uuid"] and sorted(index.segments[0].fragment_ids) == [0, 1, 2]
    [theirs] = lance.dataset(twin).describe_indices()
    assert sorted(theirs.segments[0].fragment_ids) == [0, 1, 2]
    problems = same_files(Path(path) / "_indices" / made["uuid"], Path(twin) / "_indices" / theirs.segments[0].uuid)
    assert not problems, "\n".join(problems)
    check_reads(spark, path, kind, name)


def test_untrained_vector_and_full_text_indexes_are_refused(spark, wh):
    path = str(wh / "db" / "untrained_refused.lance")
    vectors = pa.FixedSizeListArray.from_arrays(pa.array([float(i % 7) for i in range(64)], pa.float32()), 4)
    lance.write_dataset(pa.table({"id": pa.array(range(16), pa.int64()), "s": ["a b"] * 16, "v": vectors}), path)
    for kind, column in (("ivf_flat", "v"), ("fts", "s")):
        with pytest.raises(Exception, match=f"train = false .* not for {kind} indexes"):
            spark.sql(f"ALTER TABLE lance.db.untrained_refused CREATE INDEX i USING {kind} ({column}) "
                      "WITH (train = false)")
    assert lance.dataset(path).describe_indices() == [] and lance.dataset(path).version == 1


def test_optimize_index_leaves_out_fragments_compaction_removed(spark, wh):
    """After a compaction, OPTIMIZE INDEX covers the new fragments and no longer names the removed ones; the rows
    of removed fragments are left out of the merged B-tree and bitmap."""
    path = str(wh / "db" / "merge_compacted.lance")
    lance.write_dataset(rows(0, 800, 4), path, max_rows_per_file=200)
    t = LanceTable.for_path(spark, path)
    t.create_index("k", "btree", zone_size=16)
    t.create_index("s", "bitmap")
    t.delete("id >= 200 AND id < 400 AND id % 2 = 0")
    t.optimize(target_rows_per_fragment=200).collect()
    fragments = sorted(f.fragment_id for f in lance.dataset(path).get_fragments())
    assert fragments == [0, 2, 3, 4]
    for name in ("k_idx", "s_idx"):
        made = t.optimize_index(name)
        assert made["fragments"] == 4
        segment = [i for i in lance.dataset(path).describe_indices() if i.name == name][0].segments[0]
        assert sorted(segment.fragment_ids) == fragments
    from lance.file import LanceFileReader
    uuid = [i for i in lance.dataset(path).describe_indices() if i.name == "k_idx"][0].segments[0].uuid
    ids = LanceFileReader(str(Path(path) / "_indices" / uuid / "page_data.lance")).read_all().to_table().column("ids")
    assert {a >> 32 for a in ids.to_pylist()} == {0, 2, 3, 4}
    assert len(ids) == lance.dataset(path).count_rows()
    for where, keep in (("k = 7", lambda r: r["k"] == 7), ("s = 'b'", lambda r: r["s"] == "b"),
                        ("k IS NULL", lambda r: r["k"] is None)):
        got, plan = spark_ids(spark, path, where)
        assert got == truth(path, keep) and "index '" in plan, plan
        assert pylance_ids(path, where) == got
    lance.dataset(path).validate()


def test_differential_optimize_index(spark, wh):
    """Seeded random appends (pylance, Spark), deletes, updates, compactions (both sides) and index upkeep (ours
    and pylance's) on tables with indexes of every kind built by either side; every read through the indexes,
    Spark's and pylance's, against a full scan."""
    failures = []
    for case in range(N):
        r = random.Random(f"{SEED}/optimize/{case}")
        path = str(wh / "db" / f"life_{case}.lance")
        stable = r.random() < 0.3
        lance.write_dataset(rows(0, r.randint(100, 400), r.random()), path, max_rows_per_file=r.choice([50, 150]),
                            enable_stable_row_ids=stable)
        steps = [f"pylance writes, stable row ids={stable}"]
        kinds = {"k": r.choice(["btree", "bitmap", "zonemap", "bloomfilter"]), "s": r.choice(["btree", "bitmap"]),
                 "tags": "label_list"}
        for column, kind in kinds.items():
            by = r.choice(["spark", "pylance"])
            if by == "spark":
                LanceTable.for_path(spark, path).create_index(column, kind, name=f"{column}_idx")
            else:
                lance.dataset(path).create_scalar_index(column, kind.upper(), name=f"{column}_idx")
            steps.append(f"{by} creates {kind} on {column}")
        next_id = 10_000
        t = LanceTable.for_path(spark, path)
        for _ in range(r.randint(3, 7)):
            step = r.choice(["append", "append", "delete", "update", "compact", "optimize", "optimize"])
            if step == "append":
                n = r.randint(1, 120)
                new = rows(next_id, n, r.random())
                if r.random() < 0.5:
                    lance.write_dataset(new, path, mode="append", max_rows_per_file=r.choice([30, 200]))
                else:
                    arrow_df(spark, new).write.format("lance").mode("append").save(path)
                steps.append(f"{step} {n} rows")
                next_id += n
            elif step == "delete":
                where = f"id % {r.choice([3, 5, 7])} = {r.randint(0, 2)}"
                (lance.dataset(path).delete(where) if r.random() < 0.5 else t.delete(where))
                steps.append(f"delete {where}")
            elif step == "update" and SPARK_LINE >= (3, 5):
                where = f"id % {r.choice([4, 6])} = 1"
                t.update(where, {"k": str(r.randint(-20, 60)), "s": "'q'"})
                steps.append(f"Spark update {where}")
            elif step == "compact":
                if r.random() < 0.5:
                    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=r.choice([100, 10_000]))
                else:
                    t.optimize(target_rows_per_fragment=r.choice([100, 10_000])).collect()
                steps.append("compact")
            elif step == "optimize":
                column = r.choice(list(kinds))
                if r.random() < 0.6:
                    t.optimize_index(f"{column}_idx")
                    steps.append(f"Spark OPTIMIZE INDEX {column}_idx")
                else:
                    lance.dataset(path).optimize.optimize_indices(index_names=[f"{column}_idx"])
                    steps.append(f"pylance optimize_indices {column}_idx")
        for column, kind in kinds.items():
            t.optimize_index(f"{column}_idx")
            fragments = {f.fragment_id for f in lance.dataset(path).get_fragments()}
            segments = [i for i in lance.dataset(path).describe_indices() if i.name == f"{column}_idx"][0].segments
            if len(segments) != 1 or set(segments[0].fragment_ids) != fragments:
                failures.append(f"case {case} {steps}: {column}_idx covers {[s.fragment_ids for s in segments]}")
            for theirs, ours, keep in column_conditions(column):
                want = truth(path, keep)
                got, plan = spark_ids(spark, path, ours)
                if got != want or f"index '{column}_idx'" not in plan:
                    failures.append(f"case {case} {steps}: Spark {ours}: {len(got)} rows, {len(want)} wanted\n{plan}")
                if pylance_ids(path, theirs) != want:
                    failures.append(f"case {case} {steps}: pylance {theirs} differs from a full scan")
        try:
            lance.dataset(path).validate()
        except Exception as e:   # noqa: BLE001 (reported with the case)
            failures.append(f"case {case} {steps}: validate() {e}")
    assert not failures, "\n\n".join(failures[:6])


def column_conditions(column: str):
    """(pylance's condition, Spark's, the same in Python) on `column` of the random tables."""
    if column == "tags":
        return conditions("label_list")
    literals = ["'q'", "'b'"] if column == "s" else ["7", "55"]
    out = [(f"{column} = {v}",) * 2 + ((lambda x: lambda r: r[column] == x)(v.strip("'") if column == "s" else int(v)),)
           for v in literals]
    return out + [(f"{column} IS NULL",) * 2 + (lambda r: r[column] is None,)]


@pytest.mark.parametrize("by", ["spark", "pylance"])
def test_shallow_clone_reads_the_source_indexes(spark, wh, by):
    """A clone made by pylance's shallow_clone keeps its indexes under the source's path (the manifest's base
    path): Spark's reads search them there, before and after pylance's optimize_indices on the clone (which writes
    the merged index into the clone). sparklance writes to such tables as pylance does: OPTIMIZE INDEX on the
    clone merges the source's index with the clone's new rows into the clone's own `_indices/`, leaving the
    source alone."""
    source = str(wh / "db" / f"clone_source_{by}.lance")
    clone = str(wh / "db" / f"clone_{by}.lance")
    lance.write_dataset(rows(0, 600, 5), source, max_rows_per_file=200)
    kinds = {"k": "btree", "s": "bitmap", "tags": "label_list"}
    for column, kind in kinds.items():
        if by == "spark":
            LanceTable.for_path(spark, source).create_index(column, kind, name=f"{column}_idx")
        else:
            lance.dataset(source).create_scalar_index(column, kind.upper(), name=f"{column}_idx")
    ds = lance.dataset(source)
    ds.shallow_clone(clone, ds.version)
    assert not (Path(clone) / "_indices").exists()

    def check(path):
        for column in kinds:
            for theirs, ours, keep in column_conditions(column):
                want = truth(path, keep)
                got, plan = spark_ids(spark, path, ours)
                assert got == want and f"index '{column}_idx'" in plan, (ours, plan)
                assert pylance_ids(path, theirs) == want
    check(clone)

    lance.write_dataset(rows(600, 90, 6), clone, mode="append")
    t = LanceTable.for_path(spark, clone)
    version = t.version()
    source_indices = sorted(p.name for p in (Path(source) / "_indices").iterdir())
    t.optimize_index("k_idx")
    assert t.version() == version + 1
    ours = [i for i in lance.dataset(clone).describe_indices() if i.name == "k_idx"][0].segments[0].uuid
    assert (Path(clone) / "_indices" / ours).exists()
    lance.dataset(clone).validate()
    lance.dataset(clone).optimize.optimize_indices(index_names=["s_idx"])
    merged = [i for i in lance.dataset(clone).describe_indices() if i.name == "s_idx"][0].segments[0].uuid
    assert (Path(clone) / "_indices" / merged).exists()
    check(clone)
    check(source)
    assert sorted(p.name for p in (Path(source) / "_indices").iterdir()) == source_indices


@pytest.mark.parametrize("kind", ["zonemap", "bloomfilter"])
def test_zone_indexes_on_stable_row_ids(spark, wh, kind):
    """Zone maps and bloom filters address rows by fragment and offset (upstream trains them on row addresses) on
    tables with stable row ids too: after an update moved rows to a new fragment under their old row ids, the
    index Spark builds has the files pylance builds for the same table, each side answers through the other's,
    and OPTIMIZE INDEX merges the fragments appended since."""
    path = str(wh / "db" / f"stable_{kind}.lance")
    lance.write_dataset(rows(0, 600, 7), path, max_rows_per_file=200, enable_stable_row_ids=True)
    lance.dataset(path).update({"k": "k + 100"}, where="id % 5 = 0")
    lance.dataset(path).delete("id % 11 = 3")
    moved = lance.dataset(path).to_table(columns=["id"], with_row_id=True, with_row_address=True)
    assert any(a != i for a, i in zip(moved.column("_rowaddr").to_pylist(), moved.column("_rowid").to_pylist()))
    twin = path.replace(".lance", "_pylance.lance")
    shutil.copytree(path, twin)
    made = LanceTable.for_path(spark, path).create_index("k", kind, name="k_idx")
    lance.dataset(twin).create_scalar_index("k", kind.upper(), name="k_idx")
    theirs = lance.dataset(twin).describe_indices()[0].segments[0].uuid
    problems = same_files(Path(path) / "_indices" / made["uuid"], Path(twin) / "_indices" / theirs)
    assert not problems, "\n".join(problems)
    extra = [("k = 107", lambda r: r["k"] == 107), ("k = 155", lambda r: r["k"] == 155)]
    for table in (path, twin):
        check_reads(spark, table, kind, "k_idx")
        for where, keep in extra:
            got, plan = spark_ids(spark, table, where)
            assert got == truth(table, keep) == pylance_ids(table, where) and "index 'k_idx'" in plan, plan

    for table in (path, twin):
        lance.write_dataset(rows(600, 70, 8), table, mode="append")
        LanceTable.for_path(spark, table).optimize_index("k_idx")
        [index] = lance.dataset(table).describe_indices()
        assert sorted(index.segments[0].fragment_ids) == sorted(f.fragment_id for f in lance.dataset(table).get_fragments())
        check_reads(spark, table, kind, "k_idx")


@pytest.mark.skipif(SPARK_LINE < (3, 5), reason="UPDATE needs Spark 3.5+")
@pytest.mark.parametrize("kind", ["bitmap", "label_list", "btree"])
def test_optimize_after_update_on_stable_row_ids(spark, wh, kind):
    """Spark's UPDATE on a table with stable row ids moves rows to a new fragment under their old row ids; the
    merge keeps an old bitmap's row ids only where they are still live in the fragments it covered (as pylance's
    does: the files are pylance's), so no side returns a moved row for its old value."""
    path = str(wh / "db" / f"stable_update_{kind}.lance")
    lance.write_dataset(rows(0, 600, 9), path, max_rows_per_file=200, enable_stable_row_ids=True)
    column = column_of(kind)
    LanceTable.for_path(spark, path).create_index(column, kind, name=f"{column}_idx")
    t = LanceTable.for_path(spark, path)
    if kind == "label_list":
        t.update("id % 3 = 0", {"tags": "array('zz')"})
    else:
        t.update("id % 3 = 0", {"k": "k + 1000"})
    lance.write_dataset(rows(600, 50, 10), path, mode="append")
    twin = path.replace(".lance", "_pylance.lance")
    shutil.copytree(path, twin)
    lance.dataset(twin).optimize.optimize_indices()
    made = t.optimize_index(f"{column}_idx")
    theirs = lance.dataset(twin).describe_indices()[0].segments[0]
    problems = same_files(Path(path) / "_indices" / made["uuid"], Path(twin) / "_indices" / theirs.uuid)
    assert not problems, "\n".join(problems)
    assert [i["version"] for i in lance.dataset(path).list_indices()] == \
        [i["version"] for i in lance.dataset(twin).list_indices()]
    [index] = lance.dataset(path).describe_indices()
    assert sorted(index.segments[0].fragment_ids) == sorted(f.fragment_id for f in lance.dataset(path).get_fragments())
    check_reads(spark, path, kind, f"{column}_idx")


def test_optimize_index_without_a_name_optimizes_every_index(spark, wh):
    """``ALTER TABLE t OPTIMIZE INDEX`` (the other connector's form without a name) brings every index up to date,
    one version each, as pylance's optimize_indices() does for all of them; with no index it returns no row."""
    path = str(wh / "db" / "merge_all.lance")
    lance.write_dataset(rows(0, 400, 1), path, max_rows_per_file=200)
    assert spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX").collect() == []
    build(spark, path, "btree", "spark")
    build(spark, path, "label_list", "pylance")
    lance.write_dataset(rows(400, 100, 2), path, mode="append")
    version = lance.dataset(path).version
    made = spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEXES").collect()
    ds = lance.dataset(path)
    assert sorted(r.index_name for r in made) == sorted(i.name for i in ds.describe_indices())
    assert [(r.fragments_indexed, r.segments_before, r.segments_after) for r in made] == [(1, 1, 1)] * 2
    assert ds.version == version + 2
    for index in ds.describe_indices():
        assert sorted(index.segments[0].fragment_ids) == [0, 1, 2], index
    ds.validate()
    assert len(ds.describe_indices()) == 2
    for kind in ("btree", "label_list"):
        check_reads(spark, path, kind, f"{column_of(kind)}_idx")
