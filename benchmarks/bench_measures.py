"""Information-loss and disclosure-risk measures in SQL, against `SELECT avg(abs(x - y)) FROM t` on the
same table in the same run.

    .venv/bin/python benchmarks/bench_measures.py [--rows 1000000 10000000] [--repeat 3]

For every size: a table t(x DOUBLE, y DOUBLE) of lognormal values x and masked values y (x plus 10%
noise, rounded to 3 significant digits, so y has ties). Each measure is timed as
`SELECT <measure>(x, y) FROM t` (row-vector measures as `<measure>([x], [y])`), fully fetched, in turn
with the baseline (the machine is shared: alternating keeps both under the same load); best of
--repeat runs of each (the slow Python-backed measures at most 2). Ratio = measure / baseline. Then DDR on
5 columns: t5(x1..x5, y1..y5) with `record_linkage([x1, ..., x5], [y1, ..., y5])` at 1M rows. For
scale, the last row of each size is DuckDB's ORDER BY of x alone (no measure can rank without sorting).
"""

from __future__ import annotations

import argparse
import time

from common import ORDER_BY

import duckdb_sdc

CASES = [
    ("mae", "mae(x, y)"),
    ("mse", "mse(x, y)"),
    ("il1", "il1(x, y)"),
    ("il1s", "il1s(x, y)"),
    ("sse_sst", "sse_sst(x, y)"),
    ("stddev_samp alone", "stddev_samp(x)"),
    ("rank_bounded_mae", "rank_bounded_mae(x, y)"),
    ("record_linkage (1 col)", "record_linkage([x], [y])"),
]
SLOW = {"rank_bounded_mae", "record_linkage (1 col)"}
# not a measure: one sort of x, for scale (the rank measures sort both columns, DDR sorts both sides)
SORT = ("ORDER BY x alone", ORDER_BY)


BASELINE = "SELECT avg(abs(x - y)) FROM t"


def seconds(con, sql: str) -> float:
    start = time.perf_counter()
    con.execute(sql).fetchall()
    return time.perf_counter() - start


def alternating(con, sql: str, repeat: int) -> tuple[float, float]:
    """Best times of `sql` and of the baseline, run in turn `repeat` times."""
    pairs = [(seconds(con, sql), seconds(con, BASELINE)) for _ in range(repeat)]
    return min(p[0] for p in pairs), min(p[1] for p in pairs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ddr5-rows", type=int, default=1_000_000)
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE warm AS SELECT random() AS x, random() AS y FROM range(1000)")
    for _, expr in CASES:  # load compiled code before timing
        con.execute(f"SELECT {expr} FROM warm").fetchall()
    header = f"{'rows':>11} {'measure':>24} {'seconds':>8} {'baseline':>9} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for n in args.rows:
        con.execute(f"""CREATE OR REPLACE TABLE t AS
            SELECT x, round(x * (1 + 0.1 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())),
                            2 - floor(log10(x))::INT) AS y
            FROM (SELECT exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS x FROM range({n}))""")
        runs = [(name, f"SELECT {expr} FROM t") for name, expr in CASES] + [SORT]
        for name, sql in runs:
            secs, base = alternating(con, sql, min(args.repeat, 2) if name in SLOW else args.repeat)
            print(f"{n:>11,} {name:>24} {secs:>8.3f} {base:>9.3f} {secs / base:>7.2f}", flush=True)
    if args.ddr5_rows:
        n = args.ddr5_rows
        cols = ", ".join(f"random() AS x{j}" for j in range(1, 6))
        noisy = ", ".join(f"x{j} + 0.02 * (random() - 0.5) AS y{j}" for j in range(1, 6))
        con.execute(f"CREATE OR REPLACE TABLE t5 AS SELECT *, {noisy} FROM (SELECT {cols} FROM range({n}))")
        base = min(seconds(con, "SELECT avg(abs(x1 - y1)) FROM t5") for _ in range(5))
        xs = ", ".join(f"x{j}" for j in range(1, 6))
        ys = ", ".join(f"y{j}" for j in range(1, 6))
        start = time.perf_counter()
        risk = con.execute(f"SELECT record_linkage([{xs}], [{ys}]) FROM t5").fetchall()[0][0]
        secs = time.perf_counter() - start
        print(f"{n:>11,} {'record_linkage (5 cols)':>24} {secs:>8.3f} {base:>9.3f} {secs / base:>7.1f}"
              f"   (DDR = {risk:.4f})")
    con.close()


if __name__ == "__main__":
    main()
