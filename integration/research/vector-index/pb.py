# minimal schema-less protobuf decoder
import struct
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0; out = []
    while i < len(b):
        k, i = varint(b, i); fn, wt = k >> 3, k & 7
        if wt == 0: v, i = varint(b, i)
        elif wt == 1: v = b[i:i+8]; i += 8
        elif wt == 5: v = b[i:i+4]; i += 4
        elif wt == 2:
            l, i = varint(b, i); v = bytes(b[i:i+l]); i += l
        else: raise ValueError(f"wt {wt}")
        out.append((fn, wt, v))
    return out
def packed(b):
    i=0; r=[]
    while i < len(b):
        v,i = varint(b,i); r.append(v)
    return r
def try_msg(b):
    try:
        f = fields(b)
        return f if f else None
    except Exception: return None
def show(b, ind=0, maxdepth=6):
    for fn, wt, v in fields(b):
        pre = "  "*ind + f"#{fn} "
        if wt == 2:
            sub = try_msg(v) if ind < maxdepth else None
            try: s = v.decode('utf8'); printable = s.isprintable()
            except: printable = False
            if printable and len(v) > 0:
                print(pre + "str " + repr(s[:300]))
            elif sub is not None and len(v) < 5000:
                print(pre + f"msg len={len(v)}")
                show(v, ind+1, maxdepth)
            else:
                print(pre + f"bytes len={len(v)} {v[:48].hex()}")
        elif wt == 0: print(pre + f"varint {v}")
        else: print(pre + f"fixed {v.hex()}")
def manifest(path):
    b = open(path,'rb').read()
    assert b[-4:] == b'LANC'
    pos = struct.unpack('<Q', b[-16:-8])[0]
    l = struct.unpack('<I', b[pos:pos+4])[0]
    m = b[pos+4:pos+4+l]
    return b, m
def index_section(path):
    b, m = manifest(path)
    for fn, wt, v in fields(m):
        if fn == 6:
            l = struct.unpack('<I', b[v:v+4])[0]
            return b[v+4:v+4+l]
