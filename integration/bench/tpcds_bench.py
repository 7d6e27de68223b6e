"""TPC-DS through Spark: Lance tables (written by sparklance's CTAS, and by pylance) against Spark's Parquet.

The same steps as tpch_bench.py, for the 24 TPC-DS tables and the 99 queries:
- Data: Trino's Java port of dsdgen (`--generator`, its class path; `make tpcds-tools` fetches it) writes the tables
  as '|'-delimited text at the scale factor given; Spark reads them with the schema the generator reports
  (TpcdsSchema.java beside this file; one column renamed as Spark's own schema names it, SPARK_NAMES) and keeps them
  as Parquet under OUT_DIR/sf<SF>/generated, once per scale factor.
- From those files, in one Spark session (local[2]): Spark writes them as Parquet (the baseline; timed), sparklance
  with `CREATE TABLE lance.tpcds_ours.t AS SELECT` (timed), pylance with `write_dataset` (timed, outside Spark).
- The queries are Spark's own copies (`--queries-dir`, the q*.sql files of spark-sql's tests jar, `tpcds/`: 103 files
  for the 99 queries, 14, 23, 24 and 39 in two parts each). Each runs through the catalogs (`USE
  spark_catalog.tpcds_parquet`, `USE lance.tpcds_ours`, `USE lance.tpcds_pylance`), once on each set to warm up and
  to compare results, then ROUNDS rounds of the three sets in turn; the best time counts.
Results are compared as sorted rows; floating-point values (averages and deviations of integers, whose last digits
depend on the order of the additions) are equal within a relative 1e-9, every other value exactly. A query that
fails on a set, or whose results differ from Parquet's, is reported in the outputs, not left out, and the run goes on;
the geometric means are over the queries with equal results on the three sets.
Written to OUT_DIR, again after each query so that a run stopped early leaves what it measured: tpcds-sf<SF>.csv,
.md and .svg (the ratio Lance / Parquet per query).
With `--reuse parquet,ours,pylance` (any of the three), the sets named are taken as an earlier run left them.
Usage: python integration/bench/tpcds_bench.py OUT_DIR [SF] --generator CLASSPATH --queries-dir DIR [--rounds N]
       [--queries q1,q14a,...] [--reuse SET,...]
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_bench import du, load  # noqa: E402

SETS = ("parquet", "ours", "pylance")
NAMESPACE = {"parquet": "spark_catalog.tpcds_parquet", "ours": "lance.tpcds_ours", "pylance": "lance.tpcds_pylance"}
LABEL = {"parquet": "Parquet", "ours": "tables sparklance wrote", "pylance": "tables pylance wrote"}
REL_TOL = 1e-9
# The generator follows TPC-DS 2.x, whose customer table has c_last_review_date_sk; Spark's schema for these queries
# (TPCDSBase in its tests) keeps the older name, which q30 reads.
SPARK_NAMES = {("customer", "c_last_review_date_sk"): "c_last_review_date"}


def schema(generator: str) -> dict[str, list[tuple[str, str]]]:
    """{table: [(column, Spark type)]} as the generator reports it; dbgen_version (no query reads it) left out."""
    out = subprocess.run(["java", "-cp", generator, str(Path(__file__).with_name("TpcdsSchema.java"))],
                         check=True, capture_output=True, text=True).stdout
    tables: dict[str, list[tuple[str, str]]] = {}
    for line in out.splitlines():
        table, column, kind = line.split(" ", 2)
        if table != "dbgen_version":
            tables.setdefault(table, []).append((SPARK_NAMES.get((table, column), column), kind))
    return tables


def generate(spark, out: Path, sf, generator: str, tables) -> Path:
    """The tables as Parquet under out/generated, made once: dsdgen's text in two chunks, read with the schema."""
    gen = out / "generated"
    if (gen / "_READY").exists():
        return gen
    shutil.rmtree(gen, ignore_errors=True)
    text = out / "dsdgen"
    shutil.rmtree(text, ignore_errors=True)
    text.mkdir(parents=True)
    t0 = time.perf_counter()
    subprocess.run(["java", "-Xmx2g", "-cp", generator, "io.trino.tpcds.Driver", "--scale", str(sf), "--directory",
                    str(text), "--parallelism", "2", "--do-not-terminate"], check=True)
    print(f"dsdgen SF{sf}: {time.perf_counter() - t0:.0f} s", flush=True)
    for t, columns in tables.items():
        ddl = ", ".join(f"{c} {k}" for c, k in columns)
        # '|' between fields, no quoting: dsdgen writes its strings bare; an empty field is NULL.
        (spark.read.schema(ddl).option("sep", "|").option("quote", "\u0000").option("escape", "\u0000")
         .option("encoding", "UTF-8").option("mode", "FAILFAST")
         .csv([str(text / f"{t}_{i}_2.dat") for i in (1, 2)])
         .write.mode("overwrite").parquet(str(gen / t)))
    shutil.rmtree(text)
    (gen / "_READY").touch()
    return gen


