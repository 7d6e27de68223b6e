"""Row-level changes through Spark SQL (DELETE, UPDATE, MERGE INTO) on Lance tables, proved both ways with pylance:
pylance writes the tables (and deletes rows of its own), sparklance changes them, and pylance must read exactly the
expected rows, with deletion files of the kind pylance itself writes, and pass ``validate()``; earlier versions stay
readable by time travel. Expected rows are computed in Python from the data the test wrote.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import SPARK_LINE, cross_version, needs_update_and_merge, start_spark, warehouse_with  # noqa: E402
from sparklance.errors import CommitConflictError, translated  # noqa: E402

pytestmark = cross_version


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "rowlevel_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-rowlevel-tests", wh, **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def make(wh: Path, name: str, n: int = 10000, rows_per_file: int = 3000, **kw) -> str:
    path = str(wh / "db" / f"{name}.lance")
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([f"s{i}" for i in range(n)]),
                      "x": pa.array([i * 0.5 for i in range(n)])})
    lance.write_dataset(table, path, max_rows_per_file=rows_per_file, **kw)
    return path


def rows(path: str, version=None) -> dict:
    ds = lance.dataset(path, version=version)
    ds.validate()
    return {r["id"]: (r["s"], r["x"]) for r in ds.to_table().to_pylist()}


def deletion_files(path: str) -> dict:
    return {f.fragment_id: f.deletion_file() for f in lance.dataset(path).get_fragments()}


def test_delete_writes_arrow_and_bitmap_deletion_files(spark, wh):
    path = make(wh, "del", rows_per_file=6000)
    spark.sql("DELETE FROM lance.db.del WHERE id % 1000 = 7")           # a few rows per fragment: .arrow files
    files = deletion_files(path)
    assert files[0].endswith(".arrow") and files[1].endswith(".arrow")
    assert sorted(rows(path)) == [i for i in range(10000) if i % 1000 != 7]
    spark.sql("DELETE FROM lance.db.del WHERE id < 6000 AND id % 5 <> 0")  # 4800+ rows of fragment 0: a bitmap
    files = deletion_files(path)
    assert files[0].endswith(".bin") and files[1].endswith(".arrow")
    assert files[0].startswith("_deletions/0-2-")                        # {fragment}-{read version}-{id}
    want = [i for i in range(10000) if i % 1000 != 7 and not (i < 6000 and i % 5 != 0)]
    assert sorted(rows(path)) == want
    ds = lance.dataset(path)
    assert ds.version == 3
    assert lance.dataset(path, version=1).count_rows() == 10000
    assert spark.sql("SELECT count(*) AS n FROM lance.db.del VERSION AS OF 2").collect()[0].n == 9990
    assert spark.sql("SELECT count(*) AS n FROM lance.db.del").collect()[0].n == len(want)


def test_delete_of_a_whole_fragment_removes_it(spark, wh):
    path = make(wh, "whole")
    spark.sql("DELETE FROM lance.db.whole WHERE id >= 3000 AND id < 6000")
    ds = lance.dataset(path)
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 2, 3]
    assert all(f.deletion_file() is None for f in ds.get_fragments())
    assert sorted(rows(path)) == [i for i in range(10000) if not 3000 <= i < 6000]


def test_delete_merges_with_pylance_deletions_and_pylance_merges_with_ours(spark, wh):
    path = make(wh, "merge_del")
    lance.dataset(path).delete("id < 10")
    spark.sql("DELETE FROM lance.db.merge_del WHERE id >= 10 AND id < 20")
    lance.dataset(path).delete("id >= 20 AND id < 30")
    assert sorted(rows(path)) == list(range(30, 10000))
    assert lance.dataset(path).get_fragments()[0].count_rows() == 2970
    assert spark.sql("SELECT min(id) AS m FROM lance.db.merge_del").collect()[0].m == 30


def test_delete_matching_nothing_commits_nothing(spark, wh):
    path = make(wh, "nothing", n=100)
    spark.sql("DELETE FROM lance.db.nothing WHERE id < 0")
    assert lance.dataset(path).version == 1


def test_delete_with_stable_row_ids_keeps_the_others(spark, wh):
    path = make(wh, "stable", enable_stable_row_ids=True)
    spark.sql("DELETE FROM lance.db.stable WHERE id % 2 = 1")
    t = lance.dataset(path).to_table(with_row_id=True)
    assert dict(zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist())) == {i: i for i in range(0, 10000, 2)}
    lance.dataset(path).validate()



@needs_update_and_merge
def test_update_and_merge_keep_stable_row_ids(spark, wh):
    path = make(wh, "stable_upd", n=100, rows_per_file=40, enable_stable_row_ids=True)
    spark.sql("UPDATE lance.db.stable_upd SET s = 'u' WHERE id % 10 = 0")
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(columns=["id", "s", "_row_created_at_version", "_row_last_updated_at_version"], with_row_id=True)
    rows = {r["id"]: r for r in t.to_pylist()}
    assert all(r["_rowid"] == i for i, r in rows.items())                     # same row ids after the update
    assert all((r["s"] == "u") == (i % 10 == 0) for i, r in rows.items())
    assert {(r["_row_created_at_version"], r["_row_last_updated_at_version"]) for i, r in rows.items() if i % 10 == 0} == {(1, 2)}
    assert {(r["_row_created_at_version"], r["_row_last_updated_at_version"]) for i, r in rows.items() if i % 10} == {(1, 1)}
    spark.createDataFrame([(5, "m"), (500, "new")], "id BIGINT, s STRING").createOrReplaceTempView("stable_src")
    spark.sql("MERGE INTO lance.db.stable_upd t USING stable_src m ON t.id = m.id "
              "WHEN MATCHED THEN UPDATE SET s = m.s WHEN NOT MATCHED THEN INSERT (id, s, x) VALUES (m.id, m.s, 0.0)")
    ds = lance.dataset(path)
    ds.validate()
    ids = dict(zip(*[ds.to_table(with_row_id=True).column(c).to_pylist() for c in ("id", "_rowid")]))
    assert ids[5] == 5 and ids[500] == 100 and len(ids) == 101
    # Spark's own _rowid agrees with pylance's.
    assert {r.id: r._rowid for r in spark.sql("SELECT id, _rowid FROM lance.db.stable_upd").collect()} == ids


@needs_update_and_merge
def test_update(spark, wh):
    path = make(wh, "upd")
    spark.sql("UPDATE lance.db.upd SET s = concat(s, '!'), x = x * 10 WHERE id % 100 = 0 OR id = 9999")
    got = rows(path)
    assert len(got) == 10000
    for i in range(10000):
        changed = i % 100 == 0 or i == 9999
        assert got[i] == ((f"s{i}!", i * 5.0) if changed else (f"s{i}", i * 0.5)), i
    assert rows(path, version=1)[0] == ("s0", 0.0)
    ds = lance.dataset(path)
    assert ds.version == 2 and len(ds.get_fragments()) == 5   # one new fragment with the updated rows


@pytest.mark.skipif(SPARK_LINE >= (3, 5), reason="Spark 3.5 and later run UPDATE and MERGE INTO (test_update, ...)")
def test_update_and_merge_fail_clearly_on_spark_3_4(spark, wh):
    path = make(wh, "upd34")
    for statement, name in [("UPDATE lance.db.upd34 SET s = 'u' WHERE id = 1", "UPDATE TABLE"),
                            ("MERGE INTO lance.db.upd34 t USING (SELECT 1 AS id) m ON t.id = m.id "
                             "WHEN MATCHED THEN DELETE", "MERGE INTO TABLE")]:
        with pytest.raises(Exception) as e:
            spark.sql(statement)
        assert f"{name} is not supported temporarily" in str(e.value)
    assert lance.dataset(path).version == 1   # nothing committed


@needs_update_and_merge
def test_merge_update_delete_insert(spark, wh):
    path = make(wh, "mrg", n=1000, rows_per_file=400)
    src = [(i, f"new{i}") for i in range(990, 1010)] + [(5, "DELETE")]
    spark.createDataFrame(src, "id BIGINT, s STRING").createOrReplaceTempView("merge_src")
    spark.sql("""
        MERGE INTO lance.db.mrg t USING merge_src m ON t.id = m.id
        WHEN MATCHED AND m.s = 'DELETE' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.s = m.s
        WHEN NOT MATCHED THEN INSERT (id, s, x) VALUES (m.id, m.s, -1.0)
    """)
    got = rows(path)
    want = {i: (f"s{i}", i * 0.5) for i in range(1000) if i != 5}
    want.update({i: (f"new{i}", i * 0.5) for i in range(990, 1000)})
    want.update({i: (f"new{i}", -1.0) for i in range(1000, 1010)})
    assert got == want
    assert lance.dataset(path).version == 2


@needs_update_and_merge
@pytest.mark.parametrize("seed", [3, 4])
def test_replace_where_deletes_the_matching_rows_and_appends_the_querys_in_one_version(spark, wh, seed):
    """lance-spark's REPLACE t WHERE cond AS SELECT: one new version; rows matching cond gone (whole fragments
    dropped, others by deletion vector), the query's rows appended whether or not they match cond."""
    import random
    rng = random.Random(seed)
    name = f"repl{seed}"
    path = make(wh, name, n=2000, rows_per_file=500)
    lo = rng.randrange(0, 1500)
    hi = lo + rng.randrange(1, 600)
    new = [(i, f"n{i}", rng.uniform(-1, 1)) for i in rng.sample(range(5000, 9000), 50)]
    spark.createDataFrame(new, "id BIGINT, s STRING, x DOUBLE").createOrReplaceTempView(f"staging{seed}")
    spark.sql(f"""REPLACE lance.db.{name}
                  WHERE id >= {lo} AND CAST(x AS BIGINT) < {hi // 2}
                  AS SELECT s, id, x FROM staging{seed}""")   # columns by name, as INSERT *
    want = {i: (f"s{i}", i * 0.5) for i in range(2000) if not (i >= lo and int(i * 0.5) < hi // 2)}
    want.update({i: (s, x) for i, s, x in new})
    assert rows(path) == want
    ds = lance.dataset(path)
    assert ds.version == 2
    assert ds.count_rows() == len(want)
    # A condition matching nothing is a plain append.
    spark.sql(f"REPLACE lance.db.{name} WHERE id < 0 AS SELECT 9999 AS id, 'one' AS s, 1.5 AS x")
    assert rows(path) == {**want, 9999: ("one", 1.5)} and lance.dataset(path).version == 3


@needs_update_and_merge
def test_a_failing_replace_where_changes_nothing(spark, wh):
    path = make(wh, "repl_fail", n=1000, rows_per_file=400)
    with pytest.raises(Exception, match="boom"):
        spark.sql("REPLACE lance.db.repl_fail WHERE id < 500 AS SELECT id + 5000 AS id, s, "
                  "CASE WHEN id = 990 THEN raise_error('boom') ELSE x END AS x FROM lance.db.repl_fail")
    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 1 and sorted(rows(path)) == list(range(1000))


def test_row_level_operations_need_the_catalog(spark, wh):
    path = make(wh, "by_path", n=10)
    # A path identifier in the lance catalog works ...
    spark.sql(f"DELETE FROM lance.`{path}` WHERE id = 3")
    assert sorted(rows(path)) == [0, 1, 2, 4, 5, 6, 7, 8, 9]


def test_delete_keeps_the_tables_indexes(spark, wh):
    path = make(wh, "indexed", n=2000, rows_per_file=1000)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    spark.sql("DELETE FROM lance.db.indexed WHERE id < 10")
    ds = lance.dataset(path)
    ds.validate()
    assert [i.name for i in ds.describe_indices()] == ["id_idx"]
    assert ds.to_table(filter="id < 20").column("id").to_pylist() == list(range(10, 20))


@needs_update_and_merge
def test_a_failing_merge_or_delete_changes_nothing(spark, wh):
    path = make(wh, "failing", n=3000, rows_per_file=1000)
    files = sorted(str(p) for p in Path(path).rglob("*") if p.is_file())
    spark.createDataFrame([(i, f"n{i}") for i in range(0, 3000, 7)], "id BIGINT, s STRING").createOrReplaceTempView("fail_src")
    with pytest.raises(Exception, match="boom"):
        spark.sql("MERGE INTO lance.db.failing t USING fail_src m ON t.id = m.id "
                  "WHEN MATCHED THEN UPDATE SET s = CASE WHEN m.id = 2996 THEN raise_error('boom') ELSE m.s END")
    with pytest.raises(Exception, match="boom"):
        spark.sql("DELETE FROM lance.db.failing WHERE CASE WHEN id = 2999 THEN raise_error('boom') ELSE id < 10 END")
    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 1 and ds.count_rows() == 3000
    assert sorted(rows(path)) == list(range(3000))
    # Nothing the failed statements wrote is left behind (deletion files and data files are cleaned up).
    assert sorted(str(p) for p in Path(path).rglob("*") if p.is_file() and "_transactions" not in str(p)) == \
        [f for f in files if "_transactions" not in f]


def test_delete_of_whole_fragments_reads_no_data(spark, wh):
    path = make(wh, "meta_del")              # fragments 0..3
    # Remove the data files of the fragments to delete: only a delete that never reads them can succeed.
    for f in lance.dataset(path).get_fragments():
        if f.fragment_id in (1, 3):
            for d in f.data_files():
                os.remove(os.path.join(path, "data", d.path))
    spark.sql("DELETE FROM lance.db.meta_del WHERE _fragid IN (1, 3)")
    ds = lance.dataset(path)
    ds.validate()
    assert [f.fragment_id for f in ds.get_fragments()] == [0, 2]
    assert ds.count_rows() == 6000 and all(f.deletion_file() is None for f in ds.get_fragments())
    spark.sql("DELETE FROM lance.db.meta_del")
    ds = lance.dataset(path)
    assert ds.count_rows() == 0 and ds.version == 3
    assert lance.dataset(path, version=1).count_rows() == 10000


# Concurrent row-level changes of one fragment. The first statement's condition calls a gate (a Python UDF) that
# signals when its scan runs, past the point where the statement pinned the version it read, and then waits; the
# other change commits meanwhile, then the gate opens. The first statement's commit must merge the two deletion files
# (the merged file is written as of the other's version), or conflict when both changed the same rows.

class Gate:
    def __init__(self, spark, directory: Path, name: str):
        self.started, self.go = directory / f"{name}.started", directory / f"{name}.go"
        self.name = f"gate_{name}"
        started, go = self.started, self.go

        def gate(_):
            started.touch()
            deadline = time.monotonic() + 120
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            return True

        spark.udf.register(self.name, gate, "boolean")

    def run(self, statement, meanwhile) -> list:
        """Runs ``statement`` (which calls the gate) in a thread and ``meanwhile`` once it is past the gate's
        signal; returns the errors the statement raised."""
        errors = []

        def target():
            try:
                with translated():
                    statement()
            except Exception as e:  # noqa: BLE001 - handed to the test
                errors.append(e)

        thread = threading.Thread(target=target)
        thread.start()
        deadline = time.monotonic() + 120
        while not self.started.exists() and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            assert self.started.exists(), f"the statement never reached the gate: {errors}"
            meanwhile()
        finally:
            self.go.touch()
            thread.join(180)
        assert not thread.is_alive()
        return errors


def merged_as_of(path: str, version: int) -> bool:
    """Whether fragment 0's deletion file was written as of ``version`` (``_deletions/0-{version}-...``)."""
    return deletion_files(path)[0].startswith(f"_deletions/0-{version}-")


def test_concurrent_deletes_of_disjoint_rows_of_one_fragment_both_commit(spark, wh, tmp_path):
    path = make(wh, "conc_del", n=2000, rows_per_file=5000)
    gate = Gate(spark, tmp_path, "conc_del")
    errors = gate.run(lambda: spark.sql(f"DELETE FROM lance.db.conc_del WHERE id % 2 = 0 AND {gate.name}(id)"),
                      lambda: spark.sql("DELETE FROM lance.db.conc_del WHERE id % 2 = 1 AND id < 1000"))
    assert errors == []
    ds = lance.dataset(path)
    assert ds.version == 3 and len(ds.get_fragments()) == 1
    assert merged_as_of(path, 2)                   # the gated statement rebased over version 2
    assert sorted(rows(path)) == [i for i in range(1000, 2000) if i % 2]
    assert spark.sql("SELECT count(*) AS n FROM lance.db.conc_del").collect()[0].n == 500


@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
@needs_update_and_merge
def test_a_delete_concurrent_with_an_update_of_other_rows_both_commit(spark, wh, tmp_path, stable):
    name = f"conc_upd_{int(stable)}"
    path = make(wh, name, n=900, rows_per_file=5000, enable_stable_row_ids=stable)
    gate = Gate(spark, tmp_path, name)
    errors = gate.run(lambda: spark.sql(f"UPDATE lance.db.{name} SET s = 'u' WHERE id % 3 = 0 AND {gate.name}(id)"),
                      lambda: spark.sql(f"DELETE FROM lance.db.{name} WHERE id % 3 = 1"))
    assert errors == []
    assert lance.dataset(path).version == 3 and merged_as_of(path, 2)
    got = rows(path)
    assert sorted(got) == [i for i in range(900) if i % 3 != 1]
    assert all(s == ("u" if i % 3 == 0 else f"s{i}") and x == i * 0.5 for i, (s, x) in got.items())
    if stable:                                     # updated rows kept their row ids
        t = lance.dataset(path).to_table(columns=["id"], with_row_id=True)
        assert dict(zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist())) == {i: i for i in got}


@needs_update_and_merge
def test_concurrent_changes_of_the_same_rows_conflict_and_change_nothing(spark, wh, tmp_path):
    path = make(wh, "conc_same", n=100, rows_per_file=5000)
    gate = Gate(spark, tmp_path, "conc_same")
    errors = gate.run(lambda: spark.sql(f"UPDATE lance.db.conc_same SET s = 'u' WHERE id < 10 AND {gate.name}(id)"),
                      lambda: spark.sql("DELETE FROM lance.db.conc_same WHERE id < 5"))
    assert len(errors) == 1 and isinstance(errors[0], CommitConflictError), errors
    assert errors[0].error_class == "LANCE_COMMIT_CONFLICT"
    assert "fragment 0: 5 of the rows this Update deleted or updated (offsets 0, 1, 2, 3, 4)" in str(errors[0])
    ds = lance.dataset(path)
    assert ds.version == 2 and len(ds.get_fragments()) == 1
    assert sorted(rows(path)) == list(range(5, 100))
    assert all(s == f"s{i}" for i, (s, _) in rows(path).items())


def test_a_spark_delete_merges_with_a_concurrent_pylance_delete_of_the_same_fragment(spark, wh, tmp_path):
    path = make(wh, "conc_py", n=1000, rows_per_file=5000)
    gate = Gate(spark, tmp_path, "conc_py")
    errors = gate.run(lambda: spark.sql(f"DELETE FROM lance.db.conc_py WHERE id >= 900 AND {gate.name}(id)"),
                      lambda: lance.dataset(path).delete("id < 100"))
    assert errors == []
    ds = lance.dataset(path)
    assert ds.version == 3 and merged_as_of(path, 2)
    assert sorted(rows(path)) == list(range(100, 900))
    # pylance goes on deleting from the merged file.
    lance.dataset(path).delete("id >= 100 AND id < 110")
    assert sorted(rows(path)) == list(range(110, 900))
