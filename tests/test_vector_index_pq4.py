"""4-bit PQ (``num_bits = 4``): IVF_PQ and IVF_HNSW_PQ indexes with two codes a byte, both ways against pylance 14.

* pylance builds, we search: our ``vector_search`` through pylance's 4-bit IVF_PQ index returns pylance's rows and
  distances (random ``k``, ``nprobes``, ``refine_factor``, filters before or after the search, deleted rows, an
  appended fragment): pylance 14 measures each row as the sum of its sub-vectors' table entries, a byte's two entries
  added first (docs/dev/vector-index-format.md §6.5), over table entries summed as ``PqTableSums`` sums them, so a
  distance the index gives is pylance's to the last bit and rows may differ only where two distances are equal. Rows
  measured exactly (``refine_factor``, the appended fragment) agree to ``TOL``, as in test_vector_index_search.py.
  Over pylance's 4-bit IVF_HNSW_PQ index the rows both searches find have pylance's distances to the bit.
* we build, pylance searches: pylance lists our 4-bit index, ``validate()`` passes, its plan uses it; every stored code
  is the nearest codeword of the row's residual under the index's own centroids and codebook, packed and transposed
  as pylance stores them (low nibble first), and the files carry pylance's metadata; pylance's recall@10 with our index
  is near its recall with its own 4-bit index built alike (means of ``BUILDS`` builds), and our search over our index
  is pylance's.
* ``OPTIMIZE INDEX`` extends 4-bit indexes, ours and pylance's.

Tables are drawn from ``SPARKLANCE_FUZZ_SEED``; ``SPARKLANCE_FUZZ_N`` scales the number of tables.
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
import pytest
from lance.file import LanceFileReader

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import build_seed, recall_builds, seeded_builds  # noqa: E402
from test_vector_index_build import check_partitions, options, recall, table  # noqa: E402
from test_vector_index_hnsw import MIN_OVERLAP, our_search, overlap, pylance_search  # noqa: E402
from test_vector_index_search import TOL, indexed_table, search_both  # noqa: E402
from test_vector_types import proto_fields  # noqa: E402

from sparklance import LanceTable  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261126"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "1"))
BUILDS = recall_builds(3)
# As test_vector_index_build.py: one build's recall moves by several points from the next one's on these small
# tables, so the means of BUILDS builds are held within 10 points; issue #17's 2 points are measured over more
# tables and builds by integration/research/vector-index/recall_pq4.py (docs/vector-search.md).
RECALL_POINTS = 0.10


def test_search_through_pylance_4bit_index(spark, tmp_path):
    rng = random.Random(f"{SEED}-pq4-search")
    for t in range(N * 3):
        metric = ["l2", "cosine", "dot"][t % 3]
        unindexed, stable = rng.random() < 0.4, rng.random() < 0.3
        path = tmp_path / f"p{t}.lance"
        ds, dim = indexed_table(rng, path, "IVF_PQ", metric, unindexed, stable, num_bits=4)
        plan = "\n".join(r[0] for r in spark.sql(
            f"EXPLAIN SELECT * FROM vector_search('lance.`{path}`', array({', '.join(['0.5'] * dim)}), 'emb', 5, "
            f"'{metric}', NULL, NULL, 2)").collect())
        # The index serves the search: the plan names it, or (rows taken on the driver) takes the rows it found.
        assert "IVF_PQ index 'emb_idx' on emb" in plan or "In(_rowid, [" in plan, plan
        for _ in range(5):
            q = np.array([rng.gauss(0, 3) for _ in range(dim)], dtype=np.float32).astype(np.float64)
            k = rng.choice([1, 5, 10, 30, 250])
            nprobes = rng.choice([1, 2, 3, 16])
            refine = rng.choice([None, None, 2])
            filt = rng.choice([None, None, "tag = 'a'"])
            prefilter = filt is not None and rng.random() < 0.5
            what = (f"seed {SEED} 4-bit IVF_PQ {metric} table {t} (dim {dim}, unindexed {unindexed}, stable {stable}) "
                    f"k={k} nprobes={nprobes} refine={refine} filter={filt} prefilter={prefilter}")
            search_both(spark, ds, path, q, k, metric, what, nprobes=nprobes, refine_factor=refine, filter=filt,
                        prefilter=prefilter, tol=TOL if refine or unindexed else 0.0)


def test_search_through_pylance_4bit_hnsw_index(spark, tmp_path):
    """pylance 14 builds IVF_HNSW_PQ with 4-bit codes too; our graph search over it measures nodes as pylance does."""
    rng = random.Random(f"{SEED}-pq4-hnsw")
    overlaps = []
    for t in range(N * 2):
        metric = ["l2", "dot"][t % 2]
        dim = rng.choice([8, 16])
        path = tmp_path / f"h{t}.lance"
        data = table(rng, path, rng.randint(1500, 2500), dim)
        lance.dataset(str(path)).create_index("emb", index_type="IVF_HNSW_PQ", num_partitions=rng.choice([1, 2]),
                                              num_sub_vectors=dim // 2, num_bits=4, metric=metric, m=16,
                                              ef_construction=80)
        ds = lance.dataset(str(path))
        for _ in range(5):
            q = data.vectors(1)[0].astype(np.float64)
            k = rng.randint(1, 20)
            what = f"seed {SEED} 4-bit IVF_HNSW_PQ {metric} table {t} k={k}"
            theirs = pylance_search(ds, q, k, metric, nprobes=2)
            ours = our_search(spark, path, q, k, metric, nprobes=2)
            overlaps.append(overlap(ours, theirs, what))
            assert_same_distances(ours, theirs, what)
    assert sum(overlaps) / len(overlaps) >= MIN_OVERLAP, overlaps


def assert_same_distances(ours, theirs, what: str) -> None:
    """Rows both searches found have the same float32 distance, bit for bit."""
    mine = dict(ours)
    for rowid, d in theirs:
        if rowid in mine:
            assert np.float32(mine[rowid]) == np.float32(d), f"{what}: row {rowid} at {mine[rowid]!r}, pylance {d!r}"


def index_dir(path: Path) -> Path:
    """The directory of the table's one vector index segment, as its latest version lists it."""
    [listed] = lance.dataset(str(path)).list_indices()
    return path / "_indices" / listed["uuid"]


