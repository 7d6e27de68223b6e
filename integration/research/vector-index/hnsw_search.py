"""Approximate check of IVF_HNSW_SQ / IVF_HNSW_FLAT search: standard HNSW (greedy descent, beam ef at level 0)."""
import common, verify_search as vs, numpy as np, json, heapq, sys
path = sys.argv[1]
x = vs.prepare(path)
hn = [json.loads(s) for s in json.loads(x["imeta"][b"lance:hnsw"])]
vid = x["idx"]["__vector_id"].to_numpy(); nbr = x["idx"]["__neighbors"].to_pylist()
C = x["ivf"]["centroids"]
sq = "__sq_code" in x["aux"].column_names
if sq:
    lo, hi = x["sm"]["bounds"]["start"], x["sm"]["bounds"]["end"]
    codes_all = np.stack(x["aux"]["__sq_code"].to_numpy(zero_copy_only=False)).astype(np.int64)
else:
    vec_all = np.stack(x["aux"]["flat"].to_numpy(zero_copy_only=False)).astype(np.float32)
def part_graph(p):
    o = x["ivf"]["offsets"][p]; lo_ = hn[p]["level_offsets"]; g = []
    for L in range(len(lo_) - 1):
        a, b = o + lo_[L], o + lo_[L+1]
        g.append({int(vid[i]): nbr[i] for i in range(a, b)})
    return g
graphs = [part_graph(p) for p in range(len(hn))]
def search_part(p, q, k, ef):
    ao, al = x["aivf"]["offsets"][p], x["aivf"]["lengths"][p]
    ids = x["rid"][ao:ao+al]
    if sq:
        qc = np.clip(np.floor((q.astype(np.float64) - lo) * 255.0 / (hi - lo)), 0, 255).astype(np.int64)
        dist = lambda n: float(((codes_all[ao + n] - qc) ** 2).sum()) * (hi - lo) ** 2 / 255.0 ** 2
    else:
        dist = lambda n: float(((vec_all[ao + n] - q) ** 2).sum())
    g = graphs[p]; ep = hn[p]["entry_point"]; de = dist(ep)
    top = max(L for L in range(len(g)) if g[L])
    for L in range(top, 0, -1):
        changed = True
        while changed:
            changed = False
            for n in g[L].get(ep, []):
                d = dist(n)
                if d < de: de, ep, changed = d, n, True
    visited = {ep}; cand = [(de, ep)]; res = [(-de, ep)]
    while cand:
        d, n = heapq.heappop(cand)
        if d > -res[0][0] and len(res) >= ef: break
        for m in g[0].get(n, []):
            if m in visited: continue
            visited.add(m); dm = dist(m)
            if len(res) < ef or dm < -res[0][0]:
                heapq.heappush(cand, (dm, m)); heapq.heappush(res, (-dm, m))
                if len(res) > ef: heapq.heappop(res)
    out = sorted((-d, ids[n]) for d, n in res)[:k]
    return out
rng = np.random.default_rng(5); same = n = 0
for t in range(20):
    q = rng.standard_normal(16).astype(np.float32)
    for npb, ef in ((1, None), (2, None), (4, None), (1, 10), (2, 10), (1, 40)):
        nn = {"column":"emb","q":q,"k":10,"nprobes":npb}
        if ef: nn["ef"] = ef
        r = x["ds"].to_table(nearest=nn, columns=[], with_row_id=True)
        parts = np.argsort(((C - q) ** 2).sum(1), kind="stable")[:npb]
        cands = [c for p in parts for c in search_part(p, q, 10, ef or 15)]
        cands.sort(key=lambda c: (c[0], c[1]))
        mine = np.array([c[1] for c in cands[:10]], np.uint64); md = np.array([c[0] for c in cands[:10]])
        n += 1; ok = np.array_equal(mine, r["_rowid"].to_numpy()); same += ok
        if not ok and t < 1: print("diff", r["_rowid"].to_numpy(), r["_distance"].to_numpy(), mine, md)
        if ok and t == 0 and npb == 1: print("dist rel err", np.max(np.abs(md - r["_distance"].to_numpy()) / r["_distance"].to_numpy()))
print(path, "HNSW model ids identical", same, "/", n)
