"""Rounding by discretisation end to end in SQL, against DuckDB's own ORDER BY of the same column,
and exact 1-D k-means against the `ckmeans` package (optional) on the same numpy array.

    .venv/bin/python benchmarks/bench_discretisation.py [--rows 1000000 10000000] [--repeat 2]

For every size: a table t(id BIGINT, x DOUBLE) of lognormal values (all distinct); the baseline is
`CREATE TABLE s AS SELECT x FROM t ORDER BY x`; each method is timed as the list form over (id, x)
structs (ids unnested beside the rounded values) and as the table form
`SELECT * FROM <method>_round_table('t', 'x', c)`. Best of --repeat runs; ratio = method / ORDER BY.

The second table runs exact k-means on the numpy array of the same column: duckdb_sdc's
`kmd_partition_sorted` after its own sort, beside `ckmeans.ckmeans(x, c)` from the package index
where it is installed (it is not a dependency of duckdb_sdc: `pip install ckmeans` to compare), and
checks that both reach the same within-cluster sum of squares. ckmeans keeps c x n tables, so it is
skipped where c * n > 1e8.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from common import LIST_FORM, ORDER_BY, TABLE_FORM, best_of, lognormal_table

import duckdb_sdc
from duckdb_sdc.methods import discretisation as disc
from duckdb_sdc.methods._order import sort_column

try:
    import ckmeans
except ImportError:  # optional comparison
    ckmeans = None

CASES = [("ewd", 10), ("ewd", 100), ("efd", 10), ("efd", 100), ("kmd", 10), ("kmd", 100)]



def sse_of_sorted_labels(v: np.ndarray, labels: np.ndarray) -> float:
    counts = np.bincount(labels)
    centre = v[v.shape[0] // 2]
    sums = np.bincount(labels, weights=v - centre)
    return float(np.sum((v - centre - (sums / counts)[labels]) ** 2))


def sql_table(con, sizes, repeat):
    header = f"{'rows':>11} {'method':>7} {'c':>4} {'list (s)':>9} {'ratio':>6} {'table (s)':>10} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        lognormal_table(con, n)
        base = best_of(lambda: con.execute(ORDER_BY), repeat)
        print(f"{n:>11,} {'ORDER BY':>7} {'':>4} {base:>9.2f} {1:>6.2f}", flush=True)
        for method, c in CASES:
            lst = best_of(lambda: con.execute(LIST_FORM.format(name=f"{method}_round", args=c)), repeat)
            tab = best_of(lambda: con.execute(TABLE_FORM.format(name=f"{method}_round", args=c)), repeat)
            print(f"{n:>11,} {method:>7} {c:>4} {lst:>9.2f} {lst / base:>6.2f} {tab:>10.2f} {tab / base:>6.2f}",
                  flush=True)


def ckmeans_table(con, sizes, repeat):
    print()
    if ckmeans is None:
        print("ckmeans is not installed (pip install ckmeans): comparison skipped")
        return
    header = f"{'rows':>11} {'c':>4} {'duckdb_sdc (s)':>15} {'ckmeans (s)':>12} {'ratio':>6} {'same SSE':>9}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        x = np.exp(9 + 1.2 * np.random.default_rng(n).normal(size=n))
        for c in (10, 100):
            ours = best_of(lambda: disc.kmd_partition_sorted(sort_column(x)[1], c), repeat)
            v = sort_column(x)[1]
            sse = sse_of_sorted_labels(v, disc.kmd_partition_sorted(v, c))
            if c * n > 1e8:
                print(f"{n:>11,} {c:>4} {ours:>15.2f} {'skipped':>12}", flush=True)
                continue
            theirs = best_of(lambda: ckmeans.ckmeans(x, c), repeat)
            clusters = ckmeans.ckmeans(x, c)
            labels = np.repeat(np.arange(len(clusters)), [len(g) for g in clusters])
            other = sse_of_sorted_labels(np.concatenate(clusters), labels)
            same = math.isclose(sse, other, rel_tol=1e-9)
            print(f"{n:>11,} {c:>4} {ours:>15.2f} {theirs:>12.2f} {ours / theirs:>6.2f} {str(same):>9}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--skip-sql", action="store_true")
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute("CREATE TABLE warm AS SELECT random() AS x FROM range(100000)")
    for method, c in CASES:  # load compiled code before timing
        con.execute(f"SELECT {method}_round(list(x), {c}) FROM warm").fetchall()
    if not args.skip_sql:
        sql_table(con, args.rows, args.repeat)
    ckmeans_table(con, args.rows, args.repeat)
    con.close()


if __name__ == "__main__":
    main()
