import common, numpy as np, sys
ds = sys.argv[1]
data = np.load('data.npy')
x = common.load(ds)
rid = x['aux']['_rowid'].to_numpy()
rowidx = np.where(rid >= (1<<32), 1000 + (rid & 0xffffffff), rid).astype(int)
V = data[rowidx]
print("data min/max", data.min(), data.max(), x['sm'])
lo, hi = x['sm']['bounds']['start'], x['sm']['bounds']['end']
codes = np.stack(x['aux']['__sq_code'].to_numpy(zero_copy_only=False)).astype(int)
for name, f in [("floor", np.floor), ("round", np.round), ("rint", np.rint)]:
    for scale in (255, 256):
        c = np.clip(f((V.astype(np.float64) - lo) / (hi - lo) * scale), 0, 255).astype(int)
        print(name, scale, np.mean(c == codes), np.abs(c-codes).max())
# float32 arithmetic
c32 = ((V - np.float32(lo)) / np.float32(hi - lo) * np.float32(255)).astype(np.float32)
print("f32 round", np.mean(np.clip(np.round(c32),0,255) == codes), "f32 trunc", np.mean(np.clip(np.floor(c32),0,255)==codes))
