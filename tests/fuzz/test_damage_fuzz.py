"""Damage fuzzer: one file of a small pylance-written table is mutated (bit flips, byte overwrites, truncation,
huge 8-byte integers in metadata regions, protobuf-aware changes to manifests) and the whole table is read by the
JVM core (`io.sparklance.cli.ReadTable`) and by pylance.

For each mutant:
- both read: the values must be identical;
- pylance errors and the JVM reads: the values must be those of the undamaged table (a harmless mutation);
- the JVM errors: with a `LANCE_*` error class whose message names the damaged file (or, for a manifest, the
  table); never an internal error, a hang (each table read is bounded by a timeout) or an out-of-memory error
  (the JVM runs with a small heap).
- the JVM errors and pylance reads: the error must be one of the checks in `STRICTER`, which lists the damage we
  reject on purpose and pylance reads; anything else is to be classified (a valid file we refuse is a bug).
A sample of the mutants the JVM rejects is then read through Spark from Python: the exception must be the
`sparklance` class of the JVM's error class.

`SPARKLANCE_FUZZ_SEED` and `SPARKLANCE_DAMAGE_N` (else `SPARKLANCE_FUZZ_N`) set the seed and the number of mutants
(default: a fixed seed and a budget that keeps this module near a minute; `make fuzz` runs `DAMAGE`, 5000). The counts per file kind and outcome are printed (`pytest -s`).
Failing mutants are reported with a reproducer: seed, index, recipe, file and mutation.
"""

from __future__ import annotations

import collections
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Tuple

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "python"))
import damage_mutations  # noqa: E402
import damage_tables  # noqa: E402
from sparklance._jvm import java_command  # noqa: E402

SEED = int(os.environ.get("SPARKLANCE_FUZZ_SEED", "20261123"))
N = int(os.environ.get("SPARKLANCE_DAMAGE_N", os.environ.get("SPARKLANCE_FUZZ_N", "1000")))
TABLE_TIMEOUT_S = 60
SPARK_SAMPLE = 5
# Which file of a table a mutant damages, and how often.
KINDS = (("data", 0.4), ("manifest", 0.35), ("deletion", 0.2), ("transaction", 0.05))


def _files_of(table: Path, kind: str) -> List[Path]:
    """A table's files of one kind, in an order that does not depend on the random parts of their names (so a seed
    picks the same file in every build of the table): fragment order for data and deletion files, newest first
    for manifests, version order for transaction files."""
    if kind in ("data", "deletion"):
        fragments = lance.dataset(str(table)).get_fragments()
        if kind == "data":
            return [table / "data" / f.path for frag in fragments for f in frag.metadata.files]
        return [table / "_deletions" / Path(frag.metadata.deletion_file.path(frag.fragment_id, str(table))).name
                for frag in fragments if frag.metadata.deletion_file is not None]
    sub = "_versions" if kind == "manifest" else "_transactions"
    files = sorted((p for p in (table / sub).iterdir() if p.suffix in (".manifest", ".txn")),
                   key=lambda p: int(p.name.split("-")[0].split(".")[0]))
    if kind == "manifest":
        # V2 naming: the latest version has the smallest name; it is the one a read uses, so damage it most often.
        files = [files[0]] * 3 + files[1:]
    return files


class Mutant:
    def __init__(self, index: int, recipe: str, kind: str, file_index: int, file: str, what: tuple, path: Path):
        self.index, self.recipe, self.kind, self.file, self.what, self.path = index, recipe, kind, file, what, path
        self.file_index = file_index

    def reproducer(self) -> str:
        return (f"SPARKLANCE_FUZZ_SEED={SEED} mutant #{self.index}: recipe {self.recipe}, {self.kind} file "
                f"#{self.file_index} {self.file}: {self.what!r} (table copy at {self.path})")


def _make_mutants(pristine: Dict[str, Path], base: Path) -> List[Mutant]:
    rnd = random.Random(SEED)
    mutants = []
    recipes = sorted(pristine)
    for index in range(N):
        recipe = rnd.choice(recipes)
        kind = rnd.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
        files = _files_of(pristine[recipe], kind)
        file_index = rnd.randrange(len(files))
        target = files[file_index]
        data = target.read_bytes()
        mutated = None
        if kind == "manifest" and rnd.random() < 0.5:
            mutated = damage_mutations.manifest_proto(data, rnd)
        if mutated is None:
            mutated = damage_mutations.raw(data, rnd, tail_bias=kind in ("data", "deletion", "manifest"))
        path = base / f"m{index:05d}"
        shutil.copytree(pristine[recipe], path)
        rel = target.relative_to(pristine[recipe])
        (path / rel).write_bytes(mutated[0])
        mutants.append(Mutant(index, recipe, kind, file_index, str(rel), mutated[1], path))
    return mutants


