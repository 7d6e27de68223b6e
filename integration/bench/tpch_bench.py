"""TPC-H through Spark: Lance tables (written by sparklance's CTAS, and by pylance) against Spark's Parquet.

Data: `tpchgen-cli` writes the 8 tables as Parquet at the scale factor given. From those files, in one Spark
session (local[2]):
- Spark writes them as Parquet (the baseline; timed) and sparklance writes them with `CREATE TABLE lance.tpch_ours.t
  AS SELECT` (timed);
- pylance writes the same rows into `tpch_pylance` (timed, outside Spark).
The 22 queries then run through the catalogs (`USE spark_catalog.tpch_parquet`, `USE lance.tpch_ours`,
`USE lance.tpch_pylance`), each set in turn per round so all three see the same machine; the best of the rounds
counts. Each query's results must be equal on the three sets. Written to OUT_DIR: tpch-sf<SF>.csv, .md and .svg
(the ratio Lance / Parquet per query), and the table sizes and write times in the Markdown.
With `--reuse parquet,ours,pylance` (any of the three), the sets named are taken as an earlier run left them under
OUT_DIR (tables directories may be symbolic links; nothing in them is written) and only the others are written;
their write time and size are then not measured.
Usage: python integration/bench/tpch_bench.py OUT_DIR [SF] [--rounds N] [--queries 1,6,...] [--reuse SET,...]
"""

from __future__ import annotations

import argparse
import csv
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_queries import TABLES, query  # noqa: E402

SETS = ("parquet", "ours", "pylance")
NAMESPACE = {"parquet": "spark_catalog.tpch_parquet", "ours": "lance.tpch_ours", "pylance": "lance.tpch_pylance"}
LABEL = {"ours": "tables sparklance wrote", "pylance": "tables pylance wrote"}


def generate(out: Path, sf: float) -> Path:
    gen = out / "generated"
    if all((gen / f"{t}.parquet").exists() for t in TABLES):
        return gen
    shutil.rmtree(gen, ignore_errors=True)
    tool = Path(sys.executable).parent / "tpchgen-cli"
    subprocess.run([str(tool), "parquet", "-s", str(sf), "-o", str(gen)], check=True)
    return gen


def clear(path: Path):
    """Removes a directory about to be rewritten; a symbolic link (a reused set's) is removed, never its target."""
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def load(spark, out: Path, sources, reuse=(), bench: str = "tpch"):
    """Writes the three sets of the tables in `sources` ({table: its generated Parquet file or directory}) but those
    in `reuse`, into the namespaces `<bench>_parquet`, `<bench>_ours`, `<bench>_pylance`; returns {set: (seconds,
    bytes)} for those it wrote."""
    import lance
    import pyarrow as pa
    import pyarrow.parquet as pq

    warehouse = out / "warehouse"
    stats = {}
    pq_dir = out / "spark-parquet"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS spark_catalog.{bench}_parquet")
    if "parquet" not in reuse:
        clear(pq_dir)
        t0 = time.perf_counter()
        for t, src in sources.items():
            spark.sql(f"SELECT * FROM parquet.`{src}`").write.mode("overwrite").parquet(str(pq_dir / t))
        stats["parquet"] = time.perf_counter() - t0, du(pq_dir)
    for t in sources:
        spark.sql(f"DROP TABLE IF EXISTS spark_catalog.{bench}_parquet.{t}")
        spark.sql(f"CREATE TABLE spark_catalog.{bench}_parquet.{t} USING parquet LOCATION '{pq_dir / t}'")

    if "ours" not in reuse:
        clear(warehouse / f"{bench}_ours")
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS lance.{bench}_ours")
        t0 = time.perf_counter()
        for t, src in sources.items():
            spark.sql(f"CREATE TABLE lance.{bench}_ours.{t} AS SELECT * FROM parquet.`{src}`")
        stats["ours"] = time.perf_counter() - t0, du(warehouse / f"{bench}_ours")

    if "pylance" in reuse:
        return stats
    clear(warehouse / f"{bench}_pylance")
    t0 = time.perf_counter()
    for t, src in sources.items():
        table = pq.read_table(src)
        # tpchgen writes string_view columns; Lance stores them as strings.
        schema = pa.schema([f.with_type(pa.string()) if pa.types.is_string_view(f.type) else f for f in table.schema])
        lance.write_dataset(table.cast(schema), str(warehouse / f"{bench}_pylance" / f"{t}.lance"))
    stats["pylance"] = time.perf_counter() - t0, du(warehouse / f"{bench}_pylance")
    return stats


