"""Scale invariance (duckdb_sdc/_numerics.py): every method and measure at 1e308, at 1e-300 and among
subnormal numbers gives the result it gives in the normal range, rescaled, or refuses clearly.

The data y lie in (-1, 1) with 12 significant bits after the binary point, so y * 2^k is exact for every
k used here: 2^1023 (about 9e307), 2^-996 (about 1.5e-300) and 2^-1060 (values among the subnormal
numbers, down to 2^-1072). A method computes on its data scaled by the power of two that puts the
largest magnitude in [1/2, 1), which is the same array for y and y * 2^k, so the comparisons are exact:
a partition is the same, a result in data units is the one at 1 times 2^k (one correctly rounded
ldexp among the subnormals), a scale-free measure is the same number. Each failure that the issue
lists is reproduced by a test here that fails on the code before the fix (noted per test).
"""

from __future__ import annotations

import math
import tracemalloc

import duckdb
import numpy as np
import pytest

from duckdb_sdc import SdcError, measures
from duckdb_sdc import methods as M
from duckdb_sdc.methods import boxes as bx
from duckdb_sdc.methods import multivariate as mv

SCALES = {"9e307": 1023, "1.5e-300": -996, "subnormal": -1060}


def _grid(a: np.ndarray) -> np.ndarray:
    """a rounded to multiples of 2^-12 inside (-1, 1), so that a * 2^k is exact for k >= -1062."""
    return np.clip(np.round(a * 4096.0), -4095, 4095) / 4096.0


@pytest.fixture(scope="module")
def column():
    rng = np.random.default_rng(16)
    return _grid(np.r_[rng.normal(0, 0.25, 57), 0.9, -0.7, 0.0])


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(17)
    x = _grid(rng.normal(0, 0.2, (60, 3)) + np.array([0.1, -0.2, 0.3]))
    xm = _grid(x + rng.normal(0, 0.05, x.shape))
    return x, xm


