"""Box anonymisation for accurate statistics (Xiang et al., IFSA 2013) on the reference data sets bundled
with the package (duckdb_sdc.datasets) and on skewed synthetic data.

Every record is released as a box (an interval per attribute) of at least k = 5 records. A statistic
computed from boxes is uncertain; to first order its half-width is Delta = (1/N) sum_x sum_i a_i(x) h_i(x),
h_i the half-width of x's box along attribute i, a_i = N |dC/dx_i|. For each data set (two attributes,
then the same two plus a third quasi-identifier that the statistics do not use) the tables compare:

* Delta of the two means (in sd units: 0.5 mean(1)/sd1 + 0.5 mean(2)/sd2) and of the correlation of
  the two attributes, from plain Mondrian boxes (mondrian_labels_table, bounds per cluster) and from
  boxes of the characteristic-aware Mondrian made for that statistic (box_release_table);
* 'local optimum': the paper's asymptotic (n/N) sum c(x) of the optimal local boxes for the correlation
  (not a partition, a reference; shown for two attributes: with a third one that the correlation
  ignores the optimum degenerates to c = 0 with unbounded boxes along it);
* for the correlation on the aware boxes, the total uncertainty (box part plus statistical error
  A sqrt(sum w^2), A = 2 (1 - r^2), two standard errors of r) with equal weights, with crisp
  dismissal of rare points and with the fuzzy weights, the share of records the fuzzy weights keep,
  and how far the weighted correlation of the original values moves from the unweighted one (the
  paper's objective does not count this bias: weighting changes what is estimated).

    .venv/bin/python examples/boxes_accuracy.py
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

import duckdb_sdc
from duckdb_sdc import datasets
from duckdb_sdc.methods import boxes as bx

K = 5
SETS = [  # name, data set, the two attributes of the statistics, a third quasi-identifier
    ("Tarragona", "tarragona", "SALES", "LABOR.COSTS", "FIXED.ASSETS"),
    ("Census", "census", "AGI", "FEDTAX", "AFNLWGT"),
    ("EIA", "eia", "RESREVENUE", "RESSALES", "UTILITYID"),
    ("testdata", "testdata", "income", "expend", "age"),
]


def quote_list(names) -> str:
    return "[" + ", ".join("'" + c.replace("'", "''") + "'" for c in names) + "]"


def plain_boxes(con, cols):
    """Plain strict Mondrian (the baseline) in SQL: cluster ids, then each cluster's bounds."""
    bounds = ", ".join(f'min("{c}") OVER w, max("{c}") OVER w' for c in cols)
    got = con.execute(f"SELECT {bounds} FROM mondrian_labels_table('d', {quote_list(cols)}, {K}) "
                      "WINDOW w AS (PARTITION BY cluster) ORDER BY id").fetchnumpy()
    arr = np.column_stack(list(got.values())).astype(float)
    return arr[:, 0::2], arr[:, 1::2]


def aware_boxes(con, cols, spec):
    """The characteristic-aware release in SQL (the characteristic names the columns)."""
    sel = ", ".join(f'"{c}_lower", "{c}_upper"' for c in cols)
    got = con.execute(f"SELECT {sel} FROM box_release_table('d', {quote_list(cols)}, {K}, '{spec}') "
                      "ORDER BY id").fetchnumpy()
    arr = np.column_stack(list(got.values())).astype(float)
    return arr[:, 0::2], arr[:, 1::2]


def evaluate(con, df, cols):
    """Delta of the means and of the correlation from plain and aware boxes; the weights on the aware
    boxes for the correlation."""
    con.execute("CREATE OR REPLACE TABLE d AS SELECT row_number() OVER () AS id, * FROM df")
    X = df[cols].to_numpy(float)
    N, n = X.shape
    sd = X.std(axis=0).tolist()
    q = [f'"{c}"' for c in cols]
    mean_spec = f"0.5 * mean({q[0]}) / {sd[0]!r} + 0.5 * mean({q[1]}) / {sd[1]!r}"
    corr_spec = f"corr({q[0]}, {q[1]})"
    a_mean = bx.sensitivities(X, mean_spec, cols)
    a_corr = bx.sensitivities(X, corr_spec, cols)
    lo, hi = plain_boxes(con, cols)
    lo_m, hi_m = aware_boxes(con, cols, mean_spec)
    lo_c, hi_c = aware_boxes(con, cols, corr_spec)
    deltas = (bx.box_uncertainty(a_mean, lo, hi), bx.box_uncertainty(a_mean, lo_m, hi_m),
              bx.box_uncertainty(a_corr, lo, hi), bx.box_uncertainty(a_corr, lo_c, hi_c),
              bx.optimal_boxes(X, corr_spec, K, names=cols).uncertainty if n == 2 else float("nan"))

    r = float(np.corrcoef(X[:, 0], X[:, 1])[0, 1])
    A = 2 * (1 - r * r)
    c = (a_corr * (hi_c - lo_c) / 2).sum(axis=1) / n  # each record's c(x) on its released box
    w = bx.fuzzy_weights(c, n, A)
    con.execute("CREATE OR REPLACE TABLE wt AS SELECT * FROM d POSITIONAL JOIN (SELECT unnest($1::DOUBLE[]) AS w)",
                [w.tolist()])
    r_w = con.execute(f"SELECT weighted_corr({q[0]}, {q[1]}, w) FROM wt").fetchone()[0]
    weights = (bx.weights_objective(np.full(N, 1 / N), c, n, A), bx.weights_objective(bx.crisp_weights(c, n, A), c, n, A),
               bx.weights_objective(w, c, n, A), 100 * (w > 0).mean(), r, r_w - r)
    return deltas, weights


def table(head, rows) -> None:
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def synthetic() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    z = rng.normal(size=(5000, 3))
    return pd.DataFrame({"x": np.exp(z[:, 0]), "y": np.exp(0.6 * z[:, 0] + 0.8 * z[:, 1]), "z": np.exp(z[:, 2])})


def main() -> int:
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    sets = [(name, datasets.load(data)[cols], cols) for name, data, *cols in SETS]
    sets.append(("lognormal (synthetic)", synthetic(), ["x", "y", "z"]))
    boxes, weights = [], []
    for name, df, cols in sets:
        for m in (2, 3):
            deltas, w = evaluate(con, df, cols[:m])
            boxes.append([name, str(len(df)), str(m)] + ["—" if np.isnan(v) else f"{v:.4f}" for v in deltas])
            if m == 2:
                weights.append([name] + [f"{v:.4f}" for v in w[:3]] + [f"{w[3]:.0f}", f"{w[4]:.3f}", f"{w[5]:+.4f}"])
    print(f"1. Uncertainty Delta (first-order half-width) of statistics from k = {K} boxes: the two means (in sd")
    print("   units) and their correlation, plain Mondrian against the characteristic-aware Mondrian; n = 3 adds a")
    print("   quasi-identifier the statistics do not use. 'local optimum': (n/N) sum c(x) of the optimal local boxes")
    table(("data set", "N", "n", "means: plain", "means: aware", "corr: plain", "corr: aware", "corr: local optimum"),
          boxes)
    print()
    print("2. The correlation from the aware boxes (n = 2) with the statistical error A sqrt(sum w^2), A = 2 (1 - r^2):")
    print("   total uncertainty with equal weights, crisp dismissal and fuzzy weights; records the fuzzy weights")
    print("   keep; the unweighted r and how far the fuzzy-weighted r of the original values moves from it")
    table(("data set", "equal", "crisp", "fuzzy", "kept %", "r", "fuzzy r - r"), weights)
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
