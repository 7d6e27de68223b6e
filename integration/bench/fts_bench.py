"""Full-text filters: sparklance's lance_match / lance_match_phrase (Spark, local session, a COUNT over the filter)
against pylance's search through its INVERTED index (``to_table(full_text_query=...)``), on the same table, with
equal row counts checked; a bare COUNT and a LIKE filter over the same column give the scan's own cost. Each filter
runs twice in sparklance: through the index's posting lists (the default), and with ``pushDownFilters=false``,
which keeps the filter out of the scan, so every row's text is tokenized (how sparklance ran these filters before
it read posting lists).

The rows: 1M texts of 3 to 20 words drawn from 2,011 words, written by pylance, with an INVERTED index pylance builds
(``with_position=True, stem=False``). Each case runs twice; the second (warm) run's JVM CPU and wall time are
reported with the load average, and the ratio to pylance's wall time.
Usage: python integration/bench/fts_bench.py OUT_DIR
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))

ROWS = 1_000_000


def write(out: Path) -> str:
    import lance
    import pyarrow as pa

    path = out / "texts.lance"
    if not path.exists():
        rng = random.Random(1)
        words = ["machine", "learning", "deep", "networks", "spark", "lance", "the", "of", "a"] + [f"w{i}" for i in range(2002)]
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 20))) for _ in range(ROWS)]
        ds = lance.write_dataset(pa.table({"id": list(range(ROWS)), "text": texts}), str(path))
        ds.create_scalar_index("text", "INVERTED", with_position=True, stem=False)
    return str(path)


def main(out: Path) -> None:
    import lance
    from lance.query import FullTextOperator, MatchQuery, PhraseQuery

    from conftest import start_spark

    path = write(out)
    spark = start_spark("fts-bench", out)
    pid = spark._jvm.ProcessHandle.current().pid()

    def jvm_cpu() -> float:
        fields = open(f"/proc/{pid}/stat").read().split(")")[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    indexed = spark.read.format("lance").load(path)
    scanned = spark.read.format("lance").option("pushDownFilters", "false").load(path)
    ds = lance.dataset(path)
    cases = [("count", None, None), ("like", "text LIKE '%machine%'", None),
             ("match OR", "lance_match(text, 'machine learning')", MatchQuery("machine learning", "text")),
             ("match AND", "lance_match(text, 'machine learning', 'operator=AND')",
              MatchQuery("machine learning", "text", operator=FullTextOperator.AND)),
             ("phrase", "lance_match_phrase(text, 'machine learning')", PhraseQuery("machine learning", "text"))]
    for name, where, query in cases:
        for how, df in (("index", indexed), ("scan", scanned)):
            if where is None and how == "scan":
                continue
            for _ in range(2):
                d = df if where is None else df.where(where)
                c0, t0 = jvm_cpu(), time.time()
                n = d.count()
                wall, cpu = time.time() - t0, jvm_cpu() - c0
            line = f"{name:10s} {how:5s} rows={n:8d} sparklance wall={wall:6.2f}s jvm_cpu={cpu:6.2f}s"
            if query is not None:
                t0 = time.time()
                expected = ds.to_table(full_text_query=query, columns=["id", "_score"]).num_rows
                peer = time.time() - t0
                assert n == expected, (name, n, expected)
                line += f" pylance wall={peer:6.3f}s ratio={wall / max(peer, 1e-3):7.1f}x"
            print(f"{line} load={os.getloadavg()[0]:.1f}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
