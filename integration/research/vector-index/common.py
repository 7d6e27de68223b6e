import glob, json, struct, numpy as np, lance
from lance.file import LanceFileReader
import pb
def idx_dir(ds):
    return glob.glob(ds + "/_indices/*")[0]
def parse_tensor(b):
    dt=None; shape=[]; data=None
    for fn,wt,v in pb.fields(b):
        if fn==1: dt=v
        elif fn==2: shape = pb.packed(v) if wt==2 else shape+[v]
        elif fn==3: data=v
    npdt = {0:None,1:np.float16,2:np.float32,3:np.float64,4:np.uint8,5:np.uint16,6:np.uint32,7:np.uint64}[dt or 0]
    return np.frombuffer(data, npdt).reshape(shape), dt, shape
def parse_ivf(b):
    out = {"offsets":[], "lengths":[], "centroids":None, "loss":None}
    for fn,wt,v in pb.fields(b):
        if fn==2: out["offsets"] += pb.packed(v) if wt==2 else [v]
        elif fn==3: out["lengths"] += pb.packed(v) if wt==2 else [v]
        elif fn==4: out["centroids"], out["c_dt"], out["c_shape"] = parse_tensor(v)
        elif fn==5: out["loss"] = struct.unpack('<d', v)[0]
    return out
def load(ds):
    d = idx_dir(ds)
    ir = LanceFileReader(d + "/index.idx"); ar = LanceFileReader(d + "/auxiliary.idx")
    im = ir.metadata().schema.metadata; am = ar.metadata().schema.metadata
    ivf = parse_ivf(bytes(ir.read_global_buffer(int(im[b'lance:ivf']))))
    aivf = parse_ivf(bytes(ar.read_global_buffer(int(am[b'lance:ivf']))))
    sm = json.loads(json.loads(am[b'storage_metadata'])[0]) if b'storage_metadata' in am else None
    aux = ar.read_all().to_table()
    idx = ir.read_all().to_table() if ir.num_rows() else None
    cb = None
    if sm and 'codebook_position' in sm:
        cb = parse_tensor(bytes(ar.read_global_buffer(sm['codebook_position'])))
    return dict(dir=d, imeta=im, ameta=am, ivf=ivf, aivf=aivf, sm=sm, aux=aux, idx=idx, cb=cb)