def _same(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ---------------------------------------------------------------------------------------------
# univariate masking: before the fix 1e308 gave inf (vmdav, oma, ranking, ewd, efd, kmd) or wrong
# groups (mdav 0.16 off, rbd 1e308 -> -1e308), OMA lost optimality above 1e155 and at 1e-300, and kmd/rbd
# raised OverflowError on subnormal data


UNIVARIATE = [
    ("mdav_round", lambda x: M.mdav_round(x, 3)),
    ("vmdav_round", lambda x: M.vmdav_round(x, 3)),
    ("oma_round", lambda x: M.oma_round(x, 3)),
    ("ranking_round", lambda x: M.ranking_round(x, 3)),
    ("mdav_median", lambda x: M.mdav_round(x, 4, "median")),
    ("mdav_auto", lambda x: M.mdav_round(x, "auto")),
    ("ewd_round", lambda x: M.ewd_round(x, 5)),
    ("ewd_midpoint", lambda x: M.ewd_round(x, 5, "midpoint")),
    # 'auto' on the column without its outliers 0.9, -0.7, 0.0, which leave a set of one value (refused at every
    # scale: test_auto_refuses_a_lone_value_at_every_scale)
    ("ewd_auto", lambda x: M.ewd_round(x[:57], "auto")),
    ("efd_round", lambda x: M.efd_round(x, 5)),
    ("efd_median", lambda x: M.efd_round(x, 5, "median")),
    ("kmd_round", lambda x: M.kmd_round(x, 5)),
    ("kmd_auto", lambda x: M.kmd_round(x[:57], "auto")),
    ("rbd_round", lambda x: M.rbd_round(x, 4, seed=3)),
    ("rbd_median", lambda x: M.rbd_round(x, 4, centroid="median", seed=3)),
    ("stochastic_efd", lambda x: M.efd_round(x, 4, stochastic=True, seed=5)),
]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("name, run", UNIVARIATE, ids=[u[0] for u in UNIVARIATE])
def test_univariate_masking_is_the_rescaled_normal_range_result(column, scale, name, run):
    k = SCALES[scale]
    got = run(np.ldexp(column, k))
    assert np.isfinite(got).all()
    _same(got, np.ldexp(run(column), k))


@pytest.mark.parametrize("name, run", UNIVARIATE, ids=[u[0] for u in UNIVARIATE])
def test_univariate_masking_of_values_near_plus_and_minus_1e308(column, name, run):
    # the case: finite data spanning -1e308..1e308, whose sums and ranges overflow
    x = np.r_[column, 0.99, -0.99] * 1.7e308
    got = run(x)
    assert np.isfinite(got).all()
    _same(got, np.ldexp(run(np.ldexp(x, -1000)), 1000))


@pytest.mark.parametrize("method", ["ewd", "kmd"])
def test_auto_refuses_a_lone_value_at_every_scale(column, method):
    with pytest.raises(SdcError) as normal:
        M.discretise(column, "auto", method)
    assert f"{method}_round: c = 'auto' chose 12 intervals (Freedman-Diaconis) and left a set of attraction of 1 " \
        "value" in str(normal.value)
    for x in [np.ldexp(column, k) for k in SCALES.values()] + [np.r_[column, 0.99, -0.99] * 1.7e308]:
        with pytest.raises(SdcError, match=rf"{method}_round: c = 'auto' chose 1[24] intervals"):
            M.discretise(x, "auto", method)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("method", ["mdav", "vmdav", "oma", "ranking"])
def test_microaggregation_partitions_do_not_change_with_the_scale(column, scale, method):
    _same(M.partition(np.ldexp(column, SCALES[scale]), 3, method), M.partition(column, 3, method))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("method", ["ewd", "efd", "kmd", "rbd"])
def test_discretisation_intervals_do_not_change_with_the_scale(column, scale, method):
    got = M.discretise_labels(np.ldexp(column, SCALES[scale]), 6, method, seed=1)
    _same(got, M.discretise_labels(column, 6, method, seed=1))


def test_rbd_keeps_the_sign_of_values_near_1e308():
    # before: 1e308 was rounded to -1e308
    x = np.r_[np.full(5, 1e308), np.full(5, -1e308), np.zeros(5)]
    got = M.rbd_round(x, 3, seed=2)
    assert np.isfinite(got).all() and (np.sign(got) == np.sign(x)).all()


def test_oma_is_optimal_at_1e200_and_1e_300():
    # before: above about 1e155 the squares overflowed and at 1e-300 they underflowed, so the
    # shortest path compared infinities or zeros
    rng = np.random.default_rng(5)
    y = _grid(rng.uniform(-0.9, 0.9, 40))
    for k in (664, -996):
        x = np.ldexp(y, k)
        got = M.oma_round(x, 4)
        _same(got, np.ldexp(M.oma_round(y, 4), k))
        sse = ((np.ldexp(got, -k) - y) ** 2).sum()
        assert sse <= ((M.mdav_round(y, 4) - y) ** 2).sum()


@pytest.mark.parametrize("func", [M.kmd_round, M.rbd_round])
def test_a_subnormal_spread_is_not_an_overflow(func):
    # before: OverflowError (math range error) for data spread over 1e-310
    x = np.ldexp(_grid(np.linspace(-0.9, 0.9, 30)), -1060)
    got = func(x, 3, seed=1) if func is M.rbd_round else func(x, 3)
    assert np.isfinite(got).all() and np.abs(got).max() <= np.abs(x).max()


def test_equal_width_auto_with_one_huge_outlier():
    # before: c = 'auto' overflowed int64 (garbage labels at 1e21, a Numba TypingError at 1e22)
    rng = np.random.default_rng(4)
    for outlier in (1e21, 1e22):
        x = np.r_[rng.normal(size=999), outlier]
        # the outlier alone in its interval: refused, with the number of intervals (which overflowed int64)
        with pytest.raises(SdcError, match=r"ewd_round: c = 'auto' chose \d{21,23} intervals .* a set of attraction "
                                           r"of 1 value, which would be released unchanged"):
            M.ewd_round(x, "auto")
        sizes = M.attraction_sizes(x, "auto", "ewd")
        assert sizes[-1] == 1 and sizes.sum() > x.shape[0]
        with pytest.raises(SdcError, match=r"ewd_labels: c = \d+ intervals: the interval numbers 0..c-1 do not fit"):
            M.discretise_labels(x, "auto", "ewd")
    x = np.r_[rng.normal(size=999), 1e15]  # c about 4e15: fits in a BIGINT
    labels = M.discretise_labels(x, "auto", "ewd")
    assert labels.dtype == np.int64 and labels[-1] == labels.max() and labels[:-1].max() < 100


# ---------------------------------------------------------------------------------------------
# multivariate masking: before, 1e308 gave inf, unstandardised MDAV broke k at 1e200 and standardised
# MDAV paired badly at 1e-300


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("standardise", [True, False])
@pytest.mark.parametrize("remainder", ["group", "nearest"])
def test_mdav_multi_is_the_rescaled_normal_range_result(pair, scale, standardise, remainder):
    x, k = pair[0], SCALES[scale]
    labels = mv.mdav_multi_partition(np.ldexp(x, k), 4, standardise=standardise, remainder=remainder)
    _same(labels, mv.mdav_multi_partition(x, 4, standardise=standardise, remainder=remainder))
    assert np.bincount(labels).min() >= 4
    got = mv.mdav_multi_round(np.ldexp(x, k), 4, standardise=standardise, remainder=remainder)
    _same(got, np.ldexp(mv.mdav_multi_round(x, 4, standardise=standardise, remainder=remainder), k))


@pytest.mark.parametrize("run", [lambda x: mv.mdav_multi_round(x, 4), lambda x: mv.mdav_multi_round(x, 4, standardise=False),
                                 lambda x: mv.mondrian_round(x, 4), lambda x: mv.mondrian_round(x, 4, "relaxed")],
                         ids=["mdav", "mdav_raw", "mondrian", "mondrian_relaxed"])
def test_multivariate_masking_of_values_near_plus_and_minus_1e308(pair, run):
    x = np.r_[pair[0], [[0.99, -0.99, 0.5], [-0.99, 0.99, -0.5]]] * 1.7e308
    got = run(x)
    assert np.isfinite(got).all()
    _same(got, np.ldexp(run(np.ldexp(x, -1000)), 1000))


def test_unstandardised_mdav_keeps_k_at_1e200():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(50, 2)) * 1e200
    assert np.bincount(mv.mdav_multi_partition(x, 5, standardise=False)).min() >= 5


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_mondrian_is_the_rescaled_normal_range_result(pair, scale, mode):
    x, k = pair[0], SCALES[scale]
    _same(mv.mondrian_partition(np.ldexp(x, k), 4, mode), mv.mondrian_partition(x, 4, mode))
    _same(mv.mondrian_round(np.ldexp(x, k), 4, mode), np.ldexp(mv.mondrian_round(x, 4, mode), k))


