"""The Freedman-Diaconis rule, used to choose the number of intervals c (discretisation) or the
minimum group size k (microaggregation) of one column when the parameter is given as 'auto'.

Freedman & Diaconis (1981): bin width h = 2 IQR / n^(1/3). The seed paper on rounding by
discretisation uses it per column: c = ceil(range / h) intervals, and k = ceil(n / c) for
microaggregation, so that both families get a comparable number of groups.

Quantiles are the linear interpolation between order statistics (Hyndman & Fan type 7, the default
of R, NumPy and DuckDB's quantile_cont): q(p) = v[f] + (h - f) (v[f + 1] - v[f]) with h = (n - 1) p,
f = floor(h), on the sorted values v.

IQR = 0 (more than half of the values equal, e.g. a column of mostly zeros) would give a zero width.
Fallback: the doubled IQR is the width of the central half of the values divided by 1/2; it is
replaced by the width of a wider central range divided by its share of the values,
(q(1 - a) - q(a)) / (1 - 2a) for a = 1/8, 1/16, ..., 1/512, the first of these that is positive.
When all of them are zero (at most about 0.4% of the values differ from the rest) or the column is
constant, c = 1: one interval, so every value is replaced by the same rounding point.

k = ceil(n / c) is clamped to at least 2 (`group_size_sorted`): 'auto' never resolves to a group of one.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import finite_values
from ..params import GROUP_SIZE
from ._order import sort_column

FALLBACK_SHARES = tuple(1.0 / 2**e for e in range(3, 10))  # 1/8 .. 1/512


def _quantile(v: np.ndarray, p: float) -> float:
    h = (v.shape[0] - 1) * p
    f = math.floor(h)
    if f + 1 >= v.shape[0]:
        return float(v[-1])
    return float(v[f] + (h - f) * (v[f + 1] - v[f]))


def spread_sorted(v: np.ndarray) -> float:
    """2 IQR of the sorted values v, or the documented fallback when the IQR is 0 (0.0 if every
    fallback range is 0 too)."""
    h = 2.0 * (_quantile(v, 0.75) - _quantile(v, 0.25))
    for a in FALLBACK_SHARES:
        if h > 0:
            break
        h = (_quantile(v, 1.0 - a) - _quantile(v, a)) / (1.0 - 2.0 * a)
    return h


def intervals_sorted(v: np.ndarray) -> int:
    """Freedman-Diaconis number of intervals c >= 1 for the sorted finite values v."""
    n = v.shape[0]
    if n < 2 or v[0] == v[-1]:
        return 1
    h = spread_sorted(v)
    if h <= 0:
        return 1
    width = h / n ** (1.0 / 3.0)
    return max(1, math.ceil((float(v[-1]) - float(v[0])) / width))


def group_size_sorted(v: np.ndarray) -> int:
    """Freedman-Diaconis minimum group size k = max(2, ceil(n / c)) for the sorted finite values v.

    The rule alone can give k = 1 (c >= n: an outlier stretches the range, e.g. 0..199 and 1e6 give
    c = 29289 for 201 values), and a group of one record releases its value unchanged; so k is
    clamped to 2, the smallest group a masking method may form. With fewer than 2 values no group of
    2 exists, and the masking method refuses (k = 2 is larger than the number of values)."""
    return max(GROUP_SIZE.minimum, math.ceil(v.shape[0] / intervals_sorted(v)))


def freedman_diaconis(x) -> int:
    """Number of intervals c that the Freedman-Diaconis rule gives for the finite values x."""
    x = finite_values("freedman_diaconis", "x", x)
    if x.shape[0] == 0:
        return 1
    return intervals_sorted(sort_column(x)[1])
