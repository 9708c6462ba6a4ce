"""Rounding by discretisation (Senavirathne & Torra 2019, "Rounding based continuous data
discretization for statistical disclosure control"): partition one column into c intervals, choose
a rounding point per interval, and replace every value by its rounding point.

Methods (`METHODS`), all on the finite values of one column:

* 'ewd', equal width: c intervals of width w = (max - min) / c over the observed range; value x
  falls in interval min(floor((x - min) / w), c - 1), computed in float64 exactly so (the maximum
  belongs to the last interval). Intervals may be empty; labels are the interval numbers 0..c-1.
  A constant column is one interval.
* 'efd', equal frequency: the sorted values are cut into c' = min(c, m) intervals (m = number of
  distinct values) of about n / c' values. Cuts fall only between two different values (a group of
  equal values is never split). Cut t (t = 1..c'-1) is placed at the gap nearest to position
  t n / c' of the sorted values (a gap at position s separates v[s-1] < v[s]; on a tie, the lower
  gap), moved up as little as needed to lie above cut t - 1 and down as little as needed to leave
  one gap for each later cut. So there are always exactly c' intervals, c' < c only when there are
  fewer than c distinct values; `efd_labels(x, c).max() + 1` shows the achieved number.
* 'kmd', exact univariate k-means (`kmeans1d`): c' = min(c, m) intervals with the smallest total
  within-interval sum of squares, globally optimal and deterministic.
* 'rbd', re-sampling based discretisation (the seed paper's Algorithm 1): the sorted column is cut
  into `groups` quantile groups (by the 'efd' rule, default 10); from each group of size g, g
  bootstrap samples of size g are drawn (with replacement) and each sample's centroid (its mean, or
  its median: `centroid`) is kept; the n centroids are clustered by exact k-means into
  c' = min(c, distinct centroids) clusters, whose rounding points form the rounding set; every
  original value is rounded to the nearest rounding point (on an exact tie, the lower one). Labels
  are the rounding points' numbers 0..c'-1 (a point may attract no value). A bootstrap sample is
  drawn as g positions, or as binomial counts over the group's distinct values when they are
  heavily repeated (`_bootstrap_centroids`): O(n^2 / groups) random draws for distinct values, far
  fewer for repeated ones; meant for the data set sizes of the SDC literature, not for millions of
  distinct values.

Rounding points (`POINTS`): 'mean' (default), 'median' (the mean of the two middle values for an
even count) or 'midpoint' of each interval. The midpoint of an 'ewd' interval is the centre of its
range [min + t w, min + (t + 1) w]; for the other methods it is (smallest + largest member) / 2.
For 'rbd' the statistics are those of the cluster of re-sampled centroids.

Set of attraction: the values that are rounded to the same point; its size is the protection that
rounding gives each of them (`attraction_sizes`, aligned with x).

Stochastic rounding (the seed paper's future work): instead of its own rounding point, each value x
goes to one of the two rounding points r_t <= x <= r_t+1 that enclose it, to r_t+1 with probability
(x - r_t) / (r_t+1 - r_t), so that its expected result is x itself. The rounding set is that of the
deterministic rounding (for 'ewd' the points of the non-empty intervals). Values below the smallest
rounding point or above the largest have a single enclosing point and go to it (the only biased
values). Uniform draws come from NumPy's PCG64 generator seeded with `seed`, one per value in input
order: the same input in the same order with the same seed gives the same output; seed None draws
fresh entropy. Set-of-attraction sizes always refer to the deterministic rounding.

c may be 'auto': the Freedman-Diaconis number of intervals (`freedman_diaconis`).

Every method works on the values scaled by the power of two that puts their largest magnitude in
[1/2, 1) (`duckdb_sdc._numerics`), so the intervals at 1e308 or among the subnormal numbers are those
at 1 and the rounding points are those at 1 rescaled. Equal-width interval numbers are computed in
float64, so any c works for the rounding; labels beyond a BIGINT (c > 2^63 - 1, possible with 'auto'
and one huge outlier) are refused.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import to_unit
from .._validate import choice, fail, finite_values, flag, interval_count, is_auto, seed_value
from ._order import PARALLEL_LOCK, PARALLEL_MIN, sort_column, unsort
from .freedman_diaconis import intervals_sorted
from .kmeans1d import optimal_splits

METHODS = ("ewd", "efd", "kmd", "rbd")
POINTS = ("mean", "median", "midpoint")
CENTROIDS = ("mean", "median")
DEFAULT_GROUPS = 10
LOOKUP_MAX = 256  # bounds up to which values count them; a binary search above (measured crossover)


# ---------------------------------------------------------------------------------------------
# partitions of the sorted values (labels non-decreasing along the sorted order)


@nb.njit(cache=True, nogil=True)
def _ewd_bins(x, lo, width, top):
    """Interval numbers min(floor((x - lo) / width), top) as float64 (exact integers; float64 so
    that any c works, also beyond the int64 range)."""
    n = x.shape[0]
    lab = np.empty(n, np.float64)
    for i in range(n):
        t = np.floor((x[i] - lo) / width)
        lab[i] = top if t >= top else t
    return lab


_LABEL_MAX = 2**63 - 1  # the largest interval number a BIGINT label can hold


def _ewd_width(func: str, lo: float, hi: float, c: int) -> tuple[float, float]:
    """(width, c - 1 as float64) of c equal-width intervals over [lo, hi] (data scaled to at most 1 in
    magnitude, so hi - lo cannot overflow); refuses a c so large that the width is not a positive
    float64."""
    try:
        cf = float(c)
    except OverflowError:
        raise fail(func, f"c = {c} intervals is more than float64 can count") from None
    width = (hi - lo) / cf
    if hi > lo and not width > 0:
        raise fail(func, f"c = {c} intervals is so many that their width (the range / c) is 0 in float64; "
                         "use fewer intervals")
    return width, float(c - 1)


def _ewd_labels(func: str, bins: np.ndarray, c: int) -> np.ndarray:
    """The float64 interval numbers as BIGINT labels, or a clear error when they do not fit."""
    if c - 1 > _LABEL_MAX:
        raise fail(func, f"c = {c} intervals: the interval numbers 0..c-1 do not fit in a BIGINT label "
                         "(at most 2^63 - 1); the rounded values and the set-of-attraction sizes still work, or use "
                         "fewer intervals")
    return bins.astype(np.int64)


@nb.njit(cache=True, nogil=True)
def _efd_cuts(gaps, n, ce):
    """Cut positions (indices into gaps) for ce intervals: the documented nearest-gap rule."""
    g = gaps.shape[0]
    cuts = np.empty(ce - 1, np.int64)
    prev = -1
    for t in range(1, ce):
        target = t * n  # compare gap * ce with t * n: integers, so ties are exact
        lo = 0
        hi = g
        while lo < hi:  # first gap with gap * ce >= target
            mid = (lo + hi) // 2
            if gaps[mid] * ce >= target:
                hi = mid
            else:
                lo = mid + 1
        j = lo
        if j == g or (j > 0 and target - gaps[j - 1] * ce <= gaps[j] * ce - target):
            j -= 1
        low = prev + 1
        high = g - (ce - 1 - t)
        if j < low:
            j = low
        if j > high - 1:
            j = high - 1
        cuts[t - 1] = j
        prev = j
    return cuts


def _efd_bounds(v: np.ndarray, c: int) -> np.ndarray:
    """Interval bounds 0 = b_0 < ... < b_c' = n of the sorted values (interval t is v[b_t:b_t+1])."""
    n = v.shape[0]
    gaps = np.flatnonzero(v[1:] != v[:-1]) + 1
    ce = min(c, gaps.shape[0] + 1)
    cuts = gaps[_efd_cuts(gaps, n, ce)] if ce > 1 else np.empty(0, np.int64)
    return np.concatenate(([0], cuts, [n])).astype(np.int64)