def test_each_column_scales_on_its_own_for_mondrian_and_standardised_mdav(pair):
    x = pair[0]
    mixed = np.ldexp(x, [1023, -1060, 0])
    _same(mv.mondrian_partition(mixed, 4), mv.mondrian_partition(x, 4))
    _same(mv.mdav_multi_partition(mixed, 4), mv.mdav_multi_partition(x, 4))
    _same(mv.centroids(mixed, mv.mondrian_partition(x, 4)), np.ldexp(mv.centroids(x, mv.mondrian_partition(x, 4)),
                                                                      [1023, -1060, 0]))


# ---------------------------------------------------------------------------------------------
# measures (numpy): before, il_metrics and il_dr_score gave NaN at 1e308, sd_interval_disclosure 0.607
# instead of 0.129 there, record linkage 0.0 instead of 0.917 on subnormal data


SCALE_FREE = [
    ("il1", measures.il1), ("il1s", measures.il1s), ("il1s_sum", measures.il1s_sum), ("sse_sst", measures.sse_sst),
    ("il_metrics", lambda x, xm: measures.il_metrics(x, xm)["composite"]),
    ("il_metrics.correlations", lambda x, xm: measures.il_metrics(x, xm)["correlations"]),
    ("il_dr_score", measures.il_dr_score),
    ("interval_disclosure", lambda x, xm: measures.interval_disclosure(x, xm, 0.5)),
    ("sd_interval_disclosure", measures.sd_interval_disclosure),
    ("rank_interval_disclosure", measures.rank_interval_disclosure),
    ("record_linkage", measures.record_linkage),
    ("record_linkage_one_column", lambda x, xm: measures.record_linkage(x[:, 0], xm[:, 0])),
    ("record_linkage_rank_2", lambda x, xm: measures.record_linkage(x, xm, 2)),
    ("global_linkage", measures.global_linkage),
    ("rank_mae", measures.rank_mae),
    ("rank_bounded_mse", lambda x, xm: measures.rank_bounded_mse(x, xm, seed=11)),
    ("rank_bounded_mae_first", lambda x, xm: measures.rank_bounded_mae(x, xm, ties="first")),
    ("regression_utility.r2", lambda x, xm: measures.regression_utility(x, xm)["r2"]),  # at 1e308: see below
    ("regression_utility.r2_original", lambda x, xm: measures.regression_utility(x, xm)["r2_original"]),
]


