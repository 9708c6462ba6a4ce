"""DP / iDP releases end to end in SQL, against DuckDB's own ORDER BY of the same column.

    .venv/bin/python benchmarks/bench_dp.py [--rows 1000000 10000000] [--repeat 3]

For every size: a table t(id BIGINT, x DOUBLE) of lognormal values; the baseline is
`CREATE TABLE s AS SELECT x FROM t ORDER BY x`. Each mechanism is timed, noise sampling included
(operating-system randomness, no seed), as the table form
`CREATE TABLE m AS SELECT * FROM <mechanism>_table('t', 'x', ...)` (all columns back, x released) and
as the list form over (id, x) structs. Best of --repeat runs; the ratio is mechanism / ORDER BY of the
same run; peak MB: the process's peak resident set during one more run, above the set before it.
Then the noise sampler alone: draws per second of the exact discrete Laplace sampler, beside
NumPy's float Laplace (unsafe: shown for scale only).
"""

from __future__ import annotations

import argparse

import numpy as np

from common import LIST_FORM, TABLE_FORM, against_order_by, best_of

import duckdb_sdc
from duckdb_sdc.methods import noise

CASES = [  # (mechanism, arguments after the column)
    ("idp_cbls", "5, 1.0"),
    ("idp_cbls", "50, 1.0"),
    ("idp_cbls", "5, 0.01"),
    ("idp_ls", "5, 1.0, 0, 1e7"),
    ("dp_um", "5, 1.0, 0, 1e7"),
    ("dp_laplace", "1.0, 0, 1e7"),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE warm AS SELECT random() AS x FROM range(1000)")
    for name, a in CASES:  # load compiled code before timing
        con.execute(f"SELECT {name}(list(x), {a}) FROM warm").fetchall()
    header = f"{'rows':>11} {'mechanism':>10} {'arguments':>16} {'form':>6} {'seconds':>8} {'ratio':>6} {'peak MB':>8}"
    print(header)
    print("-" * len(header))
    for r in against_order_by(con, CASES, args.rows, args.repeat, forms=(("table", TABLE_FORM), ("list", LIST_FORM))):
        print(f"{r['rows']:>11,} {r['name']:>10} {r['args']:>16} {r['form']:>6} {r['seconds']:>8.2f} {r['ratio']:>6.2f} "
              f"{r['peak_mb'] or 0:>8.0f}", flush=True)
    con.close()

    print("\nnoise sampler alone (one draw per cluster; 2M draws = 10M rows with k = 5)")
    draws = 2_000_000
    for eps in (1.0, 0.01):
        j = noise.precision_exponent(eps)
        secs = best_of(lambda: noise.discrete_laplace(draws, j, noise.RandomWords()), args.repeat)
        print(f"  exact discrete Laplace, epsilon = {eps:<5} (j = {j}): {draws / secs / 1e6:6.1f} M draws/s")
    words = best_of(lambda: noise.RandomWords()(draws * 8), args.repeat)
    print(f"  os.urandom alone: {draws * 64 / words / 1e6:6.0f} MB/s")
    rng = np.random.default_rng()
    secs = best_of(lambda: rng.laplace(0.0, 1.0, draws), args.repeat)
    print(f"  numpy float Laplace (unsafe, for scale): {draws / secs / 1e6:6.1f} M draws/s")


if __name__ == "__main__":
    main()
