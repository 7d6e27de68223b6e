"""Branches created, written and dropped from Spark, interchangeable with pylance 14's (`create_branch`, writes to a
branch dataset, `branches.delete`): what we write on a branch pylance reads with the same rows and `validate()`
passing, what pylance writes on a branch we read; main is untouched by branch writes and the other way round. A
seeded sequence of operations on main and branches, from both sides, is checked against a model:
``SPARKLANCE_FUZZ_SEED`` draws the sequences, ``SPARKLANCE_FUZZ_N`` is how many (``make fuzz`` runs more)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import lance_raises, start_spark, warehouse_with  # noqa: E402

import sparklance  # noqa: E402
from sparklance.table import LanceTable  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "4"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "branches_warehouse", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-branch-tests", wh, **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def ids(df) -> list:
    return sorted(r.id for r in df.collect())


def rows(df) -> list:
    return sorted((r.id, r.v) for r in df.collect())


def pylance_rows(ds) -> list:
    t = ds.to_table(columns=["id", "v"])
    return sorted(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))


def on_branch(path: str, branch: str, version=None):
    ds = lance.dataset(path)
    return ds if branch == "main" and version is None else ds.checkout_version((None if branch == "main" else branch, version))


def table_of(rs) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rs], pa.int64()), "v": pa.array([r[1] for r in rs], pa.string())})


def new_table(wh, name: str, rs) -> str:
    path = str(wh / "db" / f"{name}.lance")
    lance.write_dataset(table_of(rs), path)
    return path


def test_sql_branch_statements_and_writes_read_back_by_pylance(spark, wh):
    path = new_table(wh, "sqlb", [(1, "a"), (2, "b"), (3, "c")])
    lance.write_dataset(table_of([(4, "d")]), path, mode="append")
    spark.sql("ALTER TABLE lance.db.sqlb CREATE BRANCH dev AS OF VERSION 1")
    spark.sql("ALTER TABLE lance.db.sqlb CREATE BRANCH IF NOT EXISTS dev")  # left as it is
    spark.sql("INSERT INTO lance.db.sqlb.branch_dev VALUES (10, 'x'), (11, 'y')")
    spark.sql("DELETE FROM lance.db.sqlb.branch_dev WHERE id = 2")
    spark.sql("UPDATE lance.db.sqlb__branch__dev SET v = 'z' WHERE id = 3")
    spark.createDataFrame([(11, "m"), (12, "n")], "id long, v string").createOrReplaceTempView("src")
    spark.sql("MERGE INTO lance.db.sqlb.branch_dev t USING src s ON t.id = s.id "
              "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *")
    want = [(1, "a"), (3, "z"), (10, "x"), (11, "m"), (12, "n")]
    dev = on_branch(path, "dev")
    assert pylance_rows(dev) == want
    dev.validate()
    # Versions on the branch number on from the version it was made from, as pylance numbers its own.
    assert dev.version == 1 + 4 and [v["version"] for v in dev.versions()] == [1, 2, 3, 4, 5]
    assert rows(spark.table("lance.db.sqlb.branch_dev")) == want
    assert rows(spark.sql("SELECT * FROM lance.db.sqlb VERSION AS OF 'dev'")) == want
    assert rows(spark.sql("SELECT * FROM lance.db.sqlb.branch_dev VERSION AS OF 2")) == \
        pylance_rows(on_branch(path, "dev", 2))
    # main is untouched
    assert pylance_rows(lance.dataset(path)) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert lance.dataset(path).version == 2
    branches = spark.sql("SHOW BRANCHES lance.db.sqlb").collect()
    assert [(b.name, b.parent_branch, b.parent_version) for b in branches] == [("dev", None, 1)]
    assert set(lance.dataset(path).branches.list()) == {"dev"}
    # A branch of the branch, from a tag on the branch's version 3.
    spark.sql("ALTER TABLE lance.db.sqlb.branch_dev CREATE TAG dev3 AS OF VERSION 3")
    assert lance.dataset(path).tags.list()["dev3"]["branch"] == "dev"
    spark.sql("ALTER TABLE lance.db.sqlb CREATE BRANCH `feature/x` AS OF TAG dev3")
    listed = lance.dataset(path).branches.list()
    assert listed["feature/x"]["parent_branch"] == "dev" and listed["feature/x"]["parent_version"] == 3
    assert pylance_rows(on_branch(path, "feature/x")) == pylance_rows(on_branch(path, "dev", 3))
    on_branch(path, "feature/x").validate()
    # The forms proposed for the other Lance connector name the source branch (or MAIN) in the statement.
    spark.sql("ALTER TABLE lance.db.sqlb.branch_dev CREATE BRANCH m1 VERSION AS OF MAIN 2")
    spark.sql("ALTER TABLE lance.db.sqlb CREATE BRANCH d4 VERSION AS OF BRANCH dev 4")
    spark.sql("ALTER TABLE lance.db.sqlb CREATE BRANCH t3 FROM TAG dev3")
    listed = lance.dataset(path).branches.list()
    assert [(listed[b]["parent_branch"], listed[b]["parent_version"]) for b in ("m1", "d4", "t3")] == \
        [(None, 2), ("dev", 4), ("dev", 3)]
    assert rows(spark.table("lance.db.sqlb.branch_m1")) == pylance_rows(lance.dataset(path))
    assert rows(spark.table("lance.db.sqlb.branch_d4")) == pylance_rows(on_branch(path, "dev", 4))
    for b in ("m1", "d4", "t3"):
        spark.sql(f"ALTER TABLE lance.db.sqlb DROP BRANCH {b}")
    with lance_raises(sparklance.InvalidArgumentError, match="branch feature/x was made from it"):
        spark.sql("ALTER TABLE lance.db.sqlb DROP BRANCH dev")
    spark.sql("ALTER TABLE lance.db.sqlb DROP BRANCH `feature/x`")
    spark.sql("ALTER TABLE lance.db.sqlb DROP BRANCH IF EXISTS `feature/x`")
    # A tag points to dev's version 3: both sides refuse to drop dev while it does.
    with lance_raises(sparklance.InvalidArgumentError, match="tag dev3 \\(version 3\\) points to its versions. "
                      "Drop those tags first"):
        spark.sql("ALTER TABLE lance.db.sqlb DROP BRANCH dev")
    with pytest.raises(OSError, match="Branch dev is referenced by tags"):
        lance.dataset(path).branches.delete("dev")
    spark.sql("ALTER TABLE lance.db.sqlb DROP TAG dev3")
    spark.sql("ALTER TABLE lance.db.sqlb DROP BRANCH dev")
    assert lance.dataset(path).branches.list() == {}
    assert not (Path(path) / "tree" / "dev").exists()
    assert pylance_rows(lance.dataset(path)) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_dataframe_branch_option_appends_and_overwrites(spark, wh):
    path = new_table(wh, "dfb", [(1, "a"), (2, "b")])
    lance.dataset(path).create_branch("dev", 1)
    df = spark.createDataFrame([(5, "e")], "id long, v string")
    df.write.format("lance").option("branch", "dev").mode("append").save(path)
    assert pylance_rows(on_branch(path, "dev")) == [(1, "a"), (2, "b"), (5, "e")]
    spark.createDataFrame([(7, "g")], "id long, v string").write.format("lance").option("branch", "dev") \
        .mode("overwrite").save(path)
    dev = on_branch(path, "dev")
    assert pylance_rows(dev) == [(7, "g")]
    dev.validate()
    assert rows(spark.read.format("lance").option("branch", "dev").load(path)) == [(7, "g")]
    assert rows(spark.read.format("lance").option("branch", "dev").option("version", 2).load(path)) == \
        [(1, "a"), (2, "b"), (5, "e")]
    assert pylance_rows(lance.dataset(path)) == [(1, "a"), (2, "b")]
    # pylance writes on the branch after ours, and we read them
    lance.write_dataset(table_of([(8, "h")]), on_branch(path, "dev"), mode="append")
    assert rows(spark.read.format("lance").option("branch", "dev").load(path)) == [(7, "g"), (8, "h")]
    # new files of the branch are under its own directory; main's data directory is unchanged
    assert len(list((Path(path) / "data").iterdir())) == 1
    assert len(list((Path(path) / "tree" / "dev" / "data").iterdir())) == 3


def test_bad_branch_input_is_refused_clearly(spark, wh):
    path = new_table(wh, "badb", [(1, "a")])
    spark.sql("ALTER TABLE lance.db.badb CREATE BRANCH dev")
    df = spark.createDataFrame([(5, "e")], "id long, v string")
    with lance_raises(sparklance.InvalidArgumentError, match="already has a branch 'dev'"):
        spark.sql("ALTER TABLE lance.db.badb CREATE BRANCH dev")
    with lance_raises(sparklance.InvalidArgumentError, match="'main' is the name of the main branch"):
        spark.sql("ALTER TABLE lance.db.badb CREATE BRANCH main")
    with lance_raises(sparklance.VersionNotFoundError, match="branch 'nope' does not exist"):
        df.write.format("lance").option("branch", "nope").mode("append").save(path)
    with lance_raises(sparklance.VersionNotFoundError, match="branch 'nope' does not exist"):
        spark.sql("INSERT INTO lance.db.badb.branch_nope VALUES (1, 'a')")
    with lance_raises(sparklance.VersionNotFoundError, match="branch 'nope' does not exist"):
        spark.sql("ALTER TABLE lance.db.badb DROP BRANCH nope")
    with lance_raises(sparklance.VersionNotFoundError, match="version 9"):
        spark.sql("ALTER TABLE lance.db.badb CREATE BRANCH x AS OF VERSION 9")
    lance.dataset(path).tags.create("t1", 1)
    with lance_raises(sparklance.UnsupportedFeatureError, match="a tag names a version, which cannot change"):
        df.write.format("lance").option("tag", "t1").mode("append").save(path)
    with lance_raises(sparklance.UnsupportedFeatureError, match="names branch 'dev'"):
        spark.sql("DROP TABLE lance.db.badb.branch_dev")
    with lance_raises(sparklance.UnsupportedFeatureError, match="names branch 'other'"):
        spark.sql("CREATE TABLE lance.db.badb__branch__other (id long)")
    assert pylance_rows(lance.dataset(path)) == [(1, "a")] and set(lance.dataset(path).branches.list()) == {"dev"}


def test_python_branch_helpers(spark, wh):
    path = new_table(wh, "pyb", [(1, "a"), (2, "b")])
    t = LanceTable.for_path(spark, path)
    dev = t.branches.create("dev")
    dev.delete("id = 1")
    dev.tags.create("dev_now")
    assert lance.dataset(path).tags.list()["dev_now"]["branch"] == "dev"
    nested = dev.branches.create("dev2", tag="dev_now")
    assert rows(nested.to_df()) == [(2, "b")]
    assert t.branches.list()["dev2"]["parent_branch"] == "dev"
    assert rows(t.to_df()) == [(1, "a"), (2, "b")]
    assert rows(dev.to_df(version=1)) == [(1, "a"), (2, "b")]
    assert dev.branch("main").path == t.path
    t.branches.delete("dev2")
    assert set(t.branches.list()) == {"dev"}


def test_seeded_operations_on_main_and_branches_match_a_model_and_pylance(spark, wh):
    for k in range(N):
        seed = SEED * 1000 + k
        r = random.Random(seed)
        name = f"seq{k}"
        start = [(i, f"s{i}") for i in range(r.randint(1, 8))]
        path = new_table(wh, name, start)
        sql = f"lance.db.{name}"
        model = {"main": sorted(start)}
        versions = {("main", 1): sorted(start)}
        next_id = 1000
        made = 0
        # Tags are drawn from their own generator, so that a seed's operations stay those it drew before tags.
        tr = random.Random(f"tags-{seed}")
        tags = {}  # name -> (branch, version, rows)
        for step in range(12):
            if tr.random() < 0.35:  # tag a version of a branch, from Spark or pylance
                tb = tr.choice(sorted(model))
                tv = tr.choice(sorted(v for (x, v) in versions if x == tb))
                tag = f"tg{step}"
                if tr.random() < 0.5:
                    spark.sql(f"ALTER TABLE {sql if tb == 'main' else f'{sql}.`branch_{tb}`'} CREATE TAG {tag} "
                              f"AS OF VERSION {tv}")
                else:
                    lance.dataset(path).tags.create(tag, (None if tb == "main" else tb, tv))
                tags[tag] = (tb, tv, versions[(tb, tv)])
            b = r.choice(sorted(model))
            ref = sql if b == "main" else f"{sql}.`branch_{b}`"
            op = r.randrange(9)
            if op == 0:  # append from Spark
                new = [(next_id + i, f"n{step}") for i in range(r.randint(1, 4))]
                next_id += 10
                w = spark.createDataFrame(new, "id long, v string").write.format("lance").mode("append")
                (w if b == "main" else w.option("branch", b)).save(path)
                model[b] = sorted(model[b] + new)
            elif op == 1 and model[b]:  # SQL delete
                victim = r.choice(model[b])[0]
                spark.sql(f"DELETE FROM {ref} WHERE id = {victim}")
                model[b] = [x for x in model[b] if x[0] != victim]
            elif op == 2 and model[b]:  # SQL update
                target = r.choice(model[b])[0]
                spark.sql(f"UPDATE {ref} SET v = 'u{step}' WHERE id = {target}")
                model[b] = sorted((i, f"u{step}" if i == target else v) for i, v in model[b])
            elif op == 3:  # new branch from a version of b, from Spark or pylance
                made += 1
                nb = f"b{made}" if r.random() < 0.5 else f"g/b{made}"
                v = r.choice(sorted(v for (x, v) in versions if x == b))
                if r.random() < 0.5:
                    spark.sql(f"ALTER TABLE {ref} CREATE BRANCH `{nb}` AS OF VERSION {v}")
                else:
                    lance.dataset(path).create_branch(nb, (None if b == "main" else b, v))
                model[nb] = versions[(b, v)]
                versions[(nb, v)] = model[nb]
                continue
            elif op == 4:  # pylance appends on b
                new = [(next_id, f"p{step}")]
                next_id += 10
                lance.write_dataset(table_of(new), on_branch(path, b), mode="append")
                model[b] = sorted(model[b] + new)
            elif op == 5 and b != "main":  # drop b, unless another branch was made from it
                children = [n for n, c in lance.dataset(path).branches.list().items() if c["parent_branch"] == b]
                tagged = sorted(t for t, (x, _, _) in tags.items() if x == b)
                if children:
                    with lance_raises(sparklance.InvalidArgumentError, match="Drop those branches first"):
                        spark.sql(f"ALTER TABLE {sql} DROP BRANCH `{b}`")
                elif tagged:  # pylance 14 refuses too: "Branch b is referenced by tags"
                    with lance_raises(sparklance.InvalidArgumentError, match="Drop those tags first"):
                        spark.sql(f"ALTER TABLE {sql} DROP BRANCH `{b}`")
                    with pytest.raises(OSError, match="referenced by tags"):
                        lance.dataset(path).branches.delete(b)
                else:
                    spark.sql(f"ALTER TABLE {sql} DROP BRANCH `{b}`")
                    del model[b]
                    versions = {k: x for k, x in versions.items() if k[0] != b}
                continue
            elif op == 6:  # compaction
                spark.sql(f"OPTIMIZE {ref} WITH (target_rows_per_fragment = 100)")
            elif op == 7 and model[b]:  # pylance deletes on b
                victim = r.choice(model[b])[0]
                on_branch(path, b).delete(f"id = {victim}")
                model[b] = [x for x in model[b] if x[0] != victim]
            elif op == 8:  # VACUUM b: its old versions go, but those a branch was made from
                spark.sql(f"VACUUM {ref} RETAIN 0 HOURS")
                kept = {v["version"] for v in on_branch(path, b).versions()}
                versions = {k: x for k, x in versions.items() if k[0] != b or k[1] in kept}
                assert all(k in versions for k in
                           [(c["parent_branch"] or "main", c["parent_version"])
                            for c in lance.dataset(path).branches.list().values()]), (seed, step)
            else:
                continue
            versions[(b, on_branch(path, b).version)] = model[b]
            for x, want in model.items():
                ds = on_branch(path, x)
                assert pylance_rows(ds) == want, (seed, step, x, "pylance")
                ds.validate()
                got = spark.read.format("lance").load(path) if x == "main" else \
                    spark.read.format("lance").option("branch", x).load(path)
                assert rows(got) == want, (seed, step, x, "sparklance")
            check_tags(spark, path, tags, (seed, step))
        for (x, v), want in versions.items():
            assert pylance_rows(on_branch(path, x, v)) == want, (seed, x, v)
            reader = spark.read.format("lance").option("version", v)
            assert rows((reader if x == "main" else reader.option("branch", x)).load(path)) == want, (seed, x, v)
        assert set(lance.dataset(path).branches.list()) == set(model) - {"main"}
        check_tags(spark, path, tags, (seed, "end"))


def check_tags(spark, path: str, tags: dict, where) -> None:
    """Every tag names its branch and version for pylance, and reads the rows that version had on both sides."""
    listed = lance.dataset(path).tags.list()
    assert {t: (x["branch"] or "main", x["version"]) for t, x in listed.items()} == \
        {t: (b, v) for t, (b, v, _) in tags.items()}, where
    for tag, (_, _, want) in tags.items():
        assert pylance_rows(lance.dataset(path).checkout_version(tag)) == want, (where, tag, "pylance")
        assert rows(spark.read.format("lance").option("tag", tag).load(path)) == want, (where, tag, "sparklance")


def test_shallow_clone_is_writable_and_its_source_untouched(spark, wh):
    src = new_table(wh, "clsrc", [(1, "a"), (2, "b"), (3, "c")])
    clone = str(wh / "db" / "clone.lance")
    lance.dataset(src).shallow_clone(clone, 1)
    spark.createDataFrame([(4, "d")], "id long, v string").write.format("lance").mode("append").save(clone)
    spark.sql("DELETE FROM lance.db.clone WHERE id = 1")
    spark.sql("UPDATE lance.db.clone SET v = 'z' WHERE id = 2")
    ds = lance.dataset(clone)
    assert pylance_rows(ds) == [(2, "z"), (3, "c"), (4, "d")]
    ds.validate()
    assert rows(spark.table("lance.db.clone")) == [(2, "z"), (3, "c"), (4, "d")]
    assert pylance_rows(lance.dataset(src)) == [(1, "a"), (2, "b"), (3, "c")]
    assert len(list((Path(src) / "data").iterdir())) == 1 and not (Path(src) / "_deletions").exists()
    # VACUUM of the clone removes nothing of its source's files, which its versions still read.
    spark.sql("VACUUM lance.db.clone RETAIN 0 HOURS")
    assert pylance_rows(lance.dataset(clone)) == [(2, "z"), (3, "c"), (4, "d")]
    assert len(list((Path(src) / "data").iterdir())) == 1


def test_indexes_history_and_restore_on_a_branch(spark, wh):
    path = new_table(wh, "idxb", [(i, f"v{i % 7}") for i in range(200)])
    lance.dataset(path).create_scalar_index("id", "BTREE")
    spark.sql("ALTER TABLE lance.db.idxb CREATE BRANCH dev")
    spark.sql("INSERT INTO lance.db.idxb.branch_dev VALUES (500, 'n'), (7, 'dup')")
    spark.sql("DELETE FROM lance.db.idxb.branch_dev WHERE id = 3")
    # The index inherited from main (read from main's directory) and the rows the branch added both answer.
    for cond in ("id = 7", "id = 3", "id = 500", "id < 5", "id >= 199"):
        t = on_branch(path, "dev").to_table(filter=cond)
        want = sorted(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))
        assert rows(spark.sql(f"SELECT * FROM lance.db.idxb.branch_dev WHERE {cond}")) == want, cond
    spark.sql("ALTER TABLE lance.db.idxb.branch_dev CREATE INDEX v_idx USING bitmap (v)")
    assert "v_idx" not in [i.name for i in lance.dataset(path).describe_indices()]
    dev = on_branch(path, "dev")
    assert {i.name for i in dev.describe_indices()} == {"id_idx", "v_idx"}
    dev.validate()
    assert rows(spark.sql("SELECT * FROM lance.db.idxb.branch_dev WHERE v = 'dup'")) == [(7, "dup")]
    history = [r.version for r in spark.sql("DESCRIBE HISTORY lance.db.idxb.branch_dev").collect()]
    assert history == [v["version"] for v in dev.versions()] == [2, 3, 4, 5]
    spark.sql("RESTORE TABLE lance.db.idxb.branch_dev TO VERSION AS OF 2")
    assert pylance_rows(on_branch(path, "dev")) == pylance_rows(lance.dataset(path))
    on_branch(path, "dev").validate()
    assert lance.dataset(path).version == 2