# regression_utility.r2 at 1e308 is not a case: the mse that comes with it is 1e616, so the call is
# refused (tested below)
@pytest.mark.parametrize("scale, name, measure", [
    pytest.param(scale, name, measure, id=f"{name}-{scale}")
    for name, measure in SCALE_FREE for scale in SCALES
    if not (name.startswith("regression_utility.r2") and SCALES[scale] > 0)])
def test_scale_free_measures_are_the_same_at_any_scale(pair, scale, name, measure):
    x, xm = pair
    k = SCALES[scale]
    got = measure(np.ldexp(x, k), np.ldexp(xm, k))
    assert got == measure(x, xm) and math.isfinite(got)


def test_the_documented_failures_of_the_measures(pair):
    x, xm = pair
    big, tiny = np.ldexp(x, 1023), np.ldexp(x, -1060)
    assert math.isfinite(measures.il_metrics(big, np.ldexp(xm, 1023))["composite"])
    assert measures.sd_interval_disclosure(big, np.ldexp(xm, 1023)) == pytest.approx(
        measures.sd_interval_disclosure(x, xm), abs=0)
    assert measures.record_linkage(tiny, tiny) == 1.0  # every masked record is its own original


@pytest.mark.parametrize("scale", SCALES)
def test_measures_in_data_units_are_rescaled_or_refused(pair, scale):
    x, xm = pair
    k = SCALES[scale]
    X, XM = np.ldexp(x, k), np.ldexp(xm, k)
    assert measures.mae(X, XM) == np.ldexp(measures.mae(x, xm), k)
    if k > 0:  # 1e616 is beyond float64: a clear refusal, never inf
        with pytest.raises(SdcError, match="mse: the mean squared error is larger than the largest float64"):
            measures.mse(X, XM)
        with pytest.raises(SdcError, match="regression_utility: the mean squared prediction error is larger"):
            measures.regression_utility(X, XM)
    else:
        assert measures.mse(X, XM) == np.ldexp(measures.mse(x, xm), 2 * k)


def test_evaluate_reports_unrepresentable_measures_as_notes_and_keeps_the_rest(pair):
    # before: mae and mse inf, sse_sst, il_metrics and il_dr_score NaN
    x, xm = pair
    rows = measures.evaluate(np.ldexp(x, 1023), np.ldexp(xm, 1023))
    base = {(r.measure, r.column): r.value for r in measures.evaluate(x, xm)}
    for r in rows:
        assert r.value is None or math.isfinite(r.value)
        if r.measure in ("mse", "regression_utility.mse", "regression_utility.r2", "regression_utility.r2_original"):
            assert r.value is None and "larger than the largest float64" in r.note
        elif r.measure == "mae":
            assert r.value == np.ldexp(base[(r.measure, r.column)], 1023)
        elif r.measure != "entropy":
            assert r.value == base[(r.measure, r.column)], r.measure


