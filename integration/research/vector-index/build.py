import lance, pyarrow as pa, numpy as np, shutil, os, sys, json
rng = np.random.default_rng(42)
N, D = 2000, 16
data = rng.standard_normal((N, D)).astype(np.float32)
def mk(path):
    shutil.rmtree(path, ignore_errors=True)
    tbl = pa.table({"id": pa.array(np.arange(N), pa.int64()),
                    "emb": pa.FixedSizeListArray.from_arrays(pa.array(data.ravel()), D)})
    return lance.write_dataset(tbl, path, max_rows_per_file=1000)
np.save("data.npy", data)
cfgs = {
 "ivf_flat_l2": dict(index_type="IVF_FLAT", num_partitions=4, metric="l2"),
 "ivf_pq_l2": dict(index_type="IVF_PQ", num_partitions=4, num_sub_vectors=4, metric="l2"),
 "ivf_pq_cos": dict(index_type="IVF_PQ", num_partitions=4, num_sub_vectors=4, metric="cosine"),
 "ivf_pq_dot": dict(index_type="IVF_PQ", num_partitions=4, num_sub_vectors=4, metric="dot"),
 "ivf_flat_cos": dict(index_type="IVF_FLAT", num_partitions=4, metric="cosine"),
 "ivf_flat_dot": dict(index_type="IVF_FLAT", num_partitions=4, metric="dot"),
 "ivf_sq_l2": dict(index_type="IVF_SQ", num_partitions=4, metric="l2"),
 "ivf_hnsw_sq_l2": dict(index_type="IVF_HNSW_SQ", num_partitions=4, metric="l2"),
 "ivf_hnsw_pq_l2": dict(index_type="IVF_HNSW_PQ", num_partitions=4, num_sub_vectors=4, metric="l2"),
 "ivf_hnsw_flat_l2": dict(index_type="IVF_HNSW_FLAT", num_partitions=4, metric="l2"),
 "ivf_pq4_l2": dict(index_type="IVF_PQ", num_partitions=4, num_sub_vectors=4, metric="l2", num_bits=4),
 "ivf_pq_default": dict(index_type="IVF_PQ"),
}
sel = sys.argv[1:] or list(cfgs)
for name in sel:
    p = f"/tmp/vecfmt/ds/{name}.lance"
    ds = mk(p)
    try:
        ds.create_index("emb", **cfgs[name])
        print(name, "OK", os.listdir(p + "/_indices"))
    except Exception as e:
        print(name, "FAIL", e)
