#!/usr/bin/env python
"""Dump the on-disk formats of Lance scalar indexes as pylance writes them.

Usage: .venv/bin/python integration/dump_scalar_indexes.py OUTDIR

Builds small tables under OUTDIR (its own subdirectories are replaced on each run), creates BTREE, BITMAP,
ZONEMAP, BLOOMFILTER and LABEL_LIST indexes (plus INVERTED / NGRAM for their type URLs), and prints:
  * every IndexMetadata in the manifest's IndexSection, decoded field by field from the raw protobuf
  * every file under _indices/<uuid>/: Lance file version, Arrow schema with metadata, first rows
  * the RowIdTreeMap / roaring layouts (hex + decoding), the SBBF bloom filters re-derived in pure Python
  * explain_plan() strings, describe_indices() / list_indices()
  * what insert / delete / optimize_indices / compact_files / drop_index do to the indexes and which
    transaction each one records
  * whether pylance accepts index files rewritten by LanceFileWriter 2.0 / 2.1 and how it uses IndexMetadata.files.
Findings are written up in docs/dev/scalar-indexes.md. Needs only pylance + pyarrow (protobuf is decoded by
hand, xxhash64 is implemented below).
"""

import datetime
import math
import os
import shutil
import struct
import sys

import pyarrow as pa

import lance
from lance.file import LanceFileReader, LanceFileWriter
from lance.indices.builder import IndexConfig

# ----------------------------------------------------------------------------------------------------------------
# Raw protobuf decoding
# ----------------------------------------------------------------------------------------------------------------


