"""Issue #18's compatibility suite: every example statement of lance-spark's documentation (``compat/
lance_spark_docs.py``, kept as data with its source page and commit) run in order against sparklance; each outcome
is checked, and the data the statements write is read back with pylance (which must also ``validate()`` it).

Each scenario runs in a new session of one Spark (``newSession``) whose catalog ``lance`` points at a fresh
warehouse, so the pages' names (``users``, ``lance.db.users``, ``lance.default.items``) mean the same in every
scenario. A scenario runs every step even after a mismatch and reports all of them.
"""

from __future__ import annotations

import re
import shutil
import sys
import textwrap
from pathlib import Path

import lance
import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE / "compat"))

from conftest import SPARK_LINE, start_spark, warehouse_with  # noqa: E402
import lance_spark_docs as docs  # noqa: E402

CATALOG_CLASS = "io.sparklance.spark.LanceCatalog"

# Named results the data file's checks refer to: (columns, rows) of the select_and_time_travel scenario's users.
AGE_OVER_25 = (["name", "email"], [("Alice", "a@x.com"), ("Carol", "c@x.com"), ("Erin", "e@x.com"),
                                   ("Gus", "g@x.com"), ("Hal", "h@x.com"), ("Ida", "i@x.com"), ("Jo", "j@x.com")])
RESULTS = {
    "AGE_OVER_25": AGE_OVER_25,
    "IDS_AT_5": (["id"], [(i,) for i in range(1, 6)]),
    "IDS_AT_10": (["id"], [(i,) for i in range(1, 11)]),
    "ALL_IDS": (["id"], [(i,) for i in range(1, 11)]),
}


@pytest.fixture(scope="module")
def base_spark(tmp_path_factory):
    session = start_spark("sparklance-lance-spark-docs", warehouse_with(tmp_path_factory, "docs_base", "db"))
    yield session
    session.stop()


# ---------------------------------------------------------------------------------------------- running steps

def statements(step) -> list:
    """The step's SQL statements: one, or ``statements`` of them separated by ``;`` at a line's end."""
    text = textwrap.dedent(step["text"])
    if step.get("statements", 1) == 1:
        return [text]
    parts = [p.strip() for p in re.split(r";[ \t]*\n", text) if p.strip()]
    assert len(parts) == step["statements"], f"expected {step['statements']} statements in {text!r}"
    return parts


def sql_text(step, text: str) -> str:
    """A statement as run: the page's text, or for an ``adapted`` elision, written out."""
    if "array(0.1, 0.2, 0.3, ...)" in text:
        values = ", ".join(f"{0.1 * (i + 1):.1f}" for i in range(128))
        text = text.replace("array(0.1, 0.2, 0.3, ...)", f"array({values})")
    return text


class Paths:
    """The pages' path placeholders, per scenario: every ``/path/to/output.lance`` is a new directory per step."""

    def __init__(self, wh: Path, tmp: Path):
        self.wh, self.tmp, self.outputs = wh, tmp, 0
        self.last_output = None

    def substitute(self, text: str) -> str:
        if "/path/to/output.lance" in text:
            self.outputs += 1
            self.last_output = self.tmp / f"output_{self.outputs}.lance"
            text = text.replace("/path/to/output.lance", str(self.last_output))
        return (text.replace("/path/to/dataset.lance", str(self.wh / "db" / "users.lance"))
                .replace("/path/to/source", str(self.tmp / "source"))
                .replace("/path/to/checkpoint", str(self.tmp / "checkpoint"))
                .replace("/path/to/lance/database", str(self.wh))
                .replace("{warehouse}", str(self.wh)))


def new_session(base, wh: Path, catalogs=(), dir_catalogs=()):
    """A session whose ``lance`` catalog and ``catalogs`` are warehouse catalogs at ``wh``, and whose
    ``dir_catalogs`` are catalogs over the directory namespace at ``wh`` (lance-spark's kind of catalog)."""
    spark = base.newSession()
    spark.conf.set("spark.sql.catalog.lance.warehouse", str(wh))
    for name in catalogs:
        spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
        spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(wh))
    for name in dir_catalogs:
        spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
        spark.conf.set(f"spark.sql.catalog.{name}.impl", "dir")
        spark.conf.set(f"spark.sql.catalog.{name}.root", str(wh))
    return spark


