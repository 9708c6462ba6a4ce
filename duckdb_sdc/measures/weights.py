"""Measures with sampling weights: weighted information loss and estimated population frequencies.

A record with sampling weight w stands for w units of the population, so a survey's estimate of a
population quantity weights each record by w. The weighted measures are the population estimates of
the unweighted ones:

* weighted MAE = sum w |x - x'| / sum w and weighted MSE = sum w (x - x')^2 / sum w (equal weights give
  MAE and MSE);
* weighted IL1s = sum w |x - x'| / (sqrt(2) S_w) / sum w, the IL1s of Yancey, Winkler & Creecy (2002)
  with the weighted mean m_w = sum w x / sum w and the weighted standard deviation with the
  reliability-weights correction, S_w^2 = sum w (x - m_w)^2 / (V1 - V2 / V1), V1 = sum w,
  V2 = sum w^2: it is the sample sd (n - 1) for equal weights, so equal weights give IL1s, and it does
  not change when every weight is multiplied by the same constant;
* the estimated population frequency of a key combination, F_k = the sum of the weights of the sample
  records sharing it, beside the sample frequency f_k (their number): sdcMicro's `freqCalc` (fk, Fk)
  and `measure_risk`. A record is at risk when F_k is below a threshold; sum 1 / F_k over the records
  is the naive expected number of correct re-identifications (an intruder who picks one of the F_k
  population units matching a sample record at random). A missing key (None) matches any value, as
  sdcMicro counts it (`duckdb_sdc.measures.keys`, which computes them, says so and offers NULL as a
  value of its own instead).

Scale invariance (`duckdb_sdc._numerics`): x and x' are scaled by one power of two and the weights by
another, so the measures are exact rescalings at 1e308 or 1e-300 and unchanged when every weight is
multiplied by a power of two; a result in data units that exceeds float64 is refused (`OutOfRange`).

No DuckDB here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._numerics import check_finite, exponent, from_unit
from .._validate import fail, finite_values, reporting
from ..methods.weights import check_weights, unit_weights
from ._input import UndefinedMeasure, undefined
from .keys import key_frequencies

SQRT2 = math.sqrt(2.0)


def _inputs(func: str, x, xm, w) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(x', xm', w', e): x and xm scaled by one power of two 2^-e, the weights by their own."""
    x = finite_values(func, "x", x)
    xm = finite_values(func, "xm", xm)
    if x.shape != xm.shape:
        raise fail(func, f"x and xm must have the same length (one masked value per original value), got "
                         f"{x.shape[0]} and {xm.shape[0]}")
    if x.shape[0] == 0:
        raise fail(func, "x is empty; a measure needs at least one record")
    w = unit_weights(func, "w", check_weights(func, "w", w, x.shape[0]))
    e = exponent(x, xm)
    return np.ldexp(x, -e), np.ldexp(xm, -e), w, e


def weighted_mae(x, xm, w) -> float:
    """Weighted mean absolute error sum w |x - x'| / sum w (module docstring)."""
    X, XM, W, e = _inputs("weighted_mae", x, xm, w)
    return from_unit("weighted_mae", "the weighted mean absolute error",
                     float((W * np.abs(X - XM)).sum() / W.sum()), e)


def weighted_mse(x, xm, w) -> float:
    """Weighted mean squared error sum w (x - x')^2 / sum w (module docstring)."""
    X, XM, W, e = _inputs("weighted_mse", x, xm, w)
    d = X - XM
    return from_unit("weighted_mse", "the weighted mean squared error", float((W * d * d).sum() / W.sum()), e,
                     power=2)


def weighted_sd(func: str, X: np.ndarray, W: np.ndarray) -> float:
    """The weighted sd of X with the reliability-weights correction (module docstring); undefined for
    one record or a constant column."""
    if X.shape[0] < 2:
        raise undefined(func, "x has n = 1 record; the weighted sample standard deviation is undefined")
    if np.ptp(X) == 0:
        raise undefined(func, "x is constant (standard deviation 0); standardising by it is undefined")
    v1 = W.sum()
    m = (W * X).sum() / v1
    d = X - m
    return math.sqrt((W * d * d).sum() / (v1 - (W * W).sum() / v1))


def weighted_il1s(x, xm, w) -> float:
    """Weighted IL1s: sum w |x - x'| / (sqrt(2) S_w) / sum w (module docstring). Scale free."""
    func = "weighted_il1s"
    X, XM, W, _ = _inputs(func, x, xm, w)
    sd = weighted_sd(func, X, W)
    return float((W * np.abs(X - XM)).sum() / (SQRT2 * sd) / W.sum())


def frequencies(keys: Sequence[Sequence], w, nulls: str = "any") -> tuple[np.ndarray, np.ndarray]:
    """(f_k, F_k) of every record (float64 arrays), the records given as rows of key values (one tuple
    per record, None for NULL): `duckdb_sdc.measures.keys.key_frequencies` on those rows, whose NULL
    semantics they follow (`nulls`: 'any', a NULL key matches any value, as sdcMicro counts it; or
    'category'). Every record takes part, so every weight must be finite and > 0."""
    rows = [tuple(r) for r in keys]
    width = len(rows[0]) if rows else 0
    columns = [[r[j] for r in rows] for j in range(width)]
    with reporting("frequencies"):
        fk, Fk = key_frequencies(columns, list(w), nulls=nulls)
    return fk.astype(np.float64), Fk


def risk_summary(keys: Sequence[Sequence], w, threshold: float, nulls: str = "any") -> dict[str, float | int | None]:
    """The summary of `weighted_risk_summary`: records, combinations (distinct rows of key values, NULL
    a value), sample_uniques (f_k = 1), at_risk (F_k < threshold), share_at_risk and
    expected_reidentifications (sum 1 / F_k), with the NULL semantics of `frequencies`."""
    func = "weighted_risk_summary"
    from ..params import POSITIVE  # noqa: PLC0415
    threshold = POSITIVE.check(threshold, func, "threshold")
    with reporting(func):
        fk, Fk = frequencies(keys, w, nulls)
    n = fk.shape[0]
    at_risk = int((Fk < threshold).sum())
    return {"records": n, "combinations": len({tuple(r) for r in keys}), "sample_uniques": int((fk == 1).sum()),
            "at_risk": at_risk, "share_at_risk": at_risk / n,
            "expected_reidentifications": float(check_finite(func, "the expected re-identifications",
                                                             (1.0 / Fk).sum()))}


__all__ = ["UndefinedMeasure", "frequencies", "risk_summary", "weighted_il1s", "weighted_mae", "weighted_mse",
           "weighted_sd"]
