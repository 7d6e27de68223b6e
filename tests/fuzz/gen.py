"""A seeded random generator of Arrow schemas and values for the round-trip fuzz tests (test_roundtrip_fuzz.py).

A case is a table of random columns: primitives of every type Lance stores, nested in lists, large lists,
fixed-size lists, structs and maps to depth 4, with nulls and empties at every level (a null list, an empty list, a
list of nulls; a null struct, a struct of nulls), and rare strings and binaries of up to 3 MB. Each column is kept
as a small type tree (``T``) plus plain Python values, so that a case prints as a short, self-contained pyarrow
snippet (``Case.snippet``), and the table is built by evaluating exactly that snippet (``Case.table``): what a
failure prints is what was tested.

About a third of the columns are low-cardinality: their primitive values are drawn from a small pool (1 to 100
values per type), so that writers choose dictionary pages for them.

At file versions 2.1 and 2.2 about half the columns carry pylance's encoding field metadata (``random_encoding``:
compression and level, mini-block or full-zip, byte stream split, run-length and dictionary thresholds, packed
structs), so that pylance writes the encodings it picks only when asked.

Everything is derived from ``random.Random(f"{seed}/{version}/{index}")`` (and, for the pools and the encoding
metadata, generators seeded from the same three): a case is reproducible from its seed, file version and number alone.
"""

from __future__ import annotations

import dataclasses
import decimal  # noqa: F401  (used by evaluated snippets)
import math
import random
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyarrow as pa

# ----------------------------------------------------------------------------------------------------------------
# Types: ("prim", name) | ("list", T) | ("large_list", T) | ("fsl", T, n) | ("struct", ((name, T), ...)) | ("map", K, V)
T = tuple

_UNUSUAL = ["", " ", "\x00", "a\x00b", "é", "e\u0301", "日本語", "😀", "👩‍👩‍👧", "\u202eRTL", "\ufeffBOM", "\U0010ffff",
            "\u0800", "\uffff", "tab\tnew\nline", "\\", "'\"", "ǅ", "ß", "İ"]
_TZ = [None, "UTC", "America/New_York", "+05:30"]
_UNIT_RANGE = {"s": 2 ** 34, "ms": 2 ** 44, "us": 2 ** 54, "ns": 2 ** 62}
_TIME_MAX = {"s": 86399, "ms": 86399999, "us": 86399999999, "ns": 86399999999999}


def _int_value(bits: int, signed: bool) -> Callable[[random.Random], int]:
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    return lambda r: r.choice([lo, hi, 0, 1, -1 if signed else 2, r.randint(lo, hi), r.randint(-3 if signed else 0, 3)])


class BigString(str):
    """A large string value that prints as the short expression that makes it (``'ab' * 400000``), so that a case's
    snippet stays readable."""

    def __new__(cls, unit: str, count: int) -> "BigString":
        value = super().__new__(cls, unit * count)
        value.src = f"{unit!r} * {count}"
        return value

    def __repr__(self) -> str:
        return self.src


class BigBinary(bytes):
    """A large binary value that prints as the expression that makes it, as ``BigString``."""

    def __new__(cls, unit: bytes, count: int) -> "BigBinary":
        value = super().__new__(cls, unit * count)
        value.src = f"{unit!r} * {count}"
        return value

    def __repr__(self) -> str:
        return self.src


# Large values: past a page (1 MiB by default in pylance and sparklance) and past a 64 KiB blob's inline limit, as
# users store documents and images; rare, so that a case stays a few megabytes.
BIG_P = 0.004
BIG_BYTES = (70_000, 300_000, 1_200_000, 3_000_000)


