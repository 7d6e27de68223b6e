"""Vector columns of other element types than float32 against pylance 14 (issue #17).

- uint8 vectors with ``distance_type => 'hamming'`` (the number of bits that differ, Lance's definition): pylance
  writes the table, both search it exactly, and the rows and distances must be pylance's. With pylance's hamming
  index (IVF_FLAT, IVF_HNSW_FLAT; pylance builds no IVF_PQ for hamming) our search goes through it and returns
  pylance's index search's rows.
- sparklance builds IVF_FLAT and IVF_HNSW_FLAT indexes for hamming over uint8 vectors, and IVF_FLAT, IVF_PQ, IVF_SQ
  (and HNSW forms) over float16 and float64 vectors, storing centroids, PQ codebook and IVF_FLAT's vectors in the
  column's type as pylance does: pylance lists, validates and uses them with a recall near its own index's, and our
  search through ours and through pylance's returns pylance's rows and distances.
- hamming over float vectors, other distances over uint8 vectors, query values that are not bytes, and hamming
  IVF_PQ/IVF_SQ builds are refused by name (nothing committed).

Tables and queries are drawn from ``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` scales the number of tables.
"""

from __future__ import annotations

import json
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

from conftest import SPARK_LINE, build_seed, lance_raises, recall_builds, seeded_builds  # noqa: E402
from test_vector_index_build import check_partitions  # noqa: E402
from test_vector_index_search import search_both  # noqa: E402

from sparklance import LanceTable  # noqa: E402
from sparklance.errors import InvalidArgumentError, UnsupportedFeatureError  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
# How far pylance's mean recall@10 with our index (BUILDS builds) may fall below its mean recall with its own (
# PYLANCE_BUILDS builds), built with the same options. One build's recall moves by 5 to 8 points from the next one's on
# these small tables (k-means starts from random centroids on both sides), so issue #17's 2 points cannot be asserted
# here; as in test_vector_index_build.py the bar is 10 points, which an index built wrong falls far below. Our builds
# are seeded from the suite's seed (build_seed), so at one seed our mean is the same on every run and only pylance's
# unseeded builds vary. Measured at seed 20261126 (10 builds each side): one pylance build spreads by up to 0.040
# (standard deviation; float64 IVF_SQ l2, float16 IVF_FLAT l2), so with 3 builds each and both sides unseeded the 10
# points held by 2.7 to 3.4 standard deviations in three cases (float16 IVF_SQ, float64 IVF_SQ and IVF_FLAT l2); with
# ours seeded and 6 pylance builds, by at least 6.0.
RECALL_MARGIN = 0.10
BUILDS = recall_builds(3)
PYLANCE_BUILDS = recall_builds(6)
# The hamming tables are smaller still (300 to 1,200 rows, 20 queries): one build's recall@10 spreads by 0.04 (standard
# deviation, over 20 builds of each table, ours and pylance's alike, means equal to 0.01), so the means of 3 builds
# differed by more than 10 points about once in a few hundred comparisons (CI, seed 20261126: ours 0.49 against
# pylance's 0.60 on a table where 20 builds each give 0.58 and 0.58). With our 6 builds seeded and pylance's 8, the 10
# points are at least 5 standard deviations of pylance's mean (10 builds each side measured: one IVF_HNSW_FLAT table
# 0.599 ours, seeded, against 0.614 ± 0.045 pylance's).
HAMMING_BUILDS = recall_builds(6)
HAMMING_PYLANCE_BUILDS = recall_builds(8)


def uint8_table(rng: random.Random, path: Path) -> tuple:
    """A table of ``id``, ``emb`` (fixed-size lists of uint8, some rows near copies of others so that distances are
    small and tie often) in a few fragments, with some rows deleted."""
    dim = rng.choice([4, 8, 16, 32])
    n = rng.randint(300, 1200)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    v = nprng.integers(0, 256, (n, dim)).astype(np.uint8)
    flips = nprng.random((n, dim)) < 0.5
    v[n // 2:] = np.where(flips[n // 2:], v[: n - n // 2] ^ (1 << nprng.integers(0, 8, (n - n // 2, dim))).astype(np.uint8),
                          v[: n - n // 2])
    table = pa.table({"id": pa.array(range(n), pa.int64()),
                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel(), pa.uint8()), dim)})
    ds = lance.write_dataset(table, str(path), max_rows_per_file=rng.choice([200, 500, n]))
    if rng.random() < 0.6:
        ds.delete(f"id % {rng.randint(3, 9)} = 2")
    return lance.dataset(str(path)), v


