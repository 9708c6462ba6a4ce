"""Many small groups at once (duckdb_sdc/measures/stacked.py, duckdb_sdc/sql/groups.py): every group gets
what the one-group function gives it, through numpy stacks and through SQL GROUP BY."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from duckdb_sdc import measures as m
from duckdb_sdc._numerics import OutOfRange
from duckdb_sdc.measures import stacked as st
from duckdb_sdc.measures._input import UndefinedMeasure


def _one(f, *args, **kw):
    try:
        return f(*args, **kw)
    except UndefinedMeasure:
        return None


def _stacks(seed, count):
    """(X, XM) stacks of every kind that matters: continuous, integer data full of ties, a constant
    original column, identical sides, any scale, one record, eight columns or more."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        G, n, p = int(rng.integers(1, 6)), int(rng.integers(1, 12)), int(rng.integers(1, 10))
        kind = i % 5
        if kind == 0:
            X = rng.normal(size=(G, n, p))
            XM = X + rng.normal(scale=0.3, size=X.shape)
        elif kind == 1:
            X = rng.integers(0, 3, (G, n, p)).astype(float)
            XM = rng.integers(0, 3, (G, n, p)).astype(float)
        elif kind == 2:
            X = rng.integers(0, 3, (G, n, p)).astype(float)
            X[:, :, 0] = 1.0
            XM = X.copy()
        elif kind == 3:
            X = rng.normal(size=(G, n, p)) * 2.0 ** int(rng.integers(-1000, 1000))
            XM = X * (1 + rng.normal(scale=0.1, size=X.shape))
        else:
            X = np.round(rng.lognormal(3, 1, (G, n, p)))
            XM = np.round(X / 5) * 5
        yield X, XM


def _equal(got, want, exact=True):
    want = np.nan if want is None else want
    if math.isnan(got) or math.isnan(want):
        return math.isnan(got) and math.isnan(want)
    return got == want if exact else got == pytest.approx(want, rel=1e-13, abs=1e-300)


EXACT = [
    ("rank_mae", lambda X, XM: st.rank_measures(X[:, :, :1], XM[:, :, :1], "random", 3)["rank_mae"],
     lambda x, xm: m.rank_mae(x[:, 0], xm[:, 0], seed=3)),
    ("rank_mse", lambda X, XM: st.rank_measures(X, XM, "random", 0)["rank_mse"], lambda x, xm: m.rank_mse(x, xm)),
    ("rank_bounded_mae", lambda X, XM: st.rank_measures(X, XM, "first", 0)["rank_bounded_mae"],
     lambda x, xm: m.rank_bounded_mae(x, xm, ties="first")),
    ("rank_bounded_mse", lambda X, XM: st.rank_measures(X, XM, "random", 9)["rank_bounded_mse"],
     lambda x, xm: m.rank_bounded_mse(x, xm, seed=9)),
    ("il1s", st.il1s, lambda x, xm: _one(m.il1s, x, xm)),
    ("il1s_sum", lambda X, XM: st.il1s(X, XM, total=True), lambda x, xm: _one(m.il1s_sum, x, xm)),
    ("interval_disclosure", lambda X, XM: st.interval_disclosure(X, XM, 0.5, 1),
     lambda x, xm: m.interval_disclosure(x, xm, 0.5, max_outside=1)),
    ("sd_interval_disclosure", st.sd_interval_disclosure, m.sd_interval_disclosure),
    ("rank_interval_disclosure", st.rank_interval_disclosure, m.rank_interval_disclosure),
    ("record_linkage", st.record_linkage, m.record_linkage),
    ("record_linkage_rank_2", lambda X, XM: st.record_linkage(X, XM, min(2, X.shape[1])),
     lambda x, xm: m.record_linkage(x, xm, min(2, x.shape[0]))),
]
ROUNDED = [  # through BLAS and LAPACK, whose summation order depends on the shape of the stack
    ("il_metrics", lambda X, XM: st.il_metrics(X, XM)["composite"] if X.shape[1] > 1 else np.full(X.shape[0], np.nan),
     lambda x, xm: (_one(m.il_metrics, x, xm) or {}).get("composite")),
    ("regression_utility.r2", lambda X, XM: st.regression_utility(X, XM)["r2"],
     lambda x, xm: m.regression_utility(x, xm)["r2"]),
    ("regression_utility.r2_original", lambda X, XM: st.regression_utility(X, XM)["r2_original"],
     lambda x, xm: m.regression_utility(x, xm)["r2_original"]),
    ("il_dr_score", lambda X, XM: st.il_dr_score(X, XM, 0.05), lambda x, xm: _one(m.il_dr_score, x, xm)),
]


@pytest.mark.parametrize("name, stacked, single", EXACT + ROUNDED, ids=[c[0] for c in EXACT + ROUNDED])
def test_every_group_of_a_stack_gets_the_one_group_result(name, stacked, single):
    exact = name in dict((c[0], c) for c in EXACT)
    for X, XM in _stacks(sum(map(ord, name)), 150):
        try:
            got = stacked(X, XM)
        except OutOfRange:  # a mean squared error of data near 1e300: the one-group call refuses it too
            with pytest.raises(OutOfRange):
                [single(X[g], XM[g]) for g in range(X.shape[0])]
            continue
        for g in range(X.shape[0]):
            assert _equal(got[g], single(X[g], XM[g]), exact), (name, X.shape, g)