def _kmd_bounds(v: np.ndarray, c: int, solver: str = "auto") -> np.ndarray:
    return optimal_splits(v, c, solver=solver)


def _labels_of_bounds(bounds: np.ndarray) -> np.ndarray:
    """Label of every sorted value from the interval bounds."""
    sizes = np.diff(bounds)
    return np.repeat(np.arange(sizes.shape[0], dtype=np.int64), sizes)


@nb.njit(cache=True, nogil=True, parallel=True)
def _lookup_parallel(x, lows, table, out, linear):
    m = lows.shape[0]
    for i in nb.prange(x.shape[0]):
        xi = x[i]
        if linear:  # few bounds: count them without branches
            k = 0
            for t in range(m):
                k += lows[t] <= xi
        else:  # binary search for the first low above xi
            a = 0
            b = m
            while a < b:
                h = (a + b) >> 1
                if lows[h] <= xi:
                    a = h + 1
                else:
                    b = h
            k = a
        out[i] = table[k]


def _lookup(x: np.ndarray, lows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """table[k] for every value of x, k = the number of entries of the ascending lows that are <= x."""
    if x.shape[0] < PARALLEL_MIN:
        return table[np.searchsorted(lows, x, side="right")]
    out = np.empty(x.shape[0], table.dtype)
    with PARALLEL_LOCK:
        _lookup_parallel(x, lows, table, out, lows.shape[0] <= LOOKUP_MAX)
    return out


# ---------------------------------------------------------------------------------------------
# rounding points


@nb.njit(cache=True, nogil=True)
def _bounds_points(v, bounds, rep):
    """Rounding point of each interval v[bounds[t]:bounds[t+1]] of the sorted values: rep 0 mean,
    1 median, 2 midpoint. Means and medians are taken of the values centred on v's median (the
    same arithmetic as `partition.group_stats_sorted`), so a large common offset costs no
    precision."""
    g = bounds.shape[0] - 1
    centre = v[(v.shape[0] - 1) // 2]
    out = np.empty(g, np.float64)
    for t in range(g):
        a = bounds[t]
        b = bounds[t + 1]
        if rep == 0:
            s = 0.0
            for i in range(a, b):
                s += v[i] - centre
            out[t] = s / (b - a) + centre
        elif rep == 1:
            h = a + (b - a - 1) // 2
            if (b - a) % 2 == 1:
                out[t] = (v[h] - centre) + centre
            else:
                out[t] = 0.5 * ((v[h] - centre) + (v[h + 1] - centre)) + centre
        else:
            out[t] = 0.5 * (v[a] + v[b - 1])
    return out


def _points_sorted(v: np.ndarray, lab: np.ndarray, g: int, rep: str) -> np.ndarray:
    """Rounding point of each interval 0..g-1 (all non-empty) from sorted v and its labels."""
    return _bounds_points(v, np.searchsorted(lab, np.arange(g + 1)), POINTS.index(rep))


# ---------------------------------------------------------------------------------------------
# re-sampling


@nb.njit(cache=True, nogil=True)
def _bootstrap_centroids(v, bounds, median, rng):
    """For each group v[bounds[t]:bounds[t+1]] of size g: g bootstrap samples of size g, each
    reduced to its mean or median.

    A sample is the number of draws that fall on each of the group's d distinct values (a
    multinomial count over the values, weighted by their repeats), drawn in one of two exact ways:
    with 4 d > g, as g positions rng.integers(0, g) one at a time (O(g) per sample); with 4 d <= g
    (heavily repeated values), value by value as binomial counts, the count of the i-th distinct
    value Binomial(draws left, its repeats / repeats of the values from i on), stopping when no draw
    is left (O(d) per sample). So a group costs O(g min(g, d)) and repeated values never cost more
    than distinct ones. Means and medians come from the counts: the mean is the count-weighted sum of
    the values centred on the group's middle value, divided by g; the median walks the counts in
    sorted order."""
    n = v.shape[0]
    out = np.empty(n, np.float64)
    k = 0
    for t in range(bounds.shape[0] - 1):
        a = bounds[t]
        g = bounds[t + 1] - a
        centre = v[a + (g - 1) // 2]
        # the group's distinct values: u[i] = v[a + first[i]], repeated w[i] times
        d = 1
        for i in range(a + 1, a + g):
            if v[i] != v[i - 1]:
                d += 1
        by_value = 4 * d <= g
        first = np.empty(d, np.int64)
        w = np.empty(d, np.int64)
        first[0] = 0
        r = 0
        for i in range(1, g):
            if v[a + i] != v[a + i - 1]:
                w[r] = i - first[r]
                r += 1
                first[r] = i
        w[d - 1] = g - first[d - 1]
        counts = np.zeros(g if not by_value else d, np.int64)
        for _ in range(g):
            counts[:] = 0
            if by_value:
                left = g
                weight = g
                for i in range(d - 1):
                    if left == 0:
                        break
                    c = rng.binomial(left, w[i] / weight)
                    counts[i] = c
                    left -= c
                    weight -= w[i]
                counts[d - 1] += left
            else:
                for _ in range(g):
                    counts[rng.integers(0, g)] += 1
            # counts[i] draws of the value at v[a + pos(i)]: position i itself, or first[i] by value
            if not median:
                s = 0.0
                for i in range(counts.shape[0]):
                    if counts[i] > 0:
                        s += counts[i] * (v[a + (first[i] if by_value else i)] - centre)
                out[k] = centre + s / g
            else:
                lo_rank = (g - 1) // 2
                hi_rank = g // 2
                seen = 0
                lo_val = 0.0
                hi_val = 0.0
                for i in range(counts.shape[0]):
                    c = counts[i]
                    if c == 0:
                        continue
                    val = v[a + (first[i] if by_value else i)]
                    if seen <= lo_rank < seen + c:
                        lo_val = val
                    if seen <= hi_rank < seen + c:
                        hi_val = val
                        break
                    seen += c
                out[k] = 0.5 * (lo_val + hi_val) if lo_rank != hi_rank else lo_val
            k += 1
    return out


def _nearest_sorted(v: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Index of the nearest point (ascending `points`) for every value; exact ties to the lower."""
    right = np.searchsorted(points, v, side="left")
    right = np.minimum(right, points.shape[0] - 1)
    left = np.maximum(right - 1, 0)
    take_left = (v - points[left]) <= (points[right] - v)
    return np.where(take_left, left, right)


def _rbd(v: np.ndarray, c: int, groups: int, median_centroid: bool, rep: str, rng):
    """Labels (sorted order) and rounding points of re-sampling based discretisation."""
    bounds = _efd_bounds(v, groups)
    centroids = np.sort(_bootstrap_centroids(v, bounds, median_centroid, rng))
    points = _bounds_points(centroids, _kmd_bounds(centroids, c), POINTS.index(rep))
    return _nearest_sorted(v, points), points


# ---------------------------------------------------------------------------------------------
# stochastic rounding


def stochastic_round(x, points, u) -> np.ndarray:
    """Unbiased stochastic rounding of x to the ascending rounding points, driven by uniforms u in
    [0, 1) aligned with x: x in [r_t, r_t+1] goes to r_t+1 with probability (x - r_t) / (r_t+1 - r_t);
    values outside [r_0, r_last] go to the nearest end point."""
    points = np.asarray(points, dtype=np.float64)
    if points.shape[0] == 1:
        return np.full(x.shape[0], points[0])
    t = np.clip(np.searchsorted(points, x, side="right") - 1, 0, points.shape[0] - 2)
    lo, hi = points[t], points[t + 1]
    p_up = np.clip((x - lo) / (hi - lo), 0.0, 1.0)
    return np.where(u < p_up, hi, lo)


# ---------------------------------------------------------------------------------------------
# the shared driver


class _Result:
    """What one call computes, in input order: the labels, the rounded values and the groups (the
    labels, or for 'ewd' the interval numbers as float64, which exist for any c). Each is produced
    on first use (each is a pass over all values in input order, and each caller needs only one
    of them)."""

    def __init__(self, labels, rounded, groups=None):
        self._labels = labels
        self._rounded = rounded
        self._groups = groups or labels

    @property
    def labels(self) -> np.ndarray:
        return self._labels()

    @property
    def rounded(self) -> np.ndarray:
        return self._rounded()

    @property
    def groups(self) -> np.ndarray:
        return self._groups()


def _check(func, method, x, c, representative, groups, centroid):
    method = choice(func, "method", method, METHODS)
    x = finite_values(func, "x", x)
    if not is_auto(c):
        c = interval_count(func, c)
    rep = choice(func, "representative", representative, POINTS)
    opts = {}
    if method == "rbd":
        opts["groups"] = interval_count(func, groups, "groups", auto=False)
        opts["median_centroid"] = choice(func, "centroid", centroid, CENTROIDS) == "median"
    return method, x, c, rep, opts


def _run(func, method, x, c, rep, opts, stochastic, seed) -> _Result:
    """Scale invariance (`duckdb_sdc._numerics`): everything is computed on x scaled by the power of
    two that puts its largest magnitude in [1/2, 1) and the rounded values are scaled back, so the
    intervals and points of x * 2^k are those of x (times 2^k) at any scale."""
    n = x.shape[0]
    # a generator only where draws are made (creating one costs more than rounding a few values)
    rng = np.random.default_rng(seed) if stochastic or method == "rbd" else None
    if n == 0:
        return _Result(lambda: np.empty(0, np.int64), lambda: np.empty(0))
    x, e = to_unit(x)
    res = _run_unit(func, method, x, c, rep, opts, stochastic, rng)
    return _Result(lambda: res.labels, lambda: np.ldexp(res.rounded, e), lambda: res.groups)


def _run_unit(func, method, x, c, rep, opts, stochastic, rng) -> _Result:
    n = x.shape[0]
    if method == "ewd" and not is_auto(c) and rep != "median":
        return _run_ewd(func, x, c, rep, stochastic, rng)
    by_value = method == "efd" or method == "kmd"  # the intervals are found again by value
    if by_value:
        v = np.sort(x)  # values only
    else:
        order, v = sort_column(x)
    if is_auto(c):
        c = intervals_sorted(v)
    if by_value:
        bounds = _efd_bounds(v, c) if method == "efd" else _kmd_bounds(v, c)
        points = _bounds_points(v, bounds, POINTS.index(rep))
        if stochastic:
            rounded = stochastic_round(x, points, rng.random(n))
        # intervals never split equal values: x is in interval k = the number of intervals after
        # the first whose smallest value is <= x, so no permutation back to input order is needed
        lows = v[bounds[1:-1]]
        return _Result(lambda: _lookup(x, lows, np.arange(bounds.shape[0] - 1, dtype=np.int64)),
                       lambda: rounded if stochastic else _lookup(x, lows, points))
    if method == "ewd":
        lo, hi = float(v[0]), float(v[-1])
        width, top = _ewd_width(func, lo, hi, c)
        bins = _ewd_bins(v, lo, width, top) if width > 0 else np.zeros(n)
        lab, ids = np.unique(bins, return_inverse=True)  # occupied bins, ids in sorted order
        g = lab.shape[0]
        points = (lo + (lab + 0.5) * width if rep == "midpoint" and width > 0
                  else _points_sorted(v, ids, g, rep if rep != "midpoint" else "mean"))
        groups = lambda: unsort(order, bins)  # noqa: E731
        labels = lambda: _ewd_labels(func, groups(), c)  # noqa: E731
    else:
        ids, points = _rbd(v, c, opts["groups"], opts["median_centroid"], rep, rng)
        labels = groups = lambda: unsort(order, ids)  # noqa: E731
    if stochastic:  # element by element, so in input order
        rounded = stochastic_round(x, points, rng.random(n))
        return _Result(labels, lambda: rounded, groups)
    return _Result(labels, lambda: unsort(order, points[ids]), groups)


def _run_ewd(func, x, c, rep, stochastic, rng) -> _Result:
    """Equal width without sorting (mean and midpoint points)."""
    lo, hi = float(x.min()), float(x.max())
    width, top = _ewd_width(func, lo, hi, c)
    bins = _ewd_bins(x, lo, width, top) if width > 0 else np.zeros(x.shape[0])
    if c <= 4 * x.shape[0] + 1024:
        ibins = bins.astype(np.int64)
        counts = np.bincount(ibins, minlength=c)
        occupied = np.flatnonzero(counts)
        if rep == "midpoint" and width > 0:
            point_of_bin = lo + (np.arange(c) + 0.5) * width
        else:
            sums = np.bincount(ibins, weights=x - lo, minlength=c)
            with np.errstate(invalid="ignore", divide="ignore"):
                point_of_bin = lo + sums / counts
        points = point_of_bin[occupied]
        rounded = point_of_bin[ibins]
    else:  # very many (mostly empty) bins: work on the occupied ones only
        occupied, ids = np.unique(bins, return_inverse=True)
        if rep == "midpoint" and width > 0:
            points = lo + (occupied + 0.5) * width
        else:
            points = lo + np.bincount(ids, weights=x - lo) / np.bincount(ids)
        rounded = points[ids]
    if stochastic:
        rounded = stochastic_round(x, points, rng.random(x.shape[0]))
    return _Result(lambda: _ewd_labels(func, bins, c), lambda: rounded, lambda: bins)


# ---------------------------------------------------------------------------------------------
# numpy API


def discretise(x, c, method: str = "efd", representative: str = "mean", *, stochastic=False,
               seed=None, groups=DEFAULT_GROUPS, centroid: str = "mean",
               _func: str | None = None) -> np.ndarray:
    """Round x by discretisation into c intervals (or c = 'auto'); see the module docstring."""
    func = _func or f"{method}_round"
    method, x, c, rep, opts = _check(func, method, x, c, representative, groups, centroid)
    stochastic = flag(func, "stochastic", stochastic)
    seed = seed_value(func, seed)
    return _run(func, method, x, c, rep, opts, stochastic, seed).rounded


def discretise_labels(x, c, method: str = "efd", *, seed=None, groups=DEFAULT_GROUPS,
                      centroid: str = "mean", _func: str | None = None) -> np.ndarray:
    """Interval numbers (aligned with x) of the discretisation; see the module docstring."""
    func = _func or f"{method}_labels"
    method, x, c, rep, opts = _check(func, method, x, c, "mean", groups, centroid)
    seed = seed_value(func, seed)
    return _run(func, method, x, c, rep, opts, False, seed).labels


def attraction_sizes(x, c, method: str = "efd", *, seed=None, groups=DEFAULT_GROUPS,
                     centroid: str = "mean", _func: str | None = None) -> np.ndarray:
    """For every value, the size of its set of attraction: how many values are rounded to the same
    rounding point (deterministic rounding)."""
    func = _func or f"{method}_sizes"
    method, x, c, _, opts = _check(func, method, x, c, "mean", groups, centroid)
    seed = seed_value(func, seed)
    labels = _run(func, method, x, c, "mean", opts, False, seed).groups
    if labels.shape[0] == 0:
        return labels.astype(np.int64)
    _, ids, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return counts[ids]


def ewd_round(x, c, representative: str = "mean", *, stochastic=False, seed=None) -> np.ndarray:
    """Equal-width discretisation rounding (see the module docstring)."""
    return discretise(x, c, "ewd", representative, stochastic=stochastic, seed=seed)


def efd_round(x, c, representative: str = "mean", *, stochastic=False, seed=None) -> np.ndarray:
    """Equal-frequency discretisation rounding; a group of equal values is never split."""
    return discretise(x, c, "efd", representative, stochastic=stochastic, seed=seed)


def kmd_round(x, c, representative: str = "mean", *, stochastic=False, seed=None) -> np.ndarray:
    """Rounding by exact univariate k-means with c clusters."""
    return discretise(x, c, "kmd", representative, stochastic=stochastic, seed=seed)


def rbd_round(x, c, representative: str = "mean", *, groups=DEFAULT_GROUPS, centroid: str = "mean",
              stochastic=False, seed=None) -> np.ndarray:
    """Re-sampling based discretisation rounding (seed paper, Algorithm 1)."""
    return discretise(x, c, "rbd", representative, stochastic=stochastic, seed=seed, groups=groups,
                      centroid=centroid)


def kmd_partition_sorted(v: np.ndarray, c: int, solver: str = "auto") -> np.ndarray:
    """Labels (non-decreasing) of the exact k-means clustering of the sorted values v; `solver`
    as in `kmeans1d.optimal_splits` (exposed for tests and benchmarks)."""
    return _labels_of_bounds(_kmd_bounds(np.ascontiguousarray(v, dtype=np.float64), c, solver))


__all__ = [
    "CENTROIDS",
    "METHODS",
    "POINTS",
    "attraction_sizes",
    "discretise",
    "discretise_labels",
    "efd_round",
    "ewd_round",
    "kmd_partition_sorted",
    "kmd_round",
    "rbd_round",
    "stochastic_round",
]
