"""Small pylance-written tables for the damage fuzzer: a spread of types with nulls, several versions, deletion
files of both kinds (Arrow arrays and roaring bitmaps), at file versions 2.0, 2.1 and 2.2.

``RECIPES`` names each table; ``build(recipe, path)`` writes it with pylance. A recipe name is enough to rebuild a
table, so a failing mutant's reproducer names the recipe.
"""

from __future__ import annotations

from typing import Callable, Dict, List

import lance
import pyarrow as pa

VERSIONS = ("2.0", "2.1", "2.2")


def _mixed(start: int, n: int, null_structs: bool) -> pa.Table:
    """Ints, strings, a list, a struct and a fixed-size list, each with nulls (file version 2.0 cannot store null
    structs, only null children)."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i32": pa.array([None if i % 5 == 0 else i * 3 - 7 for i in ids], pa.int32()),
        "s": pa.array([None if i % 7 == 3 else f"s{i}-" + "x" * (i % 11) for i in ids], pa.string()),
        "l": pa.array([None if i % 6 == 1 else [i + k for k in range(i % 4)] for i in ids], pa.list_(pa.int32())),
        "st": pa.array([None if null_structs and i % 9 == 2 else {"a": i, "b": None if i % 4 == 0 else f"b{i}"} for i in ids],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "fsl": pa.array([None if i % 8 == 5 else [float(i), i / 2.0, -1.0 * i] for i in ids],
                        pa.list_(pa.float32(), 3)),
    })


def _strings(start: int, n: int) -> pa.Table:
    """Low-cardinality strings (dictionary pages), lists of strings and a constant column."""
    ids = list(range(start, start + n))
    return pa.table({
        "id": pa.array(ids, pa.int32()),
        "kind": pa.array(["alpha", "beta", "gamma", None][i % 4] for i in ids),
        "tags": pa.array([None if i % 10 == 0 else [f"t{(i + k) % 3}" for k in range(i % 3)] for i in ids],
                         pa.list_(pa.string())),
        "k": pa.array([7] * n, pa.int64()),
    })


def _write(path: str, table: pa.Table, version: str, mode: str = "create", **kw) -> None:
    lance.write_dataset(table, path, mode=mode, data_storage_version=version, **kw)


def _mixed_recipe(version: str) -> Callable[[str], None]:
    def build(path: str) -> None:
        nulls = version != "2.0"
        _write(path, _mixed(0, 40, nulls), version)
        _write(path, _mixed(40, 30, nulls), version, mode="append")
        lance.dataset(path).delete("id % 7 = 0")
        _write(path, _mixed(70, 25, nulls), version, mode="append")
    return build


def _strings_recipe(version: str) -> Callable[[str], None]:
    def build(path: str) -> None:
        _write(path, _strings(0, 60), version, max_rows_per_file=30)
        lance.dataset(path).delete("id = 3 OR id = 44")
    return build


def _bitmap_recipe(version: str) -> Callable[[str], None]:
    """A fragment with enough deletions that pylance stores them as a roaring bitmap (`.bin`)."""
    def build(path: str) -> None:
        n = 12000
        _write(path, pa.table({"id": pa.array(range(n), pa.int64()),
                               "v": pa.array([None if i % 13 == 0 else i % 97 for i in range(n)], pa.int16())}),
               version)
        lance.dataset(path).delete("id % 2 = 1")
    return build


RECIPES: Dict[str, Callable[[str], None]] = {}
for _v in VERSIONS:
    RECIPES[f"mixed-{_v}"] = _mixed_recipe(_v)
    RECIPES[f"strings-{_v}"] = _strings_recipe(_v)
RECIPES["bitmap-2.1"] = _bitmap_recipe("2.1")


def build(recipe: str, path: str) -> None:
    RECIPES[recipe](path)


def recipe_names() -> List[str]:
    return sorted(RECIPES)
