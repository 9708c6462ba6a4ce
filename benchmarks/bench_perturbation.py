"""Noise addition and rank swapping end to end in SQL, against DuckDB's own ORDER BY of the same
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
from pathlib import Path

from common import LIST_FORM, ORDER_BY, TABLE_FORM, best_of, lognormal_table

import duckdb_sdc

CASES = [("add_noise", "0.1, seed := 1"), ("rank_swap", "1, seed := 1"), ("rank_swap", "10, seed := 1")]
_STATUS = Path("/proc/self/status")


def _kb(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def peak_mb(run) -> float | None:
    """Peak resident memory of one call of run() above the resident set before it, in MB; None where
    the peak cannot be reset (not Linux)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    before = _kb("VmRSS")
    run()
    return (_kb("VmHWM") - before) / 1024


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
    header = (f"{'rows':>11} {'method':>10} {'args':>14} {'list (s)':>9} {'ratio':>6} {'peak MB':>8} "
              f"{'table (s)':>10} {'ratio':>6} {'peak MB':>8}")
    print(header)
    print("-" * len(header))
    for n in args.rows:
        lognormal_table(con, n)
        base = best_of(lambda: con.execute(ORDER_BY), args.repeat)
        base_mb = peak_mb(lambda: con.execute(ORDER_BY))
        print(f"{n:>11,} {'ORDER BY':>10} {'':>14} {base:>9.2f} {1:>6.2f} {base_mb or 0:>8.0f}", flush=True)
        for name, arguments in CASES:
            list_sql = LIST_FORM.format(name=name, args=arguments)
            table_sql = TABLE_FORM.format(name=name, args=arguments)
            lst = best_of(lambda: con.execute(list_sql), args.repeat)
            lst_mb = peak_mb(lambda: con.execute(list_sql))
            tab = best_of(lambda: con.execute(table_sql), args.repeat)
            tab_mb = peak_mb(lambda: con.execute(table_sql))
            shown = arguments.split(",")[0]
            print(f"{n:>11,} {name:>10} {shown:>14} {lst:>9.2f} {lst / base:>6.2f} {lst_mb or 0:>8.0f} "
                  f"{tab:>10.2f} {tab / base:>6.2f} {tab_mb or 0:>8.0f}", flush=True)
    con.close()


if __name__ == "__main__":
    main()
