"""RTREE (spatial) indexes against pylance 14, both ways.

Spark builds (``CREATE INDEX ... USING rtree``, with lance-spark's ``page_size`` and ``num_segments``) on seeded
random tables of WKB geometries (points, lines, polygons, multi-geometries, collections, empty geometries, nulls;
several fragments, deleted rows, with and without stable row ids) and on GeoArrow point structs: pylance lists the
index, ``validate()`` passes, its leaves are the boxes and rows pylance's own index over a copy holds (same schema,
metadata, page count and index version), and pylance's spatial filters (``st_intersects``, ``st_within``,
``IS NULL``) through it return the rows they return through pylance's index and without any index.

pylance builds: its RTREE index survives Spark's appends, deletes and compaction (kept, not remapped, as pylance's
``compact_files`` keeps it) and still answers pylance's filters; Spark's OPTIMIZE INDEX adds the new fragments.

``SPARKLANCE_FUZZ_SEED`` seeds the geometries and query boxes; ``SPARKLANCE_FUZZ_N`` is the number of random tables.
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import sys
from pathlib import Path
from typing import List, Optional

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from lance.indices import IndexConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

from conftest import cross_version, lance_raises, start_spark, warehouse_with  # noqa: E402
from test_ngram_index import index_version  # noqa: E402

import sparklance  # noqa: E402
from sparklance import LanceTable  # noqa: E402

pytestmark = [cross_version,
              pytest.mark.filterwarnings("ignore:The 'list_indices' method is deprecated:DeprecationWarning")]

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261127"))
N = int(os.environ.get("SPARKLANCE_FUZZ_N", "3"))


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    return warehouse_with(tmp_path_factory, "rtree_wh", "db")


@pytest.fixture(scope="module")
def spark(wh):
    session = start_spark("sparklance-rtree-index-tests", wh)
    yield session
    session.stop()


def wkb_point(x: float, y: float) -> bytes:
    return struct.pack("<BIdd", 1, 1, x, y)


def wkb_coords(kind: int, pts: List[tuple], big_endian: bool = False) -> bytes:
    e = ">" if big_endian else "<"
    return struct.pack(f"{e}BII", 0 if big_endian else 1, kind, len(pts)) + b"".join(
        struct.pack(f"{e}dd", x, y) for x, y in pts)


def random_geometry(r: random.Random) -> Optional[bytes]:
    """A WKB geometry near a random centre, or null, or an empty geometry."""
    k = r.random()
    cx, cy = r.uniform(-180, 180), r.uniform(-90, 90)
    pts = [(cx + r.uniform(-3, 3), cy + r.uniform(-3, 3)) for _ in range(r.randint(2, 6))]
    if k < 0.1:
        return None
    if k < 0.13:
        return wkb_point(float("nan"), float("nan"))  # POINT EMPTY
    if k < 0.15:
        return wkb_coords(2, [])  # LINESTRING EMPTY
    if k < 0.55:
        return wkb_point(cx, cy)
    if k < 0.7:
        return wkb_coords(2, pts, big_endian=r.random() < 0.3)
    if k < 0.8:
        ring = pts + [pts[0]]
        return struct.pack("<BII", 1, 3, 1) + struct.pack("<I", len(ring)) + b"".join(
            struct.pack("<dd", x, y) for x, y in ring)
    if k < 0.9:
        return struct.pack("<BII", 1, 4, len(pts)) + b"".join(wkb_point(x, y) for x, y in pts)
    # A 3D (ISO Z) point inside a collection.
    return struct.pack("<BII", 1, 7, 2) + wkb_point(cx, cy) + struct.pack("<BIddd", 1, 1001, pts[0][0], pts[0][1], 7.0)


EMPTIES = (wkb_point(float("nan"), float("nan")), wkb_coords(2, []))


def delete_empties(path: str, geoms: List[Optional[bytes]]) -> None:
    """Deletes the rows of empty geometries, on which pylance 14's spatial functions fail without an index ("geo
    crate does not support empty points"): neither index holds them, and the queries then scan without them."""
    empty = [i for i, g in enumerate(geoms) if g in EMPTIES]
    if empty:
        lance.dataset(path).delete(f"id IN ({', '.join(map(str, empty))})")


def random_table(r: random.Random, path: str, stable_row_ids: bool) -> List[Optional[bytes]]:
    n = r.choice([30, 200, 700])
    geoms = [random_geometry(r) for _ in range(n)]
    shutil.rmtree(path, ignore_errors=True)
    ds = lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "g": pa.array(geoms, pa.binary())}),
                             path, max_rows_per_file=r.choice([25, 100, 1000]), enable_stable_row_ids=stable_row_ids)
    ds.delete(f"id % {r.choice([7, 11, 50])} = 3")
    return geoms


