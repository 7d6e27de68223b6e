"""OPTIMIZE INDEX / REFRESH INDEX with ``num_indices_to_merge`` and ``num_segments`` (issue #18), against pylance 14.

Each table is drawn from ``SPARKLANCE_FUZZ_SEED``: a few fragments, an index pylance builds (a scalar kind, a
full-text index or a vector index), then a random run of steps, each appending fragments (or not) and bringing the
index up to date with ``num_indices_to_merge = n`` (n drawn from 0..3). The table is copied before the steps: pylance
runs ``optimize_indices(num_indices_to_merge=n)`` on one copy, Spark ``ALTER TABLE ... OPTIMIZE INDEX ... WITH
(num_indices_to_merge = n)`` on the other. After every step:

- both copies list the same segments: the same fragments in each, the same ``dataset_version``, in the same order;
- our copy passes pylance's ``validate()``, and pylance's query through our segments returns what it returns through
  its own (a filter, a full-text query, or the 10 nearest vectors over every partition);
- Spark reads both copies (several segments each) with the same rows as pylance.

At the end pylance merges our segments (``num_indices_to_merge=2``) and the result still validates and answers alike.
``SPARKLANCE_FUZZ_N`` is the number of tables per kind.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

import lance
import numpy as np
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))


SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
DIM = 8
# kind -> (column, how pylance builds it)
KINDS = {
    "BTREE": "id", "BITMAP": "cat", "ZONEMAP": "id", "BLOOMFILTER": "id", "LABEL_LIST": "tags", "NGRAM": "txt",
    "INVERTED": "txt", "IVF_FLAT": "vec", "IVF_PQ": "vec", "IVF_SQ": "vec", "IVF_HNSW_SQ": "vec",
}


class Rows:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.np = np.random.default_rng(rng.randrange(2 ** 32))
        self.next = 0

    def table(self, count: int) -> pa.Table:
        start, self.next = self.next, self.next + count
        ids = range(start, start + count)
        words = ["apple", "river", "stone", "cloud", "ember", "frost", "grove"]
        return pa.table({
            "id": pa.array(ids, pa.int64()),
            "cat": pa.array([f"c{self.rng.randrange(6)}" for _ in ids]),
            "txt": pa.array([" ".join(self.rng.choice(words) for _ in range(3)) for _ in ids]),
            "tags": pa.array([[f"t{self.rng.randrange(4)}", f"u{self.rng.randrange(3)}"] for _ in ids],
                             pa.list_(pa.string())),
            "vec": pa.FixedSizeListArray.from_arrays(
                pa.array(self.np.normal(0, 1, count * DIM).astype(np.float32)), DIM)})


def segments(path: str) -> list:
    """The index's segments: (fragments, dataset_version), in the manifest's order."""
    [index] = [d for d in lance.dataset(path).describe_indices() if d.name == "i"]
    return [(sorted(s.fragment_ids), s.dataset_version_at_last_update) for s in index.segments]


def query(kind: str, path: str, probe):
    """pylance's answer through the index: ids, sorted (vector: the 10 nearest over every partition, refined exactly
    from more candidates than there are rows, so that any two indexes holding every row once agree)."""
    ds = lance.dataset(path)
    if kind.startswith("IVF"):
        t = ds.to_table(columns=["id"], nearest={"column": "vec", "q": probe, "k": 10, "nprobes": 64,
                                                 "refine_factor": 200, "ef": 2000})
        return sorted(t.column("id").to_pylist())
    if kind == "INVERTED":
        return sorted(ds.to_table(columns=["id"], full_text_query=probe).column("id").to_pylist())
    return sorted(ds.to_table(columns=["id"], filter=probe).column("id").to_pylist())


def probe_of(kind: str, rng: random.Random, rows: Rows):
    if kind.startswith("IVF"):
        return rows.np.normal(0, 1, DIM).astype(np.float32)
    return {"BTREE": f"id >= {rng.randrange(rows.next)}", "ZONEMAP": f"id < {rng.randrange(rows.next)}",
            "BLOOMFILTER": f"id = {rng.randrange(rows.next)}", "BITMAP": f"cat = 'c{rng.randrange(6)}'",
            "LABEL_LIST": f"array_has_any(tags, ['t{rng.randrange(4)}'])", "NGRAM": "contains(txt, 'ive')",
            "INVERTED": rng.choice(["apple", "river", "frost"])}[kind]


def spark_query(spark, kind: str, path: str, probe):
    """Spark's answer over the same table (its filter pushed to the index; vector: vector_search, every partition)."""
    if kind.startswith("IVF"):
        vec = ", ".join(repr(float(x)) for x in probe)
        rows = spark.sql(f"SELECT id FROM vector_search('lance.`{path}`', array({vec}), 'vec', 10, 'l2', array('id'), "
                         "NULL, 64, 200, 2000)").collect()
    elif kind == "INVERTED":
        rows = spark.sql(f"SELECT id FROM lance.`{path}` WHERE lance_match(txt, '{probe}')").collect()
    else:
        sql = probe.replace("array_has_any(tags, ['", "arrays_overlap(tags, array('").replace("'])", "'))") \
            .replace("contains(txt, 'ive')", "txt LIKE '%ive%'")
        rows = spark.sql(f"SELECT id FROM lance.`{path}` WHERE {sql}").collect()
    return sorted(r.id for r in rows)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("case", range(N))