def apply_conf(base, spark, step, paths):
    """A session example: its settings (class names mapped to sparklance's) on a new session; the catalog is then
    initialised by listing its namespaces. Returns the session."""
    settings = {k: paths.substitute(docs.CLASS_NAMES.get(v, v)) for k, v in step["settings"].items()}
    ext = settings.pop("spark.sql.extensions", None)
    if ext is not None:
        configured = base.sparkContext.getConf().get("spark.sql.extensions", "")
        assert ext in configured.split(","), f"spark.sql.extensions {ext} is not sparklance's ({configured})"
    if not settings:
        return spark
    new = base.newSession()
    if any(k.endswith(".root") for k in settings) or settings.get("spark.sql.catalog.lance.impl") == "rest":
        new.conf.unset("spark.sql.catalog.lance.warehouse")
    else:
        new.conf.set("spark.sql.catalog.lance.warehouse", str(paths.wh))
    for k, v in settings.items():
        new.conf.set(k, v)
    new.sql("SHOW NAMESPACES IN lance").collect()
    return new


def run_step(base, ns, step, paths):
    """Runs one step; returns the rows of its statements (SQL) or None."""
    from sparklance.errors import translated

    with translated():
        if step["kind"] == "sql":
            frames = [ns["spark"].sql(paths.substitute(sql_text(step, s))) for s in statements(step)]
            ns["_last_schema"] = frames[-1].schema
            return [f.collect() for f in frames]
        if step["kind"] == "conf":
            ns["spark"] = apply_conf(base, ns["spark"], step, paths)
            return None
        if step.get("setup"):
            exec(step["setup"], ns)
        exec(compile(paths.substitute(textwrap.dedent(step["text"])), "<lance-spark docs>", "exec"), ns)
        if step.get("await_streams"):
            for q in ns["spark"].streams.active:
                q.awaitTermination(300)
                if q.exception() is not None:
                    raise q.exception()
        return None


def outcome(base, ns, step, paths):
    """("ok", rows) or ("error", exception)."""
    try:
        return "ok", run_step(base, ns, step, paths)
    except Exception as e:  # noqa: BLE001 -- the outcome is the test's subject
        return "error", e


# --------------------------------------------------------------------------------------------------- checks

def dataset(wh: Path, path: str, namespace: bool = False):
    if namespace:
        import lance_namespace
        from lance_namespace import DescribeTableRequest
        ns = lance_namespace.connect("dir", {"root": str(wh)})
        location = ns.describe_table(DescribeTableRequest(id=path.split("/"))).location
        ds = lance.dataset(location)
    else:
        ds = lance.dataset(str(wh / f"{path}.lance"))
    ds.validate()
    return ds


def value_at(row: dict, column: str):
    for part in column.split("."):
        row = None if row is None else row[part]
    return row


def normalised(rows):
    return sorted((tuple(r) for r in rows), key=repr)


def spark_rows(rows, columns=None):
    if columns is None:
        return normalised(tuple(r) for r in rows)
    return normalised(tuple(r[c] for c in columns) for r in rows)


def nearest_ids(vectors: dict, query, k: int):
    q = np.asarray(query, dtype=np.float64)
    dist = {i: float(np.sum((np.asarray(v, dtype=np.float64) - q) ** 2)) for i, v in vectors.items()}
    return sorted(dist, key=lambda i: (dist[i], i))[:k]


