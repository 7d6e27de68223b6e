"""Vector indexes sparklance builds (``CREATE INDEX ... USING ivf_flat | ivf_pq | ivf_sq``), read by pylance 14.

Tables are drawn from ``SPARKLANCE_FUZZ_SEED``: clustered float32 vectors that pylance writes in several fragments
(with or without stable row ids), rows deleted before the build. Our index must be listed by pylance with its type
and column, pass ``validate()``, serve pylance's search (``explain_plan``), give pylance a recall@10 within 10 points
of the recall of the index pylance builds with the same parameters (issue #17's 2 points are measured by the bench),
and our ``vector_search`` over it must return pylance's rows and distances over it, also after a fragment is appended that it does not cover.
``SPARKLANCE_FUZZ_N`` is the number of tables per index type and distance.
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
from lance.file import LanceFileReader

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import build_seed, lance_raises, recall_builds, seeded_builds  # noqa: E402
from test_vector_index_search import search_both  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import InvalidArgumentError, UnsupportedFeatureError  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
BUILDS = recall_builds(3)
NONFINITE_BUILDS = recall_builds(1)


class Data:
    """Clustered float32 vectors of ``dim`` values, drawn from one generator."""

    def __init__(self, rng: random.Random, dim: int, clusters: int):
        self.rng = rng
        self.dim = dim
        self.np = np.random.default_rng(rng.randrange(2 ** 32))
        self.centers = self.np.normal(0, 3, (clusters, dim))

    def vectors(self, count: int) -> np.ndarray:
        return (self.centers[self.np.integers(0, len(self.centers), count)]
                + self.np.normal(0, 2.5, (count, self.dim))).astype(np.float32)

    def rows(self, start: int, count: int) -> pa.Table:
        v = self.vectors(count)
        return pa.table({"id": pa.array(range(start, start + count), pa.int64()),
                         "tag": pa.array([self.rng.choice(["a", "b", "c"]) for _ in range(count)]),
                         "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), self.dim)})


def table(rng: random.Random, path: Path, n: int, dim: int, stable: bool = False) -> Data:
    """A table pylance writes in several fragments, with a few rows deleted. There are more clusters than partitions,
    so that a search probing one partition misses some of the nearest rows."""
    data = Data(rng, dim, rng.randint(24, 48))
    lance.write_dataset(data.rows(0, n), str(path), max_rows_per_file=rng.choice([n // 5, n // 3, n // 2]),
                        enable_stable_row_ids=stable)
    lance.dataset(str(path)).delete(f"id % {rng.randint(5, 11)} = 3")
    return data


def options(index_type: str, metric: str, partitions: int, dim: int, rng: random.Random) -> dict:
    opts = {"num_partitions": partitions}
    if index_type == "IVF_PQ":
        opts["num_sub_vectors"] = rng.choice([m for m in (2, 4, 8, 16) if dim % m == 0 and dim // m >= 2])
    return opts


def recall(ds: lance.LanceDataset, queries: np.ndarray, metric: str, nprobes: int, k: int = 10) -> float:
    """pylance's mean recall@k of its index search against its exact search."""
    hits = 0
    for q in queries:
        nearest = {"column": "emb", "q": q, "k": k, "metric": metric}
        exact = set(ds.to_table(nearest={**nearest, "use_index": False}, with_row_id=True, columns=[])["_rowid"].to_pylist())
        ann = ds.to_table(nearest={**nearest, "nprobes": nprobes}, with_row_id=True, columns=[])["_rowid"].to_pylist()
        hits += len(exact.intersection(ann))
    return hits / (k * len(queries))