def packed(value) -> list:
    """A repeated varint field's values (packed bytes, or one varint)."""
    return [value] if isinstance(value, int) else list(_varints(value))


def _varints(buf: bytes):
    pos = 0
    while pos < len(buf):
        out, shift = 0, 0
        while True:
            b = buf[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        yield out


def tensor(buf: bytes):
    """A float32 ``Tensor`` message (data_type 1, shape 2, data 3) as (shape, values)."""
    dtype, shape, data = 0, [], b""
    for number, value in proto_fields(buf):
        if number == 1:
            dtype = value
        elif number == 2:
            shape += packed(value)
        elif number == 3:
            data = value
    assert dtype == 2, dtype
    return shape, np.frombuffer(data, np.float32)


def check_codes(path: Path, metric: str, m: int):
    """Every stored 4-bit code of our index is the nearest codeword (as float32 squared L2) of its row's residual (dot:
    its vector) under the index's own centroids and codebook, packed low nibble first and transposed per partition;
    the metadata is pylance's."""
    d = index_dir(path)
    aux = LanceFileReader(str(d / "auxiliary.idx"))
    meta = aux.metadata().schema.metadata
    storage = json.loads(json.loads(meta[b"storage_metadata"])[0])
    assert storage["nbits"] == 4 and storage["num_sub_vectors"] == m and storage["transposed"] is True, storage
    codebook_shape, codebook = tensor(bytes(aux.read_global_buffer(storage["codebook_position"])))
    dim = storage["dimension"]
    assert codebook_shape == [16, dim], codebook_shape
    cols = aux.read_all().to_table()
    assert str(cols.schema.field("__pq_code").type) == f"fixed_size_list<item: uint8>[{m // 2}]", cols.schema
    index_file = LanceFileReader(str(d / "index.idx"))
    ivf = bytes(index_file.read_global_buffer(int(index_file.metadata().schema.metadata[b"lance:ivf"])))
    [centroids] = [tensor(v)[1].reshape(-1, dim) for number, v in proto_fields(ivf) if number == 4]
    aux_ivf = bytes(aux.read_global_buffer(int(meta[b"lance:ivf"])))
    lengths = [n for number, v in proto_fields(aux_ivf) if number == 3 for n in packed(v)]
    book = codebook.reshape(m, 16, dim // m)  # the tensor's bytes are sub-vector-major (§2.3)
    rows = lance.dataset(str(path)).to_table(columns=["emb"], with_row_id=True)
    vectors = dict(zip(rows["_rowid"].to_pylist(), np.stack(rows["emb"].to_numpy(zero_copy_only=False)).astype(np.float32)))
    rowids = cols["_rowid"].to_pylist()
    stored = np.frombuffer(cols["__pq_code"].combine_chunks().values.to_numpy(zero_copy_only=False), np.uint8)
    start, checked, ambiguous = 0, 0, 0
    for p, n in enumerate(lengths):
        part = stored[start * (m // 2):(start + n) * (m // 2)].reshape(m // 2, n).T  # transposed per partition
        for i in range(n):
            v = vectors[rowids[start + i]]
            if metric == "cosine":
                v = v / np.float32(np.sqrt(np.sum(v * v, dtype=np.float32)))
            r = (v if metric == "dot" else v - centroids[p]).astype(np.float32).reshape(m, dim // m)
            dist = ((book - r[:, None, :]) ** 2).sum(-1)
            want = dist.argmin(1)
            got = np.empty(m, np.int64)
            got[0::2], got[1::2] = part[i] & 0x0F, part[i] >> 4
            # Where two codewords are equally near in float32 (to rounding), either may be stored.
            near = np.sort(dist, 1)
            tie = (near[:, 1] - near[:, 0]) <= 1e-5 * np.maximum(1, near[:, 0])
            ambiguous += int(tie.any())
            assert np.all((got == want) | tie), f"partition {p} row {rowids[start + i]}: codes {got}, nearest {want}"
            checked += 1
        start += n
    assert checked == len(rowids) and ambiguous < checked / 10, (checked, ambiguous)


@pytest.mark.parametrize("index_type,metric", [("IVF_PQ", "l2"), ("IVF_PQ", "cosine"), ("IVF_PQ", "dot"),
                                               ("IVF_HNSW_PQ", "l2")])
def test_pylance_uses_our_4bit_index(spark, tmp_path, index_type, metric):
    rng = random.Random(f"{SEED}-pq4-build-{index_type}-{metric}")
    for t in range(N):
        dim = rng.choice([16, 32])
        n = rng.randint(3000, 4500)
        path, twin = tmp_path / f"o{t}.lance", tmp_path / f"twin{t}.lance"
        data = table(rng, path, n, dim, stable=rng.random() < 0.3)
        shutil.copytree(path, twin)
        partitions = rng.choice([4, 8]) if index_type == "IVF_PQ" else 2
        opts = options("IVF_PQ", metric, partitions, dim, rng)
        opts["num_bits"] = 4
        if index_type == "IVF_HNSW_PQ":
            # Sub-vectors of 2 values, as test_vector_index_hnsw.py's: coarser codes tie so often that two graph
            # searches part ways on ties alone.
            opts.update(num_sub_vectors=dim // 2, m=16, ef_construction=80)
        what = f"seed {SEED} 4-bit {index_type} {metric} table {t} (dim {dim}, {n} rows, {opts})"
        lt = LanceTable.for_path(spark, str(path))
        with seeded_builds(spark, build_seed(SEED, "pq4", index_type, metric, t, 0)):
            made = lt.create_index("emb", index_type.lower(), distance_type=metric, **opts)
        assert made["name"] == "emb_idx", made
        ds = lance.dataset(str(path))
        ds.validate()
        [listed] = ds.list_indices()
        assert listed["type"] == index_type and listed["fields"] == ["emb"], listed
        stats = ds.stats.index_stats("emb_idx")
        assert stats["num_unindexed_rows"] == 0 and len(stats["indices"][0]["partitions"]) == partitions, stats
        if index_type == "IVF_PQ":
            check_codes(path, metric, opts["num_sub_vectors"])
            check_partitions(path, metric)
        # The index details say 4 bits, as pylance's own 4-bit index's do.
        lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, **opts)
        [ours_d], [theirs_d] = ds.describe_indices(), lance.dataset(str(twin)).describe_indices()
        assert ours_d.type_url == theirs_d.type_url
        q = data.vectors(1)[0]
        plan = ds.scanner(nearest={"column": "emb", "q": q, "k": 10, "nprobes": 2, "metric": metric}).explain_plan()
        assert "ANNSubIndex: name=emb_idx" in plan, plan

        queries = data.vectors(40)
        nprobes = 1 if index_type == "IVF_PQ" else partitions
        ours = [recall(ds, queries, metric, nprobes)]
        for b in range(1, BUILDS):
            with seeded_builds(spark, build_seed(SEED, "pq4", index_type, metric, t, b)):
                lt.create_index("emb", index_type.lower(), distance_type=metric, replace=True, **opts)
            ours.append(recall(lance.dataset(str(path)), queries, metric, nprobes))
        theirs = [recall(lance.dataset(str(twin)), queries, metric, nprobes)]
        for _ in range(BUILDS - 1):
            lance.dataset(str(twin)).create_index("emb", index_type=index_type, metric=metric, replace=True, **opts)
            theirs.append(recall(lance.dataset(str(twin)), queries, metric, nprobes))
        print(f"{what}: recall@10 ours {ours} pylance {theirs}")
        assert np.mean(ours) >= np.mean(theirs) - RECALL_POINTS, f"{what}: recall@10 ours {ours}, pylance's {theirs}"

        ds = lance.dataset(str(path))
        if index_type == "IVF_PQ":
            for _ in range(3):
                q = data.vectors(1)[0].astype(np.float64)
                refine = rng.choice([None, 2])
                search_both(spark, ds, path, q, rng.randint(1, 25), metric, what, nprobes=rng.choice([1, 2, partitions]),
                            refine_factor=refine, tol=TOL if refine else 0.0)
        else:
            overlaps = [overlap(our_search(spark, path, q.astype(np.float64), 10, metric, nprobes=2),
                                pylance_search(ds, q.astype(np.float64), 10, metric, nprobes=2), what)
                        for q in queries[:6]]
            assert sum(overlaps) / len(overlaps) >= MIN_OVERLAP, (what, overlaps)


@pytest.mark.parametrize("built_by", ["pylance", "sparklance", "pylance-hnsw"])
def test_optimize_extends_4bit_index(spark, tmp_path, built_by):
    rng = random.Random(f"{SEED}-pq4-optimize-{built_by}")
    dim = rng.choice([8, 16])
    path = tmp_path / "t.lance"
    data = table(rng, path, 2000, dim)
    m = dim // 2
    if built_by == "pylance-hnsw":
        lance.dataset(str(path)).create_index("emb", index_type="IVF_HNSW_PQ", num_partitions=2, num_sub_vectors=m,
                                              num_bits=4, m=16, ef_construction=80)
    elif built_by == "pylance":
        lance.dataset(str(path)).create_index("emb", index_type="IVF_PQ", num_partitions=4, num_sub_vectors=m,
                                              num_bits=4)
        # pylance's own codes obey the rule check_codes holds ours to (so that the rule is pylance's).
        check_codes(path, "l2", m)
    else:
        LanceTable.for_path(spark, str(path)).create_index("emb", "ivf_pq", num_partitions=4, num_sub_vectors=m,
                                                           num_bits=4)
    before = lance.dataset(str(path)).list_indices()[0]["uuid"]
    lance.write_dataset(data.rows(2000, 300), str(path), mode="append")
    spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX emb_idx").collect()
    ds = lance.dataset(str(path))
    ds.validate()
    [listed] = ds.list_indices()
    assert listed["uuid"] != before and listed["type"] == ("IVF_HNSW_PQ" if built_by == "pylance-hnsw" else "IVF_PQ"), \
        listed
    stats = ds.stats.index_stats("emb_idx")
    assert stats["num_unindexed_rows"] == 0 and stats["num_indexed_rows"] == ds.count_rows(), stats
    storage = json.loads(json.loads(LanceFileReader(str(index_dir(path) / "auxiliary.idx")).metadata()
                                    .schema.metadata[b"storage_metadata"])[0])
    assert storage["nbits"] == 4, storage
    # The old rows' codes kept, the appended rows' codes the nearest codewords under the index's model (for pylance's
    # index: its centroids and codebook, so our codes are the ones pylance would store).
    if built_by == "pylance-hnsw":
        overlaps = [overlap(our_search(spark, path, q, 10, "l2", nprobes=2), pylance_search(ds, q, 10, "l2", nprobes=2),
                            "4-bit IVF_HNSW_PQ optimized") for q in data.vectors(6).astype(np.float64)]
        assert sum(overlaps) / len(overlaps) >= MIN_OVERLAP, overlaps
        return
    check_codes(path, "l2", m)
    for _ in range(3):
        q = data.vectors(1)[0].astype(np.float64)
        search_both(spark, ds, path, q, rng.randint(1, 25), "l2", f"4-bit optimized ({built_by})",
                    nprobes=rng.choice([1, 2, 4]), tol=0.0)