# ---------------------------------------------------------------------------------------------
# boxes


DEGREE = {"corr(1, 2)": 0, "mean(1) + mean(2)": 1, "var(1) + cov(1, 2)": 2}


# a variance at 1e308 is not a case: its c(x) is about 1e616, refused (tested below)
@pytest.mark.parametrize("scale, characteristic", [
    pytest.param(scale, c, id=f"{c}-{scale}") for c in DEGREE for scale in SCALES
    if not (DEGREE[c] == 2 and SCALES[scale] > 0)])
def test_optimal_boxes_are_the_rescaled_normal_range_boxes(pair, scale, characteristic):
    x, k = pair[0][:, :2], SCALES[scale]
    degree = DEGREE[characteristic]
    got = bx.optimal_boxes(np.ldexp(x, k), characteristic, 4)
    want = bx.optimal_boxes(x, characteristic, 4)
    # the half-widths go through log and exp: equal up to rounding, then rounded among the subnormals
    np.testing.assert_allclose(got.half_widths, np.ldexp(want.half_widths, k), rtol=1e-13, atol=2.0**-1073)
    np.testing.assert_allclose(got.c, np.ldexp(want.c, degree * k), rtol=1e-13, atol=2.0**-1073)
    _same(bx.box_release(np.ldexp(x, k), characteristic, 4).labels, bx.box_release(x, characteristic, 4).labels)


def test_box_results_beyond_float64_are_refused(pair):
    x = np.ldexp(pair[0][:, :2], 1023)
    with pytest.raises(SdcError, match="optimal_boxes: c\\(x\\) is larger than the largest float64"):
        bx.optimal_boxes(x, "var(1) + var(2)", 4)
    with pytest.raises(SdcError, match="density: the density m / \\(2 r\\)\\^n is beyond float64's range"):
        bx.density(x, 4)
    assert np.isfinite(bx.density(pair[0][:, :1] * 1e300, 4)).all()  # one attribute: 1e-300 is a DOUBLE


def test_fuzzy_weights_with_a_huge_error_constant():
    # before: A = 1e200 gave NaN (A^2 overflowed)
    c = np.array([0.5, 0.1, 0.3, 2.0, 0.2])
    w = bx.fuzzy_weights(c, 2, 1e200)
    np.testing.assert_allclose(w, 0.2, rtol=1e-12)  # an error constant beyond every cost: equal weights
    _same(bx.fuzzy_weights(c * 2.0**600, 2, 2.0**600), bx.fuzzy_weights(c, 2, 1.0))  # c and A scale together
    assert bx.fuzzy_weights(c, 2, 1e-300).tolist() == [0, 1, 0, 0, 0]


@pytest.mark.parametrize("scale", SCALES)
def test_weighted_estimates_are_rescaled(pair, scale):
    x, k = pair[0], SCALES[scale]
    w = np.abs(pair[1][:, 0]) + 0.25
    a, b = np.ldexp(x[:, 0], k), np.ldexp(x[:, 1], k)
    assert bx.weighted_mean(a, w) == np.ldexp(bx.weighted_mean(x[:, 0], w), k)
    assert bx.weighted_corr(a, b, w) == bx.weighted_corr(x[:, 0], x[:, 1], w)
    assert bx.weighted_corr(a, b, np.ldexp(w, 1000)) == bx.weighted_corr(x[:, 0], x[:, 1], w)
    if k < 0:
        assert bx.weighted_var(a, w) == np.ldexp(bx.weighted_var(x[:, 0], w), 2 * k)
    else:
        with pytest.raises(SdcError, match="weighted_var: the variance is larger than the largest float64"):
            bx.weighted_var(a, w)


