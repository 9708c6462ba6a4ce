"""Sampling weights: weighted representatives of a partition (weighted mean, weighted median).

Survey microdata carry a sampling weight per record (the number of population units it stands for).
sdcMicro's microaggregation takes weights for its group centres; mu-ARGUS uses them in its risk
model. Here the weights change the *representative* of each group, never the *partition*:

* The partition stays on records. k-anonymity and the sets of attraction count records of the file:
  a group of k records releases one value shared by k records, whatever their weights. A partition
  into groups of total weight >= k would let one heavy record form a group alone and release its
  value unchanged, which is exactly what microaggregation exists to prevent. So every partition
  method runs as without weights, and the guarantee (k records per released value) is unchanged.
* The representative is the weighted mean sum w x / sum w of the group (the estimate of the group's
  population mean that a survey analyst would compute), or the weighted median below, so that
  weighted totals and means of the masked column estimate the population's as the original's do: the
  weighted total of a group is preserved exactly (in exact arithmetic).

Weighted median of a group with values v_1 <= ... <= v_m and weights w_1..w_m (ties in any order):
with L_j = w_1 + ... + w_j and R_j = w_{j+1} + ... + w_m, j* is the smallest j with L_j >= R_j (the
cumulative weight reaches half the total). The median is v_j* when L_j* > R_j*, and the midpoint
(v_j* + v_{j*+1}) / 2 when L_j* = R_j* (the weight splits in two equal halves: the weighted analogue
of an even number of values). With equal weights this is the ordinary median (the middle value, or
the mean of the two middle values). In floating point, L and R are summed from their own ends and
count as equal when they differ by at most m 2^-52 W (W the group's total weight, m its size: a bound
on the rounding of the two sums), so that weights 3 and 1 scaled by 1e300 still split a group in two
equal halves; weights whose sums are exact (integers below 2^52 / m, equal weights) are compared
exactly, since two different sums of them differ by far more.

Weights: one per value, finite and > 0 (a weight of 0 would drop a record from its group's value
while it still counts as one of its k records); a NULL weight for a non-NULL value is refused. Scale
invariance (`duckdb_sdc._numerics`): the weights are scaled by the power of two that puts the largest
in [1/2, 1) (exact), so weights w and w * 2^j give the same result bit for bit; weights whose
smallest is more than 2^1021 times smaller than the largest are refused (they would underflow). When
all weights are equal the weighted representative is the unweighted one and the unweighted path
computes it, so the result is the unweighted function's bit for bit, whatever the common weight
(1, 1e300 or 1e-300).

No DuckDB here.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import exponent
from .._numerics import to_unit
from .._validate import fail, finite_values, named, reporting
from ..params import AUTO, FLAG, INTERVALS, POINT, REPRESENTATIVE, SEED, WEIGHT_LIST, choice
from . import discretisation as disc
from . import microaggregation as micro
from . import multivariate
from ._order import sort_column, unsort
from .partition import by_group, group_starts

# the smallest scaled weight accepted: below it (a ratio of 2^-1021 to the largest) weights underflow
_TINY = 2.0 ** -1022

MICRO_METHODS = micro.METHODS  # mdav, vmdav, oma, ranking
DISC_METHODS = ("ewd", "efd", "kmd")  # rbd's points are bootstrap centroids: weights have no defined place


def check_weights(func: str, param: str, weights, n: int) -> np.ndarray:
    """The weights as a float64 array of n finite numbers > 0, or an error naming func and param (the
    check of the kind `params.WEIGHT_LIST`)."""
    return WEIGHT_LIST.check(weights, func, param, n=n)


def unit_weights(func: str, param: str, w: np.ndarray) -> np.ndarray:
    """w scaled by the power of two that puts its largest in [1/2, 1) (exact); refused when the
    smallest would underflow (a ratio below 2^-1021 to the largest)."""
    if w.shape[0] == 0:
        return w.copy()
    u = np.ldexp(w, -exponent(w))
    if u.min() < _TINY:
        raise fail(func, f"{param} span too wide a range: the smallest ({float(w.min())!r}) is more than 2^1021 "
                         f"times smaller than the largest ({float(w.max())!r})", param)
    return u


def all_equal(w: np.ndarray) -> bool:
    return w.shape[0] == 0 or bool(np.all(w == w[0]))


@nb.njit(cache=True, nogil=True)
def weighted_stats_sorted(v, w, lab, g, median):
    """Weighted representative of each group 0..g-1 from values v sorted ascending, their weights w
    (> 0) and labels: sum w v / sum w, or the weighted median of the module docstring (each group's
    values in ascending order by `partition.by_group`). NaN for an empty group."""
    start = group_starts(lab, g)
    out = np.empty(g, np.float64)
    if not median:
        sums = np.zeros(g, np.float64)
        wsum = np.zeros(g, np.float64)
        for i in range(v.shape[0]):
            sums[lab[i]] += w[i] * v[i]
            wsum[lab[i]] += w[i]
        for t in range(g):
            out[t] = sums[t] / wsum[t] if start[t + 1] > start[t] else np.nan
        return out
    bv = by_group(v, lab, start)
    bw = by_group(w, lab, start)
    right = np.empty(v.shape[0] + 1, np.float64)
    for t in range(g):
        a = start[t]
        b = start[t + 1]
        if a == b:
            out[t] = np.nan
            continue
        right[b] = 0.0  # right[j] = w_j + ... + w_{b-1}, summed from the top
        for j in range(b - 1, a - 1, -1):
            right[j] = right[j + 1] + bw[j]
        # L and R are equal when they differ by no more than the rounding of their sums
        tol = (b - a) * 2.0 ** -52 * right[a]
        left = 0.0
        for j in range(a, b):
            left += bw[j]
            if left >= right[j + 1] - tol:
                if abs(left - right[j + 1]) <= tol and j + 1 < b:
                    out[t] = 0.5 * (bv[j] + bv[j + 1])
                else:
                    out[t] = bv[j]
                break
    return out


def _weighted_reps_sorted(order, v, w, lab_sorted, rep: str) -> np.ndarray:
    """Weighted representatives from the sorted, unit-scaled, centred values v (input positions
    `order`), the unit weights w in input order and the labels in sorted order."""
    g = int(lab_sorted.max()) + 1
    return weighted_stats_sorted(v, w[order], lab_sorted, g, rep == "median")


def weighted_group_representatives(x, weights, labels, representative: str = "mean") -> np.ndarray:
    """Weighted representative (mean or median, see the module docstring) of each group 0..g-1 of x.
    Values are scaled by a power of two and centred on their median before summing (as
    `partition.group_representatives`), the weights by their own power of two. NaN for an empty group."""
    func = "weighted_group_representatives"
    rep = REPRESENTATIVE.check(representative, func, "representative")
    x = finite_values(func, "x", x)
    w = unit_weights(func, "weights", check_weights(func, "weights", weights, x.shape[0]))
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    if labels.shape != x.shape:
        raise fail(func, f"labels has {labels.shape[0]} entries but x has {x.shape[0]}")
    if x.shape[0] == 0:
        return np.empty(0, np.float64)
    if labels.min() < 0:
        raise fail(func, f"labels must be >= 0, got {labels.min()}")
    order, v = sort_column(x)
    e = exponent(v[[0, -1]])
    np.ldexp(v, -e, out=v)
    center = v[(v.shape[0] - 1) // 2]
    reps = _weighted_reps_sorted(order, v - center, w, labels[order], rep) + center
    return np.ldexp(reps, e)


@named
def weighted_represent(x, weights, labels, representative: str = "mean") -> np.ndarray:
    """Replace each value of x by its group's weighted representative (labels aligned with x)."""
    reps = weighted_group_representatives(x, weights, labels, representative)
    return reps[np.asarray(labels, dtype=np.int64)]


