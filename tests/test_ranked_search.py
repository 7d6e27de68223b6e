"""Ranked full-text search (``SEARCH``) and ``HYBRID_SEARCH`` against pylance 14.

``SEARCH`` must return the rows and BM25 ``_score`` s pylance's ``to_table(full_text_query=..., limit=k)`` returns,
over tables pylance indexed and then changed: rows appended after the index (which pylance scores by a flat search
whose statistics join the index's), deleted rows in indexed and unindexed fragments, two indexed columns (a row
scores its best column), a filter after the search (pylance's default) or before it (``prefilter``), an offset, and
tables with stable row ids. Rows of equal score come in no fixed order in pylance, so where the k-th score is tied
only the rows scoring above it are compared by id; all scores are compared.

Indexes are built by pylance, and by sparklance (``CREATE INDEX ... USING fts``, searched by pylance as the oracle).
``HYBRID_SEARCH`` is the other connector's reciprocal rank fusion of a vector search and a full-text search; the
fusion is recomputed here from pylance's two searches.

Texts and queries are drawn at random from ``SPARKLANCE_FUZZ_SEED`` (``make fuzz`` raises ``SPARKLANCE_FUZZ_N``).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import start_spark, warehouse_with  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))

# Words whose analysis pylance and the JVM agree on (docs/full-text-search.md lists the letters where they differ),
# with repeats, stop words and inflections so that scores vary and tie.
WORDS = ["vector", "vectors", "database", "databases", "lance", "spark", "search", "searching", "index", "query",
         "table", "row", "column", "fast", "data", "the", "a", "of", "and", "is", "Café", "cafe", "naïve",
         "learning", "learned", "machine", "Machine", "deep", "x2", "42", "running", "runs"]
DIM = 8


def random_text(rng: random.Random) -> Optional[str]:
    roll = rng.random()
    if roll < 0.04:
        return None
    if roll < 0.07:
        return ""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 10)))


def random_query(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def rows(rng: random.Random, start: int, n: int) -> pa.Table:
    return pa.table({
        "id": pa.array(range(start, start + n), pa.int64()),
        "title": [random_text(rng) for _ in range(n)],
        "body": [random_text(rng) for _ in range(n)],
        "vector": pa.FixedSizeListArray.from_arrays(
            pa.array([rng.gauss(0, 1) for _ in range(n * DIM)], pa.float32()), DIM),
    })


def sql_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "ranked_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-ranked-search-tests", wh)
    yield session
    session.stop()


# Index settings: pylance's defaults (stemming, stop words), and positions off with no stemming.
PARAMS = [dict(), dict(with_position=False, stem=False, remove_stop_words=False)]


@pytest.fixture(scope="module", params=[(p, stable, "pylance") for p in range(len(PARAMS)) for stable in (False, True)]
                + [(0, False, "spark"), (1, True, "spark")],
                ids=lambda x: f"params{x[0]}{'-stable' if x[1] else ''}-{x[2]}")
def table(request, wh, spark):
    """A pylance table in the warehouse, its indexes built by pylance or by Spark (`CREATE INDEX ... USING fts`):
    indexed rows, rows appended after the index, deletions in both parts."""
    i, stable, builder = request.param
    rng = random.Random(SEED * 7 + i * 2 + int(stable))
    name = f"t{i}{'s' if stable else ''}{builder[0]}"
    path = wh / "db" / f"{name}.lance"
    ds = lance.write_dataset(rows(rng, 0, 240), str(path), max_rows_per_file=100, enable_stable_row_ids=stable)
    for col in ("title", "body"):
        if builder == "pylance":
            ds.create_scalar_index(col, "INVERTED", **PARAMS[i])
        else:
            options = ", ".join(f"{k} = {str(v).lower()}" for k, v in PARAMS[i].items())
            spark.sql(f"ALTER TABLE lance.db.{name} CREATE INDEX {col}_fts USING fts ({col})"
                      + (f" WITH ({options})" if options else ""))
    ds = lance.write_dataset(rows(rng, 240, 60), str(path), mode="append", max_rows_per_file=40)
    ds.delete("id % 17 = 3")
    return f"lance.db.{name}", path, rng


def pylance_hits(path: Path, query: str, columns: Optional[List[str]], k: int, **kw) -> List[Tuple[int, float]]:
    fts = {"query": query, "columns": columns} if columns else query
    t = lance.dataset(str(path)).to_table(full_text_query=fts, columns=["id", "_score"], limit=k, **kw)
    return list(zip(t.column("id").to_pylist(), t.column("_score").to_pylist()))


def spark_hits(spark, sql: str) -> List[Tuple[int, float]]:
    return [(r["id"], r["_score"]) for r in spark.sql(sql).collect()]


def assert_same_ranking(got: List[Tuple[int, float]], expected: List[Tuple[int, float]], what, offset: int = 0) -> None:
    """Equal scores to the bit (in order) and equal ids, except among rows tied with the last score, or with the first
    after an offset (pylance orders ties as it finds them, so which of them a limit or an offset keeps is not fixed)."""
    assert len(got) == len(expected), (what, got, expected)
    assert [s for _, s in got] == [e for _, e in expected], (what, got, expected)
    if expected:
        edges = [expected[-1][1]] + ([expected[0][1]] if offset else [])
        def settled(hits):
            return sorted(i for i, s in hits if s not in edges)
        assert settled(got) == settled(expected), (what, got, expected)


def test_search_ranks_as_pylance(spark, table):
    name, path, rng = table
    for _ in range(6 * N):
        q = random_query(rng)
        k = rng.choice([1, 5, 10, 50])
        cols = rng.choice([None, ["body"], ["title"], ["title", "body"]])
        expected = pylance_hits(path, q, cols, k)
        search_columns = "" if cols is None else f", search_columns => array({', '.join(map(sql_str, cols))})"
        got = spark_hits(spark, f"SELECT id, _score FROM search(table => '{name}', query => {sql_str(q)}, "
                                f"num_results => {k}{search_columns})")
        assert_same_ranking(got, expected, (q, k, cols))


def test_filter_before_and_after_and_offset(spark, table):
    name, path, rng = table
    for _ in range(4 * N):
        q = random_query(rng)
        offset, m = rng.choice([0, 2]), rng.choice([2, 3])
        flt = f"id % {m} = 0"
        # A filter after the search keeps some of the best k + offset rows: a k whose last row is not tied with the
        # next, since pylance orders tied rows as it finds them and which of them it keeps is not fixed.
        ranking = [s for _, s in pylance_hits(path, q, ["body"], 1000)]
        clean = [k for k in (3, 5, 10, 20) if k + offset >= len(ranking) or
                 ranking[k + offset - 1] != ranking[k + offset]]
        if not clean:
            continue
        k = rng.choice(clean)
        for prefilter in (False, True):
            expected = pylance_hits(path, q, ["body"], k, filter=flt, prefilter=prefilter, offset=offset)
            got = spark_hits(spark, f"SELECT id, _score FROM search(table => '{name}', query => {sql_str(q)}, "
                                    f"limit => {k}, search_columns => array('body'), filter => '{flt}', "
                                    f"offset => {offset}, prefilter => {str(prefilter).lower()})")
            assert_same_ranking(got, expected, (q, k, offset, flt, prefilter), offset)


def test_positional_form_columns_and_row_ids(spark, table):
    name, path, rng = table
    q = "vector database"
    got = spark.sql(f"SELECT * FROM search('{name}', '{q}', 5)")
    assert got.columns == ["id", "title", "body", "vector", "_score"]
    assert_same_ranking([(r.id, r._score) for r in got.collect()], pylance_hits(path, q, None, 5), q)
    got = spark.sql(f"SELECT * FROM search(table => '{name}', search_query => '{q}', k => 3, "
                    f"columns => array('id', '_rowid'))")
    assert got.columns == ["id", "_score", "_rowid"]
    by_id = {r["id"]: r["_rowid"] for r in
             lance.dataset(str(path)).to_table(columns=["id"], with_row_id=True).to_pylist()}
    for r in got.collect():
        assert r._rowid == by_id[r.id]


def test_no_token_no_index_and_bad_arguments(spark, table, wh):
    name, path, _ = table
    assert spark.sql(f"SELECT * FROM search('{name}', 'the', 5)").count() == \
        len(pylance_hits(path, "the", None, 5))
    assert spark.sql(f"SELECT * FROM search('{name}', '', 5)").count() == 0
    spark.sql("CREATE TABLE IF NOT EXISTS lance.db.plain (id BIGINT, body STRING)")
    with pytest.raises(Exception, match="no full-text \\(INVERTED\\) index"):
        spark.sql("SELECT * FROM search('lance.db.plain', 'x', 5)").collect()
    with pytest.raises(Exception, match="there is no argument 'fuzziness'"):
        spark.sql(f"SELECT * FROM search(table => '{name}', query => 'x', fuzziness => 1)").collect()
    with pytest.raises(Exception, match="'nope' in columns is not a column"):
        spark.sql(f"SELECT * FROM search(table => '{name}', query => 'x', columns => array('nope'))").collect()
    with pytest.raises(Exception, match="the argument 'query' is required"):
        spark.sql(f"SELECT * FROM search(table => '{name}')").collect()


def test_hybrid_search_fuses_pylance_searches(spark, table):
    name, path, rng = table
    ds = lance.dataset(str(path))
    for _ in range(3 * N):
        q = random_query(rng)
        vec = [rng.gauss(0, 1) for _ in range(DIM)]
        # Enough candidates for every text match: pylance orders rows of equal score as it finds them, sparklance by
        # row id (here the order of ids), and ranks of tied rows cut at the last candidate would differ.
        k, candidates, offset = rng.choice([3, 10]), rng.choice([300, 400]), rng.choice([0, 1])
        cand = max(candidates, k + offset)
        near = ds.to_table(nearest={"column": "vector", "q": vec, "k": cand}, columns=["id", "_distance"]).to_pylist()
        text = sorted(pylance_hits(path, q, ["body"], cand), key=lambda h: (-h[1], h[0]))
        fused = {}
        for rank, r in enumerate(near):
            e = fused.setdefault(r["id"], [None, None, 0.0])
            e[0] = r["_distance"]
            e[2] += 1.0 / (rank + 60.0)
        for rank, (i, s) in enumerate(text):
            e = fused.setdefault(i, [None, None, 0.0])
            e[1] = s
            e[2] += 1.0 / (rank + 60.0)
        array = "array(" + ", ".join(repr(x) for x in vec) + ")"
        got = spark.sql(f"SELECT id, _distance, _score, _relevance_score FROM hybrid_search(table => '{name}', "
                        f"query_vector => {array}, query => {sql_str(q)}, "
                        f"search_columns => array('body'), num_results => {k}, candidates => {candidates}, "
                        f"offset => {offset})").collect()
        ranked = sorted(fused.items(), key=lambda kv: (-kv[1][2], kv[0]))[offset:offset + k]
        assert len(got) == len(ranked), (q, got, ranked)
        for r, (i, (d, s, rel)) in zip(got, ranked):
            assert r._relevance_score == pytest.approx(rel, rel=1e-6)
        # Rows whose relevance is not tied with another's are the same rows, with pylance's distance and score.
        rels = [e[2] for _, e in fused.items()]
        for r in got:
            e = fused[r.id]
            if rels.count(e[2]) == 1:
                assert r._relevance_score == pytest.approx(e[2], rel=1e-6)
                assert (r._distance is None) == (e[0] is None) and (r._score is None) == (e[1] is None)
                if e[0] is not None:
                    assert r._distance == pytest.approx(e[0], rel=1e-4)
                if e[1] is not None:
                    assert r._score == e[1]
    got = spark.sql(f"SELECT * FROM hybrid_search('{name}', array({', '.join(['0.5'] * DIM)}), 'lance', 5)")
    assert got.columns == ["id", "title", "body", "vector", "_distance", "_score", "_relevance_score"]
    assert got.count() == 5