def both(spark, ds, path, q, k, use_index=True, nprobes=None, ef=None, **opts):
    nearest = {"column": "emb", "q": q, "k": k, "metric": "hamming", "use_index": use_index}
    searched = {"bypass_vector_index": not use_index}
    if nprobes is not None:
        nearest["nprobes"] = searched["nprobes"] = nprobes
    if ef is not None:
        nearest["ef"] = searched["ef"] = ef
    theirs = ds.to_table(nearest=nearest, with_row_id=True, columns=["id"], **opts)
    ours = LanceTable.for_path(spark, str(path)).search([int(x) for x in q], k=k, column="emb", metric="hamming",
                                                       columns=["id"], with_row_id=True, **searched, **opts).collect()
    return ([(r._rowid, r._distance) for r in ours],
            list(zip(theirs["_rowid"].to_pylist(), theirs["_distance"].to_pylist())))


def same_up_to_last_tie(ours, theirs, what):
    """The same distances, and the same rows except among those tied with the last distance returned (pylance's
    exact search keeps an arbitrary subset of those)."""
    assert [d for _, d in ours] == [d for _, d in theirs], f"{what}\nours {ours}\npylance {theirs}"
    if ours:
        last = ours[-1][1]
        assert [r for r, d in ours if d != last] == [r for r, d in theirs if d != last], \
            f"{what}\nours {ours}\npylance {theirs}"


def test_hamming_exact_search_matches_pylance(spark, tmp_path):
    rng = random.Random(f"{SEED}-hamming")
    for t in range(3 * N):
        path = tmp_path / f"h{t}.lance"
        ds, v = uint8_table(rng, path)
        for _ in range(4):
            q = v[rng.randrange(len(v))].copy() if rng.random() < 0.5 else \
                np.array([rng.randrange(256) for _ in range(v.shape[1])], dtype=np.uint8)
            k = rng.randint(1, 40)
            filt = rng.choice([None, "id % 3 = 0"])
            ours, theirs = both(spark, ds, path, q, k, filter=filt, prefilter=filt is not None)
            same_up_to_last_tie(ours, theirs, f"seed {SEED} table {t} dim {v.shape[1]} k={k} filter={filt}")
            # The distance is the bits that differ, whatever pylance says.
            ids = {r.id: r._distance for r in LanceTable.for_path(spark, str(path)).search(
                [int(x) for x in q], k=k, column="emb", metric="hamming", columns=["id"]).collect()}
            for i, d in ids.items():
                assert d == int(np.unpackbits(v[i] ^ q).sum()), f"row {i}"


def test_hamming_through_pylance_index(spark, tmp_path):
    """With pylance's hamming index our search goes through it (pylance's rows and distances, probing as pylance
    does), and measures exactly when asked to bypass it."""
    rng = random.Random(f"{SEED}-hamming-index")
    for index_type in ("IVF_FLAT", "IVF_HNSW_FLAT"):
        path = tmp_path / f"{index_type}.lance"
        ds, v = uint8_table(rng, path)
        ds.create_index("emb", index_type, num_partitions=4, metric="hamming")
        ds = lance.dataset(str(path))
        for _ in range(3):
            q = v[rng.randrange(len(v))].copy()
            k = rng.randint(1, 30)
            nprobes = rng.choice([1, 2, 4])
            ours, theirs = both(spark, ds, path, q, k, nprobes=nprobes, ef=len(v) if "HNSW" in index_type else None)
            same_up_to_last_tie(ours, theirs, f"seed {SEED} {index_type} k={k} nprobes={nprobes}")
            ours, exact = both(spark, ds, path, q, k, use_index=False)
            same_up_to_last_tie(ours, exact, f"seed {SEED} {index_type} k={k} bypassed")
        plan = "\n".join(r[0] for r in spark.sql(
            f"EXPLAIN SELECT * FROM vector_search('lance.`{path}`', array({', '.join(str(int(x)) for x in v[0])}), "
            "'emb', 5, 'hamming')").collect())
        assert f"{index_type} index 'emb_idx' on emb" in plan, plan
        # An l2 search of the column is refused, the index notwithstanding.
        with lance_raises(InvalidArgumentError, match="uint8, which Lance measures by distance_type 'hamming' only"):
            LanceTable.for_path(spark, str(path)).search([0] * v.shape[1], k=3, column="emb").collect()