def read_varint(buf, pos):
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def pb_fields(buf):
    """Yields (field_number, wire_type, value) for one protobuf message; value is int or bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        fnum, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = read_varint(buf, pos)
        elif wt == 1:
            val = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wt == 2:
            ln, pos = read_varint(buf, pos)
            val = bytes(buf[pos:pos + ln])
            pos += ln
        elif wt == 5:
            val = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        else:
            raise ValueError(f"wire type {wt} at {pos}")
        yield fnum, wt, val


def looks_like_message(b):
    try:
        n = 0
        for fnum, wt, _ in pb_fields(b):
            if fnum == 0 or fnum > 10000:
                return False
            n += 1
        return n > 0
    except Exception:
        return False


def packed_varints(b):
    out, pos = [], 0
    while pos < len(b):
        v, pos = read_varint(b, pos)
        out.append(v)
    return out


# Schemas: message -> {field: (name, kind)}; kind is a message name, or one of
# u64 i32 str bytes uuid roaring packed_i32 map_str any enum bool.
SCHEMAS = {
    "Manifest": {
        1: ("fields", "Field"), 2: ("fragments", "DataFragment"), 3: ("version", "u64"),
        4: ("version_aux_data", "u64"), 5: ("schema_metadata", "map_str"), 6: ("index_section", "u64"),
        7: ("timestamp", "Timestamp"), 8: ("tag", "str"), 9: ("reader_feature_flags", "u64"),
        10: ("writer_feature_flags", "u64"), 11: ("max_fragment_id", "u64"), 12: ("transaction_file", "str"),
        13: ("writer_version", "WriterVersion"), 14: ("next_row_id", "u64"), 15: ("data_format", "DataFormat"),
        16: ("config", "map_str"), 18: ("base_paths", "raw"), 19: ("table_metadata", "map_str"),
        20: ("branch", "str"), 21: ("transaction_section (old #21)", "u64"),
        23: ("transaction_section (#23: offset of a u32-length-prefixed Transaction in this file)", "u64"),
    },
    "Field": {1: ("type", "enum"), 2: ("name", "str"), 3: ("id", "i32"), 4: ("parent_id", "i32"),
              5: ("logical_type", "str"), 6: ("nullable", "bool")},
    "Timestamp": {1: ("seconds", "u64"), 2: ("nanos", "u64")},
    "WriterVersion": {1: ("library", "str"), 2: ("version", "str")},
    "DataFormat": {1: ("file_format", "str"), 2: ("version", "str")},
    "DataFragment": {1: ("id", "u64"), 2: ("files", "DataFile"), 3: ("deletion_file", "DeletionFile"),
                     4: ("physical_rows", "u64"), 5: ("inline_row_ids", "bytes"),
                     6: ("external_row_ids", "raw"), 7: ("inline_last_updated_at_versions", "bytes"),
                     8: ("external_last_updated_at_versions", "raw"), 9: ("inline_created_at_versions", "bytes"),
                     10: ("external_created_at_versions", "raw")},
    "DataFile": {1: ("path", "str"), 2: ("fields", "packed_i32"), 3: ("column_indices", "packed_i32"),
                 4: ("file_major_version", "u64"), 5: ("file_minor_version", "u64"),
                 6: ("file_size_bytes", "u64"), 7: ("base_id", "u64")},
    "DeletionFile": {1: ("file_type", "enum"), 2: ("read_version", "u64"), 3: ("id", "u64"),
                     4: ("num_deleted_rows", "u64"), 7: ("base_id", "u64")},
    "IndexSection": {1: ("indices", "IndexMetadata")},
    "IndexMetadata": {
        1: ("uuid", "uuid"), 2: ("fields", "packed_i32"), 3: ("name", "str"), 4: ("dataset_version", "u64"),
        5: ("fragment_bitmap", "roaring"), 6: ("index_details", "any"), 7: ("index_version", "i32"),
        8: ("created_at", "u64"), 9: ("base_id", "u64"), 10: ("files", "IndexFile"),
        11: ("covering_fields", "packed_i32"),
    },
    "IndexFile": {1: ("path", "str"), 2: ("size_bytes", "u64")},
    "Transaction": {
        1: ("read_version", "u64"), 2: ("uuid", "str"), 3: ("tag", "str"), 4: ("transaction_properties", "map_str"),
        100: ("append", "Append"), 101: ("delete", "Delete"), 102: ("overwrite", "raw"),
        103: ("create_index", "CreateIndex"), 104: ("rewrite", "Rewrite"), 105: ("merge", "raw"),
        108: ("update", "raw"),
    },
    "Append": {1: ("fragments", "DataFragment")},
    "Delete": {1: ("updated_fragments", "DataFragment"), 2: ("deleted_fragment_ids", "packed_u64"),
               3: ("predicate", "str")},
    "CreateIndex": {1: ("new_indices", "IndexMetadata"), 2: ("removed_indices", "IndexMetadata")},
    "Rewrite": {1: ("old_fragments", "DataFragment"), 2: ("new_fragments", "DataFragment"),
                3: ("groups", "RewriteGroup"), 4: ("rewritten_indices", "RewrittenIndex"),
                5: ("frag_reuse_index", "IndexMetadata")},
    "RewriteGroup": {1: ("old_fragments", "DataFragment"), 2: ("new_fragments", "DataFragment")},
    "RewrittenIndex": {1: ("old_id", "uuid"), 2: ("new_id", "uuid"), 3: ("new_index_details", "any"),
                       4: ("new_index_version", "u64"), 5: ("new_index_files", "IndexFile")},
    "FragmentReuseIndexDetails": {1: ("inline", "FriInline"), 2: ("external", "raw")},
    "FriInline": {1: ("versions", "FriVersion")},
    "FriVersion": {1: ("dataset_version", "u64"), 3: ("groups", "FriGroup")},
    "FriGroup": {1: ("changed_row_addrs", "treemap64"), 2: ("old_fragments", "FriDigest"),
                 3: ("new_fragments", "FriDigest")},
    "FriDigest": {1: ("id", "u64"), 2: ("physical_rows", "u64"), 3: ("num_deleted_rows", "u64")},
}

# Index details messages: by type URL suffix -> schema name (all fields printed raw if unknown).
DETAILS_SCHEMAS = {
    "lance.table.FragmentReuseIndexDetails": "FragmentReuseIndexDetails",
}


def fmt_uuid(b):
    h = b.hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def pb_print(buf, schema, indent=1, out=print, skip=(), only_names=None):
    pad = "  " * indent
    fields = SCHEMAS.get(schema, {})
    for fnum, wt, val in pb_fields(buf):
        if only_names is not None and schema == "IndexSection":
            nm = dict((f, v) for f, _, v in pb_fields(val)).get(3, b"").decode()
            if nm not in only_names:
                out(f"{pad}indices (#1): <{nm!r} as before>")
                continue
        name, kind = fields.get(fnum, (f"?field{fnum}", None))
        if name in skip:
            out(f"{pad}{name} (#{fnum}): <{len(val) if isinstance(val, bytes) else val} ... skipped>")
            continue
        label = f"{pad}{name} (#{fnum}, wt{wt})"
        if kind in SCHEMAS:
            out(f"{label}: {{ {len(val)} bytes")
            pb_print(val, kind, indent + 1, out, skip=skip)
            out(f"{pad}}}")
        elif kind == "uuid":
            inner = dict((f, v) for f, _, v in pb_fields(val))
            out(f"{label}: UUID{{ #1 bytes[16] = {inner[1].hex()} }} = {fmt_uuid(inner[1])}")
        elif kind == "str":
            out(f"{label}: {val.decode('utf-8', 'replace')!r}")
        elif kind in ("packed_i32", "packed_u64"):
            if wt == 2:
                out(f"{label}: packed {packed_varints(val)} (raw {val.hex()})")
            else:
                out(f"{label}: {val} (unpacked)")
        elif kind == "roaring":
            out(f"{label}: {len(val)} bytes hex={val.hex()}")
            out(f"{pad}  -> {describe_roaring(val)}")
        elif kind == "any":
            sub = dict((f, v) for f, _, v in pb_fields(val))
            url = sub.get(1, b"").decode()
            payload = sub.get(2, b"")
            has_value = any(f == 2 for f, _, _ in pb_fields(val))
            out(f"{label}: Any{{ type_url (#1) = {url!r}, value (#2) = "
                f"{f'{len(payload)} bytes hex={payload[:64].hex()}' if has_value else 'ABSENT'} }} raw={val[:80].hex()}")
            if payload:
                sname = DETAILS_SCHEMAS.get(url.split("/")[-1])
                if sname:
                    pb_print(payload, sname, indent + 2, out)
                elif looks_like_message(payload):
                    pb_print(payload, "?", indent + 2, out)
        elif kind == "map_str":
            kv = dict((f, v) for f, _, v in pb_fields(val))
            out(f"{label}: {kv.get(1, b'').decode()!r} -> {kv.get(2, b'')!r}")
        elif kind == "treemap64":
            out(f"{label}: {len(val)} bytes hex={val[:48].hex()}...")
            try:
                for key, vals, desc in roaring_treemap_decode(val):
                    out(f"{pad}  -> RoaringTreemap entry high32={key}: {summarize_ints(vals, 6)} <{desc}>")
            except Exception as e:  # noqa: BLE001
                out(f"{pad}  -> not a RoaringTreemap: {e}")
        elif kind == "bytes":
            out(f"{label}: {len(val)} bytes hex={val[:96].hex()}{'...' if len(val) > 96 else ''}")
        elif kind == "raw" or (kind is None and wt == 2):
            if wt == 2 and looks_like_message(val):
                out(f"{label}: {{ {len(val)} bytes (unknown message)")
                pb_print(val, "?", indent + 1, out)
                out(f"{pad}}}")
            elif wt == 2:
                try:
                    s = val.decode("utf-8")
                    out(f"{label}: {s!r}")
                except UnicodeDecodeError:
                    out(f"{label}: {len(val)} bytes hex={val[:96].hex()}")
            else:
                out(f"{label}: {val}")
        else:
            out(f"{label}: {val}")


# ----------------------------------------------------------------------------------------------------------------
# Roaring (portable / "standard" serialization, as the Rust `roaring` crate writes it) and RowIdTreeMap
# ----------------------------------------------------------------------------------------------------------------


def roaring_decode(buf, allow_trailing=False):
    """Returns (values, description) for a 32-bit portable roaring bitmap. Raises on malformed input.

    With allow_trailing, returns (values, description, bytes_consumed)."""
    cookie = struct.unpack_from("<I", buf, 0)[0]
    if cookie & 0xFFFF == 12347:
        size = (cookie >> 16) + 1
        run_flags = buf[4:4 + (size + 7) // 8]
        pos = 4 + (size + 7) // 8
        has_runs = True
        cookie_desc = f"SERIAL_COOKIE 12347 (runs), {size} containers"
    elif cookie == 12346:
        size = struct.unpack_from("<I", buf, 4)[0]
        pos = 8
        has_runs = False
        run_flags = b""
        cookie_desc = f"SERIAL_COOKIE_NO_RUNCONTAINER 12346, {size} containers"
    else:
        raise ValueError(f"bad roaring cookie {cookie:#x}")
    headers = []
    for i in range(size):
        key, card_m1 = struct.unpack_from("<HH", buf, pos)
        headers.append((key, card_m1 + 1))
        pos += 4
    if not has_runs or size >= 4:
        pos += 4 * size  # offsets
        cookie_desc += ", with offset header"
    values, kinds = [], []
    for i, (key, card) in enumerate(headers):
        is_run = has_runs and (run_flags[i // 8] >> (i % 8)) & 1
        if is_run:
            nruns = struct.unpack_from("<H", buf, pos)[0]
            pos += 2
            for _ in range(nruns):
                start, ln = struct.unpack_from("<HH", buf, pos)
                pos += 4
                values.extend((key << 16) | v for v in range(start, start + ln + 1))
            kinds.append(f"run(key={key},card={card},runs={nruns})")
        elif card > 4096:
            bits = buf[pos:pos + 8192]
            pos += 8192
            for w in range(1024):
                word = struct.unpack_from("<Q", bits, w * 8)[0]
                while word:
                    t = word & -word
                    values.append((key << 16) | (w * 64 + t.bit_length() - 1))
                    word ^= t
            kinds.append(f"bitmap(key={key},card={card})")
        else:
            vals = struct.unpack_from(f"<{card}H", buf, pos)
            pos += 2 * card
            values.extend((key << 16) | v for v in vals)
            kinds.append(f"array(key={key},card={card})")
    if allow_trailing:
        return values, f"{cookie_desc}; containers {kinds}", pos
    if pos != len(buf):
        raise ValueError(f"roaring: consumed {pos} of {len(buf)} bytes")
    return values, f"{cookie_desc}; containers {kinds}"


def roaring_treemap_decode(buf):
    """RoaringTreemap (Rust `roaring` crate): u64 count; count x (u32 high-32-bit key, portable RoaringBitmap)."""
    (n,) = struct.unpack_from("<Q", buf, 0)
    pos = 8
    out = []
    for _ in range(n):
        (key,) = struct.unpack_from("<I", buf, pos)
        pos += 4
        vals, desc, used = roaring_decode(buf[pos:], allow_trailing=True)
        pos += used
        out.append((key, vals, desc))
    if pos != len(buf):
        raise ValueError(f"treemap: consumed {pos} of {len(buf)}")
    return out


def summarize_ints(vals, limit=12):
    if len(vals) <= limit:
        return str(vals)
    # compress into ranges
    ranges, start, prev = [], vals[0], vals[0]
    for v in vals[1:]:
        if v == prev + 1:
            prev = v
            continue
        ranges.append((start, prev))
        start = prev = v
    ranges.append((start, prev))
    txt = ", ".join(f"{a}" if a == b else f"{a}..={b}" for a, b in ranges[:limit])
    more = f", ... ({len(ranges)} ranges)" if len(ranges) > limit else ""
    return f"n={len(vals)} [{txt}{more}]"


def describe_roaring(buf):
    try:
        vals, desc = roaring_decode(buf)
        return f"{desc}; values {summarize_ints(vals)}"
    except Exception as e:  # noqa: BLE001
        return f"<not a portable roaring bitmap: {e}>"


def rowid_treemap_decode(buf):
    """RowIdTreeMap: u32 n; n x (u32 fragment, u32 len, len bytes roaring; len==0 means whole fragment)."""
    n = struct.unpack_from("<I", buf, 0)[0]
    pos = 4
    out = []
    for _ in range(n):
        frag, ln = struct.unpack_from("<II", buf, pos)
        pos += 8
        if ln == 0:
            out.append((frag, None, "FULL"))
        else:
            vals, desc = roaring_decode(buf[pos:pos + ln])
            out.append((frag, vals, desc))
            pos += ln
    if pos != len(buf):
        raise ValueError(f"treemap: consumed {pos} of {len(buf)}")
    return out


def describe_treemap(buf):
    parts = []
    for frag, vals, desc in rowid_treemap_decode(buf):
        if vals is None:
            parts.append(f"frag {frag}: FULL")
        else:
            parts.append(f"frag {frag}: {summarize_ints(vals, 6)} <{desc}>")
    return "; ".join(parts)


# ----------------------------------------------------------------------------------------------------------------
# xxhash64 + SBBF (split block bloom filter), re-derived to check pylance's bytes
# ----------------------------------------------------------------------------------------------------------------

M64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                      0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _round(acc, inp):
    acc = (acc + inp * P2) & M64
    return (_rotl(acc, 31) * P1) & M64


def xxh64(data, seed=0):
    n, p = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M64, (seed + P2) & M64, seed & M64, (seed - P1) & M64]
        while p + 32 <= n:
            for i in range(4):
                v[i] = _round(v[i], struct.unpack_from("<Q", data, p + 8 * i)[0])
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M64
        for x in v:
            h ^= _round(0, x)
            h = (h * P1 + P4) & M64
    else:
        h = (seed + P5) & M64
    h = (h + n) & M64
    while p + 8 <= n:
        h ^= _round(0, struct.unpack_from("<Q", data, p)[0])
        h = (_rotl(h, 27) * P1 + P4) & M64
        p += 8
    if p + 4 <= n:
        h ^= (struct.unpack_from("<I", data, p)[0] * P1) & M64
        h = (_rotl(h, 23) * P2 + P3) & M64
        p += 4
    while p < n:
        h ^= (data[p] * P5) & M64
        h = (_rotl(h, 11) * P1) & M64
        p += 1
    h ^= h >> 33
    h = (h * P2) & M64
    h ^= h >> 29
    h = (h * P3) & M64
    h ^= h >> 32
    return h


assert xxh64(b"") == 0xEF46DB3751D8E999

SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31]


def sbbf_fpp(ndv, log_bytes):
    if ndv == 0:
        return 0.0
    nbytes = float(1 << log_bytes)
    if ndv / (nbytes * 8) > 2.0:
        return 1.0
    lam = 8 * 32.0 / ((nbytes * 8) / ndv)
    loglam = math.log(lam)
    res = 0.0
    for i in range(749, -1, -1):
        logp = i * loglam - lam - math.lgamma(i + 1)
        logfinner = 8 * math.log(1.0 - (1.0 - 1.0 / 32) ** i) if i > 0 else -math.inf
        res += math.exp(logp + logfinner)
    return min(res, 1.0)


def sbbf_num_bytes(ndv, fpp):
    lo, hi = 0, 64
    while hi > lo + 1:
        mid = (hi + lo) // 2
        if sbbf_fpp(ndv, mid) <= fpp:
            hi = mid
        else:
            lo = mid
    return 1 << min(max(hi, 5), 27)


def sbbf_build(nbytes, encoded_values):
    nblocks = nbytes // 32
    words = [0] * (nblocks * 8)
    for b in encoded_values:
        h = xxh64(b)
        blk = ((h >> 32) * nblocks) >> 32
        x = h & 0xFFFFFFFF
        for i in range(8):
            words[blk * 8 + i] |= 1 << (((x * SALT[i]) & 0xFFFFFFFF) >> 27)
    return struct.pack(f"<{len(words)}I", *words)


def encode_for_bloom(value, arrow_type):
    """The byte string Lance hashes for one non-null value (inferred from source, verified by sbbf_build)."""
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return value.encode("utf-8")
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return value
    if pa.types.is_int64(arrow_type):
        return struct.pack("<q", value)
    if pa.types.is_int32(arrow_type):
        return struct.pack("<i", value)
    if pa.types.is_float64(arrow_type):
        return struct.pack("<d", value)
    if pa.types.is_float32(arrow_type):
        return struct.pack("<f", value)
    if pa.types.is_date32(arrow_type):
        return struct.pack("<i", (value - datetime.date(1970, 1, 1)).days)
    raise TypeError(arrow_type)


# ----------------------------------------------------------------------------------------------------------------
# Dataset helpers
# ----------------------------------------------------------------------------------------------------------------


def latest_manifest_path(uri, version=None):
    vdir = os.path.join(uri, "_versions")
    files = [f for f in os.listdir(vdir) if f.endswith(".manifest")]
    # V2 manifest naming: file name = u64::MAX - version, zero padded to 20 digits
    def ver(f):
        n = int(f.split(".")[0])
        return (2**64 - 1 - n) if len(f.split(".")[0]) == 20 else n
    by_ver = {ver(f): f for f in files}
    v = version if version is not None else max(by_ver)
    return os.path.join(vdir, by_ver[v]), v


def read_manifest(path):
    data = open(path, "rb").read()
    assert data[-4:] == b"LANC", "manifest magic"
    pos, major, minor = struct.unpack_from("<QHH", data, len(data) - 16)
    (ln,) = struct.unpack_from("<I", data, pos)
    manifest = data[pos + 4:pos + 4 + ln]
    fields = {}
    for f, wt, v in pb_fields(manifest):
        fields.setdefault(f, []).append(v)
    index_section = None
    if 6 in fields:
        isp = fields[6][0]
        (iln,) = struct.unpack_from("<I", data, isp)
        index_section = data[isp + 4:isp + 4 + iln]
    txn = None
    for tf in (23, 21):
        if tf not in fields:
            continue
        tsp = fields[tf][0]
        (tln,) = struct.unpack_from("<I", data, tsp)
        txn = data[tsp + 4:tsp + 4 + tln]
        break
    return dict(raw=data, manifest=manifest, fields=fields, index_section=index_section, txn=txn,
                tail=(pos, major, minor))


def index_metadatas(index_section):
    """List of dicts with the raw fields of each IndexMetadata."""
    out = []
    if index_section is None:
        return out
    for f, wt, v in pb_fields(index_section):
        assert f == 1
        d = {"_raw": v}
        for ff, wwt, vv in pb_fields(v):
            d.setdefault(ff, []).append(vv)
        d["uuid"] = fmt_uuid(dict((a, c) for a, _, c in pb_fields(d[1][0]))[1])
        d["name"] = d[3][0].decode()
        out.append(d)
    return out


def index_line(x):
    anyb = dict((f, v) for f, _, v in pb_fields(x[6][0])) if 6 in x else {}
    try:
        frags = roaring_decode(x[5][0])[0] if 5 in x else None
    except Exception:  # noqa: BLE001
        frags = f"<{x[5][0].hex()}>"
    files = []
    for fb in x.get(10, []):
        fd = dict((f, v) for f, _, v in pb_fields(fb))
        files.append(f"{fd.get(1, b'').decode()}:{fd.get(2)}")
    return (f"{x['name']:<12} uuid={x['uuid']} dataset_version={x.get(4, [None])[0]} frags={frags} "
            f"type={anyb.get(1, b'').decode().split('.')[-1]} details={anyb.get(2, b'').hex() or '-'} "
            f"index_version={x.get(7, [None])[0]} fields={packed_varints(x[2][0]) if 2 in x else None} "
            f"files={files} other_fields={sorted(k for k in x if isinstance(k, int) and k not in (1, 2, 3, 4, 5, 6, 7, 8, 10))}")


def print_index_section(uri, title, version=None, skip=(), only_names=None, compact=False):
    path, v = latest_manifest_path(uri, version)
    m = read_manifest(path)
    print(f"\n--- {title}: manifest {os.path.relpath(path, uri)} (version {v}); "
          f"tail: manifest@{m['tail'][0]} major={m['tail'][1]} minor={m['tail'][2]}")
    mf = m["fields"]
    print(f"    manifest.index_section (#6) = {mf.get(6)}; #21 = {mf.get(21)}; transaction_section (#23) = {mf.get(23)}; "
          f"transaction_file (#12) = {mf.get(12)}; max_fragment_id (#11) = {mf.get(11)}; "
          f"reader/writer feature flags = {mf.get(9)}/{mf.get(10)}; next_row_id (#14) = {mf.get(14)}")
    frags = []
    for fb in mf.get(2, []):
        fd = {}
        for f, wt, val in pb_fields(fb):
            fd.setdefault(f, []).append(val)
        deleted = 0
        if 3 in fd:
            dd = dict((f, val) for f, _, val in pb_fields(fd[3][0]))
            deleted = dd.get(4, "?")
        frags.append(f"id={fd.get(1, [0])[0]} phys={fd.get(4, [0])[0]} deleted={deleted}"
                     f"{' rowids' if 5 in fd or 6 in fd else ''}")
    print(f"    fragments: {frags}")
    if m["index_section"] is None:
        print("    (no index section)")
    elif compact:
        for x in index_metadatas(m["index_section"]):
            print(f"    - {index_line(x)}")
    else:
        print(f"    IndexSection: u32 len {len(m['index_section'])} at byte {mf[6][0]}")
        pb_print(m["index_section"], "IndexSection", 2, skip=skip, only_names=only_names)
    return m


def print_transaction(uri, m, brief=False):
    """Prints the transaction of the manifest's version: inline (transaction_section) or _transactions/<file>."""
    if m["txn"] is not None:
        data = m["txn"]
        tf = m["fields"].get(12, [b""])[0].decode()
        same = tf and open(os.path.join(uri, "_transactions", tf), "rb").read() == data
        print(f"    transaction (inline in the manifest file at manifest field #23): {len(data)} bytes; "
              f"also in _transactions/{tf} (#12): {'byte-identical' if same else 'differs/absent'}")
    elif 12 in m["fields"]:
        tf = m["fields"][12][0].decode()
        data = open(os.path.join(uri, "_transactions", tf), "rb").read()
        print(f"    transaction file _transactions/{tf}: {len(data)} bytes")
    else:
        print("    (no transaction recorded)")
        return
    top = [(f, v) for f, _, v in pb_fields(data)]
    names = SCHEMAS["Transaction"]
    for f, v in top:
        name = names.get(f, (f"?field{f}",))[0]
        if f < 100:
            print(f"      {name} (#{f}): {v.decode() if isinstance(v, bytes) else v}")
            continue
        print(f"      operation {name} (#{f}):")
        if f == 103:  # CreateIndex
            ci = [(ff, vv) for ff, _, vv in pb_fields(v)]
            for ff, vv in ci:
                x = {"_raw": vv}
                for a, _, c in pb_fields(vv):
                    x.setdefault(a, []).append(c)
                x["uuid"] = fmt_uuid(dict((a, c) for a, _, c in pb_fields(x[1][0]))[1])
                x["name"] = x[3][0].decode()
                label = {1: "new_indices (#1)", 2: "removed_indices (#2)"}.get(ff, f"?{ff}")
                same = vv in (m["index_section"] or b"")
                print(f"        {label}: {index_line(x)}"
                      f"{' [byte-identical to manifest entry]' if same and ff == 1 else ''}")
            if brief:
                return
        elif f == 104:  # Rewrite
            pb_print(v, "Rewrite", 4, skip=("old_fragments", "new_fragments", "files", "deletion_file",
                                            "inline_last_updated_at_versions", "inline_created_at_versions"))
        else:
            pb_print(v, SCHEMAS["Transaction"].get(f, (None, "raw"))[1], 4,
                     skip=("files", "deletion_file", "inline_last_updated_at_versions", "inline_created_at_versions"))