def query_box(r: random.Random) -> str:
    x0, y0 = r.uniform(-190, 170), r.uniform(-95, 80)
    x1, y1 = x0 + r.uniform(0, 80), y0 + r.uniform(0, 40)
    return f"st_geomfromtext('POLYGON(({x0} {y0}, {x1} {y0}, {x1} {y1}, {x0} {y1}, {x0} {y0}))')"


def ids(path: str, where: str, use_index: bool = True) -> List[int]:
    return sorted(lance.dataset(path).to_table(columns=["id"], filter=where,
                                               use_scalar_index=use_index).column("id").to_pylist())


def index_dir(path: str, name: str) -> Path:
    [uuid] = [i["uuid"] for i in lance.dataset(path).list_indices() if i["name"] == name]
    return Path(path) / "_indices" / uuid


def same_as_pylance(ours: str, twin: str, name: str, context: str) -> bool:
    """Index `name` of `ours` holds what pylance's of `twin` holds: the same leaves (box and row of every indexed row),
    the same schema with its field metadata and schema metadata (the `bbox` JSON text too), the same null rows and
    index version. Whether the pages are pylance's row for row (the Hilbert order's ties may differ)."""
    a, b = (LanceFileReader(str(index_dir(p, name) / "page_data.lance")).read_all().to_table() for p in (ours, twin))
    assert a.schema.equals(b.schema, check_metadata=True), f"{context}: schema {a.schema}, pylance's {b.schema}"
    items = int(a.schema.metadata[b"num_items"])
    leaves = sorted(map(str, a.slice(0, items).to_pylist()))
    assert leaves == sorted(map(str, b.slice(0, items).to_pylist())), f"{context}: other leaves than pylance's"
    n1, n2 = (LanceFileReader(str(index_dir(p, name) / "nulls.lance")).read_all().to_table() for p in (ours, twin))
    assert n1.schema.equals(n2.schema, check_metadata=True), context
    assert index_version(ours, name) == index_version(twin, name), context
    return a.equals(b)


@pytest.mark.parametrize("stable_row_ids", [False, True])
def test_spark_builds_pylance_reads(spark, wh, stable_row_ids):
    """Random WKB tables: pylance's spatial filters through Spark's index return what they return through its own."""
    r = random.Random(SEED + stable_row_ids)
    same_pages = 0
    for case in range(N):
        path, twin = str(wh / f"rt_{stable_row_ids}_{case}.lance"), str(wh / f"rt_twin_{stable_row_ids}_{case}.lance")
        geoms = random_table(r, path, stable_row_ids)
        shutil.rmtree(twin, ignore_errors=True)
        shutil.copytree(path, twin)
        page_size = r.choice([2, 3, 16, 4096])
        context = f"case {case} (SPARKLANCE_FUZZ_SEED={SEED}), {path}, page_size {page_size}"
        if r.random() < 0.5:
            spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX g_idx USING rtree (g) "
                      f"WITH (page_size = {page_size}, num_segments = 8)")
        else:
            made = LanceTable.for_path(spark, path).create_index("g", "rtree", name="g_idx", page_size=page_size)
            assert (made["name"], made["type"], made["columns"]) == ("g_idx", "RTREE", ["g"]), context
        lance.dataset(twin).create_scalar_index(
            "g", IndexConfig(index_type="rtree", parameters={"page_size": page_size}), name="g_idx")
        same_pages += same_as_pylance(path, twin, "g_idx", context)
        delete_empties(path, geoms)
        delete_empties(twin, geoms)
        ds = lance.dataset(path)
        ds.validate()
        [x] = [x for x in ds.describe_indices() if x.name == "g_idx"]
        assert (x.field_names, x.type_url) == (["g"], "/lance.index.pb.RTreeIndexDetails"), context
        assert [i["fragment_ids"] for i in ds.list_indices()] == [{f.fragment_id for f in ds.get_fragments()}], context
        for _ in range(8):
            box = query_box(r)
            for where in (f"st_intersects(g, {box})", f"st_within(g, {box})"):
                plan = ds.scanner(filter=where, columns=["id"]).explain_plan()
                assert "ScalarIndexQuery" in plan and "g_idx(RTree)" in plan, f"{context}: {plan}"
                expected = ids(path, where, use_index=False)
                assert ids(path, where) == ids(twin, where) == expected, f"{context}: {where}"
        assert ids(path, "g IS NULL") == ids(twin, "g IS NULL") == ids(path, "g IS NULL", use_index=False), context
    # Random boxes rarely share a Hilbert value: the pages are then pylance's row for row.
    assert same_pages == N, f"only {same_pages} of {N} indexes have pylance's pages row for row"