def test_refusals(spark, tmp_path):
    rng = random.Random(f"{SEED}-refusals")
    path = tmp_path / "u.lance"
    ds, v = uint8_table(rng, path)
    dim = v.shape[1]
    table = LanceTable.for_path(spark, str(path))
    with lance_raises(InvalidArgumentError, match="takes whole numbers from 0 to 255"):
        table.search([0.5] + [0] * (dim - 1), k=3, column="emb", metric="hamming").collect()
    with lance_raises(InvalidArgumentError, match="takes whole numbers from 0 to 255"):
        table.search([256] + [0] * (dim - 1), k=3, column="emb", metric="hamming").collect()
    with lance_raises(InvalidArgumentError, match="not cosine"):
        table.search([1] * dim, k=3, column="emb", metric="cosine").collect()
    fpath = tmp_path / "f.lance"
    lance.write_dataset(pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(40, np.float32)), 4)}),
                        str(fpath))
    with lance_raises(InvalidArgumentError, match="'hamming' measures vectors of uint8"):
        LanceTable.for_path(spark, str(fpath)).search([1.0] * 4, k=3, column="emb", metric="hamming").collect()


def tensor_type(ds: lance.LanceDataset, file: str, key: str) -> str:
    """The data type of the centroids tensor (``key`` 'lance:ivf') or the PQ codebook tensor (``key``
    'storage_metadata') of the one index of ``ds``, by its Tensor.DataType name."""
    [index_dir] = list((Path(ds.uri) / "_indices").iterdir())
    reader = LanceFileReader(str(index_dir / file))
    meta = reader.metadata().schema.metadata
    if key == "lance:ivf":
        ivf = dict(proto_fields(bytes(reader.read_global_buffer(int(meta[b"lance:ivf"])))))
        tensor = ivf[4]
    else:
        position = json.loads(json.loads(meta[b"storage_metadata"])[0])["codebook_position"]
        tensor = bytes(reader.read_global_buffer(position))
    return ["bfloat16", "float16", "float32", "float64", "uint8"][dict(proto_fields(tensor)).get(1, 0)]


def proto_fields(b: bytes) -> list:
    """The (field number, value) pairs of a protobuf message: varints as ints, length-delimited fields as bytes."""
    out, i = [], 0

    def varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            byte = b[i]
            i += 1
            v |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return v
    while i < len(b):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            out.append((field, varint()))
        elif wire == 2:
            n = varint()
            out.append((field, b[i:i + n]))
            i += n
        elif wire == 1:
            out.append((field, b[i:i + 8]))
            i += 8
        else:
            raise AssertionError(f"wire type {wire}")
    return out


def recall(ds: lance.LanceDataset, queries, metric: str, nprobes: int, k: int = 10) -> float:
    """pylance's mean recall@k of its index search against its exact search. For hamming, whose distances tie often,
    a row as near as the k-th nearest counts as found too (the index's distances are exact: IVF_FLAT)."""
    hits = 0
    for q in queries:
        nearest = {"column": "emb", "q": q, "k": k, "metric": metric}
        exact = ds.to_table(nearest={**nearest, "use_index": False}, with_row_id=True, columns=[])
        ann = ds.to_table(nearest={**nearest, "nprobes": nprobes}, with_row_id=True, columns=[])
        if metric == "hamming":
            kth = max(exact["_distance"].to_pylist())
            hits += sum(1 for d in ann["_distance"].to_pylist() if d <= kth)
        else:
            hits += len(set(exact["_rowid"].to_pylist()).intersection(ann["_rowid"].to_pylist()))
    return hits / (k * len(queries))