def check_partitions(path: Path, metric: str) -> None:
    """Every row of our IVF index over floats is in the partition of its nearest centroid under the index's own
    centroids, by the distance pylance probes partitions with (squared L2; for cosine of the normalized vector; for dot
    the largest dot product), up to rounding. Unlike recall, this does not depend on how k-means happened to start:
    a row placed in another partition fails it on every run, where a recall comparison's margin may let it pass."""
    from test_vector_index_pq4 import index_dir, packed
    from test_vector_types import proto_fields

    d = index_dir(path)
    index_file = LanceFileReader(str(d / "index.idx"))
    ivf = bytes(index_file.read_global_buffer(int(index_file.metadata().schema.metadata[b"lance:ivf"])))
    [tensor] = [dict(proto_fields(v)) for number, v in proto_fields(ivf) if number == 4]
    dtype = {1: np.float16, 2: np.float32, 3: np.float64}[tensor.get(1, 0)]
    centroids = np.frombuffer(tensor[3], dtype).reshape(packed(tensor[2])).astype(np.float64)
    aux = LanceFileReader(str(d / "auxiliary.idx"))
    aux_ivf = bytes(aux.read_global_buffer(int(aux.metadata().schema.metadata[b"lance:ivf"])))
    lengths = [n for number, v in proto_fields(aux_ivf) if number == 3 for n in packed(v)]
    rowids = aux.read_all().to_table()["_rowid"].to_pylist()
    assert sum(lengths) == len(rowids) and len(lengths) == len(centroids), (lengths, len(rowids), len(centroids))
    rows = lance.dataset(str(path)).to_table(columns=["emb"], with_row_id=True)
    vectors = dict(zip(rows["_rowid"].to_pylist(), np.stack(rows["emb"].to_numpy(zero_copy_only=False))))
    v = np.stack([vectors[r] for r in rowids]).astype(np.float64)
    if metric == "cosine":
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
    if metric == "dot":
        dist = -(v @ centroids.T)
    else:
        dist = (v * v).sum(1)[:, None] - 2 * (v @ centroids.T) + (centroids * centroids).sum(1)[None, :]
    stored = np.repeat(np.arange(len(lengths)), lengths)
    best = dist.min(1)
    slack = dist[np.arange(len(v)), stored] - best
    # float16 centroids and vectors are measured in float16 by pylance (in float32 by sparklance): more rounding.
    wrong = np.flatnonzero(slack > (5e-3 if dtype == np.float16 else 1e-4) * np.maximum(1.0, np.abs(best)))
    assert len(wrong) == 0, (f"{path.name}: {len(wrong)} of {len(v)} rows not in their nearest centroid's partition, "
                             f"e.g. row {rowids[wrong[0]]} in {stored[wrong[0]]}, nearest {dist[wrong[0]].argmin()}")


CASES = [("IVF_FLAT", m) for m in ("l2", "cosine", "dot")] + [("IVF_PQ", m) for m in ("l2", "cosine", "dot")] + \
    [("IVF_SQ", "l2")]