def dump_lance_file(path, nrows=8, full=False):
    r = LanceFileReader(path)
    md = r.metadata()
    tbl = r.read_all().to_table()
    print(f"  * {os.path.basename(path)}: {os.path.getsize(path)} bytes, Lance file v{md.major_version}."
          f"{md.minor_version}, {md.num_rows} rows, {len(md.global_buffers)} global buffers")
    # raw footer check
    raw = open(path, "rb").read()
    tail = raw[-40:]
    print(f"    footer tail (last 8 bytes): major={struct.unpack_from('<H', tail, 32)[0]} "
          f"minor={struct.unpack_from('<H', tail, 34)[0]} magic={tail[36:]!r}")
    for fld in tbl.schema:
        meta = {k.decode(): v.decode() for k, v in (fld.metadata or {}).items()}
        print(f"    field {fld.name}: {fld.type} nullable={fld.nullable} metadata={meta}")
    smeta = {k.decode(): v.decode() for k, v in (tbl.schema.metadata or {}).items()}
    print(f"    schema metadata: {smeta}")
    for gi in range(1, len(md.global_buffers)):
        gb = bytes(r.read_global_buffer(gi))
        try:
            desc = describe_treemap(gb)
        except Exception as e:  # noqa: BLE001
            desc = f"<not a RowIdTreeMap: {e}>"
        print(f"    global buffer {gi}: {len(gb)} bytes hex={gb[:40].hex()}{'...' if len(gb) > 40 else ''} "
              f"= RowIdTreeMap {desc[:400]}")
    encs = []
    for ci, col in enumerate(md.columns):
        kinds = set()
        for pg in col.pages:
            e = pg.encoding
            kinds.add(e.split("(")[1].split("(")[0].strip() if "Layout(" in e else e.split("\n")[0][:40])
        encs.append(f"col{ci}: {len(col.pages)} pages {sorted(kinds)}")
    print(f"    page layouts: {encs}")
    if full:
        return tbl
    show = tbl.slice(0, nrows)
    for i, row in enumerate(show.to_pylist()):
        print(f"    row {i}: {fmt_row(row)}")
    return tbl