def float_table(rng: random.Random, path: Path, dtype: str, n: int, dim: int) -> np.ndarray:
    """Clustered vectors of ``dtype`` in a few fragments, some rows deleted; the table's vectors (all rows)."""
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    centers = nprng.normal(0, 3, (rng.randint(24, 40), dim))
    v = (centers[nprng.integers(0, len(centers), n)] + nprng.normal(0, 2.5, (n, dim))).astype(dtype)
    lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()),
                                  "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), dim)}),
                        str(path), max_rows_per_file=rng.choice([n // 4, n // 2]))
    lance.dataset(str(path)).delete(f"id % {rng.randint(5, 11)} = 3")
    return v


def assert_sq_as_pylance(ds: lance.LanceDataset, path: Path, v: np.ndarray, what: str) -> None:
    """The SQ bounds and codes of our index are pylance's (dumped with pylance 14): the smallest and largest value of
    the (live) vectors in the column's type, taken as float64, and each code ``floor((x - start) * 255 / (end -
    start))`` of the value in the column's type, computed in float64."""
    [index_dir] = list((path / "_indices").iterdir())
    aux = LanceFileReader(str(index_dir / "auxiliary.idx"))
    bounds = json.loads(json.loads(aux.metadata().schema.metadata[b"storage_metadata"])[0])["bounds"]
    live = ds.to_table(columns=["id"])["id"].to_numpy()
    values = v[live].astype(np.float64)
    assert (bounds["start"], bounds["end"]) == (values.min(), values.max()), f"{what}: bounds {bounds}"
    t = aux.read_all().to_table()
    rows = ds.to_table(columns=["id"], with_row_id=True)
    id_of = dict(zip(rows["_rowid"].to_pylist(), rows["id"].to_pylist()))
    codes = np.stack(t["__sq_code"].to_numpy(zero_copy_only=False)).astype(np.int64)
    x = v[[id_of[r] for r in t["_rowid"].to_pylist()]].astype(np.float64)
    expected = np.clip(np.floor((x - bounds["start"]) * 255 / (bounds["end"] - bounds["start"])), 0, 255)
    assert (codes == expected).all(), f"{what}: {(codes != expected).sum()} codes differ"


FLOAT_CASES = [(d, t, m) for d in ("float16", "float64") for t, m in
               [("IVF_FLAT", "l2"), ("IVF_FLAT", "cosine"), ("IVF_PQ", "l2"), ("IVF_PQ", "dot"), ("IVF_SQ", "l2"),
                ("IVF_HNSW_SQ", "l2")]]


@pytest.mark.parametrize("dtype,index_type,metric", FLOAT_CASES)
def test_our_index_over_float16_and_float64(spark, tmp_path, dtype, index_type, metric):
    """Our index over float16/float64 vectors stores what pylance's does in the column's type, pylance lists,
    validates and uses it with a recall near its own index's, and our search through it is pylance's."""
    if dtype == "float16" and SPARK_LINE < (4, 0):
        pytest.skip("Spark 3.x's Arrow has no half floats")
    rng = random.Random(f"{SEED}-{dtype}-{index_type}-{metric}")
    # pylance measures float16 vectors in float16; its IVF_HNSW_SQ distances over them differ from ours by up to
    # ~0.01 (seen: 2.2102 against our 2.2023), more than its IVF_SQ ones do.
    tol = (5e-3 if index_type.endswith("SQ") else 2e-3) if dtype == "float16" else 2e-5
    for t in range(N):
        dim = rng.choice([16, 32])
        n = rng.randint(2500, 4000)
        path, twin = tmp_path / f"t{t}.lance", tmp_path / f"twin{t}.lance"
        v = float_table(rng, path, dtype, n, dim)
        shutil.copytree(path, twin)
        opts = {"num_partitions": rng.choice([4, 8])}
        if "PQ" in index_type:
            opts["num_sub_vectors"] = rng.choice([4, 8])
        what = f"seed {SEED} {dtype} {index_type} {metric} table {t} (dim {dim}, {n} rows, {opts})"
        with seeded_builds(spark, build_seed(SEED, dtype, index_type, metric, t, 0)):
            LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric, **opts)
        ds = lance.dataset(str(path))
        ds.validate()
        [listed] = ds.list_indices()
        assert listed["type"] == index_type and listed["fields"] == ["emb"], listed
        stats = ds.stats.index_stats("emb_idx")
        assert stats["indices"][0]["metric_type"] == metric and stats["num_unindexed_rows"] == 0, stats
        # The centroids (and the PQ codebook, IVF_FLAT's vectors) are stored in the column's type, as pylance's are.
        assert tensor_type(ds, "index.idx", "lance:ivf") == dtype, what
        if "PQ" in index_type:
            assert tensor_type(ds, "auxiliary.idx", "storage_metadata") == dtype, what
        if index_type == "IVF_FLAT":
            [index_dir] = list((path / "_indices").iterdir())
            flat = LanceFileReader(str(index_dir / "auxiliary.idx")).metadata().schema.field("flat").type
            assert flat.value_type == pa.from_numpy_dtype(np.dtype(dtype)), flat
        if index_type.endswith("SQ"):
            assert_sq_as_pylance(ds, path, v, what)
        if "HNSW" not in index_type:
            check_partitions(path, metric)
        q = v[rng.randrange(n)].astype(np.float32)
        plan = ds.scanner(nearest={"column": "emb", "q": q, "k": 10, "nprobes": 2, "metric": metric}).explain_plan()
        assert "ANNSubIndex: name=emb_idx" in plan, plan

        # pylance's recall@10 with our index against its own, built alike (means of BUILDS builds each).
        queries = [x.astype(np.float32) + np.float32(0.5) for x in v[rng.sample(range(n), 30)]]
        ours = [recall(ds, queries, metric, 1)]
        for b in range(1, BUILDS):
            with seeded_builds(spark, build_seed(SEED, dtype, index_type, metric, t, b)):
                LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type=metric,
                                                                   replace=True, **opts)
            ours.append(recall(lance.dataset(str(path)), queries, metric, 1))
        theirs = []
        for _ in range(PYLANCE_BUILDS):
            lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, replace=True, **opts)
            theirs.append(recall(lance.dataset(str(twin)), queries, metric, 1))
        print(f"{what}: recall@10 ours {ours} pylance {theirs}")
        assert np.mean(ours) >= np.mean(theirs) - RECALL_MARGIN, f"{what}: recall@10 ours {ours}, pylance's {theirs}"

        # Our search through our index and through pylance's returns pylance's rows and distances.
        for searched in (path, twin):
            ds = lance.dataset(str(searched))
            for _ in range(3):
                q = v[rng.randrange(n)].astype(np.float64) + np.array([rng.gauss(0, 0.5) for _ in range(dim)])
                # An HNSW graph is searched with a beam as wide as the table (every node of a probed partition
                # reached): graph walks may part where distances tie (test_vector_index_hnsw.py compares them), and
                # what is compared here is what the index stores and how it measures it.
                search_both(spark, ds, searched, q, rng.randint(1, 20), metric, f"{what} {searched.name}",
                            nprobes=rng.choice([1, 2, opts["num_partitions"]]), refine_factor=rng.choice([None, 2]),
                            ef=n if "HNSW" in index_type else None, tol=tol)


