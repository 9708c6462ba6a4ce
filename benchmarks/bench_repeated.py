"""Repeated values and many small groups: what they cost against distinct values and one group.

    .venv/bin/python benchmarks/bench_repeated.py [--rows 1000000] [--groups 50000]

Part 1, repeated values (numpy layer, each case in a fresh process so that its peak RSS is its own):
every function on n distinct values (log-normal), on n identical values and on n values repeated over
4 distinct points, the same n. Target: identical or heavily repeated input never costs more than
distinct input of the same size (ratio <= 1, up to noise). The sizes differ per function where the
distinct case is slow by design: rbd_round is O(n^2 / groups) on distinct values (20k), the
multivariate and box functions run on 200k records of 2 attributes, the univariate ones on --rows
(each size at most --rows).
The baseline of each size is DuckDB's ORDER BY of the same n distinct values, measured in the same
run (its column "order by").

Part 2, many small groups (SQL): --groups groups of 4 records against one group of the same rows,
for the Python-backed measure aggregates and the list functions, e.g.
    SELECT g, rank_mae(x, xm) FROM t GROUP BY g      against      SELECT rank_mae(x, xm) FROM t
Target for the measures: at most 3x the one-group cost. DuckDB's own grouping of the same lists
(SELECT g, len(list(...)) FROM t GROUP BY g) is printed as the floor no UDF can go below.
global_linkage (O(n^3), at most 5000 records) is measured on 1000 groups of 4 against one group of
4000. Single runs after a warm-up; the machine may be shared, so ratios near 1 are noise.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

N_RBD = 20_000  # at most (and at most --rows)
N_RECORDS = 200_000


def _inputs(kind: str, n: int, p: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    if kind == "distinct":
        return np.exp(9 + 1.2 * rng.normal(size=(n, p)))
    if kind == "identical":
        return np.full((n, p), 1234.5)
    points = np.exp(9 + 1.2 * rng.normal(size=(4, p)))  # heavily repeated: 4 points
    return points[rng.integers(0, 4, n)]


def _cases(rows: int):
    from duckdb_sdc import methods as M
    from duckdb_sdc.methods import boxes as bx
    from duckdb_sdc.methods import multivariate as mv

    one = {  # name: (n, p, function of the (n, p) matrix)
        "mdav_round": (rows, 1, lambda X: M.mdav_round(X[:, 0], 5)),
        "vmdav_round": (rows, 1, lambda X: M.vmdav_round(X[:, 0], 5)),
        "oma_round": (rows, 1, lambda X: M.oma_round(X[:, 0], 5)),
        "ranking_round": (rows, 1, lambda X: M.ranking_round(X[:, 0], 5)),
        "ewd_round": (rows, 1, lambda X: M.ewd_round(X[:, 0], 10)),
        "efd_round": (rows, 1, lambda X: M.efd_round(X[:, 0], 10)),
        "kmd_round": (rows, 1, lambda X: M.kmd_round(X[:, 0], 10)),
        "rbd_round": (min(rows, N_RBD), 1, lambda X: M.rbd_round(X[:, 0], 10, seed=1)),
        "mdav_multi_round": (min(rows, N_RECORDS), 2, lambda X: mv.mdav_multi_round(X, 5)),
        "mondrian_round": (min(rows, N_RECORDS), 2, lambda X: mv.mondrian_round(X, 5)),
        "box_density": (min(rows, N_RECORDS), 2, lambda X: bx.density(X, 5)),
        "box_c": (min(rows, N_RECORDS), 2, lambda X: bx.optimal_boxes(X, "mean(1) + mean(2)", 5).c),
        "box_half_widths": (min(rows, N_RECORDS), 2, lambda X: bx.optimal_boxes(X, "var(1) + mean(2)", 5).half_widths),
    }
    return one


def run_case(name: str, kind: str, rows: int) -> dict:
    """One function on one input, in this process: seconds and peak RSS (MB)."""
    n, p, fn = _cases(rows)[name]
    fn(_inputs(kind, 300, p))  # warm-up (Numba caches)
    X = _inputs(kind, n, p)
    start = time.perf_counter()
    fn(X)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def order_by(n: int) -> float:
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS SELECT exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS x "
                f"FROM range({n})")
    start = time.perf_counter()
    con.execute("CREATE TABLE s AS SELECT x FROM t ORDER BY x")
    return time.perf_counter() - start


def repeated(rows: int) -> None:
    print("Repeated values (numpy layer; each case in its own process; peak RSS in MB)")
    print(f"{'function':>18} {'n':>9} {'order by':>9} {'distinct':>9} {'identical':>10} {'4 points':>9} "
          f"{'ident/dist':>10} {'4pt/dist':>9} {'RSS dist':>9} {'RSS ident':>10} {'RSS 4pt':>8}")
    baselines: dict[int, float] = {}
    for name, (n, _, _) in _cases(rows).items():
        if n not in baselines:
            baselines[n] = order_by(n)
        got = {}
        for kind in ("distinct", "identical", "repeated"):
            out = subprocess.run([sys.executable, __file__, "--case", name, kind, str(rows)], capture_output=True,
                                 text=True, check=True)
            got[kind] = json.loads(out.stdout.strip().splitlines()[-1])
        d, i, r = (got[k]["seconds"] for k in ("distinct", "identical", "repeated"))
        print(f"{name:>18} {n:>9,} {baselines[n]:>9.3f} {d:>9.3f} {i:>10.3f} {r:>9.3f} {i / d:>10.2f} {r / d:>9.2f} "
              f"{got['distinct']['rss_mb']:>9.0f} {got['identical']['rss_mb']:>10.0f} {got['repeated']['rss_mb']:>8.0f}",
              flush=True)


MEASURES = [
    ("rank_mae", "rank_mae(x, xm)"),
    ("rank_bounded_mse", "rank_bounded_mse(x, xm)"),
    ("il_metrics", "il_metrics([x, y], [xm, ym])"),
    ("regression_utility", "regression_utility([x, y], [xm, ym])"),
    ("interval_disclosure", "interval_disclosure([x, y], [xm, ym])"),
    ("sd_interval_disclosure", "sd_interval_disclosure([x, y], [xm, ym])"),
    ("rank_interval_disclosure", "rank_interval_disclosure([x, y], [xm, ym])"),
    ("record_linkage", "record_linkage([x, y], [xm, ym])"),
    ("il_dr_score", "il_dr_score([x, y], [xm, ym])"),
]
LISTS = [
    ("mdav_round", "len(mdav_round(list(x), 2))"),
    ("oma_round", "len(oma_round(list(x), 2))"),
    ("efd_round", "len(efd_round(list(x), 2))"),
    ("kmd_round", "len(kmd_round(list(x), 2))"),
    ("mdav_multi_round", "len(mdav_multi_round(list([x, y]), 2))"),
    ("mondrian_round", "len(mondrian_round(list([x, y]), 2))"),
    ("box_c", "len(box_c(list([x, y]), 2, 'mean(1)'))"),
]


def groups(count: int) -> None:
    import duckdb_sdc

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")

    def table(g: int) -> None:
        con.execute(f"CREATE OR REPLACE TABLE t AS SELECT i // 4 AS g, random() AS x, random() AS y, "
                    f"random() AS xm, random() AS ym FROM range({4 * g}) r(i)")

    def timed(sql: str) -> float:
        start = time.perf_counter()
        con.execute(sql).fetchall()
        return time.perf_counter() - start

    table(500)
    for _, expr in MEASURES + LISTS:  # warm-up
        con.execute(f"SELECT g, {expr} FROM t GROUP BY g").fetchall()
    table(count)
    print(f"\nMany small groups: {count:,} groups of 4 rows against one group of the same {4 * count:,} rows (SQL)")
    print(f"{'function':>26} {'groups':>8} {'one':>8} {'ratio':>6}")
    floor_g = timed("SELECT g, len(list(struct_pack(x := [x, y], xm := [xm, ym]))) FROM t GROUP BY g")
    floor_1 = timed("SELECT len(list(struct_pack(x := [x, y], xm := [xm, ym]))) FROM t")
    print(f"{'(DuckDB lists only)':>26} {floor_g:>8.2f} {floor_1:>8.2f} {floor_g / floor_1:>6.1f}")
    for name, expr in MEASURES + LISTS:
        tg = timed(f"SELECT g, {expr} FROM t GROUP BY g")
        t1 = timed(f"SELECT {expr} FROM t")
        print(f"{name:>26} {tg:>8.2f} {t1:>8.2f} {tg / t1:>6.1f}", flush=True)
    table(1000)
    tg = timed("SELECT g, global_linkage([x, y], [xm, ym]) FROM t GROUP BY g")
    t1 = timed("SELECT global_linkage([x, y], [xm, ym]) FROM t")
    print(f"{'global_linkage (4000 rows)':>26} {tg:>8.2f} {t1:>8.2f} {tg / t1:>6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--groups", type=int, default=50_000)
    parser.add_argument("--case", nargs=3, metavar=("FUNCTION", "INPUT", "ROWS"))
    parser.add_argument("--part", choices=["repeated", "groups", "both"], default="both")
    args = parser.parse_args()
    if args.case:
        name, kind, rows = args.case
        print(json.dumps(run_case(name, kind, int(rows))))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.part in ("repeated", "both"):
        repeated(args.rows)
    if args.part in ("groups", "both"):
        groups(args.groups)


if __name__ == "__main__":
    main()