def check(step, rows, ns, wh: Path, paths) -> list:
    """The mismatches between what the step did and what the data file says it does."""
    problems = []
    spark = ns["spark"]
    last = rows[-1] if rows else None

    def expect(cond, what):
        if not cond:
            problems.append(what)

    if "table" in step:
        t = step["table"]
        ds = dataset(wh, t["path"], t.get("namespace", False))
        data = ds.to_table(filter=step.get("where")).to_pylist()
        got = normalised(tuple(value_at(r, c) for c in t["columns"]) for r in data)
        expect(got == normalised(t["rows"]), f"pylance reads {t['path']}: {got}, expected {normalised(t['rows'])}")
    if "schema" in step:
        path, types = step["schema"]
        schema = dataset(wh, path).schema
        for col, want in types.items():
            got = str(schema.field(col).type) if col in schema.names else None
            expect(got == want, f"{path}.{col} is {got}, expected {want}")
    if "field_metadata" in step:
        path, wanted = step["field_metadata"]
        schema = dataset(wh, path).schema
        for col, meta in wanted.items():
            got = {k.decode(): v.decode() for k, v in (schema.field(col).metadata or {}).items()}
            expect(all(got.get(k) == v for k, v in meta.items()), f"{path}.{col} field metadata {got}, expected {meta}")
    if "count" in step:
        path, n = step["count"]
        got = dataset(wh, path).count_rows()
        expect(got == n, f"{path} has {got} rows, expected {n}")
    if "count_rows" in step:
        expect(len(last) == step["count_rows"], f"{len(last)} rows returned, expected {step['count_rows']}")
    if "rows" in step:
        got = spark_rows(last)
        expect(got == normalised(step["rows"]), f"rows {got}, expected {normalised(step['rows'])}")
    if "descriptors" in step:
        path, col, fields = step["descriptors"]
        data = dataset(wh, path).to_table(columns=["id", col]).to_pylist()   # pylance's default: descriptors
        want = normalised((r["id"],) + tuple(None if r[col] is None else r[col][f] for f in fields) for r in data)
        got = spark_rows(last)
        expect(got == want, f"descriptors {got}, pylance's {want}")
    if "columns" in step:
        # The result's first columns, as the page's Output section lists them: (name, Spark type).
        got = [(f.name, f.dataType.simpleString()) for f in ns["_last_schema"].fields][:len(step["columns"])]
        expect(got == step["columns"], f"columns {got}, expected {step['columns']}")
    if "first_values" in step:
        width = len(step["first_values"][0])
        got = normalised(tuple(r)[:width] for r in last)
        expect(got == normalised(step["first_values"]), f"rows begin {got}, expected {normalised(step['first_values'])}")
    if "rows_first" in step:
        got = normalised((r[0],) for r in last)
        expect(got == normalised(step["rows_first"]), f"first column {got}, expected {step['rows_first']}")
    if "first_columns" in step:
        for got_rows, want in zip(rows, step["first_columns"]):
            got = sorted(r[0] for r in got_rows)
            expect(got == sorted(want), f"first column {got}, expected {sorted(want)}")
    if "rows_of" in step:
        cols, key = step["rows_of"]
        columns, want = RESULTS[key]
        got = spark_rows(last, [c.strip() for c in cols.split(",")])
        expect(got == normalised(want), f"rows {got}, expected {normalised(want)}")
    if "result" in step:
        var, key = step["result"]
        columns, want = RESULTS[key]
        got = spark_rows(ns[var].collect(), columns)
        expect(got == normalised(want), f"{var} holds {got}, expected {normalised(want)}")
    if "result_len" in step:
        var, n = step["result_len"]
        expect(len(ns[var]) == n, f"{var} holds {len(ns[var])} rows, expected {n}")
    if "output_rows" in step:
        ds = lance.dataset(str(paths.last_output))
        ds.validate()
        want = normalised(tuple(r) for r in ns["df"].collect())
        got = normalised(tuple(r.values()) for r in ds.to_table().to_pylist())
        expect(ds.count_rows() == step["output_rows"] and got == want, f"{paths.last_output} holds other rows")
    if "vectors" in step:
        path, col, var, index = step["vectors"]
        got = {r["id"]: r[col] for r in dataset(wh, path).to_table(columns=["id", col]).to_pylist()}
        want = {r[0]: r[index] for r in ns[var]}
        expect(set(got) == set(want) and all(np.allclose(got[i], want[i], rtol=1e-6) for i in want),
               f"{path}.{col} holds other vectors than {var}")
    if "lengths" in step:
        path, col, lengths = step["lengths"]
        got = {r["id"]: len(r[col]) for r in dataset(wh, path).to_table(columns=["id", col]).to_pylist()}
        expect(got == lengths, f"{path}.{col} lengths {got}, expected {lengths}")
    if "blob_lengths" in step:
        path, col, lengths = step["blob_lengths"]
        ds = dataset(wh, path)
        ids = ds.to_table(columns=["id"]).column("id").to_pylist()
        blobs = ds.take_blobs(col, indices=list(range(len(ids))))
        got = {i: None if b is None else len(b.readall()) for i, b in zip(ids, blobs)}
        expect(got == lengths, f"{path}.{col} blob lengths {got}, expected {lengths}")
    if "versions" in step:
        path, n = step["versions"]
        got = dataset(wh, path).version
        expect(got == n, f"{path} is at version {got}, expected {n}")
    if "tags" in step:
        path, wanted = step["tags"]
        tags = dataset(wh, path).tags.list()
        for name, want in wanted.items():
            got = None if name not in tags else (tags[name]["version"], tags[name].get("branch"))
            expect(got == want, f"tag {name} of {path}: {got}, expected {want}")
    if "branches" in step:
        path, wanted = step["branches"]
        branches = dataset(wh, path).branches.list()
        for name, want in wanted.items():
            got = None if name not in branches else (branches[name].get("parent_branch"),
                                                     branches[name]["parent_version"])
            expect(got == want, f"branch {name} of {path}: {got}, expected {want}")
    if "indexes" in step:
        path, wanted = step["indexes"]
        listed = {i["name"]: i["type"] for i in dataset(wh, path).list_indices()}
        for name, want in wanted.items():
            expect(listed.get(name) == want, f"index {name} of {path}: {listed.get(name)}, expected {want}")
    if "index_covers" in step:
        path, name = step["index_covers"]
        stats = dataset(wh, path).stats.index_stats(name)
        expect(stats["num_unindexed_rows"] == 0, f"index {name} of {path} leaves {stats['num_unindexed_rows']} rows out")
    if "index_covers_none" in step:
        path, name = step["index_covers_none"]
        stats = dataset(wh, path).stats.index_stats(name)
        expect(stats["num_indexed_rows"] == 0, f"index {name} of {path} holds {stats['num_indexed_rows']} rows, "
               "expected none (train = false)")
    if "fragments" in step:
        path, n = step["fragments"]
        got = len(dataset(wh, path).get_fragments())
        expect(got == n, f"{path} has {got} fragments, expected {n}")
    if "config" in step:
        path, wanted = step["config"]
        config = dataset(wh, path).config()
        for k, v in wanted.items():
            expect(config.get(k) == v, f"config {k} of {path}: {config.get(k)}, expected {v}")
    if "gone" in step:
        expect(not (wh / f"{step['gone']}.lance").exists(), f"{step['gone']} still exists")
    if "ns_tables" in step:
        import lance_namespace
        from lance_namespace import ListTablesRequest
        ns_id, wanted = step["ns_tables"]
        got = lance_namespace.connect("dir", {"root": str(wh)}).list_tables(ListTablesRequest(id=ns_id)).tables
        expect(sorted(got) == sorted(wanted), f"namespace {ns_id} lists {got}, expected {wanted}")
    if "table_dirs" in step:
        got = sorted(p.name for p in wh.iterdir() if p.name != "__manifest" and (p / "_versions").is_dir())
        expect(len(got) == step["table_dirs"], f"{len(got)} table directories {got}, expected {step['table_dirs']}")
    if "hash_column" in step:
        path, source, target = step["hash_column"]
        data = dataset(wh, path).to_table(columns=[source, target]).to_pylist()
        names = [r[source] for r in data]
        hashes = {r[0]: r[1] for r in spark.createDataFrame([(n,) for n in names], "name STRING")
                  .selectExpr("name", "hash(name)").collect()}
        expect(all(r[target] == hashes[r[source]] for r in data), f"{path}.{target} is not hash({source})")
    if "filter_check" in step:
        name, predicate, n = step["filter_check"]
        got = spark.table(name).where(predicate).count()
        expect(got == n, f"{name} WHERE {predicate}: {got} rows, expected {n}")
    if "nearest" in step:
        path, col, query, k = step["nearest"]
        vectors = {r["id"]: r[col] for r in dataset(wh, path).to_table(columns=["id", col]).to_pylist()}
        got = [r["id"] for r in sorted(last, key=lambda r: r["_distance"])]
        expect(got == nearest_ids(vectors, query, k), f"nearest ids {got}, expected {nearest_ids(vectors, query, k)}")
    if "nearest_batch" in step:
        path, col, queries, k = step["nearest_batch"]
        vectors = {r["id"]: r[col] for r in dataset(wh, path).to_table(columns=["id", col]).to_pylist()}
        for qi, query in enumerate(queries):
            got = [r["id"] for r in sorted((r for r in last if r["query_index"] == qi), key=lambda r: r["_distance"])]
            expect(got == nearest_ids(vectors, query, k), f"query {qi}: nearest ids {got}")
    if "ranked" in step:
        path, query, columns, k = step["ranked"]
        fts = {"query": query, "columns": columns} if columns else query
        want = dataset(wh, path).to_table(full_text_query=fts, columns=["id", "_score"], limit=k).to_pylist()
        got = [(r["id"], r["_score"]) for r in last]
        # Rows of equal score come in no fixed order in pylance (sparklance orders them by row id): compare each
        # side by score, then id. The scenario's rows are fewer than k, so no tie is cut by the limit.
        def ranked(rows):
            return sorted(rows, key=lambda r: (-round(r[1], 5), r[0]))
        theirs = ranked([(r["id"], r["_score"]) for r in want])
        expect([i for i, _ in ranked(got)] == [i for i, _ in theirs] and
               all(abs(s - t) <= 1e-5 * t for (_, s), (_, t) in zip(ranked(got), theirs)),
               f"ranked rows {got}, pylance's {theirs}")
    if "fused" in step:
        path, n = step["fused"]
        relevance = [r["_relevance_score"] for r in last]
        expect(len(last) == n and relevance == sorted(relevance, reverse=True) and
               all((r["_distance"] is not None) or (r["_score"] is not None) for r in last),
               f"hybrid rows {last}, expected {n} rows by falling relevance, each found by a search")
    if "knn_join" in step:
        k, predicate = step["knn_join"]
        docs_rows = dataset(wh, "db/documents").to_table().to_pylist()
        if predicate:
            docs_rows = [r for r in docs_rows if r["category"] == "news" and r["score"] > 5]
        vectors = {r["id"]: r["embedding"] for r in docs_rows}
        want = sorted((q[0], d) for q in ns["queries"] for d in nearest_ids(vectors, q[1], k))
        got = sorted((r[0], r[1]) for r in last)
        expect(got == want, f"nearest join pairs differ from brute force ({len(got)} vs {len(want)})")
    return problems