def _run_bounded(command, pairs: List[Tuple[str, str]], timeout_s: float) -> Dict[str, str]:
    """Runs a reader (`command + [TABLE OUT ...]`, printing `READ TABLE` before each) over every pair, restarting it
    after a table that hangs or kills it. Returns {table: "hang" | "died: ..."} for those tables."""
    trouble: Dict[str, str] = {}
    rest = list(pairs)
    while rest:
        proc = subprocess.Popen(command + [x for pair in rest for x in pair], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace")
        state = {"current": None, "since": time.monotonic(), "done": 0}

        def follow():
            for line in proc.stdout:
                if line.startswith("READ "):
                    state["current"] = line[5:].rstrip("\n")
                    state["since"] = time.monotonic()
                    state["done"] += 1

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        while proc.poll() is None:
            if time.monotonic() - state["since"] > timeout_s:
                proc.kill()
                proc.wait()
                if state["current"] is not None:
                    trouble[state["current"]] = f"hang: no result within {timeout_s} s"
                break
            time.sleep(0.05)
        reader.join(timeout=5)
        err = proc.stderr.read()
        started = state["done"]
        if proc.returncode == 0:
            break
        if state["current"] is None:
            raise AssertionError(f"the reader {command[-1]} failed before reading a table: {err[-2000:]}")
        if state["current"] not in trouble:
            trouble[state["current"]] = f"died with exit code {proc.returncode}: {err[-1500:]}"
        rest = rest[started:]
    return trouble


def _read_ipc(path: str) -> pa.Table:
    with pa.memory_map(path) as src:
        return pa.ipc.open_file(src).read_all().combine_chunks()


def _result(out: str, trouble: Dict[str, str], table: str, who: str):
    if table in trouble:
        return "trouble", trouble[table]
    if os.path.exists(out + ".err"):
        return "error", open(out + ".err", encoding="utf-8", errors="replace").read()
    if os.path.exists(out):
        try:
            return "read", _read_ipc(out)
        except pa.ArrowException as e:  # arrays whose buffers do not fit together
            return ("error", f"PYLANCE: wrote invalid Arrow data: {e}") if who == "py" else \
                ("trouble", f"wrote invalid Arrow data: {e}")
    return "trouble", "neither rows nor an error were written"


def _equal_values(a, b) -> bool:
    """Python values compared with NaN equal to NaN (Arrow's `equals` treats NaN as unequal to itself)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal_values(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal_values(a[k], b[k]) for k in a)
    return a == b


def _same_column(g, w) -> bool:
    if g.type != w.type:
        return False
    if g.equals(w):
        return True
    try:
        return _equal_values(g.to_pylist(), w.to_pylist())
    except (UnicodeDecodeError, ValueError, OverflowError):
        return False


def _same(got: pa.Table, want: pa.Table) -> bool:
    if got.num_rows != want.num_rows or got.column_names != want.column_names:
        return False
    return all(_same_column(got.column(n), want.column(n)) for n in want.column_names)


def _differences(got: pa.Table, want: pa.Table) -> str:
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows instead of {want.num_rows}"
    for n in want.column_names:
        if n not in got.column_names:
            return f"column {n} missing"
        g, w = got.column(n), want.column(n)
        if g.type != w.type:
            return f"column {n}: type {g.type} instead of {w.type}"
        for i in range(len(w)):
            if not _same_column(g.slice(i, 1), w.slice(i, 1)):
                return f"column {n} row {i}: {_show(g, i)} instead of {_show(w, i)}"
    return "null layout differs"


def _show(column, i: int) -> str:
    try:
        return repr(column[i].as_py())
    except (UnicodeDecodeError, ValueError, OverflowError) as e:  # damaged strings or values
        return f"<{type(e).__name__}: {column.slice(i, 1).to_string()[:200]}>"


# Damage the JVM rejects and pylance reads: checks of ours that pylance does not make, each kept on purpose (the
# mutated file is not one a Lance writer writes, and the error names the file and what is wrong). A rejected mutant
# that pylance reads and that matches none of these fails the test, to be classified: a valid file we refuse is a
# reader bug. (Found at seeds 20261123, 20261312, 20261412, 20261414, 20261421, 20261501 and 20261502; pylance read the
# undamaged values unless said otherwise.)
STRICTER = (
    # The data file's own schema (type names, field names, ids): pylance reads a table with the manifest's schema
    # and does not check the file's.
    ("a data file's schema with a damaged logical type",
     re.compile(r"has logical type '.*', which (is not a well-formed Lance logical type|this version of sparklance)")),
    ("a data file's schema listing a field id twice", re.compile(r"the schema lists field id \d+ twice")),
    ("a data file's schema without a field the manifest says it holds",
     re.compile(r"the file has no field with id \d+ .*, which the manifest says it holds")),
    # Levels above what the field's nesting allows: pylance read the undamaged values, or other values (seed
    # 20261312 #231: a list became empty).
    ("a repetition or definition level above the maximum", re.compile(r"(repetition|definition) level \d+ where at most")),
    # The footer's column metadata offsets position: pylance does not check it against the global buffer table.
    ("a footer whose column offset table overlaps the global buffer table",
     re.compile(r"column offset entries at \d+ overlap the global buffer table")),
    # A 2.0 page's buffer shorter than its rows' values.
    ("a 2.0 page buffer shorter than its values", re.compile(r"needs \d+ bytes at offset \d+, but the buffer has \d+")),
    # Bytes of a deleted row's string (seed 20261312 #74: row 7 of mixed-2.1): we check a page's strings before
    # dropping deleted rows, pylance drops them unchecked.
    ("string bytes that are not UTF-8", re.compile(r"of the string data is not valid UTF-8")),
    # A manifest whose version field is not the version its file name says: pylance takes the name's.
    ("a manifest holding another version than its name", re.compile(r"holds version -?\d+, not \d+ as its name says")),
    # A field name that is empty or holds control characters, in a manifest (pylance then read other values, seed
    # 20261412 #593) or in a data file's own schema (pylance read the undamaged values).
    ("a field name empty or with control characters", re.compile(r"has the name '.*' \(empty or with control characters\)")),
    # An Arrow deletion file whose batch header says a row is null (seed 20261414 #682): pylance reads the values
    # buffer and ignores validity.
    ("a deletion file with a null row", re.compile(r"row \d+ of the deletion file is null")),
    # A manifest without its magic bytes: pylance read the undamaged values.
    ("a manifest without its magic bytes", re.compile(r"does not end with the magic bytes")),
    # Manifests and data files pylance reads with other values than the undamaged table's (seeds 20261312 #336,
    # 20261123 #194, #329, #627) or fails to read in other ways (20261123 #322).
    ("a field id listed twice for a data file", re.compile(r"lists a field id twice")),
    ("field ids and column indices that do not pair up", re.compile(r"lists \d+ field ids but \d+ column indices")),
    ("list offsets going backwards or past the page's items", re.compile(r"ends at item \d+, outside")),
    ("a data file holding other rows than the manifest says", re.compile(r"it holds \d+ rows, but the manifest of version")),
    ("a deletion file deleting other rows than the manifest says",
     re.compile(r"it deletes \d+ rows, but the manifest of version \d+ records")),
    # A manifest whose physical_rows for a fragment is below a row its deletion file deletes (seed 20261421 #2960 of
    # session 20's build: 12000 flipped to 11872): pylance read 5936 rows instead of the undamaged 6000.
    ("a deletion file deleting a row past the fragment's physical rows",
     re.compile(r"it deletes row offset \d+, but the fragment has only \d+ rows \(physical_rows in the manifest\)")),
    # A manifest field whose wire type its number never has (seed 20261421 #1730 of session 21's build: a fragment's
    # physical_rows key, field 4, flipped to field 6, external_row_ids, a message): pylance reads the fragment as one
    # without physical_rows and counts its rows from the data file.
    ("a manifest field with a wire type its number never has",
     re.compile(r"the manifest protobuf holds field [\w.]+ with the wrong wire type")),
    # A data file's own schema with a top-level name holding '.' (seed 20261421 #543): Lance's writers refuse such
    # names (lance-core `Schema::validate`); pylance reads a data file with the manifest's schema. (A manifest with
    # such a name pylance cannot read: "No field named".)
    ("a data file's schema with a top-level name containing '.'",
     re.compile(r"\.lance: top-level field id \d+ has the name '.*', but top-level names cannot contain '\.'")),
    # A mini-block page whose layout's num_items is not the page's row count (seed 20261421 #2813: 12000 flipped to
    # 12002): pylance decodes the page's rows and ignores the difference.
    ("a page layout holding other items than the page's rows",
     re.compile(r"its layout holds \d+ items \(num_items\), but the page's length is \d+ rows")),
    # A data file's own schema damaged where pylance, reading with the manifest's schema, does not look: a struct
    # child's id (seed 20261501 #262: 'st.b' of a 2.0 file), a list's item moved under another parent (seed 20261502
    # #1633: 'tags' with no child).
    ("a data file's schema without a struct child the manifest says it holds",
     re.compile(r"its schema has no field with id \d+ \('.*'\), which the table's manifest says the file holds")),
    ("a data file's schema with a field whose children do not fit its type",
     re.compile(r"\.lance: field '.*' \(id \d+\) of type '.*' has \d+ child field\(s\)")),
    # Footer and page positions pylance does not use: the column metadata offset table's position (seed 20261502
    # #624: its top bit flipped, negative), a mini-block page's chunk buffer size (seed 20261501 #631: 10568 bytes
    # past the end of the file; pylance finds each chunk from the chunk metadata and the buffer's offset).
    ("a footer whose column metadata offset table lies before the column metadata",
     re.compile(r"its column metadata starts at \d+, after the column metadata offset table at -?\d+")),
    ("a page buffer reaching past the end of the file",
     re.compile(r"buffer \d+ of page \d+ of column \d+ at \d+ \(\+\d+ bytes\) lies outside the file of \d+ bytes")),
    # Two fragments with one id (seeds 20261501 #772, 20261502 #798: the third fragment's id dropped, so 0):
    # pylance read 72 rows instead of the undamaged 85.
    ("two fragments with one id", re.compile(r"fragment ids repeat: \d+")),
    # Arrow deletion files whose record batch metadata is not valid Arrow, which pyarrow refuses ("Invalid
    # flatbuffers message") and pylance reads: a buffer count flipped from 2 to 10, the extra entries past the
    # message (seed 20261421 #424; pylance uses the first two); a negative null count (#1344; pylance takes nulls
    # from the validity bitmap); the compression table's offset flipped into the batch body (#2887; arrow-rs reads
    # metadata and body as one buffer and finds a codec there, and pylance's buffers are stored uncompressed).
    ("an Arrow deletion file's batch listing other than 2 buffers",
     re.compile(r"record batch \d+ of its Arrow IPC data lists \d+ column\(s\) and \d+ buffers; a deletion file's")),
    ("an Arrow deletion file's batch with a negative or too large null count",
     re.compile(r"record batch \d+ of its Arrow IPC data has a column of \d+ rows with -?\d+ nulls")),
    ("an Arrow deletion file's batch metadata pointing outside its message",
     re.compile(r"record batch \d+ of its Arrow IPC data has metadata with an offset that points outside its message")),
)


def stricter_check(message: str):
    """The name of the STRICTER check a JVM error message is, or None."""
    return next((name for name, pattern in STRICTER if pattern.search(message)), None)


def jvm_reader() -> List[str]:
    cmd = java_command("io.sparklance.cli.ReadTable", [])
    cmd.insert(1, "-Xmx192m")
    cmd.insert(1, "-XX:MaxDirectMemorySize=192m")
    return cmd


def pylance_reader() -> List[str]:
    return [sys.executable, str(HERE / "damage_pylance_reader.py")]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    base = tmp_path_factory.mktemp("damage_pristine")
    tables = {}
    for recipe in damage_tables.recipe_names():
        damage_tables.build(recipe, str(base / recipe))
        tables[recipe] = base / recipe
    return tables


@pytest.fixture(scope="module")
def outcomes(pristine, tmp_path_factory):
    """Reads the undamaged tables and every mutant with both readers; returns (expected values, mutants, results)."""
    from conftest import JAR, require_jar
    require_jar()
    os.environ["SPARKLANCE_JAR"] = str(JAR)
    base = tmp_path_factory.mktemp("damage_mutants")
    mutants = _make_mutants(pristine, base / "tables")
    (base / "jvm").mkdir()
    (base / "py").mkdir()
    names = {str(p): f"pristine-{r}" for r, p in pristine.items()}
    names.update({str(m.path): m.path.name for m in mutants})
    results = {}
    for who, command in (("jvm", jvm_reader()), ("py", pylance_reader())):
        pairs = [(t, str(base / who / f"{n}.arrow")) for t, n in names.items()]
        trouble = _run_bounded(command, pairs, TABLE_TIMEOUT_S)
        results[who] = {t: _result(out, trouble, t, who) for t, out in pairs}
    return pristine, mutants, results


def test_undamaged_tables_read_the_same(outcomes):
    pristine, _, results = outcomes
    for recipe, path in pristine.items():
        (jk, jv), (pk, pv) = results["jvm"][str(path)], results["py"][str(path)]
        assert pk == "read", f"pylance cannot read {recipe}: {pv}"
        assert jk == "read", f"the JVM cannot read undamaged {recipe}: {jv}"
        assert _same(jv, pv), f"{recipe}: {_differences(jv, pv)}"


def _judge(m: Mutant, jvm, py, expected: pa.Table) -> Tuple[str, str]:
    """(outcome, failure or "") for one mutant."""
    (jk, jv), (pk, pv) = jvm, py
    if jk == "trouble":
        return "jvm hang or crash", jv
    if jk == "error":
        cls = jv.split(":", 1)[0]
        if not cls.startswith("LANCE_") or cls == "LANCE_INTERNAL_ERROR":
            return "jvm non-lance error", jv[:1500]
        named = os.path.basename(m.file) if m.kind in ("data", "deletion") else m.path.name
        if named not in jv:
            return f"jvm {cls}", f"the message does not name {named}: {jv[:600]}"
        return f"jvm {cls}" + (" (pylance reads)" if pk == "read" else ""), ""
    if pk == "read":
        return ("both read, same", "") if _same(jv, pv) else ("both read, different", _differences(jv, pv))
    if _same(jv, expected):
        return "pylance errors, jvm reads undamaged values", ""
    return "pylance errors, jvm reads different values", f"{_differences(jv, expected)}; pylance: {str(pv)[:300]}"


def test_damaged_tables_are_read_identically_or_rejected(outcomes):
    pristine, mutants, results = outcomes
    counts: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures = []
    stricter: collections.Counter = collections.Counter()
    for m in mutants:
        expected = results["py"][str(pristine[m.recipe])][1]
        outcome, failure = _judge(m, results["jvm"][str(m.path)], results["py"][str(m.path)], expected)
        counts[m.kind][outcome] += 1
        if not failure and outcome.endswith("(pylance reads)"):
            message = results["jvm"][str(m.path)][1]
            check = stricter_check(message)
            if check is None:
                failure = f"pylance reads it and the error is none of STRICTER's checks: classify it: {message[:600]}"
            else:
                stricter[check] += 1
        if failure:
            failures.append(f"{m.reproducer()}\n    {outcome}: {failure}")
    summary = "\n".join(f"  {kind}: " + ", ".join(f"{o}: {c}" for o, c in sorted(cnt.items()))
                        for kind, cnt in sorted(counts.items()))
    print(f"\ndamage fuzz, seed {SEED}, {len(mutants)} mutants:\n{summary}")
    if stricter:
        print("rejected by the JVM, read by pylance: " + ", ".join(f"{c}: {n}" for c, n in sorted(stricter.items())))
    assert not failures, f"{len(failures)} of {len(mutants)} mutants failed:\n" + "\n".join(failures)
    rejected = sum(c for cnt in counts.values() for o, c in cnt.items() if o.startswith("jvm LANCE"))
    assert rejected > len(mutants) // 5, f"most damage must be detected:\n{summary}"


def test_spark_raises_the_sparklance_class(outcomes, tmp_path_factory):
    """A sample of rejected mutants read through Spark: the Python exception is the class of the JVM error."""
    from conftest import start_spark
    import sparklance
    from sparklance.errors import BY_CLASS, translated

    _, mutants, results = outcomes
    rejected = [(m, results["jvm"][str(m.path)][1].split(":", 1)[0]) for m in mutants
                if results["jvm"][str(m.path)][0] == "error"]
    by_kind = collections.defaultdict(list)
    for m, cls in rejected:
        by_kind[m.kind].append((m, cls))
    sample = [pairs[i] for i in range(SPARK_SAMPLE) for pairs in by_kind.values() if i < len(pairs)][:SPARK_SAMPLE]
    assert sample, "no rejected mutant to read through Spark"
    spark = start_spark("damage-fuzz", tmp_path_factory.mktemp("damage_wh"))
    try:
        for m, cls in sample:
            with pytest.raises(sparklance.LanceError) as raised:
                with translated():
                    spark.read.format("lance").load(str(m.path)).collect()
            assert type(raised.value) is BY_CLASS[cls], f"{m.reproducer()}: {type(raised.value).__name__} for {cls}"
            assert raised.value.error_class == cls
    finally:
        spark.stop()
