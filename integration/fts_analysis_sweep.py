"""Where the JVM's text analysis (jvm/core FtsTokenizer) and pylance 14's differ, character by character, and the
generator of the JVM's character tables (jvm/core FtsCharacters.java) from pylance 14.

Every code point c (U+0080 to U+10FFFF, surrogates and ASCII aside) is written as the one-token text
``q<six letters a-p: the row number in hex>x<c>``: the ASCII marker survives every filter (lower-case, ASCII
folding) and names the row, so the token set of pylance's dictionary alone (read with jvm/core InvertedIndex) says
what pylance made of c. pylance builds INVERTED indexes (stem=False, stop words kept) with the settings of ANALYSES; the JVM analyses
the same texts with each index's own parameters, and every token must be the same.

  python integration/fts_analysis_sweep.py OUT_DIR          sweep every code point, print the differences per
                                                           analysis and write them to OUT_DIR/differences.json
  python integration/fts_analysis_sweep.py OUT_DIR --write  regenerate FtsCharacters.java from pylance's answers
                                                           (simple without lower-case or folding: which code points
                                                           are alphanumeric; whitespace with lower-case only, then
                                                           with folding only: each code point's mappings)

tests/test_fts_characters.py runs the sweep over a seeded sample (all code points in `make fuzz`).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))

TABLES = ROOT / "jvm/core/src/main/java/io/sparklance/core/index/FtsCharacters.java"
HEX = "abcdefghijklmnop"

# The analyses compared: the three that isolate one rule each, and pylance's defaults on both base tokenizers.
ANALYSES = {
    "split": dict(lower_case=False, ascii_folding=False),
    "lower": dict(base_tokenizer="whitespace", ascii_folding=False),
    "fold": dict(base_tokenizer="whitespace", lower_case=False),
    "simple_default": dict(),
    "whitespace_default": dict(base_tokenizer="whitespace"),
}


def all_code_points() -> List[int]:
    return [c for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000]


def marker(row: int) -> str:
    return "q" + "".join(HEX[(row >> s) & 15] for s in (20, 16, 12, 8, 4, 0)) + "x"


def unmarked(token: str) -> Tuple[int, str]:
    """The row a token's marker names, and what follows the marker (what the analysis made of the row's text)."""
    c = 0
    for ch in token[1:7]:
        c = c * 16 + HEX.index(ch)
    return c, token[8:]


def analyses(spark, out: Path, strings: List[str], names: Iterable[str] = ANALYSES) -> Dict[str, Tuple[Dict[int, str], Dict[int, str]]]:
    """For each analysis: (pylance's, the JVM's) analysis of every string, by its index in `strings`. Each string
    is one row's text after its marker; one without a line feed, ASCII whitespace or (for the simple tokenizer) a
    separator gives the row one token."""
    import lance
    import pyarrow as pa
    from py4j.java_gateway import get_field

    jvm = spark._jvm
    texts = [marker(i) + s for i, s in enumerate(strings)]
    path = out / "characters.lance"
    shutil.rmtree(path, ignore_errors=True)
    ds = lance.write_dataset(pa.table({"text": texts}), str(path), max_rows_per_file=len(texts) + 1)
    result = {}

    def rows(tokens) -> Dict[int, str]:
        """Each marked token by its row; the tokens without a marker (after a separator), as one set, under -1."""
        out: Dict[int, str] = {}
        others = set()
        for t in jvm.scala.collection.immutable.ArraySeq.unsafeWrapArray(tokens).mkString("\n").split("\n"):
            if len(t) >= 8 and t[0] == "q" and t[7] == "x" and all(ch in HEX for ch in t[1:7]):
                row, rest = unmarked(t)
                out[row] = rest
            else:
                others.add(t)
        if others:
            out[-1] = " ".join(sorted(others))
        return out

    for name in names:
        ds.create_scalar_index("text", "INVERTED", replace=True, stem=False, remove_stop_words=False, **ANALYSES[name])
        ds = lance.dataset(str(path))
        uuid = ds.list_indices()[0]["uuid"]
        index = jvm.io.sparklance.core.index.InvertedIndex.open(jvm.io.sparklance.core.storage.HadoopStorage(),
                                                                str(path / "_indices" / uuid), "characters")
        theirs: Dict[int, str] = {}
        for p in range(index.partitions().size()):
            theirs.update(rows(index.partitions().apply(p).tokensById()))
        # The rows' texts, one a line, as one text per 20,000 rows: line feeds split tokens under both base tokenizers.
        tokenizer = index.params().tokenizer()
        ours: Dict[int, str] = {}
        for at in range(0, len(texts), 20_000):
            ours.update(rows(get_field(tokenizer.tokenize("\n".join(texts[at:at + 20_000])), "texts")))
        result[name] = (theirs, ours)
    return result


def differences(strings: List[str], results) -> Dict[str, List[list]]:
    """[code points, text, pylance's token after the marker, the JVM's] where they differ, per analysis."""
    out = {}
    for name, (theirs, ours) in results.items():
        out[name] = [[" ".join(f"{ord(ch):x}" for ch in strings[i]) if i >= 0 else "tokens after a separator",
                      strings[i] if i >= 0 else "", theirs.get(i), ours.get(i)]
                     for i in sorted(set(theirs) | set(ours)) if theirs.get(i) != ours.get(i)]
    return out


def ranges(code_points: Iterable[int]) -> List[Tuple[int, int]]:
    out: List[List[int]] = []
    for c in sorted(code_points):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def range_text(a: int, b: int) -> str:
    return f"{a:x}" if a == b else f"{a:x}-{b:x}"


def lower_case_runs(lower: Dict[int, str]) -> List[str]:
    """Runs of code points mapped to one code point each at a constant distance, with a stride of 1 or 2
    (`start-end:delta` or `start-end/2:delta`, in hex); a mapping to several code points as `c=x,y`."""
    single = {c: ord(v) - c for c, v in lower.items() if len(v) == 1}
    out = []
    todo = sorted(single)
    done = set()
    for c in todo:
        if c in done:
            continue
        best = [c]
        for stride in (1, 2):
            run = [c]
            while run[-1] + stride in single and run[-1] + stride not in done and single[run[-1] + stride] == single[c]:
                run.append(run[-1] + stride)
            if len(run) > len(best):
                best = run
        done.update(best)
        stride = 1 if len(best) == 1 else best[1] - best[0]
        delta = single[c]
        d = f"-{-delta:x}" if delta < 0 else f"{delta:x}"
        out.append(f"{range_text(best[0], best[-1])}{'/2' if stride == 2 else ''}:{d}")
    for c, v in sorted(lower.items()):
        if len(v) != 1:
            out.append(f"{c:x}=" + ",".join(f"{ord(x):x}" for x in v))
    return out


def java_string(parts: List[str], indent: str = "      ") -> str:
    lines, line = [], ""
    for p in parts:
        if len(line) + len(p) + 1 > 100:
            lines.append(line)
            line = ""
        line += p + " "
    lines.append(line)
    return (" +\n" + indent).join('"' + l + '"' for l in lines if l)


def java_literal(s: str) -> str:
    return '"' + "".join(ch if 0x20 <= ord(ch) < 0x7F and ch not in '"\\' else f"\\u{ord(ch):04x}" if ch != '"' else '\\"'
                         for ch in s).replace("\\u005c", "\\\\") + '"'


def write_tables(code_points: List[int], results) -> None:
    split, lower, fold = ({code_points[i]: v for i, v in results[name][0].items()} for name in ("split", "lower", "fold"))
    alphanumeric = [c for c, v in split.items() if v == chr(c)]
    odd = [c for c, v in split.items() if v not in ("", chr(c))]
    assert not odd, f"the simple tokenizer changed {odd[:5]} without lower-case or folding"
    lowers = {c: v for c, v in lower.items() if v != chr(c)}
    folds: Dict[str, List[int]] = {}
    for c, v in fold.items():
        if v != chr(c):
            assert v.isascii(), (hex(c), v)
            folds.setdefault(v, []).append(c)
    fold_entries = [f"      {java_literal(t)}, {java_string([range_text(a, b) for a, b in ranges(cs)], ' ' * 8)},"
                    for t, cs in sorted(folds.items(), key=lambda kv: min(kv[1]))]
    source = TEMPLATE.format(
        alphanumeric=java_string([range_text(a, b) for a, b in ranges(alphanumeric)]),
        lower=java_string(lower_case_runs(lowers)),
        folds="\n".join(fold_entries),
        n_alphanumeric=len(alphanumeric), n_lower=len(lowers), n_fold=sum(len(v) for v in folds.values()))
    TABLES.write_text(source)
    print(f"wrote {TABLES}: {len(alphanumeric)} alphanumeric code points, {len(lowers)} lower-case mappings, "
          f"{sum(len(v) for v in folds.values())} foldings")


TEMPLATE = '''package io.sparklance.core.index;

// GENERATED by integration/fts_analysis_sweep.py --write from pylance 14's indexes; do not edit by hand.

import java.util.Arrays;

/**
 * The character facts of pylance 14's text analysis (tantivy 0.24 built with Rust's Unicode 17 tables), as tables
 * that do not depend on the JVM's Unicode version: which code points the simple tokenizer keeps in tokens (Rust's
 * {{@code char::is_alphanumeric}}), each code point's lower case (Rust's {{@code char::to_lowercase}}) and its ASCII
 * folding (tantivy's {{@code AsciiFoldingFilter}} table). Generated from what pylance 14 indexes of every code point
 * U+0080 to U+10FFFF ({n_alphanumeric} alphanumeric, {n_lower} lower-case mappings, {n_fold} foldings);
 * tests/test_fts_characters.py checks the JVM's analysis against pylance's. ASCII is not in the tables.
 */
final class FtsCharacters {{
  private FtsCharacters() {{}}

  /** Ranges of alphanumeric code points, in hex: {{@code first-last}} or one code point. */
  private static final String ALPHANUMERIC =
      {alphanumeric};

  /**
   * Lower-case mappings: {{@code first-last:delta}} maps each code point of the range to itself plus delta (hex,
   * maybe negative), {{@code first-last/2:delta}} every second one from first; {{@code c=x,y}} maps c to several.
   */
  private static final String LOWER_CASE =
      {lower};

  /** ASCII foldings: each string, then the ranges of code points folded to it. */
  private static final String[] FOLDING = {{
{folds}
  }};

  /** A sorted table of code points and what each maps to. */
  private static final class Table {{
    final int[] from;
    final String[] to;

    Table(int[] from, String[] to) {{
      this.from = from;
      this.to = to;
    }}

    String of(int cp) {{
      int i = Arrays.binarySearch(from, cp);
      return i >= 0 ? to[i] : null;
    }}

    /** The table of the mappings {{@code entries[i] = code point << 32 | i}} to {{@code targets[i]}}. */
    static Table sorted(long[] entries, String[] targets, int n) {{
      long[] sorted = Arrays.copyOf(entries, n);
      Arrays.sort(sorted);
      int[] from = new int[n];
      String[] to = new String[n];
      for (int i = 0; i < n; i++) {{
        from[i] = (int) (sorted[i] >>> 32);
        to[i] = targets[(int) sorted[i]];
      }}
      return new Table(from, to);
    }}
  }}

  /** Sorted, disjoint [first, last] pairs of the alphanumeric ranges. */
  private static final int[] ALPHANUMERIC_RANGES = alphanumericRanges();
  private static final Table LOWER = lowerCaseTable();
  private static final Table FOLD = foldingTable();

  private static int[] alphanumericRanges() {{
    String[] ranges = ALPHANUMERIC.trim().split(" ");
    int[] out = new int[ranges.length * 2];
    for (int i = 0; i < ranges.length; i++) {{
      int[] r = range(ranges[i]);
      out[2 * i] = r[0];
      out[2 * i + 1] = r[1];
    }}
    return out;
  }}

  private static int[] range(String text) {{
    int dash = text.indexOf('-');
    int first = Integer.parseInt(dash < 0 ? text : text.substring(0, dash), 16);
    int last = dash < 0 ? first : Integer.parseInt(text.substring(dash + 1), 16);
    return new int[] {{first, last}};
  }}

  private static Table lowerCaseTable() {{
    String[] entries = LOWER_CASE.trim().split(" ");
    int size = 0;
    for (String entry : entries) {{
      int colon = entry.indexOf(':');
      if (colon < 0) {{
        size++;
      }} else {{
        String span = entry.substring(0, colon);
        int[] r = range(span.endsWith("/2") ? span.substring(0, span.length() - 2) : span);
        size += r[1] - r[0] + 1;
      }}
    }}
    long[] keys = new long[size];
    String[] targets = new String[size];
    int n = 0;
    for (String entry : entries) {{
      int eq = entry.indexOf('=');
      if (eq >= 0) {{
        StringBuilder b = new StringBuilder();
        for (String x : entry.substring(eq + 1).split(",")) b.appendCodePoint(Integer.parseInt(x, 16));
        keys[n] = ((long) Integer.parseInt(entry.substring(0, eq), 16) << 32) | n;
        targets[n++] = b.toString();
        continue;
      }}
      int colon = entry.indexOf(':');
      String span = entry.substring(0, colon);
      int stride = span.endsWith("/2") ? 2 : 1;
      int[] r = range(stride == 2 ? span.substring(0, span.length() - 2) : span);
      int delta = Integer.parseInt(entry.substring(colon + 1), 16);
      for (int c = r[0]; c <= r[1]; c += stride) {{
        keys[n] = ((long) c << 32) | n;
        targets[n++] = new String(Character.toChars(c + delta));
      }}
    }}
    return Table.sorted(keys, targets, n);
  }}

  private static Table foldingTable() {{
    int size = 0;
    for (int t = 0; t < FOLDING.length; t += 2) {{
      for (String span : FOLDING[t + 1].trim().split(" ")) {{
        int[] r = range(span);
        size += r[1] - r[0] + 1;
      }}
    }}
    long[] keys = new long[size];
    String[] targets = new String[size];
    int n = 0;
    for (int t = 0; t < FOLDING.length; t += 2) {{
      for (String span : FOLDING[t + 1].trim().split(" ")) {{
        int[] r = range(span);
        for (int c = r[0]; c <= r[1]; c++) {{
          keys[n] = ((long) c << 32) | n;
          targets[n++] = FOLDING[t];
        }}
      }}
    }}
    return Table.sorted(keys, targets, n);
  }}

  /** Whether a non-ASCII code point is alphanumeric to Rust ({{@code char::is_alphanumeric}}). */
  static boolean isAlphanumeric(int cp) {{
    int lo = 0;
    int hi = ALPHANUMERIC_RANGES.length / 2 - 1;
    while (lo <= hi) {{
      int mid = (lo + hi) >>> 1;
      if (cp < ALPHANUMERIC_RANGES[2 * mid]) hi = mid - 1;
      else if (cp > ALPHANUMERIC_RANGES[2 * mid + 1]) lo = mid + 1;
      else return true;
    }}
    return false;
  }}

  /** The lower case of a non-ASCII code point (Rust's {{@code char::to_lowercase}}), or null if it is its own. */
  static String lowerCase(int cp) {{
    return LOWER.of(cp);
  }}

  /** The ASCII folding of a non-ASCII code point (tantivy's table), or null if it has none. */
  static String folding(int cp) {{
    return FOLD.of(cp);
  }}
}}
'''


def main(out: Path, write: bool) -> None:
    from conftest import start_spark

    out.mkdir(parents=True, exist_ok=True)
    spark = start_spark("fts-analysis-sweep", out)
    try:
        code_points = all_code_points()
        strings = [chr(c) for c in code_points]
        if write:
            write_tables(code_points, analyses(spark, out, strings, ["split", "lower", "fold"]))
        else:
            found = differences(strings, analyses(spark, out, strings))
            (out / "differences.json").write_text(json.dumps(found, ensure_ascii=False))
            for name, rows in found.items():
                print(f"{name}: {len(strings)} code points, {len(rows)} analysed otherwise than pylance"
                      + (f", such as {rows[:3]}" if rows else ""), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--write" in sys.argv[2:])
