"""Representation step shared by every partition method: replace each value by its group's
representative. Rounding by microaggregation = represent(x, partition(x)).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import exponent
from .._validate import fail, finite_values, named
from ..params import REPRESENTATIVE
from ._order import sort_column

REPRESENTATIVES = REPRESENTATIVE.options


@nb.njit(cache=True, nogil=True)
def group_starts(lab, g):
    """Where each group 0..g-1 begins in a stable counting sort by label: group t holds the positions
    start[t] .. start[t + 1] - 1."""
    start = np.zeros(g + 1, np.int64)
    for i in range(lab.shape[0]):
        start[lab[i] + 1] += 1
    for t in range(g):
        start[t + 1] += start[t]
    return start


@nb.njit(cache=True, nogil=True)
def by_group(values, lab, start):
    """values put in the stable counting sort by label whose groups begin at start (`group_starts`):
    values sorted ascending stay ascending within each group."""
    fill = start[:-1].copy()
    out = np.empty(values.shape[0], np.float64)
    for i in range(values.shape[0]):
        out[fill[lab[i]]] = values[i]
        fill[lab[i]] += 1
    return out


@nb.njit(cache=True, nogil=True)
def group_stats_sorted(v, lab, g, median):
    """Representative of each group 0..g-1 from values v sorted ascending and their labels.

    Mean: sum / count. Median: the middle value, or the mean of the two middle values for an even
    group size (each group's values in ascending order by `by_group`). NaN for an empty group.
    """
    start = group_starts(lab, g)
    out = np.empty(g, np.float64)
    if not median:
        sums = np.zeros(g, np.float64)
        for i in range(v.shape[0]):
            sums[lab[i]] += v[i]
        for t in range(g):
            m = start[t + 1] - start[t]
            out[t] = sums[t] / m if m > 0 else np.nan
        return out
    ordered = by_group(v, lab, start)
    for t in range(g):
        m = start[t + 1] - start[t]
        if m == 0:
            out[t] = np.nan
            continue
        h = start[t] + (m - 1) // 2
        out[t] = ordered[h] if m % 2 == 1 else 0.5 * (ordered[h] + ordered[h + 1])
    return out


def group_representatives(x, labels, representative: str = "mean") -> np.ndarray:
    """Representative (mean or median) of each group 0..g-1 of x. Values are scaled by a power of two
    (`duckdb_sdc._numerics`) and centred on their median before summing, so neither a large common
    offset nor the scale (1e308, subnormal numbers) costs precision. An empty group gives NaN."""
    func = "group_representatives"
    rep = REPRESENTATIVE.check(representative, func, "representative")
    x = finite_values(func, "x", x)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    if labels.shape != x.shape:
        raise fail(func, f"labels has {labels.shape[0]} entries but x has {x.shape[0]}")
    if x.shape[0] == 0:
        return np.empty(0, np.float64)
    if labels.min() < 0:
        raise fail(func, f"labels must be >= 0, got {labels.min()}")
    order, v = sort_column(x)
    e = exponent(v[[0, -1]])
    np.ldexp(v, -e, out=v)  # scale invariance (duckdb_sdc._numerics): no sum overflows at 1e308
    center = v[(v.shape[0] - 1) // 2]
    reps = group_stats_sorted(v - center, labels[order], int(labels.max()) + 1, rep == "median") + center
    return np.ldexp(reps, e)


@named
def represent(x, labels, representative: str = "mean") -> np.ndarray:
    """Replace each value of x by its group's representative (labels aligned with x)."""
    reps = group_representatives(x, labels, representative)
    return reps[np.asarray(labels, dtype=np.int64)]
