"""Univariate microaggregation end to end in SQL, against DuckDB's own ORDER BY of the same column.

    .venv/bin/python benchmarks/bench_microaggregation.py [--rows 1000000 10000000] [--repeat 3]

For every size: a table t(id BIGINT, x DOUBLE) of lognormal values; the baseline is
`CREATE TABLE s AS SELECT x FROM t ORDER BY x`; each method is timed as the table form
`CREATE TABLE m AS SELECT * FROM <method>_round_table('t', 'x', k)` (all columns back, x masked) and
as the list form over (id, x) structs. Best of --repeat runs; the ratio is method / ORDER BY.
Also prints Numba's first-call compile time (empty cache) and the first call with a warm cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from common import LIST_FORM, ORDER_BY, TABLE_FORM, best_of, lognormal_table

import duckdb_sdc

CASES = [("mdav", 5), ("mdav", 50), ("oma", 5), ("oma", 50), ("ranking", 5), ("vmdav", 5)]



def first_call_seconds(cache_dir: str) -> float:
    code = ("import time, duckdb_sdc; t = time.perf_counter(); con = duckdb_sdc.connect(); con.execute('SET enable_progress_bar = false'); "
            "[con.execute(f\"SELECT {m}_round(list(x), 3) FROM (SELECT random() AS x FROM range(500000))\").fetchall() "
            "for m in ('mdav', 'vmdav', 'oma', 'ranking')]; print(time.perf_counter() - t)")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        cold = first_call_seconds(cache)
        warm = first_call_seconds(cache)
    print(f"first calls of the four methods in a new process: {cold:.2f} s with an empty Numba cache "
          f"(compilation), {warm:.2f} s with the cache filled\n")

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE warm AS SELECT random() AS x FROM range(1000)")
    for method, k in CASES:  # load compiled code before timing
        con.execute(f"SELECT {method}_round(list(x), {k}) FROM warm").fetchall()
    header = f"{'rows':>11} {'method':>8} {'k':>3} {'form':>6} {'seconds':>8} {'ORDER BY':>9} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for n in args.rows:
        lognormal_table(con, n)
        base = best_of(lambda: con.execute(ORDER_BY), args.repeat)
        for method, k in CASES:
            for form, template in (("table", TABLE_FORM), ("list", LIST_FORM)):
                sql = template.format(name=f"{method}_round", args=k)
                secs = best_of(lambda: con.execute(sql), args.repeat)
                print(f"{n:>11,} {method:>8} {k:>3} {form:>6} {secs:>8.2f} {base:>9.2f} {secs / base:>6.2f}",
                      flush=True)
    con.close()


if __name__ == "__main__":
    main()