def judge(step, result, value) -> list:
    """Mismatches between the step's outcome and its expected one (before any data check)."""
    expected = step["expect"]
    if expected == docs.OK:
        if result == "error":
            return [f"expected ok, got {type(value).__name__}: {str(value)[:600]}"]
        return []
    if result == "ok":
        return [f"expected {expected['class']} ({expected['text']!r}), but it ran"]
    error_class = condition(value)
    if error_class != expected["class"] or expected["text"].lower() not in str(value).lower():
        return [f"expected {expected['class']} containing {expected['text']!r}, got {error_class or type(value).__name__}: "
                f"{str(value)[:600]}"]
    return []


def condition(e) -> str:
    """The error class of a sparklance error, or the condition of an error Spark raised itself."""
    if getattr(e, "error_class", None):
        return e.error_class
    getter = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    return (getter() if callable(getter) else None) or type(e).__name__


def compact_twin(wh: Path, step):
    """For a step with ``fragments_as_pylance=(path, options)``: a copy of the table as it is before the step,
    compacted by pylance's ``compact_files(**options)``, whose fragment count the step's compaction must leave."""
    if "fragments_as_pylance" not in step:
        return None
    path, options = step["fragments_as_pylance"]
    source = dataset(wh, path).uri
    twin = str(wh.parent / (wh.name + "_twin")) + "/" + path.replace("/", "_") + ".lance"
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(source, twin)
    lance.dataset(twin).optimize.compact_files(**options)
    return lance.dataset(twin)


