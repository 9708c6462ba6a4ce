"""Information loss between original data x and masked data xm (n records, p columns).

Every function takes 1-D arrays (one column) or 2-D n x p arrays of finite values and returns a float.
Cost O(n p) unless stated. Where a measure is undefined for the data (a constant original column, one
record, every original value 0) the function raises `SdcError` naming the reason; it never returns NaN.

Scale invariance (`duckdb_sdc._numerics`): every measure is computed on the columns scaled by powers
of two (each column of x and xm by the same one), so a scale-free measure (IL1, IL1s, SSE/SST, the IL
metrics, R^2) is the same at 1e308, 1e-300 or 1, and one in data units (MAE, MSE) is scaled back
exactly, or refused with `OutOfRange` when it exceeds float64 (an MSE of 1e616).
"""

from __future__ import annotations

import math

import numpy as np

from .._numerics import from_unit
from .._validate import fail
from . import stacked
from ._input import matrix, pair, sample_sd, undefined, unit_columns, unit_common

SQRT2 = math.sqrt(2.0)


def mae(x, xm) -> float:
    """Mean absolute error: sum |x - x'| / (n p)."""
    X, XM, e = unit_common(*pair("mae", x, xm))
    return from_unit("mae", "the mean absolute error", float(np.abs(X - XM).mean()), e)


def mse(x, xm) -> float:
    """Mean squared error: sum (x - x')^2 / (n p)."""
    X, XM, e = unit_common(*pair("mse", x, xm))
    d = X - XM
    return from_unit("mse", "the mean squared error", float((d * d).mean()), e, power=2)


def il1(x, xm) -> float:
    """IL1, the mean variation of the values: the mean of |x - x'| / |x| over the cells with x != 0.

    Rule for x = 0 (the relative change is undefined there): such cells are left out of the mean, as
    sdcMicro's dUtility does; the mean is taken over the remaining cells. If every original value is
    0 the measure is undefined and an error is raised.
    """
    X, XM, _ = unit_columns(*pair("il1", x, xm))
    v = _mean_variation(X, XM)
    if v is None:
        raise undefined("il1", "every original value is 0; the relative change |x - xm| / |x| is undefined")
    return v


def _il1s_terms(func: str, x, xm) -> tuple[np.ndarray, np.ndarray]:
    X, XM, _ = unit_columns(*pair(func, x, xm))
    sd = sample_sd(func, X)
    return np.abs(X - XM).sum(axis=0) / (SQRT2 * sd), X


def il1s(x, xm) -> float:
    """IL1s (Yancey, Winkler & Creecy 2002): (1 / (n p)) sum_j sum_i |x_ij - x'_ij| / (sqrt(2) S_j),
    S_j the sample standard deviation (n - 1) of original column j.

    Scale free: multiplying x and x' by the same positive constant leaves it unchanged. Undefined (an
    error) when n = 1 or an original column is constant (S_j = 0).
    """
    terms, X = _il1s_terms("il1s", x, xm)
    return float(terms.sum() / X.size)


def il1s_sum(x, xm) -> float:
    """The un-normalised IL1s that sdcMicro's dUtility reports (method "IL1s"):
    sum_j sum_i |x_ij - x'_ij| / (sqrt(2) S_j), i.e. n p * il1s(x, xm)."""
    terms, _ = _il1s_terms("il1s_sum", x, xm)
    return float(terms.sum())


def sse_sst(x, xm) -> float:
    """100 * SSE / SST on standardised columns, the figure microaggregation papers tabulate.

    z = (x - mean_j) / S_j and z' = (x' - mean_j) / S_j with the ORIGINAL column's mean and sample sd
    (n - 1); SSE = sum (z - z')^2, SST = sum (z - mean z)^2 over all cells. The choice of sd cancels:
    per column SSE_j / SST_j = sum (x - x')^2 / sum (x - mean x)^2 whatever S_j is, and the overall
    figure is 100 times the mean over the columns of SSE_j / SST_j, so population and sample sd give
    the same number. Undefined (an error) for n = 1 or a constant original column.
    """
    X, XM, _ = unit_columns(*pair("sse_sst", x, xm))
    sample_sd("sse_sst", X)  # refuses n = 1 and constant columns
    d = X - XM
    c = X - X.mean(axis=0)
    return float(100.0 * np.mean((d * d).sum(axis=0) / (c * c).sum(axis=0)))


