import lance, shutil, numpy as np, pyarrow as pa, verify_search as vs, json
src = "ds/ivf_pq_l2.lance"; p = "ds/mut_pq_l2.lance"
shutil.rmtree(p, ignore_errors=True); shutil.copytree(src, p)
ds = lance.dataset(p)
rng = np.random.default_rng(5)
new = rng.standard_normal((300, 16)).astype(np.float32)
ds = lance.write_dataset(pa.table({"id": pa.array(np.arange(2000, 2300), pa.int64()),
     "emb": pa.FixedSizeListArray.from_arrays(pa.array(new.ravel()), 16)}), p, mode="append")
ds.delete("id % 7 = 0")
ds = lance.dataset(p)
print("fragments", [(f.fragment_id, f.count_rows()) for f in ds.get_fragments()])
print(ds.list_indices())
x = vs.prepare(p)   # index arrays unchanged; vec/orig from live data (deleted rows absent)
live = set(x["orig"].keys())
ok = 0; N = 20
for t in range(N):
    q = rng.standard_normal(16).astype(np.float32)
    for rf in (None, 2):
        nearest = {"column": "emb", "q": q, "k": 10, "nprobes": 2}
        if rf: nearest["refine_factor"] = rf
        r = ds.to_table(nearest=nearest, columns=["id"], with_row_id=True)
        # model: index search over indexed rows, deleted rows dropped, + flat exact search over unindexed frag
        x["live"] = live
        md, mid = vs.search(x, q, 10, 2, rf, exact_rerank=True)  # deleted rows excluded inside partitions
        # unindexed fragment 2: exact
        un = [i for i in x["orig"] if (i >> 32) == 2]
        ud = vs.exact_dist("l2", q, x["vec"][[x["orig"][i] for i in un]])
        d = np.concatenate([md[:10], ud]); ids = np.concatenate([mid[:10], np.array(un, np.uint64)])
        d, ids = vs.topk(d.astype(np.float32), ids, 10)
        same = np.array_equal(ids, r["_rowid"].to_numpy())
        ok += same
        if not same and t < 2: print("MISMATCH rf", rf, r["_rowid"].to_numpy(), r["_distance"].to_numpy(), ids, d)
print("matched", ok, "/", 2 * N)