def step_label(i, step) -> str:
    where = step["page"] or "ours"
    first = textwrap.dedent(step["text"]).strip().splitlines()[0][:80]
    return f"step {i} [{where}] {first}"


@pytest.mark.parametrize("scenario", docs.SCENARIOS, ids=[s["name"] for s in docs.SCENARIOS])
def test_lance_spark_docs(base_spark, tmp_path_factory, scenario):
    if SPARK_LINE < scenario.get("min_spark", (0, 0)):
        pytest.skip(f"the statements of {scenario['name']} need Spark {'.'.join(map(str, scenario['min_spark']))}")
    wh = warehouse_with(tmp_path_factory, f"docs_{scenario['name']}", *scenario["namespaces"])
    paths = Paths(wh, tmp_path_factory.mktemp(f"docs_{scenario['name']}_paths"))
    ns = {"spark": new_session(base_spark, wh, scenario.get("catalogs", ()), scenario.get("dir_catalogs", ())),
          "__name__": "lance_spark_docs"}
    ns["spark"].sql("SHOW NAMESPACES IN lance").collect()
    problems = []
    for i, step in enumerate(scenario["steps"]):
        twin = compact_twin(wh, step)
        result, value = outcome(base_spark, ns, step, paths)
        found = judge(step, result, value)
        if not found and result == "ok" and step["expect"] == docs.OK:
            try:
                found = check(step, value, ns, wh, paths)
            except Exception as e:  # noqa: BLE001 -- a check that cannot run is a mismatch to report
                found = [f"check failed: {type(e).__name__}: {str(e)[:400]}"]
        if twin and result == "ok":
            ours, theirs = len(dataset(wh, step["fragments_as_pylance"][0]).get_fragments()), len(twin.get_fragments())
            if ours != theirs:
                found.append(f"{ours} fragments after the compaction, pylance's compact_files leaves {theirs}")
        problems += [f"{step_label(i, step)}: {p}" for p in found]
    for q in ns["spark"].streams.active:
        q.stop()
    assert not problems, "\n".join(problems)


