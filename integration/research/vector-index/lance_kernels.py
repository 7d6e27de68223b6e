"""float32 kernels reproducing pylance 14's distance arithmetic on this x86_64 host
(verified bit-exact for dim 16 and 13; NOT for dim 20 -> see fact sheet).
Sum of products: 8-lane accumulators updated with fused multiply-add over each full 8-wide chunk,
reduced by repeated halving (lanes 0-3 + 4-7, then 0-1 + 2-3, then 0 + 1); the tail (dim % 8)
is summed sequentially (plain multiply then add) and added after the reduction."""
import numpy as np
f32 = np.float32
def _fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(f32)
def _halves(v):
    while v.shape[1] > 1:
        h = v.shape[1] // 2
        v = (v[:, :h] + v[:, h:]).astype(f32)
    return v[:, 0]
def sumprod(a, b):
    a = np.atleast_2d(a).astype(f32); b = np.atleast_2d(b).astype(f32)
    a, b = np.broadcast_arrays(a, b)
    n, D = a.shape; full = D - D % 8
    acc = np.zeros((n, 8), f32)
    for c in range(0, full, 8):
        acc = _fma(a[:, c:c+8], b[:, c:c+8], acc)
    s = _halves(acc)
    t = np.zeros(n, f32)
    for j in range(full, D):
        t = (t + (a[:, j] * b[:, j]).astype(f32)).astype(f32)
    return (s + t).astype(f32)
def l2(q, V):
    d = (np.atleast_2d(V).astype(f32) - q.astype(f32)).astype(f32)
    return sumprod(d, d)
def dot_dist(q, V):
    return (f32(1) - sumprod(V, q[None, :])).astype(f32)
def cosine_candidates(q, V):
    xy = sumprod(V, q[None, :]); xx = sumprod(q[None, :], q[None, :])[0]; yy = sumprod(V, V)
    xn = np.sqrt(xx).astype(f32); yn = np.sqrt(yy).astype(f32)
    return {
        "1-xy/xn/yn": (f32(1) - (xy / xn / yn).astype(f32)).astype(f32),
        "1-xy/(xn*yn)": (f32(1) - (xy / (xn * yn).astype(f32)).astype(f32)).astype(f32),
        "1-xy/xn/sqrt(yy)": (f32(1) - ((xy / xn).astype(f32) / yn).astype(f32)).astype(f32),
    }
