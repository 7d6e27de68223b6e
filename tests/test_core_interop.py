"""pylance 14.0.2 writes tables, the JVM core reads them: ``sparklance inspect --json`` must report what pylance
reports for every fixture table and every version of it.

The expectations come from pylance itself (``lance.dataset(...)``, ``ds.versions()``, ``frag.metadata``, scans
with ``_rowaddr`` / ``_rowid`` / ``_row_created_at_version`` / ``_row_last_updated_at_version``) and, for what
pylance's Python API does not expose (feature flags, ``next_row_id``, ``max_fragment_id``, the raw schema fields),
from a small independent protobuf decoder of the manifest files below. Nothing here is derived from the JVM output.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import re
import shutil
import struct
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import lance
import pyarrow as pa
import pytest

from conftest import inspect, inspect_error, make_tables, prefetch

TABLES = list(make_tables.EXPECTED_VERSIONS)
TABLE_VERSIONS = [(t, v) for t, n in make_tables.EXPECTED_VERSIONS.items() for v in range(1, n + 1)]
STABLE_TABLES = {"stable_row_ids"}
U64 = 2 ** 64

# ---------------------------------------------------------------------------------------------------------------
# pylance side (cached: pylance objects are cheap, scans are not free)


@functools.lru_cache(maxsize=None)
def pl(path: str, version: Optional[int] = None) -> lance.LanceDataset:
    return lance.dataset(path) if version is None else lance.dataset(path, version=version)


@functools.lru_cache(maxsize=None)
def pl_version_ns(path: str) -> Dict[int, int]:
    """Every version's manifest timestamp, integer nanoseconds since the epoch, as pylance reports it."""
    return {v["version"]: int(v["timestamp"]) for v in pl(path)._ds.versions()}


def floor_us(ns: int) -> int:
    return ns // 1000


@functools.lru_cache(maxsize=None)
def pl_row_columns(path: str, version: int, stable: bool) -> Dict[str, list]:
    cols = ["_rowaddr"] + (["_rowid", "_row_created_at_version", "_row_last_updated_at_version"] if stable else [])
    return pl(path, version).to_table(columns=cols).to_pydict()


def pl_live_offsets(path: str, version: int) -> Dict[int, set]:
    live: Dict[int, set] = {}
    for addr in pl_row_columns(path, version, False)["_rowaddr"]:
        live.setdefault(addr >> 32, set()).add(addr & 0xFFFFFFFF)
    return live


