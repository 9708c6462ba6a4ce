"""The measures for many small groups at once: G groups of the same size n, stacked as (G, n, p) arrays.

A GROUP BY over many small strata (50,000 groups of 4 records) calls a measure once per group, and
the fixed cost of a call (validation, a dozen NumPy calls on tiny arrays) then dwarfs the work: 0.2
to 0.9 ms per group. Here each measure is written once over a stack of groups with NumPy operations
along the record axis, so the cost per group is a few microseconds and the whole stack costs about
what the same records cost in one group. The SQL binding stacks the groups of equal size (up to
`STACK_MAX` records) and calls these; larger groups take the one-group functions.

Every function returns exactly what the one-group function of `loss`, `risk` and `ranks` returns for
each group, with NaN where that function says the measure is undefined (`UndefinedMeasure`); the
tests compare them group by group. The arithmetic is the same: the same scaling by powers of two
(`duckdb_sdc._numerics`), the same sorted sums for means and standard deviations, the same squared
distances and the same exact integer rank sums. Input: finite float64 (G, n, p) arrays, n >= 1.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._numerics import out_of_range
from ..methods._order import mix64
from .ranks import key_start, tie_key
from . import risk
from .risk import PERCENTS

STACK_MAX = 64  # the largest group the binding stacks (record linkage compares all n^2 pairs)
SQRT2 = math.sqrt(2.0)


def _unit(X: np.ndarray, XM: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every column of every group, both sides, scaled by the power of two of its largest magnitude
    (as `_input.unit_columns`); the exponents (G, p)."""
    top = np.maximum(np.abs(X).max(axis=1), np.abs(XM).max(axis=1))
    e = np.frexp(top)[1]
    return np.ldexp(X, -e[:, None, :]), np.ldexp(XM, -e[:, None, :]), e