def svg_chart(rows, geomeans, sf) -> str:
    """Grouped bars: Lance / Parquet per query for the two Lance sets, a line at 1."""
    width, height, left, top, bottom = 980, 360, 50, 40, 40
    top_ratio = max(2.0, max(max(r["ours"], r["pylance"]) for r in rows) * 1.05)
    plot_h = height - top - bottom
    slot = (width - left - 20) / len(rows)
    y = lambda v: top + plot_h * (1 - v / top_ratio)  # noqa: E731
    colors = {"ours": "#d9480f", "pylance": "#1c7ed6"}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11">',
             f'<text x="{left}" y="18" font-size="14">TPC-H SF{sf}: Lance time / Spark Parquet time (lower is '
             f'better); geometric means: ours {geomeans["ours"]:.2f}, pylance-written {geomeans["pylance"]:.2f}</text>']
    for v in (0.5, 1.0, 1.5, 2.0):
        if v <= top_ratio:
            parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                         f'stroke="{"#333" if v == 1.0 else "#ddd"}"/>'
                         f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    for i, r in enumerate(rows):
        x0 = left + i * slot
        for j, s in enumerate(("ours", "pylance")):
            bx, bw = x0 + slot * (0.15 + 0.35 * j), slot * 0.33
            parts.append(f'<rect x="{bx:.1f}" y="{y(r[s]):.1f}" width="{bw:.1f}" height="{y(0) - y(r[s]):.1f}" '
                         f'fill="{colors[s]}"><title>q{r["query"]} {LABEL[s]}: {r[s]:.2f}</title></rect>')
        parts.append(f'<text x="{x0 + slot / 2:.1f}" y="{height - bottom + 14}" text-anchor="middle">'
                     f'q{r["query"]}</text>')
    for j, s in enumerate(("ours", "pylance")):
        lx = width - 330 + j * 160
        parts.append(f'<rect x="{lx}" y="{height - 16}" width="10" height="10" fill="{colors[s]}"/>'
                     f'<text x="{lx + 14}" y="{height - 7}">{LABEL[s]}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def main():
    args = argparse.ArgumentParser()
    args.add_argument("out")
    args.add_argument("sf", nargs="?", type=float, default=1.0)
    args.add_argument("--rounds", type=int, default=3)
    args.add_argument("--queries", default="")
    args.add_argument("--reuse", default="", help="sets to take as they are: parquet,ours,pylance")
    a = args.parse_args()
    reuse = {s for s in a.reuse.split(",") if s}
    if reuse - set(SETS):
        raise SystemExit(f"--reuse takes sets among {', '.join(SETS)}, not {', '.join(sorted(reuse - set(SETS)))}")
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    out = Path(a.out).resolve() / f"sf{sf}"
    numbers = [int(q) for q in a.queries.split(",") if q] or list(range(1, 23))
    out.mkdir(parents=True, exist_ok=True)
    gen = generate(out, sf)
    import sparklance

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{
        "spark.driver.memory": "8g", "spark.sql.warehouse.dir": str(out / "spark-warehouse")})
    spark.sparkContext.setLogLevel("ERROR")
    loaded = load(spark, out, {t: gen / f"{t}.parquet" for t in TABLES}, reuse)

    rows = []
    for n in numbers:
        sql = query(n, sf)
        results, best = {}, {s: math.inf for s in SETS}
        for s in SETS:  # warm-up, and the results to compare
            spark.sql(f"USE {NAMESPACE[s]}")
            results[s] = sorted(map(tuple, spark.sql(sql).collect()), key=repr)
        for s in ("ours", "pylance"):
            if results[s] != results["parquet"]:
                raise SystemExit(f"q{n}: the {LABEL[s]} give other results than Parquet:\n"
                                 f"{results[s][:5]}\nvs\n{results['parquet'][:5]}")
        for _ in range(a.rounds):
            for s in SETS:
                spark.sql(f"USE {NAMESPACE[s]}")
                t0 = time.perf_counter()
                spark.sql(sql).collect()
                best[s] = min(best[s], time.perf_counter() - t0)
        row = {"query": n, "rows": len(results["parquet"]), "parquet_s": best["parquet"], "ours_s": best["ours"],
               "pylance_s": best["pylance"], "ours": best["ours"] / best["parquet"],
               "pylance": best["pylance"] / best["parquet"]}
        rows.append(row)
        print(f"q{n:<3} parquet {row['parquet_s']:7.2f} s   ours {row['ours_s']:7.2f} s ({row['ours']:.2f})   "
              f"pylance-written {row['pylance_s']:7.2f} s ({row['pylance']:.2f})", flush=True)
    spark.stop()

    geomeans = {s: math.exp(sum(math.log(r[s]) for r in rows) / len(rows)) for s in ("ours", "pylance")}
    base = out.parent / f"tpch-sf{sf}"
    with open(f"{base}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"# TPC-H SF{sf}: Spark (local[2]) over Lance and over Parquet", "",
             f"Best of {a.rounds} rounds; ratio = Lance time / Parquet time; equal results on every query.", "",
             "| query | result rows | Parquet s | ours s | ours / Parquet | pylance-written s | pylance-written / Parquet |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| q{r['query']} | {r['rows']} | {r['parquet_s']:.2f} | {r['ours_s']:.2f} | {r['ours']:.2f} | "
              f"{r['pylance_s']:.2f} | {r['pylance']:.2f} |" for r in rows]
    lines += [f"| **geometric mean** | | | | **{geomeans['ours']:.2f}** | | **{geomeans['pylance']:.2f}** |", "",
              "| tables | written by | write s | size MB |", "|---|---|---|---|"]
    writer = {"parquet": "Spark (Parquet, snappy)", "ours": "sparklance CTAS", "pylance": "pylance write_dataset"}
    lines += [f"| {s} | {writer[s]} | {loaded[s][0]:.1f} | {loaded[s][1] / 1e6:.0f} |" if s in loaded
              else f"| {s} | {writer[s]} | (reused) | {du(out / ('spark-parquet' if s == 'parquet' else f'warehouse/tpch_{s}')) / 1e6:.0f} |"
              for s in SETS]
    Path(f"{base}.md").write_text("\n".join(lines) + "\n")
    Path(f"{base}.svg").write_text(svg_chart(rows, geomeans, sf))
    print("\n".join(lines))
    print(f"written: {base}.csv, {base}.md, {base}.svg")


if __name__ == "__main__":
    main()