def test_merge_as_pylance_does(spark, tmp_path, kind, case):
    rng = random.Random(f"{SEED}-{kind}-{case}")
    rows = Rows(rng)
    ours, theirs = str(tmp_path / "ours.lance"), str(tmp_path / "theirs.lance")
    lance.write_dataset(rows.table(rng.randint(300, 500)), theirs, max_rows_per_file=rng.choice([150, 250]))
    ds = lance.dataset(theirs)
    column = KINDS[kind]
    if kind.startswith("IVF"):
        ds.create_index(column, kind, name="i", num_partitions=2,
                        **({"num_sub_vectors": 2} if "PQ" in kind else {}))
    else:
        ds.create_scalar_index(column, kind, name="i")
    shutil.copytree(theirs, ours)
    steps = []
    for step in range(rng.randint(4, 6)):
        if step < 2 or rng.random() < 0.7:  # the first two steps always add a delta
            more = rows.table(rng.randint(50, 150))
            for path in (ours, theirs):
                lance.write_dataset(more, path, mode="append")
        n = 0 if step < 2 else rng.randint(0, 3)
        steps.append(n)
        lance.dataset(theirs).optimize.optimize_indices(num_indices_to_merge=n)
        r = spark.sql(f"ALTER TABLE lance.`{ours}` OPTIMIZE INDEX i WITH (num_indices_to_merge = {n})").collect()[0]
        context = f"{kind} seed {SEED} case {case}, num_indices_to_merge steps {steps}"
        assert segments(ours) == segments(theirs), context
        assert r.index_name == "i" and r.segments_after == len(segments(ours)), context
        lance.dataset(ours).validate()
        probe = probe_of(kind, rng, rows)
        expected = query(kind, theirs, probe)
        assert query(kind, ours, probe) == expected, context
        assert spark_query(spark, kind, ours, probe) == expected, context
        assert spark_query(spark, kind, theirs, probe) == expected, context
    lance.dataset(ours).optimize.optimize_indices(num_indices_to_merge=2)
    lance.dataset(theirs).optimize.optimize_indices(num_indices_to_merge=2)
    lance.dataset(ours).validate()
    probe = probe_of(kind, rng, rows)
    assert query(kind, ours, probe) == query(kind, theirs, probe)


def test_refresh_index_outputs_and_num_segments(spark, tmp_path):
    """REFRESH INDEX ... WITH (num_segments = n) adds the uncovered fragments as one new segment, merging none (as
    lance-spark's refresh does); more segments at once are refused, naming the option. The result columns are
    lance-spark's, then ours."""
    path = str(tmp_path / "r.lance")
    rows = Rows(random.Random(SEED))
    lance.write_dataset(rows.table(300), path, max_rows_per_file=150)
    spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX i USING btree (id)")
    lance.write_dataset(rows.table(100), path, mode="append")
    r = spark.sql(f"ALTER TABLE lance.`{path}` REFRESH INDEX i WITH (num_segments = 4)")
    assert r.columns[:3] == ["fragments_indexed", "segments_added", "index_name"]
    assert [tuple(x)[:3] for x in r.collect()] == [(1, 1, "i")]
    assert segments(path) == [([0, 1], 1), ([2], 3)]
    # Nothing left to index: nothing committed, zeros.
    version = lance.dataset(path).version
    assert [tuple(x)[:3] for x in spark.sql(f"ALTER TABLE lance.`{path}` REFRESH INDEX i WITH (num_segments = 1)")
            .collect()] == [(0, 0, "i")]
    assert lance.dataset(path).version == version
    for _ in range(2):
        lance.write_dataset(rows.table(100), path, mode="append")
    with pytest.raises(Exception, match="num_segments = 2 of index i is not supported"):
        spark.sql(f"ALTER TABLE lance.`{path}` REFRESH INDEX i WITH (num_segments = 2)")
    with pytest.raises(Exception, match="contradict each other"):
        spark.sql(f"ALTER TABLE lance.`{path}` REFRESH INDEX i WITH (num_segments = 1, num_indices_to_merge = 1)")
    with pytest.raises(Exception, match="num_indices_to_merge of index i must be a whole number of at least 0"):
        spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX i WITH (num_indices_to_merge = -1)")
    o = spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX i WITH (num_indices_to_merge = 1)")
    assert o.columns[:4] == ["index_name", "fragments_indexed", "segments_before", "segments_after"]
    assert [tuple(x)[:4] for x in o.collect()] == [("i", 2, 2, 2)]
    assert segments(path) == [([0, 1], 1), ([2, 3, 4], 3)]
    lance.dataset(path).validate()