def test_weighted_correlation_of_tiny_moments_is_not_a_division_by_zero():
    # found by a robustness sweep: sum w dx^2 * sum w dy^2 underflowed to 0 (ZeroDivisionError)
    x = np.r_[1e300, np.linspace(1e-300, 3e-300, 20)]
    y = np.r_[1e300, np.linspace(3e-300, 1e-300, 20)]
    w = np.r_[1.0, np.full(20, 1e-290)]
    assert bx.weighted_corr(x, y, w) == pytest.approx(1.0, rel=1e-9)


def test_a_constant_column_has_variance_exactly_0_whatever_the_weights():
    rng = np.random.default_rng(9)
    for _ in range(200):
        n = int(rng.integers(2, 60))
        value = float(rng.normal()) * 10.0 ** int(rng.integers(-300, 300))
        w = rng.uniform(0, 1, n)
        x = np.full(n, value)
        x[0] = 7.0 * (value + 1)  # a different value with weight 0 does not count
        w[0] = 0.0
        assert bx.weighted_var(x, w) == 0.0 and math.isnan(bx.weighted_corr(x, rng.normal(size=n), w))
        assert bx.weighted_mean(x, w) == value


# ---------------------------------------------------------------------------------------------
# SQL: before, weighted_mean/var and box_mean_bounds gave inf, weighted_corr 0 instead of -0.5 at 1e308,
# il1s and sse_sst NULL on subnormal data, weights -1 and 1 NULL instead of the documented error, and
# evaluate_masking with duplicate keys silently evaluated every joined pair


def _table(con, **cols):
    n = len(next(iter(cols.values())))
    names = list(cols)
    con.execute(f"CREATE OR REPLACE TABLE d AS SELECT {', '.join(f'unnest(?) AS {c}' for c in names)}",
                [list(map(float, cols[c])) for c in names])
    assert con.execute("SELECT count(*) FROM d").fetchone()[0] == n


@pytest.mark.parametrize("scale", SCALES)
def test_sql_measures_are_the_same_at_any_scale(con, pair, scale):
    x, xm = pair
    k = SCALES[scale]
    query = ("SELECT il1s(a, am), il1s_sum(a, am), sse_sst(a, am), il1(a, am), "
             "sd_interval_disclosure([a, b], [am, bm]), record_linkage([a, b, c], [am, bm, cm]), "
             "(il_metrics([a, b, c], [am, bm, cm])).composite, il_dr_score([a, b, c], [am, bm, cm]) FROM d")
    _table(con, a=x[:, 0], b=x[:, 1], c=x[:, 2], am=xm[:, 0], bm=xm[:, 1], cm=xm[:, 2])
    base = con.execute(query).fetchone()
    _table(con, a=np.ldexp(x[:, 0], k), b=np.ldexp(x[:, 1], k), c=np.ldexp(x[:, 2], k),
           am=np.ldexp(xm[:, 0], k), bm=np.ldexp(xm[:, 1], k), cm=np.ldexp(xm[:, 2], k))
    got = con.execute(query).fetchone()
    assert None not in base and got == base
    mae = con.execute("SELECT mae(a, am) FROM d").fetchone()[0]
    assert mae == pytest.approx(np.ldexp(measures.mae(x[:, 0], xm[:, 0]), k), rel=1e-15)


@pytest.mark.parametrize("scale", SCALES)
def test_sql_weighted_estimates_are_rescaled(con, pair, scale):
    x, k = pair[0], SCALES[scale]
    w = np.abs(pair[1][:, 0]) + 0.25
    _table(con, x=np.ldexp(x[:, 0], k), y=np.ldexp(x[:, 1], k), w=w, lo=np.ldexp(x[:, 0], k),
           hi=np.ldexp(x[:, 0] + 0.03125, k))
    mean, corr, bounds, wbounds = con.execute(
        "SELECT weighted_mean(x, w), weighted_corr(x, y, w), box_mean_bounds(lo, hi), "
        "box_weighted_mean_bounds(lo, hi, w) FROM d").fetchone()
    assert mean == pytest.approx(np.ldexp(bx.weighted_mean(x[:, 0], w), k), rel=1e-15)
    assert corr == pytest.approx(bx.weighted_corr(x[:, 0], x[:, 1], w), rel=1e-14)
    assert bounds["lower"] == pytest.approx(np.ldexp(x[:, 0].mean(), k), rel=1e-14)
    assert wbounds["upper"] == pytest.approx(np.ldexp(bx.weighted_mean(x[:, 0] + 0.03125, w), k), rel=1e-14)
    if k > 0:
        with pytest.raises(duckdb.Error, match="weighted_var: the variance is larger than the largest DOUBLE"):
            con.execute("SELECT weighted_var(x, w) FROM d").fetchone()
    else:
        var = con.execute("SELECT weighted_var(x, w) FROM d").fetchone()[0]
        assert var == pytest.approx(np.ldexp(bx.weighted_var(x[:, 0], w), 2 * k), rel=1e-14, abs=5e-324)