def local_naive(us: int) -> dt.datetime:
    """The naive local datetime pylance's ``ds.versions()`` / ``asof=`` work with, for epoch microseconds."""
    return dt.datetime.fromtimestamp(us // 10 ** 6) + dt.timedelta(microseconds=us % 10 ** 6)


def utc(us: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(us // 10 ** 6, dt.timezone.utc) + dt.timedelta(microseconds=us % 10 ** 6)


def iso_z(us: int) -> str:
    return utc(us).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_offset(us: int) -> str:
    return utc(us).astimezone(dt.timezone(dt.timedelta(hours=2))).isoformat(timespec="microseconds")


def iso_space(us: int) -> str:
    return utc(us).strftime("%Y-%m-%d %H:%M:%S.%f")


_PREFETCHED = set()


def js_at(tables, table: str, version: Optional[int] = None) -> dict:
    """``inspect`` of a fixture table at a version (None: latest); the first call for a table runs the calls for
    all its versions concurrently."""
    path = tables[table]
    if table not in _PREFETCHED:
        _PREFETCHED.add(table)
        prefetch([(path, ())] + [(path, ("--version", v)) for v in range(1, make_tables.EXPECTED_VERSIONS[table] + 1)])
    return inspect(path) if version is None else inspect(path, "--version", version)


# ---------------------------------------------------------------------------------------------------------------
# An independent reader of the manifest protobuf (only the fields the tests need).


def _varint(buf: bytes, i: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _pb(buf: bytes) -> List[Tuple[int, int, object]]:
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 1:
            val, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            val, i = buf[i:i + n], i + n
        elif wt == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        out.append((num, wt, val))
    return out


def _signed(u: int) -> int:
    return u - U64 if u >= 2 ** 63 else u


def _ints(entries, num) -> List[int]:
    out = []
    for n, wt, val in entries:
        if n != num:
            continue
        if wt == 2:
            j = 0
            while j < len(val):
                x, j = _varint(val, j)
                out.append(_signed(x))
        else:
            out.append(_signed(val))
    return out


def _one(entries, num, default=None):
    vals = [val for n, _, val in entries if n == num]
    return vals[-1] if vals else default


def manifest_file(root: str, version: int) -> Path:
    for name in (f"{version}.manifest", f"{U64 - 1 - version}.manifest"):
        p = Path(root) / "_versions" / name
        if p.exists():
            return p
    raise FileNotFoundError(f"no manifest for version {version} under {root}")


@functools.lru_cache(maxsize=None)
def read_manifest(root: str, version: int) -> dict:
    data = manifest_file(root, version).read_bytes()
    assert data[-4:] == b"LANC"
    pos = struct.unpack("<q", data[-16:-8])[0]
    (n,) = struct.unpack("<I", data[pos:pos + 4])
    m = _pb(data[pos + 4:pos + 4 + n])
    fields = []
    for num, _, val in m:
        if num == 1:
            f = _pb(val)
            fields.append({"id": _signed(_one(f, 3, 0)), "parent_id": _signed(_one(f, 4, 0)),
                           "name": _one(f, 2, b"").decode(), "logical_type": _one(f, 5, b"").decode(),
                           "nullable": bool(_one(f, 6, 0))})
    ts = _pb(_one(m, 7, b""))
    fmt = _pb(_one(m, 15, b""))
    mfid = [val for num, _, val in m if num == 11]
    return {
        "version": _one(m, 3, 0),
        "timestamp_ns": _one(ts, 1, 0) * 10 ** 9 + _one(ts, 2, 0),
        "reader_feature_flags": _one(m, 9, 0),
        "writer_feature_flags": _one(m, 10, 0),
        "max_fragment_id": mfid[-1] if mfid else None,
        "next_row_id": _one(m, 14, 0),
        "data_storage_version": _one(fmt, 2, b"").decode(),
        "fields": fields,
        "fragment_ids": [_one(_pb(val), 1, 0) for num, _, val in m if num == 2],
    }


def naming_on_disk(root: str) -> str:
    nums = [int(p.name.split(".")[0]) for p in (Path(root) / "_versions").glob("*.manifest")]
    assert nums, f"no manifests under {root}"
    v2 = [n >= 2 ** 63 for n in nums]
    assert all(v2) or not any(v2), f"mixed naming under {root}"
    return "v2" if v2[0] else "v1"


# ---------------------------------------------------------------------------------------------------------------
# Arrow types, compared field by field (names of nested fields included, metadata ignored)


def _type_desc(t: pa.DataType):
    if isinstance(t, pa.BaseExtensionType):
        return ("extension", t.extension_name, _type_desc(t.storage_type))
    if pa.types.is_dictionary(t):
        return ("dictionary", str(t.index_type), _type_desc(t.value_type), t.ordered)
    if t.num_fields:
        label = type(t).__name__
        if pa.types.is_fixed_size_list(t):
            label += f"[{t.list_size}]"
        if pa.types.is_map(t):
            label += f"(keys_sorted={t.keys_sorted})"
        return (label, tuple(_field_desc(t.field(i)) for i in range(t.num_fields)))
    return str(t)


def _field_desc(f: pa.Field):
    return (f.name, "nullable" if f.nullable else "not null", _type_desc(f.type))


def _storage_only(desc):
    """The same description with every extension type replaced by its storage type."""
    if isinstance(desc, tuple):
        if desc and desc[0] == "extension":
            return _storage_only(desc[2])
        return tuple(_storage_only(d) for d in desc)
    return desc


def decode_arrow_schema(js: dict) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(js["arrow_schema_ipc_base64"])))


# ---------------------------------------------------------------------------------------------------------------
# The fixtures themselves: the shapes the tests rely on (no jar needed)


def test_fixture_shapes(tables):
    """The fixture tables have the shapes they are meant to cover (so the interop tests below are not vacuous)."""
    assert naming_on_disk(tables["history"]) == "v2"
    assert naming_on_disk(tables["v1_naming"]) == "v1"
    assert pl(tables["history"]).tags.list()["v2tag"]["version"] == 2
    # deletes: .arrow and .bin deletion files, and a fragment dropped after all its rows were deleted
    frags = {f.fragment_id: f.metadata for f in pl(tables["deletes"]).get_fragments()}
    assert sorted(frags) == [0, 1, 3]
    assert frags[0].deletion_file.file_type == "array" and frags[0].deletion_file.num_deleted_rows == 7
    assert frags[1].deletion_file.file_type == "bitmap" and frags[1].deletion_file.num_deleted_rows == 9500
    assert frags[3].deletion_file.file_type == "array" and frags[3].deletion_file.num_deleted_rows == 4096
    assert frags[0].physical_rows == 10_000
    # schema_evolution: the -2 tombstone, a dropped nested field, a renamed and a re-typed field
    se = tables["schema_evolution"]
    assert any(-2 in df.fields for f in pl(se).get_fragments() for df in f.metadata.files)
    names = [(f["id"], f["name"]) for f in read_manifest(se, 11)["fields"]]
    assert (0, "a2") in names and (9, "c") in names and (3, "x") not in names and (1, "b") not in names
    # stable row ids with ids that are no longer a plain range after update + compaction
    ds = pl(tables["stable_row_ids"])
    assert ds.has_stable_row_ids
    ids = ds.to_table(columns=["_rowid"])["_rowid"].to_pylist()
    assert ids != list(range(len(ids)))
    # all_types carries the types the brief lists
    lts = {f["logical_type"] for f in read_manifest(tables["all_types"], 1)["fields"]}
    for lt in ("halffloat", "decimal:256:40:5", "date64:ms", "time32:s", "timestamp:ns:+05:30", "duration:ns",
               "large_list.struct", "fixed_size_list:float:128", "map", "dict:string:int16:false", "null"):
        assert lt in lts
    # overwrite: the schema changed between the versions
    ov = tables["overwrite"]
    assert [f["name"] for f in read_manifest(ov, 1)["fields"]] != [f["name"] for f in read_manifest(ov, 2)["fields"]]
    # the pieces of pylance the tests use agree with the manifest decoder
    for table, version in TABLE_VERSIONS:
        m = read_manifest(tables[table], version)
        assert m["version"] == version
        assert m["timestamp_ns"] == pl_version_ns(tables[table])[version]
        assert m["fragment_ids"] == [f.fragment_id for f in pl(tables[table], version).get_fragments()]


# ---------------------------------------------------------------------------------------------------------------
# Versions, timestamps, naming, tags, time travel


@pytest.mark.parametrize("table", TABLES)
def test_versions_and_timestamps(tables, table):
    path = tables[table]
    js = js_at(tables, table)
    ds = pl(path)
    ns = pl_version_ns(path)
    root = re.sub(r"^file:(//)?", "", js["root"])
    assert Path(root).resolve() == Path(path).resolve(), js["root"]
    assert js["latest_version"] == ds.latest_version
    assert js["version"] == ds.version == ds.latest_version
    assert [v["version"] for v in js["versions"]] == sorted(ns)
    assert {v["version"]: v["timestamp_us"] for v in js["versions"]} == {v: floor_us(t) for v, t in ns.items()}
    assert js["timestamp_us"] == floor_us(ns[ds.version])
    # ds.versions() (a naive local datetime, microseconds) agrees to the microsecond (pylance converts via float)
    for v in ds.versions():
        ours = next(x["timestamp_us"] for x in js["versions"] if x["version"] == v["version"])
        theirs = round(v["timestamp"].timestamp() * 10 ** 6)
        assert abs(ours - theirs) <= 1, (v["version"], ours, theirs)


@pytest.mark.parametrize("table", TABLES)
def test_naming_scheme(tables, table):
    path = tables[table]
    expected = naming_on_disk(path)
    assert expected == ("v1" if table == "v1_naming" else "v2")
    assert js_at(tables, table)["naming_scheme"] == expected


@pytest.mark.parametrize("table", TABLES)
def test_tags(tables, table):
    path = tables[table]
    expected = {name: t["version"] for name, t in pl(path).tags.list().items()}
    assert js_at(tables, table)["tags"] == expected


@pytest.mark.parametrize("table,tag", [("history", "v2tag"), ("v1_naming", "first")])
def test_open_by_tag(tables, table, tag):
    path = tables[table]
    expected = lance.dataset(path, version=tag)
    js = inspect(path, "--tag", tag)
    assert js["version"] == expected.version == {"v2tag": 2, "first": 1}[tag]
    assert js["latest_version"] == pl(path).latest_version
    assert js["timestamp_us"] == floor_us(pl_version_ns(path)[expected.version])
    assert [f["id"] for f in js["fragments"]] == [f.fragment_id for f in expected.get_fragments()]


@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_open_by_version(tables, table, version):
    path = tables[table]
    js = js_at(tables, table, version)
    ds = pl(path, version)
    assert js["version"] == ds.version == version
    assert js["latest_version"] == pl(path).latest_version
    assert js["timestamp_us"] == floor_us(pl_version_ns(path)[version])
    assert [v["version"] for v in js["versions"]] == sorted(pl_version_ns(path))
    assert js["naming_scheme"] == naming_on_disk(path)
    assert js["tags"] == {name: t["version"] for name, t in pl(path).tags.list().items()}


@functools.lru_cache(maxsize=None)
def _as_of_cases(tables_key: Tuple[Tuple[str, str], ...]) -> List[Tuple[str, str, str, int, Optional[int]]]:
    """(kind, table, --as-of text, instant in epoch µs, version pylance opens for that instant or None).

    Midpoints between consecutive versions (every pair of ``history``, one pair of four other tables, the three
    accepted spellings: Z, +02:00 offset, space-separated UTC), and boundaries: the commit instant rounded up to
    the microsecond opens that version, one microsecond before its floor opens the previous one. Exactly the
    floor-microsecond of a commit is ambiguous (the commit happened some nanoseconds later; pylance compares
    ``truncated_us < asof`` and so picks the previous version) and is not tested.
    """
    tables = dict(tables_key)
    fmts = [iso_z, iso_offset, iso_space]
    cases = []

    def mid(path, k):
        ns = pl_version_ns(path)
        m = (floor_us(ns[k]) + floor_us(ns[k + 1])) // 2
        assert floor_us(ns[k]) < m < floor_us(ns[k + 1]), "versions too close together for an as-of test"
        return m

    for table in ("history", "v1_naming", "deletes", "stable_row_ids", "schema_evolution"):
        n = make_tables.EXPECTED_VERSIONS[table]
        for k in (range(1, n) if table == "history" else [n // 2]):
            us = mid(tables[table], k)
            cases.append(("between", table, fmts[k % 3](us), us, k))
    us = mid(tables["history"], 2)
    for fmt in fmts:
        cases.append(("format", "history", fmt(us), us, 2))
    ns = pl_version_ns(tables["history"])
    for k in (1, 3):
        # Two microseconds past the commit's microsecond: pylance compares microseconds strictly, on a value it
        # derives through floating point (off by one at times), and a commit can fall exactly on a microsecond.
        after = floor_us(ns[k]) + 2
        cases.append(("boundary", "history", iso_z(after), after, k))
    cases.append(("boundary", "history", iso_z(floor_us(ns[3]) - 2), floor_us(ns[3]) - 2, 2))
    later = floor_us(ns[max(ns)]) + 3_600 * 10 ** 6
    cases.append(("boundary", "history", iso_z(later), later, max(ns)))
    prefetch([(tables[t], ("--as-of", text)) for _, t, text, _, _ in cases])
    return cases


@pytest.mark.parametrize("kind", ["between", "format", "boundary"])
def test_open_as_of(tables, kind):
    """``--as-of`` opens the latest version committed at or before the instant, like ``lance.dataset(asof=)``."""
    problems = []
    for k, table, text, us, expected in _as_of_cases(tuple(sorted(tables.items()))):
        if k != kind:
            continue
        path = tables[table]
        theirs = lance.dataset(path, asof=local_naive(us)).version
        assert theirs == expected, f"pylance: {table} as of {text} -> {theirs}, expected {expected}"
        js = inspect(path, "--as-of", text)
        if js["version"] != expected or js["timestamp_us"] != floor_us(pl_version_ns(path)[expected]):
            problems.append(f"{table} --as-of {text}: got version {js['version']}, pylance opens {expected}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# Manifest header fields


@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_manifest_header(tables, table, version):
    path = tables[table]
    m = read_manifest(path, version)
    js = js_at(tables, table, version)
    assert js["reader_feature_flags"] == m["reader_feature_flags"]
    assert js["writer_feature_flags"] == m["writer_feature_flags"]
    assert js["data_storage_version"] == m["data_storage_version"] == pl(path, version).data_storage_version
    assert js["max_fragment_id"] == m["max_fragment_id"]
    assert js["next_row_id"] == m["next_row_id"]
    # what the flags mean (table-facts.md): 1 = deletion files, 2 = stable row ids
    has_deletions = any(f.metadata.deletion_file is not None for f in pl(path, version).get_fragments())
    assert bool(js["reader_feature_flags"] & 2) == (table in STABLE_TABLES)
    if has_deletions:
        assert js["reader_feature_flags"] & 1
    if table in STABLE_TABLES:
        assert js["next_row_id"] > 0


# ---------------------------------------------------------------------------------------------------------------
# Schema: the manifest's fields, and our Arrow mapping of them


_LANCE_FIELD = re.compile(r'Field \{ name: "([^"]*)", id: (-?\d+), parent_id: (-?\d+), '
                          r'logical_type: LogicalType\("([^"]*)"\).*?nullable: (true|false)')


@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_schema_fields(tables, table, version):
    path = tables[table]
    expected = read_manifest(path, version)["fields"]
    # pylance's own view of the same fields (depth first, like the manifest)
    theirs = [{"id": int(i), "parent_id": int(p), "name": n, "logical_type": lt, "nullable": nl == "true"}
              for n, i, p, lt, nl in _LANCE_FIELD.findall(repr(pl(path, version).lance_schema))]
    assert theirs == expected
    js = js_at(tables, table, version)
    ours = [{k: f.get(k) for k in ("id", "parent_id", "name", "logical_type", "nullable")} for f in js["schema"]]
    assert ours == expected


@pytest.mark.parametrize("table,version", [tv for tv in TABLE_VERSIONS if tv[0] != "extension_types"])
def test_arrow_schema(tables, table, version):
    path = tables[table]
    js = js_at(tables, table, version)
    ours = decode_arrow_schema(js)
    theirs = pl(path, version).schema
    assert ours.names == theirs.names
    for o, t in zip(ours, theirs):
        assert _field_desc(o) == _field_desc(t), f"field {t.name}"
    assert ours.equals(theirs, check_metadata=False)


def test_arrow_schema_extension_types(tables):
    """Extension columns may map to the extension type pylance returns or to its storage type."""
    path = tables["extension_types"]
    ours = decode_arrow_schema(js_at(tables, "extension_types"))
    theirs = pl(path).schema
    assert ours.names == theirs.names
    for o, t in zip(ours, theirs):
        assert _field_desc(o) == _field_desc(t) or _storage_only(_field_desc(o)) == _storage_only(_field_desc(t)), (
            f"field {t.name}: ours {o.type}, pylance {t.type}")


# ---------------------------------------------------------------------------------------------------------------
# Fragments and data files


_DELETION_TYPES = {"array": "ARROW_ARRAY", "bitmap": "BITMAP"}


@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_fragments(tables, table, version):
    path = tables[table]
    js = js_at(tables, table, version)
    frags = [f.metadata for f in pl(path, version).get_fragments()]
    assert [f["id"] for f in js["fragments"]] == [m.id for m in frags]
    for ours, m in zip(js["fragments"], frags):
        where = f"fragment {m.id}"
        assert ours["physical_rows"] == m.physical_rows, where
        assert [{k: f.get(k) for k in ("path", "fields", "column_indices", "file_major_version",
                                       "file_minor_version", "file_size_bytes")} for f in ours["files"]] == [
            {"path": d.path, "fields": list(d.fields), "column_indices": list(d.column_indices),
             "file_major_version": d.file_major_version, "file_minor_version": d.file_minor_version,
             "file_size_bytes": d.file_size_bytes} for d in m.files], where
        d = m.deletion_file
        if d is None:
            assert ours["deletion_file"] is None, where
        else:
            got = {k: ours["deletion_file"].get(k) for k in ("type", "read_version", "id", "num_deleted_rows", "path")}
            assert got == {
                "type": _DELETION_TYPES[d.file_type], "read_version": d.read_version, "id": d.id,
                "num_deleted_rows": d.num_deleted_rows, "path": d.path(m.id)}, where
            assert (Path(path) / d.path(m.id)).is_file()
        for f in ours["files"]:
            assert (Path(path) / "data" / f["path"]).stat().st_size == f["file_size_bytes"], where


@pytest.mark.parametrize("table,version", TABLE_VERSIONS)
def test_deleted_rows(tables, table, version):
    path = tables[table]
    js = js_at(tables, table, version)
    live = pl_live_offsets(path, version)
    assert set(live) <= {f["id"] for f in js["fragments"]}
    total_live = 0
    for f in js["fragments"]:
        expected = sorted(set(range(f["physical_rows"])) - live.get(f["id"], set()))
        got = f["deleted_offsets"]
        assert len(got) == len(set(got)), f"fragment {f['id']}: duplicate offsets"
        assert sorted(got) == expected, f"fragment {f['id']}"
        assert f["num_deleted_rows"] == len(expected), f"fragment {f['id']}"
        if f["deletion_file"] is None:
            assert got == []
        else:
            assert f["deletion_file"]["num_deleted_rows"] == len(expected)
        total_live += f["physical_rows"] - len(expected)
    assert total_live == pl(path, version).count_rows()


# ---------------------------------------------------------------------------------------------------------------
# Stable row ids and row versions


@pytest.mark.parametrize("table,version", [tv for tv in TABLE_VERSIONS if tv[0] in STABLE_TABLES])
def test_stable_row_ids(tables, table, version):
    path = tables[table]
    js = js_at(tables, table, version)
    cols = pl_row_columns(path, version, True)
    by_frag = {f["id"]: f for f in js["fragments"]}
    seen_ids = set()
    for addr, rowid, created, updated in zip(cols["_rowaddr"], cols["_rowid"], cols["_row_created_at_version"],
                                             cols["_row_last_updated_at_version"]):
        f = by_frag[addr >> 32]
        off = addr & 0xFFFFFFFF
        where = f"fragment {f['id']} offset {off}"
        assert f["row_ids"][off] == rowid, where
        assert f["created_at_versions"][off] == created, where
        assert f["last_updated_at_versions"][off] == updated, where
        seen_ids.add(rowid)
    for f in js["fragments"]:
        for key in ("row_ids", "created_at_versions", "last_updated_at_versions"):
            assert f[key] is not None and len(f[key]) == f["physical_rows"], (f["id"], key)
        assert all(0 <= r < js["next_row_id"] for r in f["row_ids"]), f["id"]
        assert all(1 <= v <= version for v in f["created_at_versions"] + f["last_updated_at_versions"]), f["id"]
    assert len(seen_ids) == len(cols["_rowid"])


def test_stable_row_id_facts(tables):
    """Spot checks of what the stable_row_ids table must hold, independent of a scan."""
    table = "stable_row_ids"
    v2 = {f["id"]: f for f in js_at(tables, table, 2)["fragments"]}
    assert v2[0]["row_ids"] == list(range(1000)) and v2[1]["row_ids"] == list(range(1000, 2000))
    assert v2[0]["created_at_versions"] == [1] * 1000 and v2[1]["created_at_versions"] == [2] * 1000
    assert v2[1]["last_updated_at_versions"] == [2] * 1000
    # version 4: `update` moved rows 1500..1599 (minus the deleted multiples of 10) to a new fragment, keeping ids
    v4 = {f["id"]: f for f in js_at(tables, table, 4)["fragments"]}
    moved = [i for i in range(1500, 1600) if i % 10]
    assert v4[2]["row_ids"] == moved
    assert v4[2]["created_at_versions"] == [2] * len(moved)
    assert v4[2]["last_updated_at_versions"] == [4] * len(moved)
    # version 5: a column rewrite of ids 200..259 in fragment 0 bumps only their last-updated version
    v5 = {f["id"]: f for f in js_at(tables, table, 5)["fragments"]}
    assert [i for i, v in enumerate(v5[0]["last_updated_at_versions"]) if v == 5] == [
        i for i in range(200, 260) if i % 10]


@pytest.mark.parametrize("table", [t for t in TABLES if t not in STABLE_TABLES])
def test_no_row_ids_without_stable_row_ids(tables, table):
    path = tables[table]
    for f in js_at(tables, table)["fragments"]:
        assert f["row_ids"] is None and f["created_at_versions"] is None and f["last_updated_at_versions"] is None


# ---------------------------------------------------------------------------------------------------------------
# Errors


_ERROR_LINE = re.compile(r"^error \[([A-Z][A-Z0-9_]*)\]: (.+)$", re.M)


def assert_cli_error(rc: int, stderr: str, classes, *must_name: str) -> str:
    """Exit code 1, one ``error [CLASS]: message`` line, no stack trace; returns the message."""
    assert rc == 1, f"exit code {rc}, stderr:\n{stderr[-3000:]}"
    assert "\tat " not in stderr, f"stack trace on stderr:\n{stderr[-3000:]}"
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) <= 5, f"{len(lines)} lines on stderr:\n{stderr[-3000:]}"
    m = _ERROR_LINE.search(stderr)
    assert m, f"no `error [CLASS]: ...` line on stderr:\n{stderr[-3000:]}"
    assert m.group(1) in ((classes,) if isinstance(classes, str) else tuple(classes)), m.group(0)
    for name in must_name:
        assert name in m.group(2), f"{name!r} not named in: {m.group(0)}"
    return m.group(2)


def copy_table(tables, name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(tables[name], dst)
    return dst


def test_error_version_not_found(tables):
    assert_cli_error(*inspect_error(tables["history"], "--version", "99"), "LANCE_VERSION_NOT_FOUND", "99")


def test_error_tag_not_found(tables):
    assert_cli_error(*inspect_error(tables["history"], "--tag", "no_such_tag"), "LANCE_TAG_NOT_FOUND",
                     "no_such_tag")


def test_error_as_of_before_first_version(tables):
    assert_cli_error(*inspect_error(tables["history"], "--as-of", "2000-01-01T00:00:00Z"),
                     "LANCE_VERSION_NOT_FOUND", "2000-01-01")


def test_error_not_a_table(tmp_path):
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    assert_cli_error(*inspect_error(empty), "LANCE_NOT_A_TABLE", "empty_dir")
    assert_cli_error(*inspect_error(tmp_path / "missing_dir"), "LANCE_NOT_A_TABLE", "missing_dir")
    plain = tmp_path / "plain_file.txt"
    plain.write_text("not a table\n")
    assert_cli_error(*inspect_error(plain), "LANCE_NOT_A_TABLE", "plain_file.txt")


def test_error_truncated_manifest(tables, tmp_path):
    root = copy_table(tables, "history", tmp_path)
    newest = manifest_file(str(root), 5)
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])
    assert_cli_error(*inspect_error(root), "LANCE_CORRUPT_FILE", newest.name)


def test_error_manifest_with_flipped_bytes(tables, tmp_path):
    root = copy_table(tables, "history", tmp_path)
    newest = manifest_file(str(root), 5)
    data = bytearray(newest.read_bytes())
    pos = struct.unpack("<q", data[-16:-8])[0]
    data[pos + 4:pos + 16] = b"\xff" * 12  # the protobuf now starts with an over-long varint
    newest.write_bytes(bytes(data))
    assert_cli_error(*inspect_error(root), "LANCE_CORRUPT_FILE", newest.name)


def test_error_mixed_naming_schemes(tables, tmp_path):
    root = copy_table(tables, "v1_naming", tmp_path)
    shutil.copy(root / "_versions" / "5.manifest", root / "_versions" / f"{U64 - 1 - 5}.manifest")
    with pytest.raises(Exception, match="multiple manifest naming schemes"):
        lance.dataset(str(root))  # pylance refuses it too
    message = assert_cli_error(*inspect_error(root), ("LANCE_CORRUPT_FILE", "LANCE_UNSUPPORTED_FEATURE",
                                                      "LANCE_INCONSISTENT_TABLE"))
    assert re.search(r"naming|_versions|manifest", message, re.I), message


def _deletion_file(root: Path, kind: str) -> Path:
    frags = lance.dataset(str(root)).get_fragments()
    for f in frags:
        d = f.metadata.deletion_file
        if d is not None and d.file_type == kind:
            return root / d.path(f.fragment_id)
    raise AssertionError(f"no {kind} deletion file in {root}")


@pytest.mark.parametrize("kind,damage", [("array", "truncate"), ("array", "garbage"), ("bitmap", "truncate"),
                                         ("bitmap", "garbage")])
def test_error_damaged_deletion_file(tables, tmp_path, kind, damage):
    root = copy_table(tables, "deletes", tmp_path)
    target = _deletion_file(root, kind)
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\xde\xad\xbe\xef" * (len(data) // 4))
    assert_cli_error(*inspect_error(root), "LANCE_CORRUPT_FILE", target.name)


def test_error_missing_deletion_file(tables, tmp_path):
    root = copy_table(tables, "deletes", tmp_path)
    target = _deletion_file(root, "bitmap")
    target.unlink()
    assert_cli_error(*inspect_error(root), ("LANCE_CORRUPT_FILE", "LANCE_INCONSISTENT_TABLE", "LANCE_STORAGE_ERROR"),
                     target.name)
