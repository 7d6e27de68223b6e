"""Building a full-text index: sparklance's ``CREATE INDEX ... USING fts`` (Spark, local session, one task per
fragment) against pylance's ``create_scalar_index(col, "INVERTED")`` on a copy of the same table, with the same
settings (``with_position=True, stem=False``). The rows: ROWS texts of 3 to 20 words drawn from 2,011 words, in
fragments of 250,000 rows, written by pylance. Each side builds twice; the second (warm) build's wall time is
reported with the load average and the ratio to pylance's.
Usage: python integration/bench/fts_build_bench.py OUT_DIR [ROWS]
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))


def main(out: Path, rows: int) -> None:
    import lance
    import pyarrow as pa
    from conftest import start_spark

    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    words = ["machine", "learning", "deep", "networks", "spark", "lance", "the", "of", "a"] + [f"w{i}" for i in range(2002)]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 20))) for _ in range(rows)]
    theirs, ours = out / "theirs.lance", out / "ours.lance"
    for p in (theirs, ours):
        shutil.rmtree(p, ignore_errors=True)
    lance.write_dataset(pa.table({"id": list(range(rows)), "text": texts}), str(theirs), max_rows_per_file=250_000)
    shutil.copytree(theirs, ours)
    spark = start_spark("fts-build-bench", out / "wh")
    try:
        for run in ("cold", "warm"):
            t0 = time.time()
            lance.dataset(str(theirs)).create_scalar_index("text", "INVERTED", with_position=True, stem=False,
                                                          replace=True)
            pylance_s = time.time() - t0
            t0 = time.time()
            spark.sql(f"ALTER TABLE lance.`{ours}` CREATE INDEX text_idx USING fts (text) WITH (with_position = true, "
                      "stem = false, replace = true)").collect()
            ours_s = time.time() - t0
            print(f"{run}: {rows} rows: sparklance {ours_s:.2f} s, pylance {pylance_s:.2f} s, "
                  f"ratio {ours_s / pylance_s:.1f}x, load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
