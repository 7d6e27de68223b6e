"""Mutations of one file of a Lance table, for the damage fuzzer.

A mutation is chosen from a seeded ``random.Random`` and described by a short string, so that a failing mutant
can be reproduced from (seed, recipe, file, description). Raw mutations work on any file: bit flips, byte
overwrites, truncation, and 8-byte little-endian integers set to huge values in the metadata region (the tail of
data and deletion files). Manifests also get protobuf-aware mutations: the manifest message is parsed into its
wire-format tree (nested messages are recognised by parsing), one varint or string is changed or one field dropped,
and the message is re-encoded with correct lengths, so the damage reaches the reader's semantic checks instead of
the protobuf parser.
"""

from __future__ import annotations

import random
import struct
from typing import List, Optional, Tuple

HUGE = (2 ** 63 - 1, 2 ** 62, 2 ** 40, 2 ** 32 + 7, 2 ** 31 - 1, 2 ** 31, 2 ** 64 - 1)


def raw(data: bytes, rnd: random.Random, tail_bias: bool) -> Tuple[bytes, tuple]:
    """One raw mutation of ``data`` and its spec; with ``tail_bias`` half the positions fall in the last 512 bytes."""
    n = len(data)

    def pos(width: int = 1) -> int:
        if tail_bias and rnd.random() < 0.5:
            return n - width - rnd.randrange(min(n - width + 1, 512))
        return rnd.randrange(n - width + 1)

    kind = rnd.choice(("flip", "flip", "byte", "truncate", "huge8"))
    if kind == "flip":
        spec = ("flip", pos(), rnd.randrange(8))
    elif kind == "byte":
        spec = ("byte", pos(), rnd.randrange(256))
    elif kind == "truncate":
        spec = ("truncate", rnd.randrange(n))
    else:
        spec = ("huge8", pos(8), rnd.choice(HUGE))
    return apply(data, spec), spec


def apply(data: bytes, spec: tuple) -> bytes:
    """Applies a mutation spec: ("flip", offset, bit), ("byte", offset, value), ("truncate", length),
    ("huge8", offset, value) or ("proto", field path, action, value) (see `manifest_proto`)."""
    b = bytearray(data)
    kind = spec[0]
    if kind == "flip":
        b[spec[1]] ^= 1 << spec[2]
    elif kind == "byte":
        b[spec[1]] = spec[2]
    elif kind == "truncate":
        del b[spec[1]:]
    elif kind == "huge8":
        b[spec[1]:spec[1] + 8] = struct.pack("<Q", spec[2])
    elif kind == "proto":
        return _apply_proto(data, spec)
    else:
        raise ValueError(f"unknown mutation {spec}")
    return bytes(b)


# --- protobuf wire format ---------------------------------------------------------------------------------------

class Field:
    """One field of a protobuf message: number, wire type, and value (int, bytes, or a list of Fields)."""

    def __init__(self, number: int, wire: int, value):
        self.number, self.wire, self.value = number, wire, value


def _varint(buf: bytes, i: int) -> Tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        c = buf[i]
        result |= (c & 0x7F) << shift
        i += 1
        if not c & 0x80:
            return result, i
        shift += 7


def _enc_varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def parse(buf: bytes, depth: int = 0) -> List[Field]:
    """The fields of a message; raises ValueError if ``buf`` is not a well-formed message."""
    fields, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field 0")
        if wire == 0:
            v, i = _varint(buf, i)
            fields.append(Field(number, 0, v))
        elif wire == 1:
            if i + 8 > len(buf):
                raise ValueError("short fixed64")
            fields.append(Field(number, 1, buf[i:i + 8]))
            i += 8
        elif wire == 5:
            if i + 4 > len(buf):
                raise ValueError("short fixed32")
            fields.append(Field(number, 5, buf[i:i + 4]))
            i += 4
        elif wire == 2:
            ln, i = _varint(buf, i)
            if i + ln > len(buf):
                raise ValueError("short bytes")
            payload = buf[i:i + ln]
            i += ln
            nested = None
            if depth < 12 and payload and not _looks_like_text(payload):
                try:
                    nested = parse(payload, depth + 1)
                except ValueError:
                    nested = None
            fields.append(Field(number, 2, nested if nested else payload))
        else:
            raise ValueError(f"wire type {wire}")
    return fields