def fmt_row(row):
    out = {}
    for k, v in row.items():
        if isinstance(v, bytes):
            out[k] = f"<{len(v)}B {v[:40].hex()}{'...' if len(v) > 40 else ''}>"
        else:
            out[k] = v
    return out


def addr(v):
    return f"({v >> 32},{v & 0xFFFFFFFF})"


def index_dir(uri, uuid):
    return os.path.join(uri, "_indices", uuid)


def list_index_files(uri, uuid):
    d = index_dir(uri, uuid)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def plan(ds, flt, columns=("id",)):
    try:
        txt = ds.scanner(filter=flt, columns=list(columns)).explain_plan(True)
    except Exception as e:  # noqa: BLE001
        txt = f"<error {e}>"
    return txt


def print_plan(ds, flt, columns=("id",)):
    print(f"\n  explain_plan(True) for filter {flt!r}:")
    for line in plan(ds, flt, columns).rstrip().splitlines():
        print(f"    | {line}")


def count(ds, flt):
    return ds.count_rows(filter=flt)


# ----------------------------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------------------------

ROWS_PER_FRAG = 5000
NFRAGS = 3
LABELS = ["a", "b", "c", "d", "e"]
COLORS = ["red", "green", "blue", "cyan", "magenta"]


def make_table(start, n):
    ids = list(range(start, start + n))
    i64 = [None if i % 11 == 0 else (i * 7919) % 2000 for i in ids]
    s = [None if i % 13 == 0 else COLORS[i % 5] for i in ids]
    s2 = [None if i % 17 == 0 else f"k{(i * 31) % 3000:05d}" for i in ids]
    f = [None if i % 23 == 0 else (float("nan") if i % 19 == 0 else ((i * 37) % 1000) / 10.0) for i in ids]
    d = [None if i % 29 == 0 else datetime.date(2020, 1, 1) + datetime.timedelta(days=i // 10) for i in ids]
    tags = []
    for i in ids:
        if i % 10 == 0:
            tags.append(None)
        elif i % 9 == 0:
            tags.append([])
        elif i % 37 == 0:
            tags.append(["a", None])
        else:
            tags.append([LABELS[j] for j in range(5) if (i >> j) & 1] or ["e"])
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i64": pa.array(i64, pa.int64()),
        "s": pa.array(s, pa.string()),
        "s2": pa.array(s2, pa.string()),
        "f": pa.array(f, pa.float64()),
        "d": pa.array(d, pa.date32()),
        "tags": pa.array(tags, pa.list_(pa.string())),
    })


def build_base(uri, stable_row_ids=False):
    if os.path.exists(uri):
        shutil.rmtree(uri)
    ds = lance.write_dataset(make_table(0, ROWS_PER_FRAG * NFRAGS), uri, max_rows_per_file=ROWS_PER_FRAG,
                             enable_stable_row_ids=stable_row_ids)
    # Deleted rows before the indexes are built: fragment 1 rows 0..99 and every id % 1000 == 999.
    ds.delete("(id >= 5000 AND id < 5100) OR id % 1000 = 999")
    return lance.dataset(uri)


# ----------------------------------------------------------------------------------------------------------------
# Per-kind dumps
# ----------------------------------------------------------------------------------------------------------------


def header(t):
    print("\n" + "=" * 118 + f"\n{t}\n" + "=" * 118)