def test_every_page_is_named_with_its_commit():
    """Every step names a page of PAGES (or is ours); every page of PAGES has a step."""
    used = set()
    for scenario in docs.SCENARIOS:
        for step in scenario["steps"]:
            if step.get("ours"):
                assert step["page"] is None
                continue
            assert step["page"] in docs.PAGES, step["page"]
            used.add(step["page"])
            assert re.fullmatch(r"[0-9a-f]{40}", docs.PAGES[step["page"]])
    assert used == set(docs.PAGES), set(docs.PAGES) - used


def test_statements_of_the_other_connector_refused_with_the_reason(base_spark, tmp_path_factory):
    """What the pages' statements do not show: their variants sparklance refuses, each naming why."""
    import sparklance
    from conftest import lance_raises

    wh = warehouse_with(tmp_path_factory, "docs_refusals", "db")
    spark = new_session(base_spark, wh)
    spark.sql("CREATE TABLE lance.db.t (id BIGINT, name STRING)")
    spark.sql("INSERT INTO lance.db.t VALUES (1, 'a'), (2, 'b')")
    spark.sql("ALTER TABLE lance.db.t CREATE INDEX z USING zonemap (id) WITH (rows_per_zone = 16)")
    spark.sql("INSERT INTO lance.db.t VALUES (3, 'c')")
    with lance_raises(sparklance.InvalidArgumentError, match="built with rows_per_zone = 16; its new entries"):
        spark.sql("ALTER TABLE lance.db.t REFRESH INDEX z WITH (rows_per_zone = 32)")
    with lance_raises(sparklance.UnsupportedFeatureError, match="retrain = true"):
        spark.sql("ALTER TABLE lance.db.t OPTIMIZE INDEX z WITH (retrain = true)")
    with lance_raises(sparklance.InvalidArgumentError, match="REFRESH INDEX needs the name"):
        spark.sql("ALTER TABLE lance.db.t REFRESH INDEX")
    assert dataset(wh, "db/t").stats.index_stats("z")["num_unindexed_rows"] == 1     # nothing was committed
    spark.sql("ALTER TABLE lance.db.t REFRESH INDEX z WITH (rows_per_zone = 16, num_segments = 2)")
    assert dataset(wh, "db/t").stats.index_stats("z")["num_unindexed_rows"] == 0

    # A column property of the other connector for a column the table has: its files fix its shape.
    with lance_raises(sparklance.UnsupportedFeatureError, match="name.lance.encoding cannot be set or removed on "
                      "lance.db.t: column name exists"):
        spark.sql("ALTER TABLE lance.db.t SET TBLPROPERTIES ('name.lance.encoding' = 'blob')")
    assert "name.lance.encoding" not in dataset(wh, "db/t").config()
    # Stable row ids are chosen when a table is created: setting them later is refused.
    spark.sql("CREATE TABLE lance.db.s (id BIGINT) TBLPROPERTIES ('enable_stable_row_ids' = 'false')")
    with lance_raises(sparklance.UnsupportedFeatureError, match="enable_stable_row_ids"):
        spark.sql("ALTER TABLE lance.db.s SET TBLPROPERTIES ('enable_stable_row_ids' = 'true')")
    # A statement of the other connector after comment lines is still sparklance's.
    assert spark.sql("-- the tags\n-- of t\nSHOW TAG IN lance.db.t").collect() == []