def test_our_hamming_index(spark, tmp_path):
    """Our IVF_FLAT and IVF_HNSW_FLAT indexes over uint8 vectors for hamming: pylance lists, validates and uses them
    with a recall near its own's; our search through our index and through pylance's is pylance's index search."""
    rng = random.Random(f"{SEED}-hamming-build")
    for t in range(2 * N):
        for index_type in ("IVF_FLAT", "IVF_HNSW_FLAT"):
            path, twin = tmp_path / f"h{t}{index_type}.lance", tmp_path / f"twin{t}{index_type}.lance"
            ds, v = uint8_table(rng, path)
            shutil.copytree(path, twin)
            parts = rng.choice([2, 4, 8])
            what = f"seed {SEED} {index_type} table {t} (dim {v.shape[1]}, {len(v)} rows, {parts} partitions)"
            with seeded_builds(spark, build_seed(SEED, "hamming", index_type, t, 0)):
                LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), distance_type="hamming",
                                                                   num_partitions=parts)
            ds = lance.dataset(str(path))
            ds.validate()
            [listed] = ds.list_indices()
            assert listed["type"] == index_type, listed
            assert ds.stats.index_stats("emb_idx")["indices"][0]["metric_type"] == "hamming"
            assert tensor_type(ds, "index.idx", "lance:ivf") == "uint8", what
            [index_dir] = list((path / "_indices").iterdir())
            flat = LanceFileReader(str(index_dir / "auxiliary.idx")).metadata().schema.field("flat").type
            assert flat.value_type == pa.uint8(), flat
            queries = [v[rng.randrange(len(v))] for _ in range(20)]
            ours, theirs = [recall(ds, queries, "hamming", 1)], []
            for b in range(max(HAMMING_BUILDS, HAMMING_PYLANCE_BUILDS)):
                if 0 < b < HAMMING_BUILDS:
                    with seeded_builds(spark, build_seed(SEED, "hamming", index_type, t, b)):
                        LanceTable.for_path(spark, str(path)).create_index("emb", index_type.lower(), replace=True,
                                                                           distance_type="hamming", num_partitions=parts)
                    ours.append(recall(lance.dataset(str(path)), queries, "hamming", 1))
                lance.dataset(str(twin)).create_index("emb", index_type, num_partitions=parts, metric="hamming",
                                                      replace=True)
                theirs.append(recall(lance.dataset(str(twin)), queries, "hamming", 1))
            print(f"{what}: recall@10 ours {ours} pylance {theirs}")
            assert np.mean(ours) >= np.mean(theirs) - RECALL_MARGIN, f"{what}: recall@10 ours {ours}, pylance's {theirs}"
            for searched in (path, twin):
                ds = lance.dataset(str(searched))
                for _ in range(3):
                    q = v[rng.randrange(len(v))].copy()
                    k = rng.randint(1, 30)
                    # HNSW: a beam as wide as the table, as above (hamming distances tie often, and graph walks part
                    # where they tie).
                    ours_rows, theirs_rows = both(spark, ds, searched, q, k, nprobes=rng.choice([1, 2, parts]),
                                                  ef=len(v) if "HNSW" in index_type else None)
                    same_up_to_last_tie(ours_rows, theirs_rows, f"{what} {searched.name} k={k}")