def dump_btree(uri, ds, name, column):
    meta = [m for m in index_metadatas(read_manifest(latest_manifest_path(uri)[0])["index_section"])
            if m["name"] == name][0]
    uuid = meta["uuid"]
    print(f"\n[{name}] on column {column!r}: _indices/{uuid}/ -> {list_index_files(uri, uuid)}")
    lookup = dump_lance_file(os.path.join(index_dir(uri, uuid), "page_lookup.lance"), nrows=0, full=True)
    rows = lookup.to_pylist()
    for i, row in enumerate(rows):
        if i < 4 or i >= len(rows) - 4:
            print(f"    lookup row {i}: {row}")
        elif i == 4:
            print("    ...")
    pdata = dump_lance_file(os.path.join(index_dir(uri, uuid), "page_data.lance"), nrows=0, full=True)
    batch_size = int(lookup.schema.metadata[b"batch_size"])
    vals = pdata.column("values").to_pylist()
    ids = pdata.column("ids").to_pylist()
    print(f"    page_data rows={len(vals)}; first 6: {[(v, addr(i)) for v, i in zip(vals[:6], ids[:6])]}")
    nn = sum(v is None for v in vals)
    print(f"    nulls in page_data: {nn}; null positions contiguous at start: "
          f"{all(v is None for v in vals[:nn])}")
    # NaN placement for floats
    nans = [k for k, v in enumerate(vals) if isinstance(v, float) and math.isnan(v)]
    if nans:
        print(f"    NaN rows in page_data: {len(nans)} at positions {nans[0]}..{nans[-1]} "
              f"(total {len(vals)}) -> NaN sorts {'last' if nans[-1] == len(vals) - 1 else 'not last'}")
    # pages: slices of batch_size rows
    spans = []
    for p in range(len(lookup)):
        chunk = vals[p * batch_size:(p + 1) * batch_size]
        nnc = [v for v in chunk if v is not None]
        if p < 4 or p >= len(rows) - 2:
            print(f"    page {p}: rows {p * batch_size}..{p * batch_size + len(chunk) - 1}, first={chunk[0]!r} "
                  f"last={chunk[-1]!r} nulls={len(chunk) - len(nnc)}; lookup row says min={rows[p]['min']!r} "
                  f"max={rows[p]['max']!r} null_count={rows[p]['null_count']}")
        if p > 0 and vals[p * batch_size - 1] == chunk[0] or (p > 0 and chunk[0] is None):
            spans.append((p - 1, p, chunk[0]))
    print(f"    page boundaries where the same value (or null) continues on the next page: {len(spans)}; "
          f"first few: {spans[:4]}")
    # sortedness: by value then id?
    keyed = [((0 if v is None else 1), v, i) for v, i in zip(vals, ids)]
    sorted_by_val = all(
        (a[0], a[1] if not (isinstance(a[1], float) and math.isnan(a[1])) else float("inf")) <=
        (b[0], b[1] if not (isinstance(b[1], float) and math.isnan(b[1])) else float("inf"))
        for a, b in zip(keyed, keyed[1:]))
    ties_by_id = all(a[2] < b[2] for a, b in zip(keyed, keyed[1:]) if a[:2] == b[:2])
    print(f"    sorted by value (nulls first): {sorted_by_val}; equal values ordered by id ascending: {ties_by_id}")
    # deleted rows present?
    id_to_addr = row_addr_map(ds)
    live = set(id_to_addr.values())
    in_idx = set(ids)
    print(f"    index ids are row addresses of live rows: {in_idx <= live} ; index has {len(in_idx)} ids, table has "
          f"{len(live)} live rows; ids of deleted rows in index: {len(in_idx - live)}")
    return uuid


_addr_cache = {}


def row_addr_map(ds):
    key = (ds.uri, ds.version)
    if key not in _addr_cache:
        t = ds.to_table(columns=["id"], with_row_address=True)
        _addr_cache[key] = dict(zip(t.column("id").to_pylist(), t.column("_rowaddr").to_pylist()))
    return _addr_cache[key]


def dump_bitmap(uri, ds, name, column, label_list=False):
    meta = [m for m in index_metadatas(read_manifest(latest_manifest_path(uri)[0])["index_section"])
            if m["name"] == name][0]
    uuid = meta["uuid"]
    print(f"\n[{name}] on column {column!r}: _indices/{uuid}/ -> {list_index_files(uri, uuid)}")
    for fname in list_index_files(uri, uuid):
        if not fname.endswith(".lance"):
            print(f"  * {fname}: {os.path.getsize(os.path.join(index_dir(uri, uuid), fname))} bytes (not a Lance file)")
            continue
        tbl = dump_lance_file(os.path.join(index_dir(uri, uuid), fname), full=True)
        if "keys" not in tbl.column_names:
            for i, row in enumerate(tbl.slice(0, 8).to_pylist()):
                print(f"    row {i}: {fmt_row(row)}")
            continue
        keys = tbl.column("keys").to_pylist()
        print(f"    key order in file: {keys}")
        for i, (k, b) in enumerate(zip(keys, tbl.column("bitmaps").to_pylist())):
            print(f"    key {k!r}: {len(b)} bytes; {describe_treemap(b)}")
        # check vs data
        t = ds.to_table(columns=[column], with_row_address=True)
        col = t.column(column).to_pylist()
        addrs = t.column("_rowaddr").to_pylist()
        expect = {}
        for v, a in zip(col, addrs):
            if label_list:
                if v is None:
                    continue
                for item in v:
                    expect.setdefault(item, set()).add(a)
            else:
                expect.setdefault(v, set()).add(a)
        ok = True
        for k, b in zip(keys, tbl.column("bitmaps").to_pylist()):
            got = set()
            for frag, vals, _ in rowid_treemap_decode(b):
                got |= {(frag << 32) | v for v in (vals or [])}
            if got != expect.get(k, set()):
                ok = False
                extra = got - expect.get(k, set())
                print(f"      key {k!r}: MISMATCH vs live rows: extra={len(extra)} (e.g. "
                      f"{[addr(x) for x in sorted(extra)[:3]]}) missing={len(expect.get(k, set()) - got)}")
        print(f"    every bitmap == set of live row addresses holding that key: {ok}")
        # hex example: the smallest bitmap
        small = min(tbl.column("bitmaps").to_pylist(), key=len)
        print(f"    smallest bitmap hex ({len(small)} bytes): {small.hex()}")
    return uuid


def dump_zonemap(uri, ds, name, column):
    meta = [m for m in index_metadatas(read_manifest(latest_manifest_path(uri)[0])["index_section"])
            if m["name"] == name][0]
    uuid = meta["uuid"]
    print(f"\n[{name}] on column {column!r}: _indices/{uuid}/ -> {list_index_files(uri, uuid)}")
    for fname in list_index_files(uri, uuid):
        tbl = dump_lance_file(os.path.join(index_dir(uri, uuid), fname), full=True)
        for i, row in enumerate(tbl.to_pylist()):
            print(f"    zone {i}: {fmt_row(row)}")
    # Recompute stats for fragment 1 (which has deletions at the start) from the live rows.
    t = ds.to_table(columns=[column], with_row_address=True)
    col = t.column(column).to_pylist()
    addrs = t.column("_rowaddr").to_pylist()
    frag1 = [(a & 0xFFFFFFFF, v) for a, v in zip(addrs, col) if a >> 32 == 1]
    print(f"    fragment 1 live rows: {len(frag1)}, first live offset {frag1[0][0]}, last {frag1[-1][0]}")
    return uuid


def dump_bloom(uri, ds, name, column):
    meta = [m for m in index_metadatas(read_manifest(latest_manifest_path(uri)[0])["index_section"])
            if m["name"] == name][0]
    uuid = meta["uuid"]
    print(f"\n[{name}] on column {column!r}: _indices/{uuid}/ -> {list_index_files(uri, uuid)}")
    fname = list_index_files(uri, uuid)[0]
    tbl = dump_lance_file(os.path.join(index_dir(uri, uuid), fname), full=True)
    smeta = {k.decode(): v.decode() for k, v in tbl.schema.metadata.items()}
    items = int(smeta.get("bloomfilter_item", 8192))
    prob = float(smeta.get("bloomfilter_probability", 0.00057))
    nbytes = sbbf_num_bytes(items, prob)
    print(f"    SBBF size from (ndv={items}, fpp={prob}) via Putze formula: {nbytes} bytes")
    t = ds.to_table(columns=[column], with_row_address=True)
    typ = t.schema.field(column).type
    col = t.column(column).to_pylist()
    addrs = t.column("_rowaddr").to_pylist()
    by_frag = {}
    for a, v in zip(addrs, col):
        by_frag.setdefault(a >> 32, []).append((a & 0xFFFFFFFF, v))
    for i, row in enumerate(tbl.to_pylist()):
        bf = row["bloom_filter_data"]
        frag, zs, zl = row["fragment_id"], row["zone_start"], row["zone_length"]
        live = by_frag.get(frag, [])
        # Hypothesis A: the zone covers the zone_length live rows starting at the zone_start-th live row.
        vals_a = [v for _, v in live[zs:zs + zl]]
        # Hypothesis B: the zone covers physical offsets [zone_start, zone_start + zone_length).
        vals_b = [v for o, v in live if zs <= o < zs + zl]
        res = []
        for lbl, vals in (("A: live-row ordinal", vals_a), ("B: physical offsets", vals_b)):
            enc = [encode_for_bloom(v, typ) for v in vals if v is not None]
            rebuilt = sbbf_build(len(bf), enc)
            res.append(f"{lbl}: {'MATCH' if rebuilt == bf else 'differs'} (has_null={any(v is None for v in vals)})")
        print(f"    zone {i}: frag={frag} zone_start={zs} zone_length={zl} has_null={row['has_null']} "
              f"bytes={len(bf)} set_bits={sum(bin(x).count('1') for x in bf)}; rebuilt SBBF -> {'; '.join(res)}")
    # one worked hashing example
    ex = next(v for v in col if v is not None)
    b = encode_for_bloom(ex, typ)
    h = xxh64(b)
    print(f"    hashing example: value {ex!r} ({typ}) -> bytes {b.hex()} -> xxh64(seed 0) = {h:#018x}; "
          f"block = ((h >> 32) * nblocks) >> 32 = {((h >> 32) * (nbytes // 32)) >> 32} of {nbytes // 32}; "
          f"bit in word i = ((u32(h) * SALT[i]) mod 2^32) >> 27 = "
          f"{[((h & 0xFFFFFFFF) * s & 0xFFFFFFFF) >> 27 for s in SALT]}")
    return uuid