@pytest.mark.parametrize("index_type,metric", CASES)
def test_pylance_reads_and_searches_our_index(spark, tmp_path, index_type, metric):
    rng = random.Random(f"{SEED}-{index_type}-{metric}")
    for t in range(N):
        dim = rng.choice([16, 32])
        n = rng.randint(3000, 5000)
        path, twin = tmp_path / f"t{t}.lance", tmp_path / f"twin{t}.lance"
        stable = rng.random() < 0.3
        data = table(rng, path, n, dim, stable)
        shutil.copytree(path, twin)
        partitions = rng.choice([8, 12, 16])
        opts = options(index_type, metric, partitions, dim, rng)
        what = f"seed {SEED} {index_type} {metric} table {t} (dim {dim}, {n} rows, stable {stable}, {opts})"
        with seeded_builds(spark, build_seed(SEED, index_type, metric, t, 0)):
            made = LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric,
                                                                      **opts)
        assert made["name"] == "emb_idx" and made["columns"] == ["emb"], made

        ds = lance.dataset(str(path))
        ds.validate()
        [listed] = ds.list_indices()
        assert listed["name"] == "emb_idx" and listed["fields"] == ["emb"] and listed["type"] == index_type, listed
        [described] = ds.describe_indices()
        assert described.type_url == "/lance.index.pb.VectorIndexDetails" and described.field_names == ["emb"], described
        stats = ds.stats.index_stats("emb_idx")
        assert stats["index_type"] == index_type and stats["indices"][0]["metric_type"] == metric, stats
        assert stats["num_indexed_rows"] == ds.count_rows() and stats["num_unindexed_rows"] == 0, stats
        assert len(stats["indices"][0]["partitions"]) == partitions, stats
        check_partitions(path, metric)
        q = data.vectors(1)[0]
        plan = ds.scanner(nearest={"column": "emb", "q": q, "k": 10, "nprobes": 2, "metric": metric}).explain_plan()
        assert "ANNSubIndex: name=emb_idx" in plan, plan

        # pylance's recall with our index is near its recall with its own, built alike. k-means starts from random
        # centroids on both sides, so one build's recall varies by several points from the next one's: the means of
        # BUILDS builds each are compared, within 10 points (an index built wrong falls far below that). Issue #17's
        # bar, within 2 points, is measured by integration/bench/vector_build_bench.py: these small tables miss it
        # in some runs (session 11: 0.86 against 0.89, 0.61 against 0.63).
        queries = data.vectors(60)
        nprobes = 1
        ours_recall = [recall(ds, queries, metric, nprobes)]
        for b in range(1, BUILDS):
            with seeded_builds(spark, build_seed(SEED, index_type, metric, t, b)):
                LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric,
                                                                   replace=True, **opts)
            ours_recall.append(recall(lance.dataset(str(path)), queries, metric, nprobes))
        their_recall = []
        for _ in range(BUILDS):
            lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, replace=True, **opts)
            their_recall.append(recall(lance.dataset(str(twin)), queries, metric, nprobes))
        ours_mean, their_mean = float(np.mean(ours_recall)), float(np.mean(their_recall))
        print(f"{what}: recall@10 ours {ours_recall} pylance {their_recall}")
        assert ours_mean >= their_mean - 0.10, f"{what}: recall@10 {ours_recall} with ours, {their_recall} with pylance's"
        ds = lance.dataset(str(path))

        # Our search over our index is pylance's, before and after rows are appended that the index does not cover.
        for appended in (False, True):
            if appended:
                lance.write_dataset(data.rows(n, rng.randint(50, 300)), str(path), mode="append")
                ds = lance.dataset(str(path))
            for _ in range(3):
                q = data.vectors(1)[0].astype(np.float64) + np.array([rng.gauss(0, 0.5) for _ in range(dim)])
                search_both(spark, ds, path, q, rng.randint(1, 25), metric, f"{what} appended {appended}",
                            nprobes=rng.choice([1, 2, 3, partitions]), refine_factor=rng.choice([None, None, 2]))