def _looks_like_text(payload: bytes) -> bool:
    return all(32 <= c < 127 for c in payload)


def encode(fields: List[Field]) -> bytes:
    out = bytearray()
    for f in fields:
        out += _enc_varint(f.number << 3 | f.wire)
        if f.wire == 0:
            out += _enc_varint(f.value)
        elif f.wire == 2:
            payload = encode(f.value) if isinstance(f.value, list) else f.value
            out += _enc_varint(len(payload)) + payload
        else:
            out += f.value
    return bytes(out)


def _leaves(fields: List[Field], path: str = "") -> List[Tuple[str, List[Field], int]]:
    """Every field with its path (`2#1.4` = field 4 of the second occurrence of field 2), its parent list and
    index."""
    out = []
    seen: dict = {}
    for k, f in enumerate(fields):
        nth = seen.get(f.number, 0)
        seen[f.number] = nth + 1
        step = f"{f.number}#{nth}"
        p = f"{path}.{step}" if path else step
        out.append((p, fields, k))
        if f.wire == 2 and isinstance(f.value, list):
            out.extend(_leaves(f.value, p))
    return out


def _manifest_message(data: bytes):
    """(position, length, fields) of the manifest message of a manifest file, or None."""
    if len(data) < 20 or data[-4:] != b"LANC":
        return None
    position = struct.unpack_from("<q", data, len(data) - 16)[0]
    if not 0 <= position <= len(data) - 20:
        return None
    length = struct.unpack_from("<I", data, position)[0]
    try:
        return position, length, parse(data[position + 4:position + 4 + length])
    except ValueError:
        return None


def _apply_proto(data: bytes, spec: tuple) -> bytes:
    _, path, action, value = spec
    position, length, fields = _manifest_message(data)
    matches = [(p, parent, k) for p, parent, k in _leaves(fields) if p == path]
    if not matches:
        raise ValueError(f"the manifest has no field {path}")
    _, parent, k = matches[0]
    if action == "drop":
        del parent[k]
    elif action == "varint":
        parent[k].value = value
    elif action == "as-bytes":  # a varint field re-encoded as length-delimited: a wire type its number never has
        parent[k].wire, parent[k].value = 2, _enc_varint(parent[k].value)
    else:  # ("bytes", (index, byte))
        b = bytearray(parent[k].value)
        b[value[0]] = value[1]
        parent[k].value = bytes(b)
    body = encode(fields)
    # The tail keeps the manifest's position; sections written after it (none in these tables) would move.
    return data[:position] + struct.pack("<I", len(body)) + body + data[position + 4 + length:]


def manifest_proto(data: bytes, rnd: random.Random) -> Optional[Tuple[bytes, tuple]]:
    """A protobuf-aware mutation of a manifest file and its spec, or None if its manifest cannot be located."""
    found = _manifest_message(data)
    if found is None:
        return None
    path, parent, k = rnd.choice(_leaves(found[2]))
    f = parent[k]
    action = rnd.choice(("value", "value", "drop"))
    if action == "value" and f.wire == 0:
        spec = ("proto", path, "varint", rnd.choice((0, 1, f.value + 1, max(f.value - 1, 0), 2 ** 31, 2 ** 32 + 1,
                                                      2 ** 63 - 1, 2 ** 64 - 1)))
    elif action == "value" and f.wire == 2 and not isinstance(f.value, list) and f.value:
        at = rnd.randrange(len(f.value))
        new = rnd.choice((f.value[at] ^ (1 << rnd.randrange(8)), 0, ord("/"), 0xC3))
        spec = ("proto", path, "bytes", (at, new))
    else:
        spec = ("proto", path, "drop", None)
    return apply(data, spec), spec
