"""What pylance 14's optimize_indices() writes for an IVF_HNSW_* index after an append (docs/vector-search.md,
OPTIMIZE INDEX): for each type and num_indices_to_merge (default, 1), the segments listed, and each index directory's
graph and partition lengths and `lance:hnsw` metadata. Run with the project's .venv."""
import os
import shutil
import sys

import lance
import numpy as np
import pyarrow as pa
from lance.file import LanceFileReader

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

rng = np.random.default_rng(2)


def rows(start, n):
    return pa.table({"id": pa.array(range(start, start + n)),
                     "emb": pa.FixedSizeListArray.from_arrays(pa.array(rng.standard_normal(n * 8).astype(np.float32)), 8)})


for index_type in ("IVF_HNSW_SQ", "IVF_HNSW_FLAT"):
    for merge in (None, 1):
        path = f"/tmp/hnsw_optimize/{index_type}_{merge}.lance"
        shutil.rmtree(path, ignore_errors=True)
        ds = lance.write_dataset(rows(0, 1000), path)
        ds.create_index("emb", index_type, num_partitions=2)
        before = set(os.listdir(path + "/_indices"))
        ds = lance.write_dataset(rows(1000, 300), path, mode="append")
        ds.optimize.optimize_indices(**({} if merge is None else {"num_indices_to_merge": merge}))
        ds = lance.dataset(path)
        print("==", index_type, "num_indices_to_merge", merge,
              [(i["uuid"][:8], sorted(i["fragment_ids"])) for i in ds.list_indices()])
        for u in sorted(os.listdir(path + "/_indices")):
            d = f"{path}/_indices/{u}"
            index, aux = LanceFileReader(d + "/index.idx"), LanceFileReader(d + "/auxiliary.idx")
            meta = index.metadata().schema.metadata
            ivf = common.parse_ivf(bytes(index.read_global_buffer(int(meta[b"lance:ivf"]))))
            aux_ivf = common.parse_ivf(bytes(aux.read_global_buffer(int(aux.metadata().schema.metadata[b"lance:ivf"]))))
            print("  ", u[:8], "old" if u in before else "new", "graph rows", ivf["lengths"], "partition rows",
                  aux_ivf["lengths"], "lance:hnsw", meta[b"lance:hnsw"].decode()[:120])