def test_replace_and_errors(spark, tmp_path):
    rng = random.Random(f"{SEED}-errors")
    path = tmp_path / "e.lance"
    data = table(rng, path, 1200, 12)
    lt = LanceTable.for_path(spark, str(path))
    first = lt.create_index("emb", "ivf_flat", num_partitions=4)
    with lance_raises(InvalidArgumentError, match="already has an index named 'emb_idx'"):
        lt.create_index("emb", "ivf_flat", num_partitions=4)
    # Re-created under the same name: one index, the new one, in one version.
    version = lance.dataset(str(path)).version
    second = lt.create_index("emb", "ivf_pq", num_partitions=3, num_sub_vectors=4, replace=True)
    ds = lance.dataset(str(path))
    assert ds.version == version + 1
    assert [i["uuid"] for i in ds.list_indices()] == [second["uuid"]] != [first["uuid"]]
    assert ds.stats.index_stats("emb_idx")["index_type"] == "IVF_PQ"
    ds.validate()

    def refused(cls, match, column="emb", kind="ivf_pq", **opts):
        with lance_raises(cls, match=match):
            lt.create_index(column, kind, name="other", **opts)

    refused(InvalidArgumentError, "column 'id' .* not a vector column", column="id", num_partitions=2, num_sub_vectors=2)
    refused(InvalidArgumentError, "num_sub_vectors = 5 does not divide the dimension 12", num_partitions=2,
            num_sub_vectors=5)
    refused(InvalidArgumentError, "option num_sub_vectors is required", num_partitions=2)
    refused(InvalidArgumentError, "num_partitions = 5000: the table has only \\d+ rows", num_partitions=5000,
            num_sub_vectors=4)
    refused(InvalidArgumentError, "Unknown option nprobes for an IVF_PQ index", num_partitions=2, num_sub_vectors=4,
            nprobes=3)
    refused(InvalidArgumentError, "holds float32 vectors, and 'hamming' measures vectors of uint8", kind="ivf_flat",
            distance_type="hamming")
    refused(InvalidArgumentError, "num_partitions of IVF_FLAT must be a positive whole number, not 'many'",
            kind="ivf_flat", num_partitions="many")
    refused(UnsupportedFeatureError, "IVF_RQ vector indexes are not supported yet", kind="ivf_rq", num_partitions=2)
    refused(UnsupportedFeatureError, "HNSW vector indexes are not supported yet", kind="hnsw")
    refused(InvalidArgumentError, "num_bits = 4 .*num_sub_vectors = 3 is odd", num_partitions=2, num_sub_vectors=3,
            num_bits=4)
    refused(InvalidArgumentError, "num_bits of IVF_PQ must be 8 or 4, not '6'", num_partitions=2, num_sub_vectors=4,
            num_bits=6)
    refused(UnsupportedFeatureError, "IVF_SQ indexes for l2 only", kind="ivf_sq", distance_type="cosine")
    refused(InvalidArgumentError, "has no column 'nope'", column="nope", kind="ivf_flat")
    # Nothing was committed or left behind by the refusals.
    assert lance.dataset(str(path)).version == version + 1
    assert sorted(p.name for p in (path / "_indices").iterdir()) == sorted([first["uuid"], second["uuid"]])

    # After an append, OPTIMIZE INDEX extends our vector index with the fragment appended (more in
    # test_vector_index_optimize.py); pylance's optimize_indices then has nothing left to do.
    lance.write_dataset(data.rows(1200, 150), str(path), mode="append")
    made = lt.optimize_index("emb_idx")
    ds = lance.dataset(str(path))
    assert [i["uuid"] for i in ds.list_indices()] == [made["uuid"]] != [second["uuid"]]
    ds.validate()
    assert ds.stats.index_stats("emb_idx")["num_unindexed_rows"] == 0
    ds.optimize.optimize_indices()
    ds = lance.dataset(str(path))
    q = data.vectors(1)[0].astype(np.float64)
    search_both(spark, ds, path, q, 10, "l2", "after OPTIMIZE INDEX", nprobes=2)


@pytest.mark.parametrize("index_type,metric", [("IVF_PQ", "l2"), ("IVF_FLAT", "cosine"), ("IVF_SQ", "l2"),
                                               ("IVF_PQ", "cosine")])
