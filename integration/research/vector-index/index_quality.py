"""How well an IVF_PQ index on vector_bench.py's table is trained, for comparing builds (pylance's, sparklance's):
the mean squared residual of a row to its partition's centroid, partition sizes, how many of the table's 256
generating centres each partition holds, and the PQ error of the residuals, read from the index files.
Usage: python index_quality.py DATASET... (copies of integration/bench's vectors.lance with an IVF_PQ index)"""
import sys
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import numpy as np, verify_search as vs
# The centres and each row's centre, drawn as vector_bench.write draws them.
rng = np.random.default_rng(17)
centres = rng.normal(0, 4, (256, 128)).astype(np.float32)
labels = rng.integers(0, 256, 1_000_000)
vec = None
for path in sys.argv[1:]:
    x = vs.prepare(path)
    vec = x["vec"]
    C = x["ivf"]["centroids"].reshape(-1, 128).astype(np.float32)
    offs, lens = x["aivf"]["offsets"], x["aivf"]["lengths"]
    part = np.empty(len(x["rid"]), np.int64)
    for p, (o, l) in enumerate(zip(offs, lens)):
        part[o:o + l] = p
    rows = np.array([x["orig"][r] for r in x["rid"].tolist()])
    V = vec[rows]
    R = V - C[part]
    ivf_loss = (R ** 2).sum(1).mean()
    book = x["book"]
    m, K, sd = book.shape
    dec = np.concatenate([book[j][x["codes"][:, j]] for j in range(m)], axis=1)
    pq_err = ((R - dec) ** 2).sum(1).mean()
    lab = labels[rows]
    per_part = [len(np.unique(lab[part == p])) for p in range(len(C))]
    sizes = np.array(lens)
    # how many true centres have their rows mostly in one partition
    print(path)
    print(f"  ivf loss/row {ivf_loss:.2f}  pq err/row {pq_err:.2f}  sizes min {sizes.min()} max {sizes.max()} "
          f"empty {(sizes == 0).sum()}  centres/partition: {np.bincount(per_part)[:6]}  |C| mean {np.linalg.norm(C, axis=1).mean():.2f}")
    print(f"  codebook norms mean {np.linalg.norm(book, axis=2).mean():.3f}, residual norm mean {np.linalg.norm(R, axis=1).mean():.3f}")
    print(f"  per-subvector pq err: {np.round(((R - dec) ** 2).reshape(-1, m, sd).sum(2).mean(0), 2)}")