# ---------------------------------------------------------------------------------------------
# microaggregation


_MICRO = choice(*MICRO_METHODS)


def microaggregate_weighted(x, weights, k, method: str = "mdav", representative: str = "mean", *,
                            gamma: float = 0.2) -> np.ndarray:
    """`microaggregation.microaggregate` with weighted representatives: the partition of x is the
    unweighted one (groups of at least k records), each value is replaced by its group's weighted
    mean or weighted median (module docstring). Errors name `<method>_round_weighted`."""
    func = f"{method}_round_weighted" if method in MICRO_METHODS else "microaggregate_weighted"
    method = _MICRO.check(method, func, "method")
    rep = REPRESENTATIVE.check(representative, func, "representative")
    x = finite_values(func, "x", x)
    w = check_weights(func, "weights", weights, x.shape[0])
    if all_equal(w):
        return micro.microaggregate(x, k, method, rep, gamma=gamma)
    w = unit_weights(func, "weights", w)
    x, k, gamma, order, v, center, e = micro.prepare_input(func, x, k, gamma)
    lab = micro.sorted_labels(method, order, v, k, gamma)
    reps = np.ldexp(_weighted_reps_sorted(order, v, w, lab, rep) + center, e)
    return unsort(order, reps[lab])


# ---------------------------------------------------------------------------------------------
# discretisation


_DISC = choice(*DISC_METHODS)