def _moments(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample sd (0 for n = 1) of every column of every group from its sorted values (as
    `_input.column_moments`); (G, p) each."""
    S = np.sort(A, axis=1)
    mean = S.mean(axis=1)
    n = A.shape[1]
    if n < 2:
        return mean, np.zeros(mean.shape)
    centred = S - mean[:, None, :]
    return mean, np.sqrt((centred * centred).sum(axis=1) / (n - 1))


def _defined(A: np.ndarray) -> np.ndarray:
    """(G,) whether every column of the group varies and n >= 2 (the standardised measures)."""
    if A.shape[1] < 2:
        return np.zeros(A.shape[0], bool)
    return (np.ptp(A, axis=1) > 0).all(axis=1)


# ---------------------------------------------------------------------------------------------
# information loss


def il1s(X: np.ndarray, XM: np.ndarray, *, total: bool = False) -> np.ndarray:
    """IL1s of every group (`loss.il1s`; `total`: `loss.il1s_sum`), NaN where undefined."""
    X, XM, _ = _unit(X, XM)
    ok = _defined(X)
    out = np.full(X.shape[0], np.nan)
    if ok.any():
        X, XM = X[ok], XM[ok]
        sd = _moments(X)[1]
        terms = (np.abs(X - XM).sum(axis=1) / (SQRT2 * sd)).sum(axis=1)
        out[ok] = terms if total else terms / (X.shape[1] * X.shape[2])
    return out


def _mean_variation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per group (rows of the (G, m) arrays), the mean of |a - b| / |a| over the entries with a != 0;
    NaN where every a is 0 (`loss._mean_variation`)."""
    keep = a != 0
    count = keep.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(keep, np.abs(a - b) / np.where(keep, np.abs(a), 1.0), 0.0)
        return np.where(count > 0, ratio.sum(axis=1) / count, np.nan)


def _cov(A: np.ndarray) -> np.ndarray:
    """Sample covariance matrices (G, p, p) (n - 1), centred on each column's mean."""
    C = A - A.mean(axis=1, keepdims=True)
    return np.einsum("gni,gnj->gij", C, C) / (A.shape[1] - 1)


def _correlation(cov: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / (sd[:, :, None] * sd[:, None, :])
    r[~np.isfinite(r)] = 0.0
    zero = sd == 0
    r[zero[:, :, None] & np.ones_like(r, bool)] = 0.0
    r[zero[:, None, :] & np.ones_like(r, bool)] = 0.0
    return r


def il_metrics(X: np.ndarray, XM: np.ndarray) -> dict[str, np.ndarray]:
    """`loss.il_metrics` of every group: each component (G,), NaN where it is None; all NaN for n = 1."""
    X, XM, _ = _unit(X, XM)
    G, n, p = X.shape
    out = {name: np.full(G, np.nan) for name in ("il1", "means", "covariances", "variances", "correlations",
                                                  "composite")}
    if n < 2:
        return out
    c, cm = _cov(X), _cov(XM)
    upper = np.triu_indices(p)
    strict = np.triu_indices(p, 1)
    out["il1"] = _mean_variation(X.reshape(G, -1), XM.reshape(G, -1))
    out["means"] = _mean_variation(X.mean(axis=1), XM.mean(axis=1))
    out["covariances"] = _mean_variation(c[:, upper[0], upper[1]], cm[:, upper[0], upper[1]])
    out["variances"] = _mean_variation(np.diagonal(c, axis1=1, axis2=2), np.diagonal(cm, axis1=1, axis2=2))
    if p > 1:
        d = np.abs(_correlation(c)[:, strict[0], strict[1]] - _correlation(cm)[:, strict[0], strict[1]])
        out["correlations"] = d.mean(axis=1)
    parts = np.stack([out[k] for k in ("il1", "means", "covariances", "variances", "correlations")], axis=1)
    present = ~np.isnan(parts)
    count = present.sum(axis=1)
    with np.errstate(invalid="ignore"):
        out["composite"] = np.where(count > 0, 100.0 * np.where(present, parts, 0.0).sum(axis=1) / count, np.nan)
    return out


def _least_squares(D: np.ndarray, others: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """OLS with intercept of column 0 of every group of D (G, n, p) on its other columns: (the fitted
    response of D, the prediction for the predictors of `others`, of D's shape, or None). The
    predictors are centred on their means and scaled by their sds (constant ones left unscaled); the
    slopes are the minimum-norm solution through the pseudo-inverse with lstsq's cutoff (singular
    values below eps max(n, q) times the largest), so it equals lstsq up to rounding."""
    G, n, p = D.shape
    y = D[:, :, 0]
    mean_y = y.mean(axis=1)
    if p == 1:
        flat = np.repeat(mean_y[:, None], n, axis=1)
        return flat, None if others is None else flat.copy()
    centre, spread = _moments(D[:, :, 1:])
    spread = np.where(spread > 0, spread, 1.0)
    A = (D[:, :, 1:] - centre[:, None, :]) / spread[:, None, :]
    beta = np.linalg.pinv(A, rcond=np.finfo(np.float64).eps * max(n, p - 1)) @ (y - mean_y[:, None])[:, :, None]
    fitted = mean_y[:, None] + (A @ beta)[:, :, 0]
    if others is None:
        return fitted, None
    return fitted, mean_y[:, None] + (((others[:, :, 1:] - centre[:, None, :]) / spread[:, None, :]) @ beta)[:, :, 0]


def _r2(y: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """R^2 of every group's fit; 0 where the response is constant."""
    sst = ((y - y.mean(axis=1)[:, None]) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sst > 0, 1.0 - ((y - fitted) ** 2).sum(axis=1) / np.where(sst > 0, sst, 1.0), 0.0)


def regression_utility(X: np.ndarray, XM: np.ndarray, func: str = "regression_utility") -> dict[str, np.ndarray]:
    """`loss.regression_utility` (response column 0) of every group: {"mse": (G,), "r2": (G,),
    "r2_original": (G,)}, each fit by `_least_squares`."""
    X, XM, e = _unit(np.ascontiguousarray(X), np.ascontiguousarray(XM))  # the same layout, the same LAPACK rounding
    fitted, predicted = _least_squares(XM, X)
    r2 = _r2(XM[:, :, 0], fitted)
    r2_original = _r2(X[:, :, 0], _least_squares(X)[0])
    with np.errstate(over="ignore", under="ignore"):
        mse = np.ldexp(((X[:, :, 0] - predicted) ** 2).mean(axis=1), 2 * e[:, 0])
    if not np.isfinite(mse).all():
        raise out_of_range(func, "the mean squared prediction error", "x")
    return {"mse": mse, "r2": r2, "r2_original": r2_original}


# ---------------------------------------------------------------------------------------------
# ranks


@nb.njit(cache=True, nogil=True)
def _keys(values, partners, start):
    out = np.empty(values.shape, np.uint64)
    flat_v = values.ravel()
    flat_p = partners.ravel()
    flat_o = out.ravel()
    for i in range(flat_v.shape[0]):
        flat_o[i] = tie_key(start, flat_v[i], flat_p[i])
    return out


def _ranks(v: np.ndarray, partner: np.ndarray, ties: str, seed: int, column: int) -> np.ndarray:
    """Ranks 0..n-1 along axis 1 of the (G, n) values: by value, ties by the rule of `ranks` (random
    keys, then input order; or input order)."""
    G, n = v.shape
    pos = np.broadcast_to(np.arange(n), (G, n))
    v = v + 0.0  # -0.0 sorts with 0.0, as the one-group sort does
    if ties == "random":  # keys of the values scaled as `ranks.rank_order` scales them
        e = np.frexp(np.maximum(np.abs(v).max(axis=1), np.abs(partner).max(axis=1)))[1][:, None]
        keys = _keys(np.ldexp(v, -e), np.ldexp(partner, -e), np.uint64(mix64(key_start(seed, column))))
        order = np.lexsort((pos, keys, v), axis=1)
    else:
        order = np.lexsort((pos, v), axis=1)
    rank = np.empty((G, n), np.int64)
    np.put_along_axis(rank, order, pos, axis=1)
    return rank


def rank_measures(X: np.ndarray, XM: np.ndarray, ties: str, seed: int) -> dict[str, np.ndarray]:
    """`ranks.rank_measures` of every group (ties already validated)."""
    G, n, p = X.shape
    a = np.zeros(G, np.int64)
    q = np.zeros(G, np.int64)
    for j in range(p):
        d = _ranks(X[:, :, j], XM[:, :, j], ties, seed, j) - _ranks(XM[:, :, j], X[:, :, j], ties, seed, j)
        a += np.abs(d).sum(axis=1)
        q += (d * d).sum(axis=1)
    k = n // 2
    den_a, den_s = 2 * k * (n - k), n * (n * n - 1) // 3
    return {"rank_mae": a / (n * p), "rank_mse": q / (n * p),
            "rank_bounded_mae": a / (p * den_a) if den_a else np.zeros(G),
            "rank_bounded_mse": q / (p * den_s) if den_s else np.zeros(G)}


# ---------------------------------------------------------------------------------------------
# disclosure risk


def interval_disclosure(X: np.ndarray, XM: np.ndarray, k: float, max_outside: int = 0) -> np.ndarray:
    """`risk.interval_disclosure` of every group (parameters already validated)."""
    X, XM, _ = _unit(X, XM)
    half = k * _moments(XM)[1][:, None, :]
    outside = ((X < XM - half) | (X > XM + half)).sum(axis=2)
    return (outside <= max_outside).mean(axis=1)


def sd_interval_disclosure(X: np.ndarray, XM: np.ndarray, percents=PERCENTS) -> np.ndarray:
    """`risk.sd_interval_disclosure` of every group (percents already validated)."""
    X, XM, _ = _unit(X, XM)
    sd = _moments(X)[1][:, None, :]
    dist = np.abs(X - XM)
    shares = np.stack([(dist <= (q / 100.0) * sd).mean(axis=(1, 2)) for q in percents], axis=1)
    return shares.mean(axis=1)


def rank_interval_disclosure(X: np.ndarray, XM: np.ndarray, percents=PERCENTS) -> np.ndarray:
    """`risk.rank_interval_disclosure` of every group (percents already validated): the rank bounds
    come from counting, for each masked value, the masked values below and not above it."""
    G, n, p = X.shape
    widths = [math.ceil(q * n / 100) - 1 for q in percents]
    inside = np.zeros((G, len(widths)), np.int64)
    for j in range(p):
        v = np.sort(XM[:, :, j], axis=1)
        a = (v[:, None, :] < XM[:, :, j][:, :, None]).sum(axis=2)
        b = (v[:, None, :] <= XM[:, :, j][:, :, None]).sum(axis=2) - 1
        for t, w in enumerate(widths):
            lo = np.take_along_axis(v, np.maximum(a - w, 0), axis=1)
            hi = np.take_along_axis(v, np.minimum(b + w, n - 1), axis=1)
            inside[:, t] += ((X[:, :, j] >= lo) & (X[:, :, j] <= hi)).sum(axis=1)
    return (inside / (n * p)).mean(axis=1)


def standardise(X: np.ndarray, XM: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`risk.standardise` of every group, a constant original column set to 0 on both sides instead
    of dropped (it adds 0 to every squared distance, which changes no sum)."""
    X, XM, _ = _unit(X, XM)
    keep = np.ptp(X, axis=1) > 0
    mean, sd = _moments(X)
    sd = np.where(keep, sd, 1.0)
    Z = np.where(keep[:, None, :], (X - mean[:, None, :]) / sd[:, None, :], 0.0)
    ZM = np.where(keep[:, None, :], (XM - mean[:, None, :]) / sd[:, None, :], 0.0)
    return Z, ZM


def record_linkage(X: np.ndarray, XM: np.ndarray, rank: int = 1) -> np.ndarray:
    """`risk.record_linkage` of every group (rank already validated, <= n): all n^2 squared distances
    of each group, compared exactly as the one-group function compares them."""
    G, n, p = X.shape
    varies = X.max(axis=1) > X.min(axis=1)
    if p >= 8 and not varies.all():
        # a constant column inside 8 or more changes the pairwise grouping of NumPy's sum over the
        # columns (a 0 instead of a dropped column): those groups take the one-group function
        odd = ~varies.all(axis=1)
        out = np.empty(G)
        out[odd] = [risk.record_linkage(X[g], XM[g], rank) for g in np.flatnonzero(odd)]
        out[~odd] = record_linkage(X[~odd], XM[~odd], rank)
        return out
    Z, ZM = standardise(X, XM)
    d2 = ((ZM[:, :, None, :] - Z[:, None, :, :]) ** 2).sum(axis=3)  # [g, masked i, original k]
    dt = ((ZM - Z) ** 2).sum(axis=2)[:, :, None]
    a = (d2 < dt).sum(axis=2)
    t = (d2 == dt).sum(axis=2)
    hit = (a < rank) & (rank <= a + t)
    out = np.empty(G)
    for g in range(G):  # the credits grouped by t, summed exactly as the one-group function does
        ties, count = np.unique(t[g][hit[g]], return_counts=True)
        out[g] = math.fsum(int(c) / int(k) for k, c in zip(ties, count)) / n
    constant = ~varies.any(axis=1)  # every original record the same point
    out[constant] = 1.0 / n
    return out


def il_dr_score(X: np.ndarray, XM: np.ndarray, k: float, max_outside: int = 0, il1s_form: str = "yancey") -> np.ndarray:
    """`evaluate.il_dr_score` of every group, NaN where it is undefined."""
    il = il_metrics(X, XM)["composite"]
    factor = {"yancey": 100.0, "sdcmicro": 200.0, "sum": float(X.shape[1] * X.shape[2])}[il1s_form]
    return 0.25 * (il + factor * il1s(X, XM) + 100.0 * record_linkage(X, XM)
                   + 100.0 * interval_disclosure(X, XM, k, max_outside))