def query_names(queries_dir: Path, chosen: str) -> list[str]:
    def order(name):
        m = re.fullmatch(r"q(\d+)([a-z]?)", name)
        return int(m.group(1)), m.group(2)
    names = sorted((p.stem for p in queries_dir.glob("q*.sql")), key=order)
    wanted = [q for q in chosen.split(",") if q]
    unknown = [q for q in wanted if q not in names]
    if unknown:
        raise SystemExit(f"--queries: no {', '.join(unknown)}.sql in {queries_dir} (it has {names[0]}..{names[-1]})")
    return wanted or names


def sort_key(row):
    """A row's order for comparing: floats rounded to 9 significant digits, so that last-digit noise keeps it."""
    return repr(tuple(float(f"{v:.9g}") if isinstance(v, float) else v for v in row))


def same(a, b) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if len(ra) != len(rb):
            return False
        for va, vb in zip(ra, rb):
            if isinstance(va, float) and isinstance(vb, float):
                if not (va == vb or math.isclose(va, vb, rel_tol=REL_TOL) or (math.isnan(va) and math.isnan(vb))):
                    return False
            elif va != vb:
                return False
    return True


def run(spark, s: str, sql: str):
    spark.sql(f"USE {NAMESPACE[s]}")
    return spark.sql(sql).collect()


