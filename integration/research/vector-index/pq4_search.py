"""Checks a model of pylance's 4-bit IVF_PQ search against pylance 14 (docs/dev/vector-index-format.md §6.5).

pylance builds 4-bit IVF_PQ indexes on random tables; this script re-implements the search from the dumped index
arrays in float32 (numpy, sums in Lance's order) and counts queries whose row ids and distances are pylance's,
bit for bit:

* no prefilter (no deletions): per partition the first max(200, k) rows exact (sub-vectors summed in order), qmax
  their largest distance, qmin the table's smallest entry; table entries quantized to round((d - qmin) * 255 /
  (qmax - qmin)) saturated to 0..255; full blocks of 16 rows summed as bytes with saturation; the rows past the last
  full block exact; quantized rows reported as q * ((qmax - qmin) / 255) + qmin;
* with deletions (or a prefilter): every row exact, each byte's two sub-vectors added first, then the bytes in order.

Dot: table entries 1 - q.c, the sum minus (m - 1). Usage: python pq4_search.py [tables] [seed]
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import pyarrow as pa
import lance

import common

F = np.float32
MODE = os.environ.get('PQ4_MODE', 'exact')


def seq_sum(cols):
    s = np.zeros(cols[0].shape, F)
    for c in cols:
        s = (s + c).astype(F)
    return s


def table(book, q, centroid, metric):
    m, K, sd = book.shape
    r = q if metric == "dot" else (q - centroid).astype(F)
    t = np.zeros((m, K), F)
    for j in range(m):
        for d in range(sd):
            x = r[j * sd + d]
            if metric == "dot":
                t[j] = (t[j] + (x * book[j, :, d]).astype(F)).astype(F)
            else:
                diff = (x - book[j, :, d]).astype(F)
                t[j] = (t[j] + (diff * diff).astype(F)).astype(F)
    if metric == "dot":
        t = (F(1) - t).astype(F)
    return t


def partition_distances(t, codes, k, exact_rows):
    """codes: [rows, m] sub-vector codes. Lance's compute_pq_distance_4bit (or per-row distance)."""
    n, m = codes.shape
    per = [t[j][codes[:, j]] for j in range(m)]
    exact = seq_sum([(per[2 * b] + per[2 * b + 1]).astype(F) for b in range(m // 2)])
    if exact_rows:
        return exact
    flat = min(max(200, min(k, n)), n)
    qmax = exact[:flat].max()
    qmin = t.min()
    factor = F(255) / F(qmax - qmin)
    qt = np.clip(np.round(((t - qmin).astype(F) * factor).astype(F)), 0, 255).astype(np.int32)
    qs = np.zeros(n, np.int32)
    for j in range(m):
        qs = np.minimum(qs + qt[j][codes[:, j]], 255)
    rng = F(F(qmax - qmin) / F(255))
    deq = ((qs.astype(F) * rng).astype(F) + qmin).astype(F)
    out = exact.copy()
    full = n - n % 16
    out[flat:full] = deq[flat:full]
    return out


def search(x, q, k, nprobes, exact_rows):
    metric = x["metric"]
    C = x["ivf"]["centroids"].astype(F)
    qq = (q / F(np.sqrt(seq_sum([q * q]).sum()))).astype(F) if metric == "cosine" else q
    if metric == "dot":
        dc = 1 - C @ qq
    else:
        dc = ((C - qq) ** 2).sum(1)
    parts = np.argsort(dc, kind="stable")[:nprobes]
    ds, ids = [], []
    for p in parts:
        o, l = x["aivf"]["offsets"][p], x["aivf"]["lengths"][p]
        if l == 0:
            continue
        t = table(x["book"], qq, C[p], metric)
        d = partition_distances(t, x["codes"][o:o + l], k, exact_rows)
        if metric == "dot":
            d = (d - F(x["book"].shape[0] - 1)).astype(F)
        live = np.array([int(i) in x["live"] for i in x["rid"][o:o + l]])
        ds.append(d[live])
        ids.append(x["rid"][o:o + l][live])
    d, i = np.concatenate(ds), np.concatenate(ids)
    order = np.lexsort((i, d))[:k]
    return i[order], d[order]


def main():
    tables = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = np.random.default_rng(seed)
    work = tempfile.mkdtemp()
    import verify_search as vs
    ok = same_ids = total = tied = 0
    for t in range(tables):
        dim = int(rng.choice([8, 12, 16]))
        n = int(rng.integers(800, 3000))
        metric = ["l2", "cosine", "dot"][t % 3]
        centers = rng.normal(0, 3, (5, dim))
        v = (centers[rng.integers(0, 5, n)] + rng.normal(0, 1, (n, dim))).astype(F)
        path = os.path.join(work, f"t{t}.lance")
        lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()),
                                      "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), dim)}), path)
        ds = lance.dataset(path)
        m = int(rng.choice([mm for mm in (2, 4, 8) if dim % mm == 0]))
        ds.create_index("emb", index_type="IVF_PQ", num_partitions=int(rng.choice([2, 4, 6])), num_sub_vectors=m,
                        num_bits=4, metric=metric)
        deleted = t % 2 == 1
        if deleted:
            ds.delete("id % 5 = 1")
        x = vs.prepare(path)
        x["live"] = set(x["orig"].keys())
        for _ in range(10):
            q = rng.normal(0, 3, dim).astype(F)
            k = int(rng.choice([1, 10, 50, 300]))
            nprobes = int(rng.choice([1, 2, 3]))
            r = ds.to_table(nearest={"column": "emb", "q": q, "k": k, "nprobes": nprobes}, columns=[], with_row_id=True)
            pid, pd = r["_rowid"].to_numpy(), r["_distance"].to_numpy()
            mid, md = search(x, q, k, nprobes, exact_rows=MODE == 'exact' or deleted)
            total += 1
            same_ids += np.array_equal(pid, mid)
            ok += np.array_equal(pid, mid) and np.array_equal(pd, md)
            tie = len(pid) == len(mid) and np.array_equal(pid[:-1], mid[:-1]) and np.array_equal(pd, md)
            tied += tie and not np.array_equal(pid, mid)
            if not (np.array_equal(pid, mid) and np.array_equal(pd, md)) and not tie:
                print(f"table {t} {metric} m={m} deleted={deleted} k={k} nprobes={nprobes}")
                if len(pid) == len(mid) and not np.array_equal(pid, mid):
                    i = int(np.argmax(pid != mid))
                    print(f"  first different row at {i} of {len(pid)}: pylance {pid[i]} {pd[i]!r}, model {mid[i]} {md[i]!r}")
                else:
                    print(f"  {len(pid)} / {len(mid)} rows; largest relative distance difference "
                          f"{np.max(np.abs(pd - md) / np.maximum(1, np.abs(pd))) if len(pid) == len(mid) else None}")
    print(f"ids equal {same_ids}/{total}, ids and distances bit-exact {ok}/{total}, "
          f"distances bit-exact with another row of the same distance last {tied}/{total}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
