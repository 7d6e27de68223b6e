"""Bytes per column of the TPC-DS tables `make bench-tpcds` wrote: our CTAS tables, pylance's and Spark's Parquet.

    .venv/bin/python integration/bench/tpcds_column_sizes.py SF_DIR [--before OURS_WAREHOUSE] [--tables a,b,...]

SF_DIR is `build/bench/tpcds/sf<SF>` of a `make bench-tpcds` run (its `warehouse/tpcds_ours`,
`warehouse/tpcds_pylance`, `spark-parquet` and `generated`). `--before` adds a column for another run's
`tpcds_ours` (e.g. the one of a jar before a writer change). Per table: each column's type, distinct values (of the
generated data), the bytes of its pages in each set (Lance: ``LanceFileReader.metadata()``; Parquet: the column
chunks' compressed bytes); then the totals of every table by column type.
"""

from __future__ import annotations

import argparse
import collections
import glob
import sys
from pathlib import Path

import lance
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tpch_column_sizes import column_bytes  # noqa: E402

BIGGEST = "store_sales,catalog_sales,web_sales,inventory,customer,customer_demographics,store_returns,catalog_returns"


def parquet_bytes(path: Path) -> dict:
    out = collections.Counter()
    for f in glob.glob(str(path / "*.parquet")):
        md = pq.ParquetFile(f).metadata
        for rg in range(md.num_row_groups):
            for c in range(md.num_columns):
                col = md.row_group(rg).column(c)
                out[col.path_in_schema] += col.total_compressed_size
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("sf_dir")
    p.add_argument("--before", default="")
    p.add_argument("--tables", default=BIGGEST)
    a = p.parse_args()
    root = Path(a.sf_dir)
    sets = {"pylance": root / "warehouse/tpcds_pylance"}
    if a.before:
        sets["ours before"] = Path(a.before)
    sets["ours"] = root / "warehouse/tpcds_ours"
    by_type = collections.defaultdict(collections.Counter)
    head = f"{'column':24}{'type':17}{'distinct':>9}" + "".join(f"{k:>13}" for k in sets) + f"{'Parquet':>11}"
    for t in a.tables.split(","):
        sizes = {k: column_bytes(str(d / f"{t}.lance")) for k, d in sets.items()}
        pq_sizes = parquet_bytes(root / "spark-parquet" / t)
        generated = pq.read_table(root / "generated" / t)
        schema = lance.dataset(str(sets["ours"] / f"{t}.lance")).schema
        print(f"\n{t} ({generated.num_rows:,} rows)\n{head}")
        for name in schema.names:
            typ = str(schema.field(name).type).replace("decimal128", "decimal")
            distinct = pc.count_distinct(generated.column(name)).as_py()
            vals = [s[name] for s in sizes.values()] + [pq_sizes[name]]
            print(f"{name:24}{typ:17}{distinct:>9,}" + "".join(f"{v:>13,}" for v in vals[:-1]) + f"{vals[-1]:>11,}")
            for k, v in zip(list(sets) + ["Parquet"], vals):
                by_type[typ][k] += v
    print(f"\nall {len(a.tables.split(','))} tables by column type\n{'type':41}" + "".join(f"{k:>13}" for k in sets)
          + f"{'Parquet':>11}")
    for typ, c in sorted(by_type.items(), key=lambda kv: -kv[1]["Parquet"]):
        print(f"{typ:41}" + "".join(f"{c[k]:>13,}" for k in sets) + f"{c['Parquet']:>11,}")
    print(f"{'TOTAL':41}" + "".join(f"{sum(c[k] for c in by_type.values()):>13,}" for k in sets)
          + f"{sum(c['Parquet'] for c in by_type.values()):>11,}")


if __name__ == "__main__":
    main()
