import common, numpy as np, sys
ds = sys.argv[1]
data = np.load('data.npy')
x = common.load(ds)
C = x['ivf']['centroids'].astype(np.float32)
rid = x['aux']['_rowid'].to_numpy()
rowidx = np.where(rid >= (1<<32), 1000 + (rid & 0xffffffff), rid).astype(int)
V = data[rowidx]
metric = x['ameta'][b'distance_type'].decode()
if metric == 'cosine':
    V = V / np.linalg.norm(V, axis=1, keepdims=True)
part = np.zeros(len(rid), int)
for p,(o,l) in enumerate(zip(x['aivf']['offsets'], x['aivf']['lengths'])): part[o:o+l] = p
# partition assignment
if metric == 'dot': dC = -(V @ C.T)
else: dC = ((V[:,None,:]-C[None])**2).sum(-1)
print("assign==argmin:", np.mean(dC.argmin(1) == part))
sm = x['sm']; m = sm['num_sub_vectors']; D = sm['dimension']; nb = sm['nbits']; K = 2**nb; sd = D//m
cb = x['cb'][0].reshape(-1)
codes = np.stack(x['aux']['__pq_code'].to_numpy(zero_copy_only=False))
print("codes shape", codes.shape)
R = V - C[part] if metric in ('l2','cosine') else V
for name, book in [("sub-major [m][K][sd]", cb.reshape(m, K, sd)), ("row-major [K][D]", cb.reshape(K, m, sd).transpose(1,0,2))]:
    enc = np.stack([((R[:, j*sd:(j+1)*sd][:,None,:] - book[j][None])**2).sum(-1).argmin(1) for j in range(m)], 1)
    if nb == 8:
        print(name, "codes match:", np.mean(enc == codes))
    else:
        lo = enc[:, 0::2] | (enc[:, 1::2] << 4); hi = (enc[:, 0::2] << 4) | enc[:, 1::2]
        print(name, "4bit lo-first match:", np.mean(lo == codes), "hi-first:", np.mean(hi == codes))
print("-- transposed-per-partition hypothesis")
cpr = codes.shape[1]
for name, book in [("sub-major [m][K][sd]", cb.reshape(m, K, sd)), ("row-major", cb.reshape(K, m, sd).transpose(1,0,2))]:
    enc = np.stack([((R[:, j*sd:(j+1)*sd][:,None,:] - book[j][None])**2).sum(-1).argmin(1) for j in range(m)], 1)
    ok = []; ok2=[]
    for p,(o,l) in enumerate(zip(x['aivf']['offsets'], x['aivf']['lengths'])):
        flat = codes[o:o+l].reshape(-1)
        un = flat.reshape(cpr, l).T   # row i: [col0..]
        if nb == 8:
            ok.append(np.mean(un == enc[o:o+l]))
        else:
            e = enc[o:o+l]
            ok.append(np.mean(un == (e[:,0::2] | (e[:,1::2]<<4))))
            ok2.append(np.mean(un == ((e[:,0::2]<<4) | e[:,1::2])))
    print(name, ok, ok2)