def _string(r: random.Random) -> str:
    x = r.random()
    if x < BIG_P:
        unit = r.choice(["x", "ab", "日本語", "😀 "])
        return BigString(unit, r.choice(BIG_BYTES) // len(unit.encode()))
    if x < 0.4:
        return r.choice(_UNUSUAL)
    if x < 0.5:
        return "".join(r.choice(_UNUSUAL) for _ in range(r.randint(300, 1500)))
    if x < 0.55:
        return "long " * r.randint(200, 1200)
    return "".join(chr(r.randint(32, 126)) for _ in range(r.randint(0, 12)))


def _binary(r: random.Random) -> bytes:
    x = r.random()
    if x < BIG_P:
        unit = bytes(r.getrandbits(8) for _ in range(r.choice([1, 7, 64])))
        return BigBinary(unit, r.choice(BIG_BYTES) // len(unit))
    if x < 0.05:
        return bytes(r.getrandbits(8) for _ in range(r.randint(500, 3000)))
    return bytes(r.getrandbits(8) for _ in range(r.randint(0, 12)))


def _decimal(precision: int, scale: int) -> Callable[[random.Random], Any]:
    def make(r: random.Random):
        digits = r.choice([1, precision, r.randint(1, precision)])
        unscaled = r.randint(-(10 ** digits - 1), 10 ** digits - 1)
        return ("Decimal", unscaled, scale)
    return make


def _float(kind: str) -> Callable[[random.Random], float]:
    specials = [0.0, -0.0, 1.5, -2.25, float("inf"), float("-inf"), float("nan")]
    big = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38, "f64": 1.7976931348623157e308}[kind]
    def make(r: random.Random):
        x = r.random()
        if x < 0.4:
            return r.choice(specials + [big, -big])
        v = r.uniform(-1000, 1000)
        # Values exact in the type, so that every writer stores the same bits.
        return float(int(v * 8)) / 8 if kind in ("f16", "bf16") else v
    return make


# name -> (pyarrow type source, value maker, versions where it is generated or None for all)
PRIMITIVES: Dict[str, Tuple[str, Callable[[random.Random], Any]]] = {}


def _prim(name: str, src: str, make: Callable[[random.Random], Any]) -> None:
    PRIMITIVES[name] = (src, make)


for _bits in (8, 16, 32, 64):
    _prim(f"int{_bits}", f"pa.int{_bits}()", _int_value(_bits, True))
    _prim(f"uint{_bits}", f"pa.uint{_bits}()", _int_value(_bits, False))
_prim("float16", "pa.float16()", _float("f16"))
_prim("float32", "pa.float32()", _float("f32"))
_prim("float64", "pa.float64()", _float("f64"))
_prim("bool", "pa.bool_()", lambda r: r.random() < 0.5)
_prim("string", "pa.string()", _string)
_prim("large_string", "pa.large_string()", _string)
_prim("binary", "pa.binary()", _binary)
_prim("large_binary", "pa.large_binary()", _binary)
for _n in (1, 3, 16):
    _prim(f"fixed_size_binary{_n}", f"pa.binary({_n})", lambda r, n=_n: bytes(r.getrandbits(8) for _ in range(n)))
for _p, _s in ((1, 0), (9, 2), (18, 4), (38, 10), (38, 0)):
    _prim(f"decimal128_{_p}_{_s}", f"pa.decimal128({_p}, {_s})", _decimal(_p, _s))
for _p, _s in ((20, 3), (40, 5), (76, 0)):
    _prim(f"decimal256_{_p}_{_s}", f"pa.decimal256({_p}, {_s})", _decimal(_p, _s))
_prim("date32", "pa.date32()", lambda r: r.randint(-100000, 100000))
_prim("date64", "pa.date64()", lambda r: r.randint(-100000, 100000) * 86400000)
for _u in ("s", "ms"):
    _prim(f"time32_{_u}", f"pa.time32({_u!r})", lambda r, u=_u: r.randint(0, _TIME_MAX[u]))
for _u in ("us", "ns"):
    _prim(f"time64_{_u}", f"pa.time64({_u!r})", lambda r, u=_u: r.randint(0, _TIME_MAX[u]))
for _u in ("s", "ms", "us", "ns"):
    for _tz in _TZ:
        _prim(f"timestamp_{_u}_{_tz}", f"pa.timestamp({_u!r}, {_tz!r})",
              lambda r, u=_u: r.randint(-_UNIT_RANGE[u], _UNIT_RANGE[u]))
    _prim(f"duration_{_u}", f"pa.duration({_u!r})", lambda r, u=_u: r.randint(-_UNIT_RANGE[u], _UNIT_RANGE[u]))
_prim("null", "pa.null()", lambda r: None)
for _k in ("int8", "int16", "int32"):
    _prim(f"dict_{_k}", f"pa.dictionary(pa.{_k}(), pa.string())", lambda r: r.choice(_UNUSUAL[:8] + ["a", "b", "c"]))
# Top level only (bfloat16_array builds a flat array): see random_column.
_prim("bfloat16", "bfloat16", _float("bf16"))
_prim("json", "pa.json_()", lambda r: r.choice(['{"a": 1}', "[1, 2.5, null]", '"x"', "null", '{"b": {"c": [true]}}', "1e300"]))

NESTABLE = [p for p in PRIMITIVES if p not in ("bfloat16", "json")]
# pylance 14 refuses variable-width values (and dictionaries) inside fixed-size lists at every file version.
FIXED_WIDTH = [p for p in NESTABLE if p not in ("string", "large_string", "binary", "large_binary") and not p.startswith("dict")]


def pa_type(t: T) -> pa.DataType:
    return eval(type_src(t))  # noqa: S307 - our own source text


def type_src(t: T) -> str:
    kind = t[0]
    if kind == "prim":
        src = PRIMITIVES[t[1]][0]
        return "BFloat16Type()" if src == "bfloat16" else src
    if kind == "list":
        return f"pa.list_({type_src(t[1])})"
    if kind == "large_list":
        return f"pa.large_list({type_src(t[1])})"
    if kind == "fsl":
        return f"pa.list_({type_src(t[1])}, {t[2]})"
    if kind == "struct":
        return "pa.struct([" + ", ".join(f"({n!r}, {type_src(c)})" for n, c in t[1]) + "])"
    if kind == "map":
        return f"pa.map_({type_src(t[1])}, {type_src(t[2])})"
    raise ValueError(t)


def random_type(r: random.Random, depth: int, version: str) -> T:
    """A random type of nesting at most ``4 - depth`` levels below this one."""
    if depth >= 4 or r.random() < 0.45 + 0.1 * depth:
        return ("prim", r.choice(NESTABLE))
    kinds = ["list", "large_list", "fsl", "struct", "struct"] + (["map"] if version not in ("2.0", "2.1") else [])
    kind = r.choice(kinds)
    if kind in ("list", "large_list"):
        return (kind, random_type(r, depth + 1, version))
    if kind == "fsl":
        # pylance stores fixed-size lists of fixed-width values only.
        child = ("prim", r.choice(FIXED_WIDTH))
        if depth < 3 and r.random() < 0.2:
            child = ("fsl", child, r.randint(1, 3))
        return ("fsl", child, r.randint(1, 4))
    if kind == "struct":
        return ("struct", tuple((f"f{i}", random_type(r, depth + 1, version)) for i in range(r.randint(1, 3))))
    key = ("prim", r.choice(["string", "int32", "int64", "large_string", "uint8"]))
    return ("map", key, random_type(r, depth + 1, version))


@dataclasses.dataclass
class Shape:
    """How often a column's values are null or empty, at every level."""
    null_p: float
    empty_p: float
    max_len: int
    struct_nulls: bool   # file version 2.0 does not store struct validity
    pool_size: int = 0   # > 0: primitive values come from a pool of this many values per type
    pool_rng: Optional[random.Random] = None
    pools: Dict[str, List[Any]] = dataclasses.field(default_factory=dict)


def _small(v: Any) -> Any:
    return v[:1000] if isinstance(v, (BigString, BigBinary)) else v


def random_value(r: random.Random, t: T, shape: Shape, nullable: bool = True) -> Any:
    kind = t[0]
    if nullable and r.random() < shape.null_p and (kind != "struct" or shape.struct_nulls):
        return None
    if kind == "prim":
        make = PRIMITIVES[t[1]][1]
        if shape.pool_size:
            # A pool's values repeat on every row: a large one would make the case gigabytes.
            pool = shape.pools.setdefault(t[1], [_small(make(shape.pool_rng)) for _ in range(shape.pool_size)])
            return pool[r.randrange(len(pool))]
        return make(r)
    if kind in ("list", "large_list"):
        if r.random() < shape.empty_p:
            return []
        return [random_value(r, t[1], shape) for _ in range(r.randint(1, shape.max_len))]
    if kind == "fsl":
        return [random_value(r, t[1], shape) for _ in range(t[2])]
    if kind == "struct":
        return {n: random_value(r, c, shape) for n, c in t[1]}
    if kind == "map":
        if r.random() < shape.empty_p:
            return []
        keys: Dict[Any, None] = {}
        for _ in range(r.randint(1, shape.max_len)):
            keys.setdefault(random_value(r, t[1], shape, nullable=False), None)
        return [(k, random_value(r, t[2], shape)) for k in keys]
    raise ValueError(t)


def lit(v: Any) -> str:
    """Python source for a value as random_value makes it."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, tuple) and len(v) == 3 and v[0] == "Decimal":
        return f"D({v[1]}, {v[2]})"
    if isinstance(v, list):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(lit(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {lit(x)}" for k, x in v.items()) + "}"
    return repr(v)


def _has_half(t: T) -> bool:
    if t[0] == "prim":
        return t[1] == "float16"
    if t[0] == "struct":
        return any(_has_half(c) for _, c in t[1])
    return any(_has_half(c) for c in t[1:] if isinstance(c, tuple))


def _widened(t: T) -> T:
    """The type with float16 as float32: pyarrow builds float16 arrays from Python floats only by a cast."""
    if t[0] == "prim":
        return ("prim", "float32") if t[1] == "float16" else t
    if t[0] == "struct":
        return ("struct", tuple((n, _widened(c)) for n, c in t[1]))
    return (t[0],) + tuple(_widened(c) if isinstance(c, tuple) else c for c in t[1:])


@dataclasses.dataclass
class Column:
    name: str
    type: T
    values: List[Any]
    metadata: Optional[Dict[str, str]] = None

    def array_src(self) -> str:
        vals = lit(self.values)
        if self.type == ("prim", "bfloat16"):
            return f"bfloat16_array({vals})"
        if _has_half(self.type):
            return f"pa.array({vals}, {type_src(_widened(self.type))}).cast({type_src(self.type)})"
        return f"pa.array({vals}, {type_src(self.type)})"


PRELUDE = ("import pyarrow as pa\nfrom decimal import Decimal\nfrom lance._arrow.bf16 import BFloat16Type, bfloat16_array\n"
           "nan, inf = float('nan'), float('inf')\nD = lambda unscaled, scale: Decimal(unscaled).scaleb(-scale)\n")


@dataclasses.dataclass
class Case:
    """One generated table and how pylance writes it."""
    seed: str
    version: str
    index: int
    columns: List[Column]
    write_kwargs: Dict[str, Any]
    delete_mod: Optional[Tuple[int, int]] = None   # delete rows whose id % m == k
    delete_range: Optional[Tuple[int, int]] = None  # delete rows whose id is in [a, b): whole fragments, or all rows

    def delete_predicate(self) -> Optional[str]:
        """The predicate of the rows pylance deletes after writing the case, or None."""
        parts = []
        if self.delete_mod:
            parts.append(f"id % {self.delete_mod[0]} = {self.delete_mod[1]}")
        if self.delete_range:
            parts.append(f"(id >= {self.delete_range[0]} AND id < {self.delete_range[1]})")
        return " OR ".join(parts) or None

    @property
    def name(self) -> str:
        return f"{self.version.replace('.', '_')}_{self.index}"

    @property
    def num_rows(self) -> int:
        return len(self.columns[0].values)

    def table_src(self) -> str:
        fields = ", ".join(
            f"pa.field({c.name!r}, {type_src(c.type)}" + (f", metadata={c.metadata!r})" if c.metadata else ")")
            for c in self.columns)
        arrays = ",\n    ".join(c.array_src() for c in self.columns)
        return f"table = pa.Table.from_arrays([\n    {arrays}],\n    schema=pa.schema([{fields}]))\n"

    def table(self) -> pa.Table:
        scope: Dict[str, Any] = {}
        exec(PRELUDE + self.table_src(), scope)  # noqa: S102 - our own source text
        return scope["table"]

    def snippet(self) -> str:
        """A self-contained script that writes this case with pylance."""
        predicate = self.delete_predicate()
        delete = f"ds.delete({predicate!r})\n" if predicate else ""
        return (f"# seed {self.seed}, file version {self.version}, case {self.index}\n" + PRELUDE + "import lance\n"
                + self.table_src()
                + f"ds = lance.write_dataset(table, 'src.lance', data_storage_version={self.version!r}, "
                + ", ".join(f"{k}={v!r}" for k, v in self.write_kwargs.items()) + ")\n" + delete)

    def with_columns(self, columns: List[Column]) -> "Case":
        return dataclasses.replace(self, columns=columns)

    def with_rows(self, keep: List[int]) -> "Case":
        cols = [dataclasses.replace(c, values=[c.values[i] for i in keep]) for c in self.columns]
        cols[0] = dataclasses.replace(cols[0], values=list(range(len(keep))))
        return dataclasses.replace(self, columns=cols)


def random_column(r: random.Random, name: str, n: int, version: str,
                  low: Optional[random.Random] = None) -> Column:
    top_only = ["bfloat16"] + (["json"] if version != "2.0" else [])
    if r.random() < 0.08:
        t: T = ("prim", r.choice(top_only))
    else:
        t = random_type(r, 0, version)
    shape = Shape(null_p=r.choice([0.0, 0.05, 0.3, 0.8, 1.0]), empty_p=r.choice([0.0, 0.2, 0.6]),
                  max_len=r.choice([1, 3, 6]), struct_nulls=version != "2.0")
    if low is not None and low.random() < 0.35:
        shape.pool_size = low.choice([1, 2, 3, 7, 40, 100])
        shape.pool_rng = low
    values = [random_value(r, t, shape) for _ in range(n)]
    if r.random() < 0.3 and n > 4:
        # Runs of nulls and non-nulls, so that boundaries of pages, batches and files fall inside and between them.
        run = r.randint(1, max(1, n // 3))
        if t[0] != "struct" or version != "2.0":
            values = [None if (i // run) % 2 == 0 else v for i, v in enumerate(values)]
    return Column(name, t, values)


def random_case(seed: str, version: str, index: int) -> Case:
    r = random.Random(f"{seed}/{version}/{index}")
    n = r.choice([0, 1, 2, 3, 7, 31, 64, 100, 257, 600, 1500])
    columns = [Column("id", ("prim", "int64"), list(range(n)))]
    low = random.Random(f"{seed}/{version}/{index}/low-cardinality")
    columns += [random_column(r, f"c{i}", n, version, low) for i in range(r.randint(1, 4))]
    kwargs: Dict[str, Any] = {}
    if r.random() < 0.6:
        kwargs["max_rows_per_file"] = r.choice([5, 40, 256])
    if r.random() < 0.5:
        kwargs["max_rows_per_group"] = r.choice([3, 17, 128])
    delete_mod = (r.choice([2, 3, 7]), r.randint(0, 1)) if n > 2 and r.random() < 0.3 else None
    # A range of ids, drawn last so that the rest of a seed's case is as before: it can empty whole fragments (which
    # pylance then drops) and, rarely, the table.
    delete_range = None
    if n > 2 and r.random() < 0.25:
        start = 0 if r.random() < 0.2 else r.randrange(n)
        delete_range = (start, n if r.random() < 0.2 else r.randint(start + 1, n))
    enc = random.Random(f"{seed}/{version}/{index}/encodings")
    if version != "2.0":
        columns = [columns[0]] + [dataclasses.replace(c, metadata=random_encoding(enc, c.type, version)) for c in columns[1:]]
    return Case(seed, version, index, columns, kwargs, delete_mod, delete_range)


def _packable(t: T, version: str) -> bool:
    """Whether a struct's children are values both writers pack: fixed-width primitives other than bool and null,
    and (2.2) strings and binaries."""
    variable = ("string", "large_string", "binary", "large_binary") if version == "2.2" else ()
    return all(c[0] == "prim" and (c[1] in FIXED_WIDTH and c[1] not in ("bool", "null") or c[1] in variable)
               for _, c in t[1])


def random_encoding(r: random.Random, t: T, version: str) -> Optional[Dict[str, str]]:
    """Field metadata that steers pylance's 2.1+ encoder (lance-encoding's constants): general compression and its
    level, mini-block or full-zip pages, byte stream split, the run-length and dictionary thresholds, and packed
    structs; None for about half the columns. The values do not change what a reader must return."""
    if r.random() < 0.5:
        return None
    md: Dict[str, str] = {}
    if r.random() < 0.5:
        md["lance-encoding:compression"] = r.choice(["zstd", "lz4", "none"])
        if md["lance-encoding:compression"] == "zstd" and r.random() < 0.5:
            md["lance-encoding:compression-level"] = str(r.choice([1, 3, 9, 19]))
    if r.random() < 0.3:
        md["lance-encoding:structural-encoding"] = r.choice(["miniblock", "fullzip"])
    if r.random() < 0.3:
        md["lance-encoding:bss"] = r.choice(["on", "off", "auto"])
    if r.random() < 0.3:
        md["lance-encoding:rle-threshold"] = r.choice(["0.0", "0.5", "1.0"])
    if r.random() < 0.3:
        md["lance-encoding:dict-divisor"] = r.choice(["1", "2", "1000"])
    # Mostly structs sparklance writes packed too; now and then any struct, for the reader (the rewrite refuses those).
    if t[0] == "struct" and r.random() < (0.5 if _packable(t, version) else 0.1):
        md["lance-encoding:packed"] = "true"
    return md or None


# ----------------------------------------------------------------------------------------------------------------
# Shrinking: smaller cases that keep the columns' types simpler.

def _simpler_types(t: T) -> List[T]:
    kind = t[0]
    if kind == "prim":
        return []
    if kind == "struct":
        out = [c for _, c in t[1]]
        if len(t[1]) > 1:
            out += [("struct", tuple(f for j, f in enumerate(t[1]) if j != i)) for i in range(len(t[1]))]
        return out
    if kind == "map":
        return [t[2]]
    return [t[1]]


def _project(t: T, to: T, v: Any) -> Any:
    """A value of type ``to`` made from ``v`` of type ``t``, where ``to`` is a child of ``t`` or ``t`` minus a field."""
    if v is None:
        return None
    if t[0] == "struct":
        if to[0] == "struct" and set(n for n, _ in to[1]) <= set(n for n, _ in t[1]) and to != t:
            names = [n for n, _ in to[1]]
            return {n: v[n] for n in names}
        for n, c in t[1]:
            if c == to:
                return v[n]
    if t[0] == "map":
        return v[0][1] if v else None
    if t[0] in ("list", "large_list", "fsl"):
        return v[0] if v else None
    return None


def shrink_candidates(case: Case) -> List[Case]:
    """Smaller variants of a case, the most reducing first."""
    out: List[Case] = []
    data = case.columns[1:]
    if len(data) > 1:
        out += [case.with_columns([case.columns[0]] + [c for c in data if c is not d]) for d in data]
    n = case.num_rows
    if n > 1:
        out += [case.with_rows(list(range(n // 2))), case.with_rows(list(range(n // 2, n)))]
        if n > 8:
            out += [case.with_rows(list(range(n // 4, n))), case.with_rows(list(range(n - n // 4)))]
    if n > 0 and n <= 8:
        out += [case.with_rows([i for i in range(n) if i != j]) for j in range(n)]
    for ci, col in enumerate(case.columns):
        for simpler in _simpler_types(col.type):
            values = [_project(col.type, simpler, v) for v in col.values]
            cols = list(case.columns)
            cols[ci] = dataclasses.replace(col, type=simpler, values=values)
            out.append(case.with_columns(cols))
    if case.delete_mod:
        out.append(dataclasses.replace(case, delete_mod=None))
    if case.delete_range:
        out.append(dataclasses.replace(case, delete_range=None))
    if case.write_kwargs:
        out.append(dataclasses.replace(case, write_kwargs={}))
    return out
