"""Scalar indexes: Spark reading Lance through a B-tree index against Spark reading Parquet, and the index build
against pylance's, on the same 4M rows as spark_read_bench.py.

Measured: a point filter (every column of one row) and a 1% range filter (every column of 40,000 rows, aggregated) on `id`, over Lance with a B-tree index sparklance built (and, for
comparison, one pylance built) and over Parquet (1M-row row groups, whose statistics Spark uses); the B-tree build of
`id` by `ALTER TABLE ... CREATE INDEX` (local[2]) and by pylance's create_scalar_index. Best of 5 (3 for builds).
Usage: python integration/bench/index_bench.py OUT_DIR
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_read_bench import N, best_of_both, write  # noqa: E402


def timed(fn, rounds):
    best = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/bench/index").resolve()
    lance_path, parquet_path = write(out)
    import lance
    import sparklance

    ours, theirs = out / "ours.lance", out / "pylance.lance"

    def fresh(path: Path) -> str:
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(lance_path, path)
        return str(path)

    spark = sparklance.session(warehouse=str(out / "warehouse"), **{"spark.driver.memory": "6g"})
    spark.sparkContext.setLogLevel("ERROR")

    def build_ours():
        spark.sql(f"ALTER TABLE lance.`{fresh(ours)}` CREATE INDEX id_idx USING btree (id)").collect()

    def build_pylance():
        lance.dataset(fresh(theirs)).create_scalar_index("id", "BTREE")

    t_ours, t_pylance = timed(build_ours, 3), timed(build_pylance, 3)
    spark.read.format("lance").load(str(ours)).createOrReplaceTempView("l")
    spark.read.format("lance").load(str(theirs)).createOrReplaceTempView("lp")
    spark.read.parquet(parquet_path).createOrReplaceTempView("p")
    lo = N // 4
    queries = {
        "point filter, BTREE": "SELECT * FROM {t} WHERE id = 3999999",
        # Every column of the 40,000 rows is read; aggregated, so that moving them to Python does not dominate.
        "1% range, BTREE": f"SELECT count(*), sum(n), sum(x), max(s), sum(size(v)) FROM {{t}} "
                           f"WHERE id BETWEEN {lo} AND {lo + N // 100 - 1}",
    }
    print(f"{N} rows; B-tree build: sparklance {t_ours:.2f} s, pylance {t_pylance:.2f} s, ratio {t_ours / t_pylance:.2f}")
    print(f"{'query':<26}{'Parquet s':>11}{'Lance s':>10}{'Lance/Parquet':>15}{'pylance-built index':>21}")
    for name, q in queries.items():
        for view in ("l", "lp"):
            plan = spark.sql(q.format(t=view))._jdf.queryExecution().executedPlan().toString()
            assert "BTREE index 'id_idx'" in plan, f"the index is not used on {view}: {plan}"
        expected = sorted(map(tuple, spark.sql(q.format(t="p")).collect()))
        assert sorted(map(tuple, spark.sql(q.format(t="l")).collect())) == expected, name
        tp, tl = best_of_both(lambda: spark.sql(q.format(t="p")).collect(), lambda: spark.sql(q.format(t="l")).collect())
        _, tlp = best_of_both(lambda: spark.sql(q.format(t="p")).collect(), lambda: spark.sql(q.format(t="lp")).collect())
        print(f"{name:<26}{tp:>11.3f}{tl:>10.3f}{tl / tp:>15.2f}{tlp / tp:>21.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