def svg_chart(rows, geomeans, sf) -> str:
    """Grouped bars: Lance / Parquet per query for the two Lance sets (queries with equal results), a line at 1."""
    rows = [r for r in rows if r["status"] == "equal"]
    slot_w = 20
    left, top, bottom = 50, 40, 50
    width, height = max(980, left + 20 + slot_w * len(rows)), 380
    top_ratio = max(2.0, max([max(r["ours"], r["pylance"]) for r in rows] + [0]) * 1.05)
    plot_h = height - top - bottom
    y = lambda v: top + plot_h * (1 - v / top_ratio)  # noqa: E731
    colors = {"ours": "#d9480f", "pylance": "#1c7ed6"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="10">',
             f'<text x="{left}" y="18" font-size="14">TPC-DS SF{sf}: Lance time / Spark Parquet time (lower is '
             f'better); geometric means: ours {geomeans["ours"]:.2f}, pylance-written {geomeans["pylance"]:.2f}</text>']
    for v in (0.5, 1.0, 1.5, 2.0):
        if v <= top_ratio:
            parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                         f'stroke="{"#333" if v == 1.0 else "#ddd"}"/>'
                         f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    for i, r in enumerate(rows):
        x0 = left + i * slot_w
        for j, s in enumerate(("ours", "pylance")):
            bx, bw = x0 + slot_w * (0.1 + 0.4 * j), slot_w * 0.38
            parts.append(f'<rect x="{bx:.1f}" y="{y(r[s]):.1f}" width="{bw:.1f}" height="{y(0) - y(r[s]):.1f}" '
                         f'fill="{colors[s]}"><title>{r["query"]} {LABEL[s]}: {r[s]:.2f}</title></rect>')
        parts.append(f'<text transform="translate({x0 + slot_w / 2 + 3:.1f},{height - bottom + 8}) rotate(90)">'
                     f'{r["query"]}</text>')
    for j, s in enumerate(("ours", "pylance")):
        lx = width - 330 + j * 160
        parts.append(f'<rect x="{lx}" y="{height - 14}" width="10" height="10" fill="{colors[s]}"/>'
                     f'<text x="{lx + 14}" y="{height - 5}">{LABEL[s]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def write(rows, out: Path, sf, rounds: int, loaded, partial: str) -> list[str]:
    """Writes OUT_DIR/tpcds-sf<SF>.csv, .md and .svg for the rows so far; returns the Markdown's lines."""
    timed = [r for r in rows if r["status"] == "equal"]
    geomeans = {s: math.exp(sum(math.log(r[s]) for r in timed) / len(timed)) if timed else math.nan
                for s in ("ours", "pylance")}
    base = out.parent / f"tpcds-sf{sf}"
    with open(f"{base}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    others = [r for r in rows if r["status"] != "equal"]
    lines = [f"# TPC-DS SF{sf}: Spark (local[2]) over Lance and over Parquet{partial}", "",
             f"Best of {rounds} rounds; ratio = Lance time / Parquet time. Equal results (floating-point values "
             f"within a relative {REL_TOL:g}) on {len(timed)} of {len(rows)} query files"
             + (f"; the others, not timed: {', '.join(r['query'] for r in others)}." if others else "."), "",
             "| query | result rows | Parquet s | ours s | ours / Parquet | pylance-written s | pylance-written / Parquet |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['query']} | {r['rows']} | {r['parquet_s']:.2f} | {r['ours_s']:.2f} | {r['ours']:.2f} | "
              f"{r['pylance_s']:.2f} | {r['pylance']:.2f} |" for r in timed]
    lines += [f"| **geometric mean** | | | | **{geomeans['ours']:.2f}** | | **{geomeans['pylance']:.2f}** |", ""]
    if others:
        lines += ["| query | not timed because |", "|---|---|"]
        lines += [f"| {r['query']} | {r['status'].replace('|', '/')} |" for r in others]
        lines += [""]
    lines += ["| tables | written by | write s | size MB |", "|---|---|---|---|"]
    writer = {"parquet": "Spark (Parquet, snappy)", "ours": "sparklance CTAS", "pylance": "pylance write_dataset"}
    lines += [f"| {s} | {writer[s]} | {loaded[s][0]:.1f} | {loaded[s][1] / 1e6:.0f} |" if s in loaded
              else f"| {s} | {writer[s]} | (reused) | "
                   f"{du(out / ('spark-parquet' if s == 'parquet' else f'warehouse/tpcds_{s}')) / 1e6:.0f} |"
              for s in SETS]
    Path(f"{base}.md").write_text("\n".join(lines) + "\n")
    Path(f"{base}.svg").write_text(svg_chart(rows, geomeans, sf))
    return lines


def main():
    args = argparse.ArgumentParser()
    args.add_argument("out")
    args.add_argument("sf", nargs="?", type=float, default=1.0)
    args.add_argument("--generator", required=True, help="class path of io.trino.tpcds and its dependencies")
    args.add_argument("--queries-dir", required=True, help="the q*.sql files (tpcds/ of spark-sql's tests jar)")
    args.add_argument("--rounds", type=int, default=3)
    args.add_argument("--queries", default="", help="q1,q14a,... (default: every q*.sql)")
    args.add_argument("--reuse", default="", help="sets to take as they are: parquet,ours,pylance")
    a = args.parse_args()
    reuse = {s for s in a.reuse.split(",") if s}
    if reuse - set(SETS):
        raise SystemExit(f"--reuse takes sets among {', '.join(SETS)}, not {', '.join(sorted(reuse - set(SETS)))}")
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    out = Path(a.out).resolve() / f"sf{sf}"
    queries_dir = Path(a.queries_dir)
    names = query_names(queries_dir, a.queries)
    out.mkdir(parents=True, exist_ok=True)
    tables = schema(a.generator)
    import sparklance

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{
        "spark.driver.memory": "8g", "spark.sql.warehouse.dir": str(out / "spark-warehouse")})
    spark.sparkContext.setLogLevel("ERROR")
    gen = generate(spark, out, sf, a.generator, tables)
    loaded = load(spark, out, {t: gen / t for t in tables}, reuse, bench="tpcds")

    rows = []
    for name in names:
        sql = (queries_dir / f"{name}.sql").read_text().strip().rstrip(";")
        results, errors, differ, best = {}, {}, [], {s: math.inf for s in SETS}
        for s in SETS:  # warm-up, and the results to compare
            try:
                results[s] = sorted(map(tuple, run(spark, s, sql)), key=sort_key)
            except Exception as e:  # noqa: BLE001 - a query that fails is reported with its error, not hidden
                errors[s] = str(e).strip().splitlines()[0][:300]
        if "parquet" in errors:
            status = f"fails on Parquet (Spark): {errors['parquet']}"
        elif errors:
            status = "; ".join(f"fails on the {LABEL[s]}: {e}" for s, e in errors.items())
        else:
            differ = [s for s in ("ours", "pylance") if not same(results[s], results["parquet"])]
            status = "; ".join(f"the {LABEL[s]} give other results than Parquet ({len(results[s])} rows against "
                               f"{len(results['parquet'])})" for s in differ) or "equal"
        if status == "equal":
            for _ in range(a.rounds):
                for s in SETS:
                    t0 = time.perf_counter()
                    run(spark, s, sql)
                    best[s] = min(best[s], time.perf_counter() - t0)
        for s in differ:
            print(f"{name} on the {LABEL[s]}: {results[s][:3]}\n  Parquet: {results['parquet'][:3]}")
        row = {"query": name, "rows": len(results.get("parquet", [])), "parquet_s": best["parquet"],
               "ours_s": best["ours"], "pylance_s": best["pylance"], "ours": best["ours"] / best["parquet"],
               "pylance": best["pylance"] / best["parquet"], "status": status}
        rows.append(row)
        write(rows, out, sf, a.rounds, loaded, f" (partial: {len(rows)} of {len(names)} query files)")
        print(f"{name:<5} parquet {row['parquet_s']:7.2f} s   ours {row['ours_s']:7.2f} s ({row['ours']:.2f})   "
              f"pylance-written {row['pylance_s']:7.2f} s ({row['pylance']:.2f})   {status}", flush=True)
    spark.stop()

    lines = write(rows, out, sf, a.rounds, loaded, "")
    print("\n".join(lines))
    print(f"written: {out.parent}/tpcds-sf{sf}.csv, .md, .svg")


if __name__ == "__main__":
    main()