def _mean_variation(a: np.ndarray, b: np.ndarray) -> float | None:
    """Mean of |a - b| / |a| over the entries with a != 0; None when every a is 0."""
    keep = a != 0
    if not keep.any():
        return None
    return float((np.abs(a - b)[keep] / np.abs(a[keep])).mean())


IL_COMPONENTS = ("il1", "means", "covariances", "variances", "correlations")


def il_metrics(x, xm) -> dict[str, float | None]:
    """The Domingo-Ferrer & Torra (2001) information-loss metrics and their composite.

    Components (each a mean variation |a - a'| / |a| over the entries with a != 0, or None when every
    entry is 0 or there is no entry):
      il1          the values (as `il1`),
      means        the column means,
      covariances  the sample covariance matrix (n - 1), pairs i <= j,
      variances    the sample variances (n - 1),
      correlations mean ABSOLUTE error of the correlation matrix, pairs i < j (None when p = 1);
                   a pair involving a constant column has correlation 0.
    composite = 100 * mean of the components that are not None.
    Needs n >= 2 (sample covariances). Computed by `stacked.il_metrics` (one group), so many small
    groups get exactly these numbers. Cost O(n p^2).
    """
    X, XM = pair("il_metrics", x, xm)
    if X.shape[0] < 2:
        raise undefined("il_metrics", "x has n = 1 record; sample covariances (n - 1) are undefined")
    parts = stacked.il_metrics(X[None], XM[None])  # one group: the arithmetic of many small groups
    return {name: None if np.isnan(v[0]) else float(v[0]) for name, v in parts.items()}


def entropy(xm) -> float:
    """Shannon entropy of the masked data in bits: sum over columns of -sum_v f_v log2 f_v, f_v the
    share of records with value v in that column (DuckDB's built-in `entropy` aggregate per column).
    0 for a constant column; at most log2(n) per column."""
    XM = matrix("entropy", "xm", xm)
    total = 0.0
    for j in range(XM.shape[1]):
        _, counts = np.unique(XM[:, j], return_counts=True)
        f = counts / XM.shape[0]
        total += float(-(f * np.log2(f)).sum())
    return total + 0.0  # never -0.0


def regression_utility(x, xm, response: int = 0) -> dict[str, float]:
    """Regression utility: ordinary least squares (with intercept) of column `response` on the other
    columns, fitted on the MASKED data; then the original response is predicted from the original
    predictors. Returns {"mse": mean squared prediction error on the original data,
    "r2": R^2 of the fit on the masked data, "r2_original": R^2 of the same regression fitted on the
    original data, the baseline that r2 is read against}.

    p = 1 fits the intercept alone. R^2 is 0 when the masked response is constant. The fit runs on
    the masked columns centred on their means and scaled by their sds (constant ones left unscaled),
    so a large common offset such as 1e8 does not drown the slopes in rounding; the intercept then
    follows from the means. With collinear masked predictors the slopes are the minimum-norm least-
    squares solution on that scale (through the pseudo-inverse, singular values below
    eps max(n, p - 1) times the largest taken as 0, as lstsq does). Every column is first scaled by a
    power of two (the response's back for the mse, which is refused beyond float64). The arithmetic
    is that of `stacked.regression_utility` for many small groups. Cost O(n p^2).
    """
    X, XM = pair("regression_utility", x, xm)
    n, p = X.shape
    if not -p <= response < p or isinstance(response, bool):
        raise fail("regression_utility", f"response = {response} is not a column index (p = {p})")
    order = [response % p] + [j for j in range(p) if j != response % p]
    fit = stacked.regression_utility(X[None][:, :, order], XM[None][:, :, order])
    return {"mse": float(fit["mse"][0]), "r2": float(fit["r2"][0]), "r2_original": float(fit["r2_original"][0])}