# ----------------------------------------------------------------------------------------------------------------
# Rewriting index files with other writer versions, and patching IndexMetadata.files
# ----------------------------------------------------------------------------------------------------------------


def enc_varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_field(fnum, wt, val):
    key = enc_varint((fnum << 3) | wt)
    if wt == 0:
        return key + enc_varint(val)
    if wt == 2:
        return key + enc_varint(len(val)) + val
    raise ValueError(wt)


def patch_index_files(uri, mode):
    """Rewrites the latest manifest in place: IndexMetadata.files (#10) either recomputed from disk ('sizes') or
    dropped ('nofiles'). Keeps the inline transaction section and fixes manifest field #23 to point at it."""
    path, _ = latest_manifest_path(uri)
    m = read_manifest(path)
    new_is = b""
    for _, _, entry in pb_fields(m["index_section"]):
        uuid = fmt_uuid(dict((a, c) for a, _, c in pb_fields(dict((a, c) for a, _, c in pb_fields(entry))[1]))[1])
        body = b"".join(enc_field(f, wt, v) for f, wt, v in pb_fields(entry) if f != 10)
        if mode == "sizes":
            d = index_dir(uri, uuid)
            for fn in sorted(os.listdir(d)):
                body += enc_field(10, 2, enc_field(1, 2, fn.encode()) +
                                  enc_field(2, 0, os.path.getsize(os.path.join(d, fn))))
        new_is += enc_field(1, 2, body)
    raw = m["raw"]
    out = struct.pack("<I", len(new_is)) + new_is
    txn_pos = None
    if 23 in m["fields"]:
        old = m["fields"][23][0]
        (tlen,) = struct.unpack_from("<I", raw, old)
        txn_pos = len(out)
        out += raw[old:old + 4 + tlen]
    man = b"".join(enc_field(f, wt, txn_pos if f == 23 else v) for f, wt, v in pb_fields(m["manifest"]))
    pos = len(out)
    out += struct.pack("<I", len(man)) + man + struct.pack("<QHH", pos, m["tail"][1], m["tail"][2]) + b"LANC"
    assert m["fields"][6][0] == 0
    with open(path, "wb") as fh:
        fh.write(out)


REWRITE_QUERIES = ["i64 = 42", "i64 > 10 AND i64 < 20", "i64 IS NULL", "s = 'red'", "s IS NULL",
                   "d = date '2020-03-01'", "d IS NULL", "s2 = 'k00031'", "f > 99.0",
                   "array_has_any(tags, ['a', 'b'])", "array_has_all(tags, ['a', 'b'])"]


def rewrite_test(src, out):
    base = lance.dataset(src)
    truth = {q: base.count_rows(filter=q) for q in REWRITE_QUERIES}
    for ver in ("2.0", "2.1", "2.2"):
        for mode in ("stale_sizes", "sizes", "nofiles"):
            dst = os.path.join(out, f"rewrite_{ver}_{mode}")
            if os.path.exists(dst):
                shutil.rmtree(dst)
            shutil.copytree(src, dst)
            versions = set()
            m = read_manifest(latest_manifest_path(dst)[0])
            for x in index_metadatas(m["index_section"]):
                d = index_dir(dst, x["uuid"])
                for fn in os.listdir(d):
                    p = os.path.join(d, fn)
                    r = LanceFileReader(p)
                    md = r.metadata()
                    tbl = r.read_all().to_table()
                    gbufs = [bytes(r.read_global_buffer(i)) for i in range(1, len(md.global_buffers))]
                    os.remove(p)
                    w = LanceFileWriter(p, tbl.schema, version=ver)  # schema incl. schema metadata
                    for g in gbufs:
                        w.add_global_buffer(g)  # returns 1 for the first extra buffer
                    if len(tbl):
                        w.write_batch(tbl)
                    w.close()
                    md2 = LanceFileReader(p).metadata()
                    versions.add((md2.major_version, md2.minor_version))
            if mode != "stale_sizes":
                patch_index_files(dst, mode)
            ds = lance.dataset(dst)
            good, errs = 0, []
            for q in REWRITE_QUERIES:
                try:
                    c = ds.count_rows(filter=q)
                    used = "ScalarIndexQuery" in ds.scanner(filter=q, columns=["id"]).explain_plan(True)
                    if c == truth[q] and used:
                        good += 1
                    else:
                        errs.append(f"{q}: count {c} vs {truth[q]}, index used {used}")
                except Exception as e:  # noqa: BLE001
                    errs.append(f"{q}: {str(e).splitlines()[0][:160]}")
            print(f"  index files rewritten with LanceFileWriter(version={ver!r}) -> footer versions {sorted(versions)}; "
                  f"IndexMetadata.files: {mode}: {good}/{len(REWRITE_QUERIES)} queries correct and index-backed")
            for e in errs[:3]:
                print(f"      e.g. {e}")


