"""Multivariate MDAV and Mondrian: the k-d tree MDAV against a plain numpy O(n^2/k) MDAV measured in
the same run, and both methods end to end in SQL.

    .venv/bin/python benchmarks/bench_multivariate.py [--rows 10000 100000 1000000] [--baseline-max 100000]

Data: n records x 5 correlated, skewed attributes (log-normal, like incomes and expenses), k = 5.
* "numpy": duckdb_sdc.methods (mdav_multi_partition / mondrian_partition), the partition only;
* "plain numpy": the textbook MDAV written with vectorised numpy, every farthest / nearest search a
  scan of the remaining records (O(n^2/k) distance computations, same standardisation and tie rules),
  run up to --baseline-max records (it grows with n^2: 1M records would take hours); its partition is
  checked to be the same;
* "SQL table": CREATE TABLE m AS SELECT * FROM <method>_round_table('t', [a, b, c, d, e], 5), every
  column back with the five masked in place.
Single runs (the machine is shared); ratio = plain numpy / numpy.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common import timed

import duckdb_sdc
from duckdb_sdc.methods import multivariate as mv

K = 5
COLS = ["a", "b", "c", "d", "e"]


def data(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.ones((5, 5)) + 0.5 * np.eye(5)
    z = rng.multivariate_normal(np.zeros(5), cov, size=n)
    return np.round(np.exp(9 + 0.8 * z), 2)


def plain_numpy_mdav(X: np.ndarray, k: int) -> np.ndarray:
    """Textbook MDAV, each step a vectorised scan of the remaining records."""
    R = mv.standardised(X)
    idx = np.arange(R.shape[0])
    labels = np.full(R.shape[0], -1, np.int64)
    g = 0

    def farthest(a, b):
        return int(np.argmax(((a * R - b) ** 2).sum(axis=1)))  # first maximum: smallest position

    def take(row):
        nonlocal R, idx, g
        d = ((R - R[row]) ** 2).sum(axis=1)
        d[row] = -1.0
        part = np.argpartition(d, k - 1)[:k]
        kth = d[part].max()
        below = np.flatnonzero(d < kth)
        ties = np.flatnonzero(d == kth)[: k - below.size]  # ties in input order
        group = np.concatenate([below, ties])
        labels[idx[group]] = g
        g += 1
        keep = np.ones(R.shape[0], bool)
        keep[group] = False
        point = R[row].copy()
        R, idx = R[keep], idx[keep]
        return point

    while R.shape[0] >= 3 * k:
        r = take(farthest(R.shape[0], R.sum(axis=0)))
        take(farthest(1.0, r))
    if R.shape[0] >= 2 * k:
        take(farthest(R.shape[0], R.sum(axis=0)))
    labels[idx] = g
    return labels


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--baseline-max", type=int, default=100_000)
    args = parser.parse_args()

    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    warm = data(200)
    mv.mdav_multi_partition(warm, K), mv.mondrian_partition(warm, K), mv.mondrian_partition(warm, K, "relaxed")
    plain_numpy_mdav(warm, K)

    header = (f"{'rows':>10} {'method':>16} {'numpy (s)':>10} {'plain numpy (s)':>16} {'ratio':>7} "
              f"{'same':>5} {'SQL table (s)':>14}")
    print(header)
    print("-" * len(header))
    for n in args.rows:
        X = data(n)
        df = pd.DataFrame(X, columns=COLS)
        df.insert(0, "id", np.arange(n))
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM df")
        cols = "['a', 'b', 'c', 'd', 'e']"
        for method, part, sql in (
            ("mdav", lambda: mv.mdav_multi_partition(X, K), f"mdav_multi_round_table('t', {cols}, {K})"),
            ("mondrian strict", lambda: mv.mondrian_partition(X, K), f"mondrian_round_table('t', {cols}, {K})"),
            ("mondrian relaxed", lambda: mv.mondrian_partition(X, K, "relaxed"),
             f"mondrian_round_table('t', {cols}, {K}, mode := 'relaxed')"),
        ):
            secs, labels = timed(part)
            base = ratio = same = ""
            if method == "mdav" and n <= args.baseline_max:
                base_secs, base_labels = timed(lambda: plain_numpy_mdav(X, K))
                base, ratio = f"{base_secs:.2f}", f"{base_secs / secs:.1f}"
                same = "yes" if np.array_equal(labels, base_labels) else "NO"
            elif method == "mdav":
                base = "not run"
            sql_secs, _ = timed(lambda: con.execute(f"CREATE OR REPLACE TABLE m AS SELECT * FROM {sql}"))
            print(f"{n:>10,} {method:>16} {secs:>10.2f} {base:>16} {ratio:>7} {same:>5} {sql_secs:>14.2f}", flush=True)
    con.close()


if __name__ == "__main__":
    main()
