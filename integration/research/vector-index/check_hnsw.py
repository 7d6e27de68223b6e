import common, numpy as np, json, sys
x = common.load(sys.argv[1])
hn = [json.loads(s) for s in json.loads(x["imeta"][b"lance:hnsw"])]
idx = x["idx"]; vid = idx["__vector_id"].to_numpy(); nb = idx["__neighbors"].to_pylist(); dist = idx["_distance"].to_pylist()
print("index ivf offsets", x["ivf"]["offsets"], "lengths", x["ivf"]["lengths"])
print("aux ivf offsets", x["aivf"]["offsets"], "lengths", x["aivf"]["lengths"])
data = np.load("data.npy")
for p in range(len(hn)):
    o, l = x["ivf"]["offsets"][p], x["ivf"]["lengths"][p]
    lo = hn[p]["level_offsets"]; ep = hn[p]["entry_point"]
    n = x["aivf"]["lengths"][p]
    print(f"part {p}: entry {ep} level_offsets {lo} (aux rows {n})")
    for lev in range(len(lo)-1):
        a, b = o + lo[lev], o + lo[lev+1]
        if a == b: continue
        v = vid[a:b]
        degs = [len(nb[i]) for i in range(a, b)]
        print(f"  level {lev}: rows {b-a}, vector_id sorted={np.all(np.diff(v)>0)}, ids[:6]={v[:6].tolist()}, max={v.max()}, deg min/mean/max={min(degs)}/{np.mean(degs):.1f}/{max(degs)}, entry in level={ep in set(v.tolist())}")
    # distances sorted? neighbor ids in range?
    a = o
    print("  sample node", vid[a], "neigh", nb[a][:6], "dist", np.round(dist[a][:6],3), "sorted asc", all(np.diff(dist[a])>=0))
    if p == 0:
        # compare with exact l2 between vectors (aux order)
        rid = x["aux"]["_rowid"].to_numpy()[x["aivf"]["offsets"][p]: x["aivf"]["offsets"][p]+n]
        ri = np.where(rid >= (1<<32), 1000 + (rid & 0xffffffff), rid).astype(int)
        V = data[ri]
        node = vid[a]
        ex = ((V[nb[a]] - V[node])**2).sum(1)
        print("  exact l2 to neighbors", np.round(ex[:6],3))
        # check edges symmetric-ish & top level
