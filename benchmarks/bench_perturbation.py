"""Noise addition, rank swapping and base rounding end to end in SQL, against DuckDB's own ORDER BY of the same
column in the same run, with the memory each query took.

    .venv/bin/python benchmarks/bench_perturbation.py [--rows 1000000 10000000] [--repeat 2]

For every size: a table t(id BIGINT, x DOUBLE) of lognormal values; the baseline is
`CREATE TABLE s AS SELECT x FROM t ORDER BY x`; each method is timed as the list form over (id, x)
structs (ids unnested beside the masked values) and as the table form
`SELECT * FROM <method>_table('t', 'x', ...)`. Best of --repeat runs; ratio = method / ORDER BY
(target: within 2x at 10M rows). Peak memory: the process's peak resident set (VmHWM) is reset
before each query (Linux: writing 5 to /proc/self/clear_refs) and read after it; the column shows
that peak minus the resident set before the query, in MB (the baseline's row gives ORDER BY's).
"""

from __future__ import annotations

import argparse

from common import against_order_by

import duckdb_sdc

CASES = [("add_noise", "0.1, seed := 1"), ("rank_swap", "1, seed := 1"), ("rank_swap", "10, seed := 1"),
         ("rank_swap", "10, top_percent := 5, bottom_percent := 5, seed := 1"), ("base_round", "5")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE warm AS SELECT random() AS x FROM range(300000)")
    for name, arguments in CASES:  # load compiled code before timing
        con.execute(f"SELECT {name}(list(x), {arguments}) FROM warm").fetchall()
    header = f"{'rows':>11} {'method':>10} {'args':>40} {'form':>6} {'seconds':>8} {'ratio':>6} {'peak MB':>8}"
    print(header)
    print("-" * len(header))
    for r in against_order_by(con, CASES, args.rows, args.repeat):
        print(f"{r['rows']:>11,} {r['name']:>10} {r['args'].replace(', seed := 1', ''):>40} {r['form']:>6} {r['seconds']:>8.2f} "
              f"{r['ratio']:>6.2f} {r['peak_mb'] or 0:>8.0f}", flush=True)
    con.close()


if __name__ == "__main__":
    main()
