"""The Spark release against the DuckDB release of the same spec, value for value, at scale.

    .venv/bin/python benchmarks/bench_spark_equal.py [--rows 10000000] [--bucket-rows 1000000]
                                                     [--driver-memory 6g] [--methods mdav_round ranking_round]
                                                     [--data lognormal|symmetric] [--seed 0.25]

Data: `bench_spark.make_source` (id, region with 4 values, x lognormal rounded to cents, so that ties
occur at every value, the median included), or with --data symmetric cents symmetric about 0 in every
stratum (`symmetric_source`), where MDAV's decision at the median is an exact tie. For each method, the release masks x with k = 5 within
the 4 strata on Spark (local[2]; with 10M rows and buckets of 1M every stratum is split into 2-3
buckets, the huge-stratum path) and with DuckDB, and the two tables are joined on the key: the
script prints the records whose released x differs (it must be 0: both engines decide every tie of
MDAV exactly, `methods._exact`), the buckets and both releases' times. Nothing is asserted: it is a
measurement for docs/spark.md; the tests check the same on small data with hypothesis.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spark import make_source  # noqa: E402

from duckdb_sdc.release import parse_spec, release  # noqa: E402
from duckdb_sdc.spark import Options, local_session  # noqa: E402
from duckdb_sdc.spark import release as spark_release  # noqa: E402


def symmetric_source(path: Path, n: int, seed: float) -> None:
    """Cents symmetric about 0 in every stratum: one 0 per region, then pairs -d, +d of one region each
    (d lognormal, rounded to cents). The median of a stratum is 0 and what MDAV has left at the round
    that reaches it from both ends is symmetric too: an exact tie, which a float running total decides
    by its rounding."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SELECT setseed({seed})")
    regions = "['north', 'south', 'east', 'west']"
    con.execute(f"""CREATE TABLE pairs AS SELECT p, {regions}[1 + (hash(p) % 4)::INT] AS region,
                    round(exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())), 2) AS d
                    FROM range({(n - 4) // 2}) r(p)""")
    con.execute(f"""COPY (SELECT i AS id, {regions}[i + 1] AS region, 0.0 AS x FROM range(4) r(i)
                          UNION ALL SELECT 4 + 2 * p, region, -d FROM pairs
                          UNION ALL SELECT 5 + 2 * p, region, d FROM pairs)
                    TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
    con.close()


def spec_doc(out: str, method: str) -> dict:
    return {"source": {"files": "src.parquet", "key": "id"}, "output": {"database": out, "table": "t"},
            "masking": {"strata": ["region"]},
            "columns": {"id": {"rule": "keep", "identifying": False}, "region": "keep", "x": {"method": method, "k": 5}}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--bucket-rows", type=int, default=1_000_000)
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--methods", nargs="+", default=["mdav_round", "ranking_round"])
    parser.add_argument("--data", choices=("lognormal", "symmetric"), default="lognormal",
                        help="lognormal: bench_spark's cents; symmetric: cents symmetric about 0 per stratum")
    parser.add_argument("--seed", type=float, default=0.25, help="DuckDB's setseed for --data symmetric")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.data == "symmetric":
            symmetric_source(folder / "src.parquet", args.rows, args.seed)
        else:
            make_source(folder / "src.parquet", args.rows)
        spark = local_session("local[2]", quiet=True, config={"spark.driver.memory": args.driver_memory})
        con = duckdb.connect()
        ties = con.execute(f"SELECT count(*) - count(DISTINCT x) FROM '{folder}/src.parquet'").fetchone()[0]
        print(f"{args.rows} rows, 4 strata, x {args.data} in cents ({ties} records share their value with an "
              f"earlier one), buckets of {args.bucket_rows}")
        for method in args.methods:
            t = time.perf_counter()
            result = spark_release(parse_spec(spec_doc(f"spark_{method}", method), base=folder), spark,
                                   options=Options(bucket_rows=args.bucket_rows))
            spark_s = time.perf_counter() - t
            t = time.perf_counter()
            release(parse_spec(spec_doc(f"duck_{method}.duckdb", method), base=folder))
            duck_s = time.perf_counter() - t
            differ, strata = _compare(con, result.path, folder / f"duck_{method}.duckdb")
            print(f"{method}: {differ} records differ (in {strata} strata); Spark {spark_s:.1f} s, "
                  f"DuckDB {duck_s:.1f} s")
        con.close()
        spark.stop()
    return 0


def _compare(con, spark_folder: str, duck_file: Path) -> tuple[int, int]:
    con.execute(f"ATTACH '{duck_file}' AS d (READ_ONLY)")
    try:
        return con.execute(f"""
            SELECT count(*) FILTER (WHERE s.x IS DISTINCT FROM d.x),
                   count(DISTINCT s.region) FILTER (WHERE s.x IS DISTINCT FROM d.x)
            FROM read_parquet('{spark_folder}/t/*.parquet') s JOIN d.t d USING (id)""").fetchone()
    finally:
        con.execute("DETACH d")


if __name__ == "__main__":
    sys.exit(main())
