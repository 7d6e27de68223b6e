"""Writer check: build an IVF_PQ (or IVF_FLAT) index entirely in numpy, write index.idx/auxiliary.idx with
pylance's generic LanceFileWriter (NOT the index builder), commit it with LanceOperation.CreateIndex,
then check pylance's search equals the numpy search on our arrays."""
import lance, numpy as np, pyarrow as pa, shutil, uuid, json, struct, os, sys
from lance.file import LanceFileWriter
import verify_search as vs
kind = sys.argv[1] if len(sys.argv) > 1 else "pq"
with_sizes = "--no-sizes" not in sys.argv
def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f; n >>= 7
        if n: out.append(b | 0x80)
        else: out.append(b); return bytes(out)
def key(f, wt): return varint((f << 3) | wt)
def ld(f, payload): return key(f, 2) + varint(len(payload)) + payload
def packed(f, vals): return ld(f, b"".join(varint(v) for v in vals))
def tensor(arr, dtype_code, shape):
    return key(1, 0) + varint(dtype_code) + packed(2, shape) + ld(3, arr.tobytes())
def ivf_pb(offsets, lengths, centroids=None, loss=None):
    b = packed(2, offsets) + packed(3, lengths)
    if centroids is not None: b += ld(4, tensor(centroids.astype("<f4"), 2, list(centroids.shape)))
    if loss is not None: b += key(5, 1) + struct.pack("<d", loss)
    return b
def kmeans(X, k, iters=30, seed=0):
    rng = np.random.default_rng(seed); C = X[rng.choice(len(X), k, replace=False)].copy()
    for _ in range(iters):
        a = ((X[:, None] - C[None]) ** 2).sum(-1).argmin(1)
        for j in range(k):
            if (a == j).any(): C[j] = X[a == j].mean(0)
    return C.astype(np.float32), a
data = np.load("data.npy"); N, D = data.shape; P = 4; M = 4; NB = 8; K = 2 ** NB; SD = D // M
p = f"ds/foreign_{kind}.lance"; shutil.rmtree(p, ignore_errors=True)
ds = lance.write_dataset(pa.table({"id": pa.array(np.arange(N), pa.int64()),
     "emb": pa.FixedSizeListArray.from_arrays(pa.array(data.ravel()), D)}), p, max_rows_per_file=1000)
rowid = np.where(np.arange(N) >= 1000, (1 << 32) + np.arange(N) - 1000, np.arange(N)).astype(np.uint64)
C, assign = kmeans(data, P)
u = str(uuid.uuid4()); d = f"{p}/_indices/{u}"; os.makedirs(d)
order = []; lengths = []
for j in range(P):
    idx = np.where(assign == j)[0][::-1]          # deliberately DESCENDING row ids within a partition
    order.append(idx); lengths.append(len(idx))
offsets = [int(x) for x in np.cumsum([0] + lengths[:-1])]
order = np.concatenate(order)
# index.idx (FLAT sub-index: no rows)
w = LanceFileWriter(f"{d}/index.idx", pa.schema([pa.field("__flat_marker", pa.uint64(), nullable=False)]))
gb = w.add_global_buffer(ivf_pb([0]*P, [0]*P, C, 123.0))
w.add_schema_metadata("lance:index", json.dumps({"type": "IVF_PQ" if kind == "pq" else "IVF_FLAT", "distance_type": "l2"}))
w.add_schema_metadata("lance:ivf", str(gb))
w.add_schema_metadata("lance:flat", json.dumps([""] * P))
w.close()
print("index.idx ivf global buffer index =", gb)
# auxiliary.idx
if kind == "pq":
    R = data - C[assign]
    book = np.stack([kmeans(R[:, m*SD:(m+1)*SD], K, iters=10, seed=m)[0] for m in range(M)])  # [M][K][SD]
    codes = np.stack([((R[:, m*SD:(m+1)*SD][:, None] - book[m][None]) ** 2).sum(-1).argmin(1) for m in range(M)], 1).astype(np.uint8)
    cols = []
    for j in range(P):
        blk = codes[order[offsets[j]:offsets[j]+lengths[j]]]          # (l, M) row-major
        cols.append(np.ascontiguousarray(blk.T).reshape(-1))           # transpose -> (M, l) then flatten
    flat = np.concatenate(cols)
    col = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.uint8()), M)
    schema = pa.schema([pa.field("_rowid", pa.uint64()), pa.field("__pq_code", pa.list_(pa.uint8(), M))])
else:
    col = pa.FixedSizeListArray.from_arrays(pa.array(data[order].ravel(), pa.float32()), D)
    schema = pa.schema([pa.field("_rowid", pa.uint64()), pa.field("flat", pa.list_(pa.float32(), D), nullable=False)])
w = LanceFileWriter(f"{d}/auxiliary.idx", schema)
w.write_batch(pa.record_batch([pa.array(rowid[order], pa.uint64()), col], schema=schema))
gb1 = w.add_global_buffer(ivf_pb(offsets, lengths))
w.add_schema_metadata("distance_type", "l2")
w.add_schema_metadata("lance:ivf", str(gb1))
if kind == "pq":
    gb2 = w.add_global_buffer(tensor(book.astype("<f4"), 2, [K, D]))
    w.add_schema_metadata("storage_metadata", json.dumps([json.dumps({"codebook_position": gb2, "nbits": NB, "num_sub_vectors": M, "dimension": D, "codebook_tensor": [], "transposed": True})]))
else:
    w.add_schema_metadata("storage_metadata", json.dumps([json.dumps({"dim": D})]))
w.close()
print("aux gbs", gb1, gb2 if kind == "pq" else "")
# manifest entry: VectorIndexDetails {metric_type=0 (omitted), pq={num_bits, num_sub_vectors}} or flat={}
details = ld(4, key(1, 0) + varint(NB) + key(2, 0) + varint(M)) if kind == "pq" else ld(8, b"")
files = None
if with_sizes:
    from lance.dataset import IndexFile
    files = [IndexFile(path=f, size_bytes=os.path.getsize(f"{d}/{f}")) for f in ("auxiliary.idx", "index.idx")]
field_id = ds.lance_schema.field("emb").id()
from lance.dataset import Index as _Index
idx = _Index(uuid=u, name="emb_idx", fields=[field_id], dataset_version=ds.version,
                          fragment_ids={0, 1}, index_version=1, files=files,
                          index_details=("/lance.index.pb.VectorIndexDetails", details))
ds = lance.LanceDataset.commit(p, lance.LanceOperation.CreateIndex(new_indices=[idx], removed_indices=[]), read_version=ds.version)
print(ds.list_indices())
st = ds.stats.index_stats("emb_idx"); print("pylance sees:", st["index_type"], st["indices"][0]["num_partitions"], st["indices"][0]["sub_index"])
x = vs.prepare(p); rng = np.random.default_rng(21); ok = exact = n = 0
for t in range(20):
    q = rng.standard_normal(D).astype(np.float32)
    for npb in (1, 2, 4):
        for rf in (None, 2):
            nn = {"column": "emb", "q": q, "k": 10, "nprobes": npb}
            if rf: nn["refine_factor"] = rf
            r = ds.to_table(nearest=nn, columns=[], with_row_id=True)
            md, mid = vs.search(x, q, 10, npb, rf)
            n += 1; ok += np.array_equal(mid, r["_rowid"].to_numpy())
            exact += np.array_equal(mid, r["_rowid"].to_numpy()) and np.allclose(md, r["_distance"].to_numpy(), rtol=1e-6)
print(f"foreign {kind} index: ids match {ok}/{n}, ids+distances(rtol 1e-6) {exact}/{n}")