def test_spark_builds_on_geoarrow_points(spark, wh):
    """A struct of x, y marked geoarrow.point (as pylance writes one): Spark's index is pylance's, and answers alike."""
    r = random.Random(SEED + 7)
    path, twin = str(wh / "points.lance"), str(wh / "points_twin.lance")
    n = 500
    xs = [r.uniform(0, 100) for _ in range(n)]
    ys = [r.uniform(0, 100) for _ in range(n)]
    st = pa.StructArray.from_arrays([pa.array(xs), pa.array(ys)], names=["x", "y"],
                                    mask=pa.array([i % 13 == 0 for i in range(n)]))
    schema = pa.schema([pa.field("id", pa.int64()),
                        pa.field("geometry", st.type, metadata={b"ARROW:extension:name": b"geoarrow.point",
                                                                b"ARROW:extension:metadata": b"{}"})])
    for p in (path, twin):
        shutil.rmtree(p, ignore_errors=True)
        lance.write_dataset(pa.table({"id": pa.array(range(n), pa.int64()), "geometry": st}).cast(schema), p,
                            max_rows_per_file=200)
    spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX idx_geometry USING rtree (geometry) WITH (page_size = 64)")
    lance.dataset(twin).create_scalar_index(
        "geometry", IndexConfig(index_type="rtree", parameters={"page_size": 64}), name="idx_geometry")
    assert same_as_pylance(path, twin, "idx_geometry", "points"), "points: other pages than pylance's"
    lance.dataset(path).validate()
    for _ in range(10):
        x0, y0 = r.uniform(0, 90), r.uniform(0, 90)
        where = (f"st_intersects(geometry, st_geomfromtext('POLYGON(({x0} {y0}, {x0 + 10} {y0}, {x0 + 10} {y0 + 10}, "
                 f"{x0} {y0 + 10}, {x0} {y0}))'))")
        assert ids(path, where) == ids(twin, where) == ids(path, where, use_index=False), where
    # Spark reads the points as structs of doubles.
    assert spark.read.format("lance").load(path).where("geometry.x < 50").count() == sum(
        1 for i, x in enumerate(xs) if i % 13 and x < 50)


def test_nan_coordinates_are_bounded_as_pylance(spark, wh):
    """Random WKB points, lines and GeoArrow points with NaN coordinates: a NaN widens no box on its axis, so a point
    with one is not indexed and a line keeps its other points. Spark's leaves are pylance's, for both column kinds."""
    r = random.Random(SEED + 11)
    nan = float("nan")

    def coord():
        return nan if r.random() < 0.3 else r.uniform(-50, 50)

    n = 120
    pts = [(coord(), coord()) for _ in range(n)]
    lines = [wkb_coords(2, [(coord(), coord()) for _ in range(r.randint(1, 4))]) for _ in range(n)]
    st = pa.StructArray.from_arrays([pa.array([p[0] for p in pts]), pa.array([p[1] for p in pts])], names=["x", "y"])
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("g", pa.binary()),
                        pa.field("p", st.type, metadata={b"ARROW:extension:name": b"geoarrow.point",
                                                         b"ARROW:extension:metadata": b"{}"})])
    geoms = [wkb_point(*p) if i % 2 else lines[i] for i, p in enumerate(pts)]
    data = pa.table({"id": pa.array(range(n), pa.int64()), "g": pa.array(geoms, pa.binary()), "p": st}).cast(schema)
    path, twin = str(wh / "nan.lance"), str(wh / "nan_twin.lance")
    for p in (path, twin):
        shutil.rmtree(p, ignore_errors=True)
        lance.write_dataset(data, p, max_rows_per_file=50)
    for col in ("g", "p"):
        spark.sql(f"ALTER TABLE lance.`{path}` CREATE INDEX {col}_idx USING rtree ({col}) WITH (page_size = 8)")
        lance.dataset(twin).create_scalar_index(
            col, IndexConfig(index_type="rtree", parameters={"page_size": 8}), name=f"{col}_idx")
        same_as_pylance(path, twin, f"{col}_idx", f"NaN coordinates in {col} (SPARKLANCE_FUZZ_SEED={SEED})")
    lance.dataset(path).validate()