def test_the_one_group_il_metrics_and_regression_are_the_stacked_ones():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(30, 4))
    xm = x + rng.normal(scale=0.2, size=x.shape)
    il = st.il_metrics(x[None], xm[None])
    assert m.il_metrics(x, xm) == {k: float(v[0]) for k, v in il.items()}
    assert m.regression_utility(x, xm)["r2"] == st.regression_utility(x[None], xm[None])["r2"][0]
    assert m.regression_utility(x, xm)["r2_original"] == st.regression_utility(x[None], xm[None])["r2_original"][0]


@pytest.fixture
def strata(con):
    """Table s of 3000 records in 700 strata of 1 to 9 records (a few of 90) with NULLs and ties."""
    rng = np.random.default_rng(5)
    sizes = np.r_[rng.integers(1, 10, 697), 90, 90, 90]
    g = np.repeat(np.arange(sizes.size), sizes)
    n = g.size
    a = np.round(rng.lognormal(3, 1, n))
    b = np.round(rng.normal(50, 10, n))
    df = pd.DataFrame({"g": g, "a": a, "b": b, "am": np.round(a / 5) * 5, "bm": b + rng.integers(-3, 4, n)})
    df.loc[rng.choice(n, 60, replace=False), "am"] = np.nan
    con.execute("CREATE TABLE s AS SELECT * FROM df")
    return df


SQL = [
    ("rank_mae(a, am)", lambda d: m.rank_mae(d.a, d.am), False),
    ("rank_bounded_mse(a, am, ties := 'first')", lambda d: m.rank_bounded_mse(d.a, d.am, ties="first"), False),
    ("interval_disclosure([a, b], [am, bm], half_width := 0.1)", lambda d: m.interval_disclosure(d[["a", "b"]], d[["am", "bm"]], 0.1),
     True),
    ("sd_interval_disclosure([a, b], [am, bm])", lambda d: m.sd_interval_disclosure(d[["a", "b"]], d[["am", "bm"]]), True),
    ("rank_interval_disclosure([a, b], [am, bm])",
     lambda d: m.rank_interval_disclosure(d[["a", "b"]], d[["am", "bm"]]), True),
    ("record_linkage([a, b], [am, bm])", lambda d: m.record_linkage(d[["a", "b"]], d[["am", "bm"]]), True),
    ("(il_metrics([a, b], [am, bm])).composite",
     lambda d: (_one(m.il_metrics, d[["a", "b"]], d[["am", "bm"]]) or {}).get("composite"), True),
    ("(regression_utility([a, b], [am, bm])).r2",
     lambda d: m.regression_utility(d[["a", "b"]], d[["am", "bm"]])["r2"], True),
    ("il_dr_score([a, b], [am, bm])", lambda d: _one(m.il_dr_score, d[["a", "b"]], d[["am", "bm"]]), True),
]


@pytest.mark.parametrize("expr, numpy_one, vectors", SQL, ids=[s[0].split("(")[0] or s[0] for s in SQL])
def test_group_by_over_many_small_strata_equals_numpy_per_stratum(con, strata, expr, numpy_one, vectors):
    got = dict(con.execute(f"SELECT g, {expr} FROM s GROUP BY g").fetchall())
    cols = ["a", "b", "am", "bm"] if vectors else ["a", "am"]
    rounded = "il_metrics" in expr or "regression" in expr or "il_dr" in expr
    for g, d in strata.groupby("g"):
        d = d[cols].dropna()
        want = numpy_one(d.astype(float)) if len(d) else None
        if want is None:
            assert got[g] is None, (expr, g)
        elif rounded:
            assert got[g] == pytest.approx(want, rel=1e-12, abs=1e-12), (expr, g)
        else:
            assert got[g] == want, (expr, g)


def test_a_struct_of_undefined_components_is_a_struct_not_null(con):
    # every original value 0: each component undefined, the struct itself present (as one group gives)
    got = con.execute("SELECT g, il_metrics([x], [xm]) FROM (VALUES (1, 0, 1), (1, 0, 2), (2, 0, 1)) t(g, x, xm) "
                      "GROUP BY g ORDER BY g").fetchall()
    assert got[0][1] == {"il1": None, "means": None, "covariances": None, "variances": None, "correlations": None,
                         "composite": None}
    assert got[1][1] is None  # one record: undefined


def test_different_parameters_per_group_are_kept_apart(con, strata):
    got = dict(con.execute("SELECT g, rank_mae(a, am, seed := g % 3) FROM s GROUP BY g").fetchall())
    for g, d in strata.groupby("g"):
        d = d[["a", "am"]].dropna()
        if len(d):
            assert got[g] == m.rank_mae(d.a.to_numpy(), d.am.to_numpy(), seed=g % 3)