# ----------------------------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------------------------


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    for sub in os.listdir(out):  # only the tables this script creates
        if sub in ("main", "life", "deferred", "stable", "tiny", "text") or sub.startswith("rewrite_"):
            shutil.rmtree(os.path.join(out, sub))
    print(f"pylance {lance.__version__}, pyarrow {pa.__version__}")

    # ---------------------------------------------------------------- main table, all kinds
    uri = os.path.join(out, "main")
    ds = build_base(uri)
    header(f"Table {uri}: {NFRAGS} fragments x {ROWS_PER_FRAG} rows, deletions before index build")
    print(f"  schema: {ds.schema}")
    print(f"  data file versions: "
          f"{sorted({(f.file_major_version, f.file_minor_version) for fr in ds.get_fragments() for f in fr.metadata.files})}")
    print(f"  live rows {ds.count_rows()}, fragments {[(fr.fragment_id, fr.count_rows()) for fr in ds.get_fragments()]}")

    specs = [
        ("i64", "BTREE", "i64_btree", {}),
        ("f", "BTREE", "f_btree_z256", {"zone_size": 256}),
        ("s", "BITMAP", "s_bitmap", {}),
        ("d", "ZONEMAP", "d_zonemap", {}),
        ("f", "ZONEMAP", "f_zonemap_z2048", {"rows_per_zone": 2048}),
        ("i64", "BLOOMFILTER", "i64_bloom", {}),
        ("s2", "BLOOMFILTER", "s2_bloom", {}),
        ("d", "BLOOMFILTER", "d_bloom_n2000", {"number_of_items": 2000, "probability": 0.01}),
        ("f", "BLOOMFILTER", "f_bloom", {}),
        ("tags", "LABEL_LIST", "tags_labels", {}),
    ]
    created = []
    for col, kind, name, kw in specs:
        try:
            # Parameters only reach the Rust builder through IndexConfig; plain **kwargs are silently ignored.
            it = IndexConfig(index_type=kind.lower(), parameters=kw) if kw else kind
            ds.create_scalar_index(col, it, name=name)
            ds = lance.dataset(uri)
            created.append(name)
            m = print_index_section(uri, f"after create_scalar_index({col!r}, {kind!r}, name={name!r}, {kw})",
                                    only_names={name})
            print_transaction(uri, m, brief=True)
        except Exception as e:  # noqa: BLE001
            print(f"\n!!! create_scalar_index({col!r}, {kind!r}, name={name!r}, {kw}) failed: {e}")

    header("describe_indices() / list_indices()")
    for d in ds.describe_indices():
        print(f"  {d}")
    for d in ds.list_indices():
        print(f"  {d}")
    for n in created:
        try:
            print(f"  index_statistics({n!r}) = {ds.index_statistics(n)}")
        except Exception as e:  # noqa: BLE001
            print(f"  index_statistics({n!r}) failed: {e}")

    header("BTREE files")
    if "i64_btree" in created:
        dump_btree(uri, ds, "i64_btree", "i64")
    if "f_btree_z256" in created:
        dump_btree(uri, ds, "f_btree_z256", "f")
    header("BITMAP files")
    if "s_bitmap" in created:
        dump_bitmap(uri, ds, "s_bitmap", "s")
    header("LABEL_LIST files")
    if "tags_labels" in created:
        dump_bitmap(uri, ds, "tags_labels", "tags", label_list=True)
    header("ZONEMAP files")
    for n, c in (("d_zonemap", "d"), ("f_zonemap_z2048", "f")):
        if n in created:
            dump_zonemap(uri, ds, n, c)
    header("BLOOMFILTER files")
    for n, c in (("i64_bloom", "i64"), ("s2_bloom", "s2"), ("d_bloom_n2000", "d"), ("f_bloom", "f")):
        if n in created:
            dump_bloom(uri, ds, n, c)

    header("explain_plan strings (main table, all indexes present)")
    filters = [
        "i64 = 42", "i64 IN (1, 2, 3)", "i64 > 10 AND i64 < 20", "i64 IS NULL", "i64 IS NOT NULL",
        "s = 'red'", "s IN ('red', 'blue')", "s IS NULL",
        "d = date '2020-03-01'", "d > date '2020-03-01' AND d < date '2020-03-05'", "d IS NULL",
        "s2 = 'k00031'", "s2 IN ('k00031', 'k00062')",
        "f = 12.5", "f > 99.0", "f IS NULL",
        "array_has_any(tags, ['a', 'b'])", "array_has_all(tags, ['a', 'b'])", "array_contains(tags, 'a')",
        "id = 7", "i64 = 42 AND s = 'red'", "i64 = 42 AND id > 5", "i64 = 42 OR id = 5", "s != 'red'",
        "s2 != 'k00031'", "i64 BETWEEN 5 AND 9",
    ]
    for flt in filters:
        print_plan(ds, flt)
        try:
            print(f"    count_rows = {count(ds, flt)}")
        except Exception as e:  # noqa: BLE001
            print(f"    count_rows failed: {e}")

    print("\n  explain_plan(True) for filter 'i64 = 42' with use_scalar_index=False:")
    for line in ds.scanner(filter="i64 = 42", columns=["id"], use_scalar_index=False).explain_plan(True).splitlines():
        print(f"    | {line}")

    # ---------------------------------------------------------------- foreign index files
    header("Do pylance readers accept index files from another Lance file writer / version?")
    rewrite_test(uri, out)

    # ---------------------------------------------------------------- lifecycle
    header("Lifecycle: insert / optimize_indices / delete / compact_files / drop_index")
    luri = os.path.join(out, "life")
    shutil.copytree(uri, luri)
    lds = lance.dataset(luri)
    keep = ["i64_btree", "s_bitmap", "d_zonemap", "s2_bloom", "tags_labels"]
    for n in created:
        if n not in keep:
            lds.drop_index(n)
            lds = lance.dataset(luri)
    m = print_index_section(luri, "after drop_index of all but " + ",".join(keep), compact=True)
    print_transaction(luri, m)

    lds.insert(make_table(ROWS_PER_FRAG * NFRAGS, 2000))
    lds = lance.dataset(luri)
    m = print_index_section(luri, "after insert (append 2000 rows = new fragment 3)", compact=True)
    print_transaction(luri, m)
    print_plan(lds, "i64 = 42")
    print_plan(lds, "s2 = 'k00031'")
    print(f"    count_rows(i64 = 42) = {count(lds, 'i64 = 42')} (truth "
          f"{lds.to_table(columns=['i64']).column('i64').to_pylist().count(42)})")

    lds.optimize.optimize_indices()
    lds = lance.dataset(luri)
    m = print_index_section(luri, "after optimize_indices() (default)", compact=True)
    print_transaction(luri, m)
    for n in keep:
        meta = [x for x in index_metadatas(m["index_section"]) if x["name"] == n]
        for x in meta:
            print(f"    {n} uuid {x['uuid']} files {list_index_files(luri, x['uuid'])}")
    print_plan(lds, "i64 = 42")

    lds.insert(make_table(ROWS_PER_FRAG * NFRAGS + 2000, 1000))
    lds = lance.dataset(luri)
    try:
        lds.optimize.optimize_indices(num_indices_to_merge=0)
        lds = lance.dataset(luri)
        m = print_index_section(luri, "after 2nd insert + optimize_indices(num_indices_to_merge=0)", compact=True)
        print_transaction(luri, m)
        print_plan(lds, "i64 = 42")
        print_plan(lds, "s = 'red'")
    except Exception as e:  # noqa: BLE001
        print(f"  optimize_indices(num_indices_to_merge=0) failed: {e}")

    lds.delete("id % 10 = 3")
    lds = lance.dataset(luri)
    m = print_index_section(luri, "after delete('id % 10 = 3')", compact=True)
    print_transaction(luri, m)
    print(f"    count_rows(i64 = 42) = {count(lds, 'i64 = 42')} (truth "
          f"{lds.to_table(columns=['i64']).column('i64').to_pylist().count(42)})")

    before = {x["name"] + "/" + x["uuid"] for x in index_metadatas(m["index_section"])}
    metrics = lds.optimize.compact_files(target_rows_per_fragment=100_000)
    lds = lance.dataset(luri)
    print(f"\n  compact_files(target_rows_per_fragment=100000) metrics: {metrics}")
    m = print_index_section(luri, "after compact_files() (default: defer_index_remap=False)")
    print_transaction(luri, m)
    after = {x["name"] + "/" + x["uuid"] for x in index_metadatas(m["index_section"])}
    print(f"    index uuids unchanged: {sorted(before & after)}; new: {sorted(after - before)}; "
          f"gone: {sorted(before - after)}")
    for x in index_metadatas(m["index_section"]):
        print(f"    {x['name']} uuid {x['uuid']} files {list_index_files(luri, x['uuid'])}")
    print_plan(lds, "i64 = 42")
    print_plan(lds, "s2 = 'k00031'")
    print_plan(lds, "d = date '2020-03-01'")
    print(f"    count_rows(i64 = 42) = {count(lds, 'i64 = 42')} (truth "
          f"{lds.to_table(columns=['i64']).column('i64').to_pylist().count(42)})")
    bt = [x for x in index_metadatas(m["index_section"]) if x["name"] == "i64_btree" and x["uuid"] not in
          {y.split("/")[1] for y in before}]
    if bt:
        pdata = LanceFileReader(os.path.join(index_dir(luri, bt[-1]["uuid"]), "page_data.lance")).read_all().to_table()
        frs = sorted({i >> 32 for i in pdata.column("ids").to_pylist()})
        print(f"    remapped i64_btree page_data: {pdata.num_rows} rows, fragments referenced by ids: {frs}")
    sb = [x for x in index_metadatas(m["index_section"]) if x["name"] == "s_bitmap" and x["uuid"] not in
          {y.split("/")[1] for y in before}]
    if sb:
        t = LanceFileReader(os.path.join(index_dir(luri, sb[-1]["uuid"]), "bitmap_page_lookup.lance")).read_all().to_table()
        k0, b0 = t.column("keys").to_pylist()[0], t.column("bitmaps").to_pylist()[0]
        print(f"    remapped s_bitmap key {k0!r}: {describe_treemap(b0)}")

    # deferred remap -> fragment reuse index
    duri = os.path.join(out, "deferred")
    shutil.copytree(uri, duri)
    dds = lance.dataset(duri)
    for n in created:
        if n not in ("i64_btree", "s_bitmap"):
            dds.drop_index(n)
    dds = lance.dataset(duri)
    dds.delete("id % 10 = 3")
    dds = lance.dataset(duri)
    try:
        metrics = dds.optimize.compact_files(target_rows_per_fragment=100_000, defer_index_remap=True)
        dds = lance.dataset(duri)
        print(f"\n  compact_files(defer_index_remap=True) metrics: {metrics}")
        m = print_index_section(duri, "after compact_files(defer_index_remap=True)")
        print_transaction(duri, m)
        for x in index_metadatas(m["index_section"]):
            print(f"    - {index_line(x)}; dir on disk: {list_index_files(duri, x['uuid'])}")
        print_plan(dds, "i64 = 42")
        print(f"    count_rows(i64 = 42) = {count(dds, 'i64 = 42')} (truth "
              f"{dds.to_table(columns=['i64']).column('i64').to_pylist().count(42)})")
    except Exception as e:  # noqa: BLE001
        print(f"  deferred compaction failed: {e}")

    lds.create_scalar_index("d", "ZONEMAP", name="d_zonemap", replace=True)
    lds = lance.dataset(luri)
    m = print_index_section(luri, "after create_scalar_index('d', 'ZONEMAP', name='d_zonemap', replace=True) "
                            "over existing d_zonemap segments", compact=True)
    print_transaction(luri, m)

    lds.drop_index("s_bitmap")
    lds = lance.dataset(luri)
    m = print_index_section(luri, "after drop_index('s_bitmap')", compact=True)
    print_transaction(luri, m)
    print(f"    _indices dirs still on disk: {sorted(os.listdir(os.path.join(luri, '_indices')))}")

    # ---------------------------------------------------------------- stable row ids
    header("Stable row ids (enable_stable_row_ids=True)")
    suri = os.path.join(out, "stable")
    sds = build_base(suri, stable_row_ids=True)
    sds.create_scalar_index("i64", "BTREE", name="i64_btree")
    sds.create_scalar_index("s", "BITMAP", name="s_bitmap")
    sds.create_scalar_index("d", "ZONEMAP", name="d_zonemap")
    sds.create_scalar_index("s2", "BLOOMFILTER", name="s2_bloom")
    sds.create_scalar_index("tags", "LABEL_LIST", name="tags_labels")
    sds = lance.dataset(suri)
    m = print_index_section(suri, "stable-row-id table, after index creation", compact=True)
    t = sds.to_table(columns=["id"], with_row_id=True, with_row_address=True)
    rid = dict(zip(t.column("id").to_pylist(), t.column("_rowid").to_pylist()))
    rad = dict(zip(t.column("id").to_pylist(), t.column("_rowaddr").to_pylist()))
    print(f"  row 5100: _rowid={rid[5100]} _rowaddr={addr(rad[5100])}; row 14000: _rowid={rid[14000]} "
          f"_rowaddr={addr(rad[14000])}")
    for x in index_metadatas(m["index_section"]):
        d = index_dir(suri, x["uuid"])
        if x["name"] == "i64_btree":
            p = LanceFileReader(os.path.join(d, "page_data.lance")).read_all().to_table()
            ids = p.column("ids").to_pylist()
            print(f"  i64_btree ids: min {min(ids)} max {max(ids)}; equal to _rowid set: {set(ids) == set(rid.values())}; "
                  f"equal to _rowaddr set: {set(ids) == set(rad.values())}")
        if x["name"] == "s_bitmap":
            p = LanceFileReader(os.path.join(d, "bitmap_page_lookup.lance")).read_all().to_table()
            print(f"  s_bitmap key {p.column('keys')[0]}: {describe_treemap(p.column('bitmaps')[0].as_py())}")
        if x["name"] == "tags_labels":
            r = LanceFileReader(os.path.join(d, "bitmap_page_lookup.lance"))
            p = r.read_all().to_table()
            print(f"  tags_labels key {p.column('keys')[1]}: {describe_treemap(p.column('bitmaps')[1].as_py())}")
            print(f"  tags_labels null-list buffer: {describe_treemap(bytes(r.read_global_buffer(1)))[:200]}")
        if x["name"] == "d_zonemap":
            p = LanceFileReader(os.path.join(d, "zonemap.lance")).read_all().to_table()
            print(f"  d_zonemap rows: {[fmt_row(r) for r in p.to_pylist()]}")
        if x["name"] == "s2_bloom":
            p = LanceFileReader(os.path.join(d, os.listdir(d)[0])).read_all().to_table()
            print(f"  s2_bloom zones: {[(r['fragment_id'], r['zone_start'], r['zone_length']) for r in p.to_pylist()]}")
    print_plan(sds, "i64 = 42")
    sds.delete("id % 10 = 3")
    sds = lance.dataset(suri)
    sds.optimize.compact_files(target_rows_per_fragment=100_000)
    sds = lance.dataset(suri)
    m = print_index_section(suri, "stable-row-id table after delete + compact_files()", skip=("created_at",))
    print_transaction(suri, m)
    print(f"    count_rows(i64 = 42) = {count(sds, 'i64 = 42')} (truth "
          f"{sds.to_table(columns=['i64']).column('i64').to_pylist().count(42)})")
    print_plan(sds, "i64 = 42")

    # ---------------------------------------------------------------- small table: hex examples
    header("Small examples (hex)")
    xuri = os.path.join(out, "tiny")
    if os.path.exists(xuri):
        shutil.rmtree(xuri)
    tiny = pa.table({"id": pa.array([0, 1, 2, 3, 4, 5], pa.int64()),
                     "v": pa.array([7, None, 7, 9, None, 7], pa.int64()),
                     "s": pa.array(["x", "y", None, "x", "y", "x"]),
                     "l": pa.array([["a"], None, [], ["a", "b"], ["b", None], ["a"]], pa.list_(pa.string())),
                     "k": pa.array([5, 3, None, 9, 3, 1], pa.int64())})
    xds = lance.write_dataset(tiny, xuri, max_rows_per_file=3)
    xds.create_scalar_index("v", "BTREE")
    xds.create_scalar_index("s", "BITMAP")
    xds.create_scalar_index("l", "LABEL_LIST")
    xds.create_scalar_index("id", "ZONEMAP")
    xds.create_scalar_index("k", "BITMAP")
    xds.create_scalar_index("s", IndexConfig(index_type="bloomfilter",
                                             parameters={"number_of_items": 4, "probability": 0.01}), name="s_bloom")
    xds = lance.dataset(xuri)
    m = print_index_section(xuri, "tiny table (2 fragments x 3 rows)")
    for x in index_metadatas(m["index_section"]):
        for fname in list_index_files(xuri, x["uuid"]):
            p = os.path.join(index_dir(xuri, x["uuid"]), fname)
            print(f"\n  [{x['name']}] {fname}")
            tbl = dump_lance_file(p, full=True)
            for r in tbl.to_pylist():
                print(f"    {fmt_row(r)}")
                for k in ("bitmaps",):
                    if k in r and r[k] is not None:
                        print(f"      {k} hex: {r[k].hex()}  => {describe_treemap(r[k])}")
                if "bloom_filter_data" in r:
                    bf = r["bloom_filter_data"]
                    nz = [(i, bf[i]) for i in range(len(bf)) if bf[i]]
                    print(f"      bloom nonzero bytes (offset, value): {nz}")
    print(f"\n  tiny bloom check: values x,y -> xxh64: x={xxh64(b'x'):#018x} y={xxh64(b'y'):#018x}")
    for v in ("x", "y"):
        h = xxh64(v.encode())
        bits = [((h & 0xFFFFFFFF) * s & 0xFFFFFFFF) >> 27 for s in SALT]
        print(f"    {v!r}: block index for 1-block filter = 0; bit per word = {bits}")
    print_plan(xds, "s = 'x'")
    print_plan(xds, "v = 7")

    # ---------------------------------------------------------------- other kinds: type URLs only
    header("Other index kinds (type URLs / files only)")
    ouri = os.path.join(out, "text")
    if os.path.exists(ouri):
        shutil.rmtree(ouri)
    ods = lance.write_dataset(pa.table({"t": pa.array(["hello world", "lance index", None, "hello lance"])}), ouri)
    for kind in ("INVERTED", "NGRAM"):
        try:
            ods.create_scalar_index("t", kind, name=f"t_{kind.lower()}")
            ods = lance.dataset(ouri)
        except Exception as e:  # noqa: BLE001
            print(f"  {kind} failed: {e}")
    m = read_manifest(latest_manifest_path(ouri)[0])
    for x in index_metadatas(m["index_section"]):
        anyb = dict((f, v) for f, _, v in pb_fields(x[6][0]))
        print(f"  {x['name']}: type_url={anyb[1].decode()!r} details={anyb.get(2, b'').hex()} "
              f"index_version={x.get(7)} files={list_index_files(ouri, x['uuid'])}")
    print_plan(ods, "t = 'hello world'", columns=("t",))


if __name__ == "__main__":
    main()