def test_sql_weighted_correlation_at_1e308_and_of_a_constant_column(con):
    _table(con, x=[1e308, -1e308, 1e308], y=[-1e308, 1e308, 0.0], w=[1.0, 1.0, 1.0])
    assert con.execute("SELECT weighted_corr(x, y, w) FROM d").fetchone()[0] == pytest.approx(-math.sqrt(3) / 2)
    _table(con, x=[0.1, 0.1, 0.1, 9.0], y=[1.0, 2.0, 5.0, 3.0], w=[0.3, 0.7, 0.2, 0.0])
    assert con.execute("SELECT weighted_var(x, w), weighted_corr(x, y, w), weighted_mean(x, w) FROM d").fetchone() \
        == (0.0, None, 0.1)


def test_sql_box_mean_bounds_of_values_near_1e308(con):
    _table(con, lo=[1e308, 1.5e308, 1.7e308], hi=[1.1e308, 1.6e308, 1.7e308])
    got = con.execute("SELECT box_mean_bounds(lo, hi) FROM d").fetchone()[0]
    assert got["lower"] == pytest.approx(1.4e308) and got["upper"] == pytest.approx(4.4 / 3 * 1e308)


def test_sql_negative_weights_are_refused_even_when_they_sum_to_0(con):
    for agg in ("weighted_mean(x, w)", "weighted_var(x, w)", "weighted_corr(x, x, w)",
                "box_weighted_mean_bounds(x, x, w)"):
        with pytest.raises(duckdb.Error, match="weights must be >= 0, got -1"):
            con.execute(f"SELECT {agg} FROM (VALUES (1.0, -1), (2.0, 1)) t(x, w)").fetchone()


def test_evaluate_masking_refuses_a_repeated_key(con):
    con.execute("CREATE TABLE o AS SELECT i % 50 AS id, i::DOUBLE AS x FROM range(100) t(i)")
    con.execute("CREATE TABLE m AS SELECT i AS id, i + 0.01 AS x FROM range(100) t(i)")
    with pytest.raises(duckdb.Error, match=r"evaluate_masking: the key id is not unique in the original table o: "
                                           r"the value \{'id': 0\} occurs 2 times"):
        con.execute("FROM evaluate_masking('o', 'm', 'id')").fetchall()
    with pytest.raises(duckdb.Error, match="the key id is not unique in the masked table o"):
        con.execute("FROM evaluate_masking('m', 'o', 'id')").fetchall()
    con.execute("CREATE TABLE o2 AS SELECT i AS id, i::DOUBLE AS x FROM range(100) t(i)")
    got = con.execute("SELECT value FROM evaluate_masking('o2', 'm', 'id') WHERE measure = 'mae' AND \"column\" = 'x'")
    assert got.fetchone()[0] == pytest.approx(0.01)


# ---------------------------------------------------------------------------------------------
# memory


def test_global_linkage_builds_its_cost_matrix_column_by_column():
    # before: n x n x p temporaries (115 MB each at n = 600, p = 40; over 4 GB at n = 5000, p = 20)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(600, 40))
    xm = x + rng.normal(scale=0.1, size=x.shape)
    tracemalloc.start()
    try:
        measures.global_linkage(x, xm)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 600 * 600 * 8  # a few n x n matrices, whatever p