def test_refusals(spark, wh):
    """Columns that hold no geometry pylance reads, and bad options, are refused naming what to do."""
    path = str(wh / "refused.lance")
    shutil.rmtree(path, ignore_errors=True)
    st = pa.StructArray.from_arrays([pa.array([1.0]), pa.array([2.0])], names=["x", "y"])
    lance.write_dataset(pa.table({"id": [1], "xy": st, "g": pa.array([wkb_point(1, 2)], pa.binary())}), path)
    table = f"lance.`{path}`"
    with lance_raises(sparklance.UnsupportedFeatureError, match="without the field metadata ARROW:extension:name = "
                      "geoarrow.point.*Store the geometries as WKB in a BINARY column"):
        spark.sql(f"ALTER TABLE {table} CREATE INDEX x USING rtree (xy)")
    with lance_raises(sparklance.UnsupportedFeatureError, match="type Int\\(64, true\\) is not a geometry"):
        spark.sql(f"ALTER TABLE {table} CREATE INDEX x USING rtree (id)")
    with lance_raises(sparklance.InvalidArgumentError, match="page_size must be a whole number of at least 2.*not '1'"):
        spark.sql(f"ALTER TABLE {table} CREATE INDEX x USING rtree (g) WITH (page_size = 1)")
    with lance_raises(sparklance.InvalidArgumentError, match="Unknown option rows_per_zone for a RTREE index; it "
                      "takes: page_size"):
        spark.sql(f"ALTER TABLE {table} CREATE INDEX x USING rtree (g) WITH (rows_per_zone = 4)")
    bad = str(wh / "bad_wkb.lance")
    shutil.rmtree(bad, ignore_errors=True)
    lance.write_dataset(pa.table({"id": [1, 2], "g": pa.array([wkb_point(1, 2), b"\x01\x01\x00"], pa.binary())}), bad)
    with lance_raises(sparklance.InvalidArgumentError, match="value at row 1 of fragment 0 is not a WKB geometry"):
        spark.sql(f"ALTER TABLE lance.`{bad}` CREATE INDEX x USING rtree (g)")
    assert lance.dataset(path).list_indices() == [] and lance.dataset(bad).list_indices() == []


def test_pylance_index_survives_spark_writes_and_compaction(spark, wh):
    """pylance's RTREE index is kept through Spark's appends, deletes and compaction and still answers pylance's
    filters; Spark's OPTIMIZE INDEX then covers every fragment, and the answers stay the same."""
    r = random.Random(SEED + 11)
    path = str(wh / "pylance_rtree.lance")
    geoms = random_table(r, path, stable_row_ids=False)
    delete_empties(path, geoms)
    lance.dataset(path).create_scalar_index("g", "RTREE")
    n = len(geoms)
    rows = [(n + i, random_geometry(r)) for i in range(60)]
    rows = [(i, None if g in EMPTIES else g) for i, g in rows]
    df = spark.createDataFrame([(i, bytearray(g) if g is not None else None) for i, g in rows], "id BIGINT, g BINARY")
    df.write.format("lance").mode("append").save(path)
    spark.sql(f"DELETE FROM lance.`{path}` WHERE id % 9 = 4")
    boxes = [query_box(r) for _ in range(6)]

    def check(context):
        ds = lance.dataset(path)
        ds.validate()
        [index] = ds.list_indices()
        assert index["name"] == "g_idx", context
        # pylance searches the index when it covers a fragment of the version; the others are scanned.
        used = bool(index["fragment_ids"] & {f.fragment_id for f in ds.get_fragments()})
        for box in boxes:
            where = f"st_intersects(g, {box})"
            assert ("g_idx(RTree)" in ds.scanner(filter=where, columns=["id"]).explain_plan()) == used, context
            assert ids(path, where) == ids(path, where, use_index=False), f"{context}: {where}"
        assert ids(path, "g IS NULL") == ids(path, "g IS NULL", use_index=False), context

    check("after Spark's append and delete")
    twin = str(wh / "pylance_rtree_twin.lance")
    shutil.rmtree(twin, ignore_errors=True)
    shutil.copytree(path, twin)
    spark.sql(f"OPTIMIZE lance.`{path}` WITH (target_rows_per_fragment = 300)")
    lance.dataset(twin).optimize.compact_files(target_rows_per_fragment=300)
    check("after Spark's compaction")
    # Kept as pylance's compaction keeps it: the same fragments covered, none of them rewritten.
    [ours], [theirs] = lance.dataset(path).list_indices(), lance.dataset(twin).list_indices()
    assert (ours["uuid"], ours["fragment_ids"]) == (theirs["uuid"], theirs["fragment_ids"])
    spark.sql(f"ALTER TABLE lance.`{path}` OPTIMIZE INDEX g_idx")
    ds = lance.dataset(path)
    assert [i["fragment_ids"] for i in ds.list_indices()] == [{f.fragment_id for f in ds.get_fragments()}]
    check("after Spark's OPTIMIZE INDEX")