def test_vectors_lance_does_not_index(spark, tmp_path, index_type, metric):
    """Vectors holding NaN or infinities (for l2 also nulls; for cosine zero vectors) are left out of training and of
    the index, as Lance leaves them out (its KeepFiniteVectors and is_finite filters): no index, ours or pylance's,
    returns them, even probing every partition for every row; the model trained on the other rows is sound (pylance's
    recall with our index near its recall with its own); our search over either index is pylance's. (pylance's
    cosine indexes keep a vector holding a null, measured with whatever value lies under the null once normalized;
    ours leave it out, as a vector with a null has no distance in sparklance's search.)"""
    rng = random.Random(f"{SEED}-nonfinite-{index_type}-{metric}")
    dim, n, partitions = 16, rng.randint(2500, 3500), 8
    data = Data(rng, dim, 24)
    v = data.vectors(n)
    bad = sorted(rng.sample(range(n), n // 10))
    kinds = ["nan", "inf", "-inf"] + (["zero"] if metric == "cosine" else ["null"])
    values = pa.array(v.ravel())
    mask = np.zeros(n * dim, dtype=bool)
    nulls = set()
    for i in bad:
        kind = rng.choice(kinds)
        at = i * dim + rng.randrange(dim)
        if kind == "zero":
            v[i] = 0.0
        elif kind == "null":
            mask[at] = True
            nulls.add(i)
        else:
            v[i, at % dim] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[kind]
    values = pa.array(v.ravel(), mask=mask)
    rows = pa.table({"id": pa.array(range(n), pa.int64()), "tag": pa.array(["a"] * n),
                     "emb": pa.FixedSizeListArray.from_arrays(values, dim)})
    path, twin = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    lance.write_dataset(rows, str(path), max_rows_per_file=n // 3)
    shutil.copytree(path, twin)
    opts = options(index_type, metric, partitions, dim, rng)
    with seeded_builds(spark, build_seed(SEED, "nonfinite", index_type, metric)):
        LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric, **opts)
    lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, **opts)
    indexable = set(range(n)) - set(bad)
    for p in (path, twin):
        ds = lance.dataset(str(p))
        ds.validate()
        q = data.vectors(1)[0]
        everything = ds.to_table(nearest={"column": "emb", "q": q, "k": n, "nprobes": partitions, "metric": metric},
                                 columns=["id"])["id"].to_pylist()
        assert set(everything) == indexable, f"{p.name}: {sorted(set(everything) ^ indexable)[:10]}"
        found = {r.id for r in LanceTable.for_path(spark, str(p)).search(
            [float(x) for x in q], k=n, column="emb", metric=metric, nprobes=partitions).collect()}
        assert found == indexable, f"{p.name}: {sorted(found ^ indexable)[:10]}"
        for _ in range(3):
            q = data.vectors(1)[0].astype(np.float64)
            search_both(spark, ds, p, q, rng.randint(1, 20), metric, f"{index_type} {metric} {p.name}",
                        nprobes=rng.choice([1, 2, partitions]), refine_factor=rng.choice([None, 2]))
    # An exact search of every row returns the rows pylance's does: those with a distance (an infinite one too), but
    # for vectors holding a null, which pylance measures with the value under the null and sparklance leaves out.
    ds = lance.dataset(str(twin))
    q = data.vectors(1)[0]
    exact = ds.to_table(nearest={"column": "emb", "q": q, "k": n, "use_index": False, "metric": metric},
                        columns=["id"])["id"].to_pylist()
    ours_exact = [r.id for r in LanceTable.for_path(spark, str(twin)).search(
        [float(x) for x in q], k=n, column="emb", metric=metric, bypass_vector_index=True).collect()]
    assert sorted(ours_exact) == sorted(set(exact) - nulls), sorted(set(ours_exact) ^ (set(exact) - nulls))[:10]
    if metric == "l2":
        assert set(exact) - nulls > indexable, "rows holding an infinity have an infinite l2 distance"

    queries = data.vectors(40)
    ours = [recall(lance.dataset(str(path)), queries, metric, 2)]
    theirs = [recall(lance.dataset(str(twin)), queries, metric, 2)]
    for b in range(1, NONFINITE_BUILDS):
        with seeded_builds(spark, build_seed(SEED, "nonfinite", index_type, metric, b)):
            LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric,
                                                               replace=True, **opts)
        ours.append(recall(lance.dataset(str(path)), queries, metric, 2))
        lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, replace=True, **opts)
        theirs.append(recall(lance.dataset(str(twin)), queries, metric, 2))
    print(f"nonfinite {index_type} {metric}: recall@10 ours {ours} pylance {theirs}")
    assert np.mean(ours) >= np.mean(theirs) - 0.15, f"recall@10 {ours} with ours, {theirs} with pylance's"