def test_build_refusals(spark, tmp_path):
    rng = random.Random(f"{SEED}-build-refusals")
    path = tmp_path / "u.lance"
    uint8_table(rng, path)
    name = f"lance.`{path}`"
    before = lance.dataset(str(path)).version
    with lance_raises(UnsupportedFeatureError, match="hamming indexes as IVF_FLAT and IVF_HNSW_FLAT only"):
        spark.sql(f"ALTER TABLE {name} CREATE INDEX h USING ivf_pq (emb) WITH (num_partitions = 2, "
                  "num_sub_vectors = 2, distance_type = 'hamming')")
    with lance_raises(InvalidArgumentError, match="uint8 vectors, which Lance indexes for distance_type 'hamming' only"):
        spark.sql(f"ALTER TABLE {name} CREATE INDEX h USING ivf_flat (emb) WITH (num_partitions = 2)")
    assert lance.dataset(str(path)).version == before
    fpath = tmp_path / "f.lance"
    lance.write_dataset(pa.table({"emb": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(400, np.float64)), 4)}),
                        str(fpath))
    with lance_raises(InvalidArgumentError, match="holds float64 vectors, and 'hamming' measures vectors of uint8"):
        spark.sql(f"ALTER TABLE lance.`{fpath}` CREATE INDEX h USING ivf_flat (emb) WITH (num_partitions = 2, "
                  "distance_type = 'hamming')")
    assert lance.dataset(str(fpath)).list_indices() == []


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_float16_exact_distances_round_the_query_as_pylance(spark, tmp_path, metric):
    """Over float16 vectors pylance measures exactly (its flat search, and the rows it refines) with the query cast to
    float16 first; so do we: the distances agree to float32 rounding (before, within ~1e-3 relative only)."""
    if SPARK_LINE < (4, 0):
        pytest.skip("Spark 3.x's Arrow has no half floats")
    rng = random.Random(f"{SEED}-float16-exact-{metric}")
    path = tmp_path / "h.lance"
    v = float_table(rng, path, "float16", 1200, 16)
    ds = lance.dataset(str(path))
    for i in range(3 * N):
        q = v[rng.randrange(len(v))].astype(np.float64) + np.array([rng.gauss(0, 0.7) for _ in range(16)])
        search_both(spark, ds, path, q, rng.randint(1, 12), metric, f"seed {SEED} {metric} flat {i}",
                    bypass_vector_index=True, tol=1e-6)
    LanceTable.for_path(spark, str(path)).create_index("emb", "ivf_pq", distance_type=metric, num_partitions=2,
                                                       num_sub_vectors=4)
    ds = lance.dataset(str(path))
    for i in range(3 * N):
        q = v[rng.randrange(len(v))].astype(np.float64) + np.array([rng.gauss(0, 0.7) for _ in range(16)])
        search_both(spark, ds, path, q, rng.randint(1, 12), metric, f"seed {SEED} {metric} refined {i}",
                    nprobes=2, refine_factor=2, tol=1e-6)
