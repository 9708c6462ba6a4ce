"""Box anonymisation: the characteristic-aware Mondrian and the optimal local boxes against plain strict
Mondrian (mondrian_partition) measured in the same run, and the SQL forms.

    .venv/bin/python benchmarks/bench_boxes.py [--rows 10000 100000 1000000]

Data: n records x 3 correlated log-normal attributes, k = 5, characteristic 'corr(1, 2) + mean(3)'.
* "plain Mondrian": multivariate.mondrian_partition (the baseline, numpy);
* "aware release": boxes.box_release (sensitivities, the aware Mondrian and the box bounds), without
  and with l-diversity (l = 3, eps = 1% of each attribute's sd);
* "optimal boxes": boxes.optimal_boxes (k-d tree density with m = k, the half-widths; with l = 3 too);
* "fuzzy weights": boxes.fuzzy_weights on the c(x) of the optimal boxes;
* "SQL table": CREATE TABLE b AS SELECT * FROM box_release_table('t', ['a', 'b', 'c'], 5, ...);
* "weighted_corr": the pure-SQL aggregate over the table against DuckDB's corr (unweighted).
Single runs (the machine is shared); ratio = time / plain Mondrian's (for weighted_corr: / corr's).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common import timed

import duckdb_sdc
from duckdb_sdc.methods import boxes as bx
from duckdb_sdc.methods import multivariate as mv

K = 5
SPEC = "corr(1, 2) + mean(3)"


def data(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((3, 3)) + 0.5 * np.eye(3)
    return np.round(np.exp(9 + 0.8 * rng.multivariate_normal(np.zeros(3), cov, size=n)), 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    warm = data(300)
    bx.box_release(warm, SPEC, K, 3, 1.0), bx.optimal_boxes(warm, SPEC, K, 3, 1.0), mv.mondrian_partition(warm, K)
    bx.fuzzy_weights(np.arange(5.0), 3, 1.0)

    print(f"{'rows':>10} {'step':>28} {'seconds':>8} {'ratio':>7}")
    print("-" * 56)
    for n in args.rows:
        X = data(n)
        eps = (0.01 * X.std(axis=0)).tolist()
        df = pd.DataFrame(X, columns=["a", "b", "c"])
        df.insert(0, "id", np.arange(n))
        df["w"] = np.random.default_rng(1).random(n)
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM df")
        base, _ = timed(lambda: mv.mondrian_partition(X, K))
        c = bx.optimal_boxes(X, SPEC, K).c
        eps_sql = "[" + ", ".join(repr(e) for e in eps) + "]"
        steps = [
            ("plain Mondrian (baseline)", lambda: None),
            ("aware release", lambda: bx.box_release(X, SPEC, K)),
            ("aware release, l = 3", lambda: bx.box_release(X, SPEC, K, 3, eps)),
            ("optimal boxes", lambda: bx.optimal_boxes(X, SPEC, K)),
            ("optimal boxes, l = 3", lambda: bx.optimal_boxes(X, SPEC, K, 3, eps)),
            ("fuzzy weights", lambda: bx.fuzzy_weights(c, 3, 1.0)),
            ("SQL table", lambda: con.execute(
                f"CREATE OR REPLACE TABLE b AS SELECT * FROM box_release_table('t', ['a', 'b', 'c'], {K}, '{SPEC}')")),
            ("SQL table, l = 3", lambda: con.execute(
                f"CREATE OR REPLACE TABLE b AS SELECT * FROM box_release_table('t', ['a', 'b', 'c'], {K}, '{SPEC}', "
                f"l := 3, eps := {eps_sql})")),
        ]
        for name, fn in steps:
            secs = base if name.startswith("plain") else timed(fn)[0]
            print(f"{n:>10,} {name:>28} {secs:>8.2f} {secs / base:>7.2f}", flush=True)
        plain_corr, _ = timed(lambda: con.execute("SELECT corr(a, b) FROM t").fetchall())
        weighted, _ = timed(lambda: con.execute("SELECT weighted_corr(a, b, w) FROM t").fetchall())
        print(f"{n:>10,} {'corr (DuckDB, baseline)':>28} {plain_corr:>8.2f} {1:>7.2f}")
        print(f"{n:>10,} {'weighted_corr':>28} {weighted:>8.2f} {weighted / plain_corr:>7.1f}", flush=True)
    con.close()


if __name__ == "__main__":
    main()