def discretise_weighted(x, weights, c, method: str = "efd", representative: str = "mean", *,
                        stochastic=False, seed=None) -> np.ndarray:
    """`discretisation.discretise` with weighted rounding points: the intervals are the unweighted
    ones; an interval's point is the weighted mean or weighted median of its values ('midpoint' does
    not depend on the values, so weights do not change it). Stochastic rounding goes to one of the two
    enclosing (weighted) points, unbiased for each value, with the same draws as the unweighted
    function. Methods 'ewd', 'efd', 'kmd'. Errors name `<method>_round_weighted`."""
    func = f"{method}_round_weighted" if method in DISC_METHODS else "discretise_weighted"
    method = _DISC.check(method, func, "method")
    x = finite_values(func, "x", x)
    c = INTERVALS.check(c, func, "c")
    rep = POINT.check(representative, func, "representative")
    stochastic = FLAG.check(stochastic, func, "stochastic")
    seed = SEED.check(seed, func, "seed")
    w = check_weights(func, "weights", weights, x.shape[0])
    if all_equal(w) or rep == "midpoint":
        return disc.discretise(x, c, method, rep, stochastic=stochastic, seed=seed)
    w = unit_weights(func, "weights", w)
    rng = np.random.default_rng(seed) if stochastic else None
    xu, e = to_unit(x)
    groups = disc.run_unit(func, method, xu, c, "mean", {}, False, None).groups
    if c == AUTO:
        disc.refuse_a_lone_value(func, x, groups)  # as the unweighted method: 'auto' leaves no value alone
    if method == "ewd":  # interval numbers (floats, some intervals empty): renumbered 0..g-1
        ids = np.unique(groups, return_inverse=True)[1].astype(np.int64)
    else:  # efd, kmd: every interval holds values, numbered 0..g-1 in increasing order
        ids = np.asarray(groups, dtype=np.int64)
    if rep == "mean":  # no sort needed: sums per interval around the middle of the range
        center = 0.5 * (float(xu.min()) + float(xu.max()))
        g = int(ids.max()) + 1
        points = np.bincount(ids, weights=w * (xu - center), minlength=g) / np.bincount(ids, weights=w, minlength=g)
        points += center
    else:
        order, v = sort_column(xu)
        center = v[(v.shape[0] - 1) // 2]
        points = _weighted_reps_sorted(order, v - center, w, ids[order], rep) + center
    if stochastic:
        rounded = disc.stochastic_round(xu, points, rng.random(x.shape[0]))
    else:
        rounded = points[ids]
    return np.ldexp(rounded, e)


# ---------------------------------------------------------------------------------------------
# multivariate MDAV


def weighted_centroids(X, weights, labels) -> np.ndarray:
    """(g, p) weighted mean of every attribute over each cluster 0..g-1 (columns scaled and centred as
    `multivariate.centroids`, weights scaled by their power of two)."""
    func = "weighted_centroids"
    A = multivariate.as_records(func, X)
    w = unit_weights(func, "weights", check_weights(func, "weights", weights, A.shape[0]))
    lab = np.ascontiguousarray(labels, dtype=np.int64)
    g = int(lab.max()) + 1
    A, e = multivariate.per_column_unit(A)
    med = multivariate.lower_median(A)
    wsum = np.bincount(lab, weights=w, minlength=g)
    out = np.empty((g, A.shape[1]))
    for j in range(A.shape[1]):
        out[:, j] = np.bincount(lab, weights=w * (A[:, j] - med[j]), minlength=g) / wsum + med[j]
    return np.ldexp(out, e)


def mdav_multi_round_weighted(X, weights, k, *, remainder: str = "group", standardise: bool = True) -> np.ndarray:
    """`multivariate.mdav_multi_round` with weighted centroids: the MDAV clusters of the records are
    the unweighted ones (at least k records each); every record is replaced by its cluster's weighted
    attribute means. Errors name `mdav_multi_round_weighted`."""
    func = "mdav_multi_round_weighted"
    A = multivariate.as_records(func, X)
    w = check_weights(func, "weights", weights, A.shape[0])
    if all_equal(w):
        return multivariate.mdav_multi_round(A, k, remainder=remainder, standardise=standardise)
    with reporting(func):
        lab = multivariate.mdav_multi_partition(A, k, remainder=remainder, standardise=standardise)
        return weighted_centroids(A, w, lab)[lab]


__all__ = ["DISC_METHODS", "MICRO_METHODS", "check_weights", "discretise_weighted", "mdav_multi_round_weighted",
           "microaggregate_weighted", "unit_weights", "weighted_centroids", "weighted_group_representatives",
           "weighted_represent", "weighted_stats_sorted"]
