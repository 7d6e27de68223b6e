"""Re-implement pylance IVF_FLAT / IVF_PQ search from the dumped index arrays (numpy) and
compare with pylance's to_table(nearest=...). Usage: python verify_search.py <dataset> [nq]"""
import sys, numpy as np, lance, pyarrow as pa, common

def topk(d, ids, k):
    # sort by distance, then row id (tie-break) ; stable
    o = np.lexsort((ids, d))[:k]
    return d[o], ids[o]

def prepare(ds_path):
    x = common.load(ds_path)
    ds = lance.dataset(ds_path)
    t = ds.to_table(columns=["emb"], with_row_id=True)
    vec = np.stack(t["emb"].to_numpy(zero_copy_only=False)).astype(np.float32)
    allrid = t["_rowid"].to_numpy()
    x["orig"] = dict(zip(allrid.tolist(), range(len(allrid))))
    x["vec"] = vec
    x["ds"] = ds
    x["metric"] = x["ameta"][b"distance_type"].decode()
    x["rid"] = x["aux"]["_rowid"].to_numpy()
    if "__pq_code" in x["aux"].column_names:
        codes = np.stack(x["aux"]["__pq_code"].to_numpy(zero_copy_only=False))
        sm = x["sm"]; m = sm["num_sub_vectors"]; nb = sm["nbits"]; cpr = codes.shape[1]
        un = np.empty((len(codes), m), np.int64)
        for o, l in zip(x["aivf"]["offsets"], x["aivf"]["lengths"]):
            blk = codes[o:o+l].reshape(-1).reshape(cpr, l).T    # undo per-partition transpose
            if nb == 8: un[o:o+l] = blk
            else:
                un[o:o+l, 0::2] = blk & 0x0F; un[o:o+l, 1::2] = blk >> 4
        x["codes"] = un
        K = 2 ** nb; sd = sm["dimension"] // m
        x["book"] = x["cb"][0].reshape(m, K, sd)        # sub-vector-major codebook
    return x

USE_LANCE_KERNELS = "--lance-kernels" in sys.argv
def exact_dist(metric, q, V):
    if USE_LANCE_KERNELS and metric in ("l2", "dot"):
        import lance_kernels as lk
        return lk.l2(q, V) if metric == "l2" else lk.dot_dist(q, V)
    if metric == "l2": return ((V - q) ** 2).sum(1, dtype=np.float32)
    if metric == "cosine":
        return (1 - (V @ q) / (np.linalg.norm(V, axis=1) * np.linalg.norm(q))).astype(np.float32)
    if metric == "dot": return (1 - V @ q).astype(np.float32)

def search(x, q, k, nprobes, refine_factor=None, exact_rerank=False):
    metric = x["metric"]; C = x["ivf"]["centroids"].astype(np.float32)
    qq = q / np.linalg.norm(q) if metric == "cosine" else q
    # 1) coarse: partition distances (cosine -> L2 on normalized query; dot -> 1 - q.c)
    if metric == "dot": dc = 1 - C @ qq
    else: dc = ((C - qq) ** 2).sum(1)
    parts = np.argsort(dc, kind="stable")[:nprobes]
    kk = k * (refine_factor or 1)
    cand_d, cand_id = [], []
    for p in parts:
        o, l = x["aivf"]["offsets"][p], x["aivf"]["lengths"][p]
        ids = x["rid"][o:o+l]
        live = np.ones(l, bool) if "live" not in x else np.array([int(i) in x["live"] for i in ids])
        if "codes" in x:
            book = x["book"]; m, K, sd = book.shape
            r = qq - C[p] if metric in ("l2", "cosine") else qq
            rs = r.reshape(m, sd)
            if metric == "dot":
                table = -np.einsum("mkd,md->mk", book, rs)         # -(q_j . c_jk)
            else:
                table = ((book - rs[:, None, :]) ** 2).sum(-1)      # ||r_j - c_jk||^2
            d = table[np.arange(m)[None, :], x["codes"][o:o+l]].sum(1, dtype=np.float32)
            # cosine: reported approx distance is the L2 on normalized vectors (NOT halved)
            if metric == "dot": d = 1 + d
        elif "__sq_code" in x["aux"].column_names:
            lo, hi = x["sm"]["bounds"]["start"], x["sm"]["bounds"]["end"]
            codes = np.stack(x["aux"]["__sq_code"].to_numpy(zero_copy_only=False)[o:o+l]).astype(np.int32)
            qc = np.clip(np.floor((qq.astype(np.float64) - lo) * 255.0 / (hi - lo)), 0, 255).astype(np.int32)
            if metric == "dot": d = (1 - (codes * qc).sum(1)).astype(np.float32)   # UNVERIFIED
            else: d = ((codes - qc) ** 2).sum(1).astype(np.float32) * np.float32((hi - lo) ** 2 / 255.0 ** 2)
        else:
            V = x["aux"]["flat"].to_numpy(zero_copy_only=False)
            V = np.stack(V[o:o+l]).astype(np.float32)
            d = exact_dist("l2" if metric == "cosine" else metric, qq, V) if metric != "cosine" else exact_dist("cosine", qq, V)
        dd, ii = topk(d.astype(np.float32)[live], ids[live], kk)
        cand_d.append(dd); cand_id.append(ii)
    d = np.concatenate(cand_d); ids = np.concatenate(cand_id)
    d, ids = topk(d, ids, kk)
    if refine_factor is not None or exact_rerank:
        V = x["vec"][[x["orig"][int(i)] for i in ids]]
        d = exact_dist(metric, q, V)
    return topk(d, ids, k)

if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0]; nq = int(args[1]) if len(args) > 1 else 20
    x = prepare(path)
    rng = np.random.default_rng(7)
    stats = {}
    for trial in range(nq):
        q = rng.standard_normal(x["vec"].shape[1]).astype(np.float32)
        for nprobes in (1, 2, 4):
            for rf in (None, 1, 3):
                k = 10
                nearest = {"column": "emb", "q": q, "k": k, "nprobes": nprobes}
                if rf is not None: nearest["refine_factor"] = rf
                t = x["ds"].to_table(nearest=nearest, columns=[], with_row_id=True)
                pd, pid = t["_distance"].to_numpy(), t["_rowid"].to_numpy()
                md, mid = search(x, q, k, nprobes, rf)
                key = (nprobes, rf)
                s = stats.setdefault(key, [0, 0, 0, 0.0])
                s[0] += 1
                s[1] += int(np.array_equal(pid, mid))
                s[2] += int(np.array_equal(pid, mid) and np.array_equal(pd, md))
                if np.array_equal(pid, mid): s[3] = max(s[3], float(np.max(np.abs(pd - md) / np.maximum(np.abs(pd), 1e-6))))
                elif trial == 0:
                    print("MISMATCH", key, "\n pylance", pid, pd, "\n mine   ", mid, md)
    print(path, x["metric"])
    for key, (n, ids_ok, exact_ok, rel) in sorted(stats.items(), key=str):
        print(f"  nprobes={key[0]} refine={key[1]}: ids match {ids_ok}/{n}, ids+bit-exact distances {exact_ok}/{n}, max rel dist err {rel:.2e}")
