"""Rounding by discretisation (Senavirathne & Torra 2019, "Rounding based continuous data
discretization for statistical disclosure control"): partition one column into c intervals, choose
a rounding point per interval, and replace every value by its rounding point.

Methods (`METHODS`), all on the finite values of one column:

* 'ewd', equal width: c intervals of width w = (max - min) / c over the observed range; value x
  falls in interval min(floor((x - min) / w), c - 1), computed in float64 exactly so (the maximum
  belongs to the last interval). Intervals may be empty; labels are the interval numbers 0..c-1.
  A constant column is one interval.
* 'efd', equal frequency: the sorted values are cut into c' = min(c, m) intervals (m = number of
  distinct values) as equal in size as the ties allow. Cuts fall only between two different values
  (a group of equal values is never split): a cut is a gap position s, 0 < s < n, with
  v[s-1] < v[s]. The cuts b_1 < ... < b_c'-1 (b_0 = 0, b_c' = n) minimise the sum of squared interval
  sizes sum_t (b_t - b_t-1)^2 (`efd_split`): [0]*90 + [1..10] with c = 3 gives 90/5/5. Where several
  cut sets reach the minimum:
    1. the nearest-gap cuts win if they are among them: cut t at the gap nearest to t n / c' (the
       lower on an exact half), moved up as little as needed to lie above cut t - 1 and down as
       little as needed to leave a gap for each later cut. Without ties this is always so, with
       sizes floor(n / c') or ceil(n / c'), so the rule then gives exactly the classic split;
    2. otherwise the componentwise smallest: every cut as low as a minimiser allows (the minimisers
       are closed under taking the lower of each cut, as the cost has the quadrangle inequality, so
       this is itself a minimiser; it is also the lexicographically smallest).
  The nearest-gap cuts are tried first and kept at once when balanced (sizes floor/ceil of n / c',
  no cut moved); otherwise an exact program finds the minimum (cost in `efd_split`). The rule
  depends on the counts of the distinct values only, never on the values themselves. There are
  always exactly c' intervals, c' < c only when there are fewer than c distinct values;
  `efd_labels(x, c).max() + 1` shows the achieved number.
* 'kmd', exact univariate k-means (`kmeans1d`): c' = min(c, m) intervals with the smallest total
  within-interval sum of squares, globally optimal and deterministic.
* 'rbd', re-sampling based discretisation (the seed paper's Algorithm 1): the sorted column is cut
  into `groups` quantile groups (by the 'efd' rule, default 10); from each group of size g, g
  bootstrap samples of size g are drawn (with replacement) and each sample's centroid (its mean, or
  its median: `centroid`) is kept; the n centroids are clustered by exact k-means into
  c' = min(c, distinct centroids) clusters, whose rounding points form the rounding set; every
  original value is rounded to the nearest rounding point (on an exact tie, the lower one). Labels
  are the rounding points' numbers 0..c'-1 (a point may attract no value). A bootstrap sample is
  drawn as g positions (NumPy's Generator.integers(0, g), one draw at a time, reproduced in compiled
  code from the PCG64 state), or as binomial counts over the group's distinct values when they are
  heavily repeated (`_bootstrap_centroids`): about n^2 / groups random draws for distinct values, far
  fewer for repeated ones. The algorithm's cost is those draws, not a sort: meant for the data set
  sizes of the SDC literature, it is refused when they exceed RBD_DRAWS_MAX (10^9: about 100,000
  distinct values with 10 groups), naming the number of groups that fits.

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

import threading

import numba as nb
import numpy as np

from .._numerics import to_unit
from .._validate import fail, finite_values
from ..params import AUTO, CENTROID, COUNT, FLAG, INTERVALS, POINT, SEED, choice
from ._order import PARALLEL_LOCK, PARALLEL_MIN, mul128, sort_column, unsort
from .freedman_diaconis import intervals_sorted
from .kmeans1d import optimal_splits

METHODS = ("ewd", "efd", "kmd", "rbd")
POINTS = POINT.options
CENTROIDS = CENTROID.options
DEFAULT_GROUPS = 10
_METHOD = choice(*METHODS)
LOOKUP_MAX = 256  # bounds up to which values count them; a binary search above (measured crossover)
RBD_DRAWS_MAX = 10**9  # re-sampling's random draws before it refuses (about 10 s at 10 ns a draw)


# ---------------------------------------------------------------------------------------------
# partitions of the sorted values (labels non-decreasing along the sorted order)


@nb.njit(cache=True, nogil=True)
def ewd_bins(x, lo, width, top):
    """Interval numbers min(floor((x - lo) / width), top) as float64 (exact integers; float64 so
    that any c works, also beyond the int64 range)."""
    n = x.shape[0]
    lab = np.empty(n, np.float64)
    for i in range(n):
        t = np.floor((x[i] - lo) / width)
        lab[i] = top if t >= top else t
    return lab


_LABEL_MAX = 2**63 - 1  # the largest interval number a BIGINT label can hold


def ewd_width(func: str, lo: float, hi: float, c: int) -> tuple[float, float]:
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
def _efd_nearest(gaps, n, ce):
    """The nearest-gap cuts (indices into the gap positions `gaps`) for ce intervals: cut t at the gap
    nearest to t n / ce (the lower on an exact half), moved up as little as needed to lie above cut
    t - 1 and down as little as needed to leave a gap for each later cut; and whether no cut had to
    be moved (then every cut is at its own nearest gap)."""
    g = gaps.shape[0]
    cuts = np.empty(ce - 1, np.int64)
    prev = -1
    unmoved = True
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
        if j < prev + 1:
            j = prev + 1
            unmoved = False
        if j > g - (ce - t):
            j = g - (ce - t)
            unmoved = False
        cuts[t - 1] = j
        prev = j
    return cuts, unmoved


@nb.njit(cache=True, nogil=True)
def _efd_windowed(g, n, ce, lo, hi, inf):
    """The componentwise smallest cuts (indices into the gap positions g) of least sum of squared
    sizes, by dynamic programming over windows: cut t (1..ce-1) is looked for among g[lo[t-1]:hi[t-1]],
    which must hold every optimal cut t (see `_efd_windows`).

    Backward pass: S_t(a) = min over b > a of (b - a)^2 + S_t+1(b), the least sum of squared sizes
    after cut t at a. For a fixed layer the smallest minimising b never decreases as a grows ((b - a)^2
    has the quadrangle inequality), so a layer's row minima are found by divide and conquer in
    O((rows + columns) log rows), and the smallest minimiser of every row is kept. Forward: the first
    cut is the smallest of least total cost, then each next cut the kept minimiser of the one before:
    each cut as low as an optimum allows. g, n may be Python integers (object arrays) when this runs
    as plain Python for very large n."""
    layers = ce - 1
    off = np.zeros(layers + 1, np.int64)
    for t in range(layers):
        off[t + 1] = off[t] + (hi[t] - lo[t])
    total = off[layers]
    nxt = np.full(total, -1, np.int64)  # kept minimiser (index into g) of each row
    cur = np.empty(hi[layers - 1] - lo[layers - 1], g.dtype)  # S of the layer below
    for k in range(cur.shape[0]):
        d = n - g[lo[layers - 1] + k]
        cur[k] = d * d
    stack = np.empty((256, 4), np.int64)
    for t in range(layers - 2, -1, -1):  # rows: cut t + 1 (1-based), columns: cut t + 2
        rlo0 = lo[t]
        clo0 = lo[t + 1]
        ncol = hi[t + 1] - clo0
        nrow = hi[t] - rlo0
        new = np.empty(nrow, g.dtype)
        stack[0, 0] = 0
        stack[0, 1] = nrow - 1
        stack[0, 2] = 0
        stack[0, 3] = ncol - 1
        top = 1
        while top > 0:
            top -= 1
            r0 = stack[top, 0]
            r1 = stack[top, 1]
            c0 = stack[top, 2]
            c1 = stack[top, 3]
            if r0 > r1:
                continue
            r = (r0 + r1) // 2
            a = g[rlo0 + r]
            start = rlo0 + r + 1 - clo0  # the first column after the row's gap
            if start < c0:
                start = c0
            best = -1
            bp = inf
            for c in range(start, c1 + 1):
                if cur[c] == inf:
                    continue
                d = g[clo0 + c] - a
                p = d * d + cur[c]
                if best < 0 or p < bp:
                    best = c
                    bp = p
            new[r] = bp
            if best >= 0:
                nxt[off[t] + r] = clo0 + best
                left_end = best
                right_start = best
            else:  # no finite continuation here, nor for any later row
                left_end = start - 1 if start - 1 < c1 else c1
                if left_end < c0:
                    left_end = c0
                right_start = c1
            stack[top, 0] = r0
            stack[top, 1] = r - 1
            stack[top, 2] = c0
            stack[top, 3] = left_end
            top += 1
            stack[top, 0] = r + 1
            stack[top, 1] = r1
            stack[top, 2] = right_start
            stack[top, 3] = c1
            top += 1
        cur = new
    cuts = np.empty(layers, np.int64)
    best = -1
    bp = inf
    for k in range(hi[0] - lo[0]):
        if cur[k] == inf:
            continue
        x = g[lo[0] + k]
        p = x * x + cur[k]
        if best < 0 or p < bp:
            best = k
            bp = p
    if best < 0:
        return cuts[:0]  # cannot happen: the caller's windows hold a solution
    cuts[0] = lo[0] + best
    for t in range(1, layers):
        cuts[t] = nxt[off[t - 1] + cuts[t - 1] - lo[t - 1]]
        if cuts[t] < 0:
            return cuts[:0]  # cannot happen
    return cuts


def _efd_windows(g: np.ndarray, n: int, ce: int, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """For every cut t = 1..ce-1, the index range [lo, hi) of the gaps that an optimal cut can use,
    given that some solution has the sum of squared sizes `bound`.

    Why: with E_t = ce b_t - t n (so E_0 = E_ce = 0), ce^2 sum_t (b_t - b_t-1)^2 = ce n^2 +
    sum_t (E_t - E_t-1)^2, and reaching E_t from 0 in t steps and back in ce - t steps costs at least
    E_t^2 / t + E_t^2 / (ce - t) (Cauchy-Schwarz). So an optimal cut has
    E_t^2 <= (ce bound - n^2) t (ce - t). The radius is computed in floating point and widened, which
    can only add candidates."""
    slack = float(int(ce) * int(bound) - int(n) * int(n))  # exact integer, then one rounding
    t = np.arange(1, ce, dtype=np.float64)
    radius = np.sqrt(max(slack, 0.0) * t * (ce - t)) * (1.0 + 1e-9) + 2.0 * ce
    gf = np.asarray(g, dtype=np.float64)
    low = (t * float(n) - radius) / ce
    high = (t * float(n) + radius) / ce
    return (np.searchsorted(gf, low, side="left").astype(np.int64),
            np.searchsorted(gf, high, side="right").astype(np.int64))


@nb.njit(cache=True, nogil=True)
def _penalised(P, lam, most, F, K, queue, wins):
    """F[i] = min over j < i of F[j] + (P[i] - P[j])^2 + lam (F[0] = 0): the least sum of squared
    sizes plus lam per interval for the values before position P[i], with cuts only at the positions
    P; K[i] = the fewest (or, `most`, the largest) number of intervals among the optimal ways.

    A monotone queue of segment starts j, the lower envelope of the lines x -> F[j] + P[j]^2 - 2 P[j] x
    (plus x^2 + lam), with wins[k] = the first integer x at which queue[k + 1] is strictly better
    than queue[k]: a smaller value, or an equal one with fewer intervals so far (more when `most`).
    The difference of two lines is linear in x, so a later start stays better from that x on; the
    thresholds are exact integer floor divisions (a floating-point quotient, corrected by its exact
    integer remainder). O(len(P)). (No helper function: the kernel also
    runs as plain Python on Python integers, where a compiled helper could not be called.)"""
    m = P.shape[0]
    head = 0
    tail = 1
    queue[0] = 0
    F[0] = 0
    K[0] = 0
    for i in range(1, m):
        x = P[i]
        while tail - head >= 2 and wins[head] <= x:
            head += 1
        j = queue[head]
        d = x - P[j]
        F[i] = F[j] + d * d + lam
        K[i] = K[j] + 1
        ci = F[i] + x * x
        while True:
            a = queue[tail - 1]
            num = ci - (F[a] + P[a] * P[a])
            den = 2 * (x - P[a])
            w = int(np.floor(num / den))  # floor(num / den): a floating estimate, made exact below
            r = num - w * den
            if r < 0 or r >= den:
                w += r // den
                r = num - w * den
            if not (r == 0 and ((K[i] > K[a]) if most else (K[i] < K[a]))):
                w += 1
            if tail - head >= 2 and w <= wins[tail - 2]:
                tail -= 1
            else:
                break
        wins[tail - 1] = w
        queue[tail] = i
        tail += 1


@nb.njit(cache=True, nogil=True)
def _lowest_cuts(F, kf_lo, kf_hi, B, kb_lo, kb_hi, ce, best):
    """Cut t of the componentwise smallest optimum: the smallest gap i (positions 1..m-2) that some
    optimal solution with ce intervals uses as its t-th cut. F, kf_* are the forward pass; B, kb_* the
    backward pass over the mirrored positions (position i is B[m - 1 - i]). i can be cut t when
    F[i] + B[m - 1 - i] = best with t intervals before it and ce - t after, within the counts that
    optimal prefixes and suffixes reach (each an interval of counts, as g is convex)."""
    m = F.shape[0]
    cuts = np.full(ce - 1, -1, np.int64)
    nxt = np.arange(ce + 1)  # the next t without a cut (union-find with path halving)
    for i in range(1, m - 1):
        r_i = m - 1 - i
        if F[i] + B[r_i] != best:
            continue
        t_lo = max(kf_lo[i], ce - kb_hi[r_i])
        t_hi = min(kf_hi[i], ce - kb_lo[r_i])
        if t_lo < 1:
            t_lo = 1
        if t_hi > ce - 1:
            t_hi = ce - 1
        t = t_lo
        while t <= t_hi:
            r = t
            while nxt[r] != r:
                nxt[r] = nxt[nxt[r]]
                r = nxt[r]
            if r > t_hi:
                break
            cuts[r - 1] = i - 1
            nxt[r] = r + 1
            t = r + 1
    return cuts


def _efd_aliens(g: np.ndarray, n: int, ce: int, big: bool) -> np.ndarray:
    """The componentwise smallest cuts of least sum of squared sizes through a penalty lam per
    interval (the parametric method of Aggarwal, Schieber & Tokuyama 1994): the least sum of squared
    sizes g(k) with k intervals is convex in k (the cost has the quadrangle inequality), so some
    integer lam makes ce intervals optimal for "sum of squares + lam k". The search starts at
    lam = (n' / ce')^2, the marginal cost of an interval without ties (g(k) ~ n^2 / k) once the ce - ce'
    groups of equal values larger than n / ce are set apart with their n - n' values; from a trial
    that gave k intervals it scales lam by (k / ce)^2 until it knows trials on both sides of ce, then
    takes secant steps on g through the nearest of them, bisecting where a step makes no progress.
    Each trial is two O(m) passes, with the fewest and with the most intervals per tie, side by side
    on two threads; then the same two passes backward give, for every gap, the cut numbers it takes
    in some optimum, and each cut is the lowest gap that can take it."""
    dt = object if big else np.int64
    kt = object if big else (np.int32 if g.shape[0] < (1 << 30) else np.int64)
    P = np.concatenate((np.array([0], dtype=dt), np.asarray(g, dtype=dt), np.array([n], dtype=dt)))
    m = P.shape[0]
    kernel = _penalised.py_func if big else _penalised
    scratch = [(np.empty(m, np.int64), np.empty(m, dt)) for _ in range(2)]  # queue and wins, per pass
    F, B, other = (np.empty(m, dt) for _ in range(3))  # forward, backward values (the same for both tie rules)
    k_fewest, k_most, kb_fewest, kb_most = (np.empty(m, kt) for _ in range(4))

    def both(points, lam, values, fewest, most):
        """The passes with the fewest and with the most intervals per tie, on two threads (the
        compiled kernel releases the GIL): ((k, g(k)) fewest, (k, g(k)) most)."""
        lam_arg = lam if big else np.int64(lam)
        worker = threading.Thread(target=kernel, args=(points, lam_arg, True, other, most, *scratch[1]))
        worker.start()
        kernel(points, lam_arg, False, values, fewest, *scratch[0])
        worker.join()
        k_lo, k_hi = int(fewest[m - 1]), int(most[m - 1])
        return (k_lo, int(values[m - 1]) - lam * k_lo), (k_hi, int(values[m - 1]) - lam * k_hi)

    lo, hi = 0, int(n) * int(n) + 1  # the integer lam sought lies in [lo, hi]
    below = above = None  # (k, g(k)) of trials with k < ce and k > ce
    # first trial: groups of equal values larger than an interval n / ce are likely intervals of
    # their own; the rest shares the other intervals, whose marginal cost is about their size squared
    sizes = np.diff(P)
    large = sizes > int(n) // ce
    rest, slots = int(n) - int(sizes[large].sum()), ce - int(large.sum())
    lam = (rest // slots) ** 2 if slots > 0 and rest > 0 else (int(n) // ce) ** 2
    tried = set()
    while True:
        tried.add(lam)
        fewest, most = both(P, lam, F, k_fewest, k_most)
        if fewest[0] > ce:
            lo, above, k = lam + 1, fewest, fewest[0]
        elif most[0] < ce:
            hi, below, k = lam - 1, most, most[0]
        else:
            break
        if below is not None and above is not None:  # the secant of g through them
            lam = (below[1] - above[1]) // (above[0] - below[0])
        else:
            lam = max(1, lam) * k * k // (ce * ce)
        if lam in tried or not lo <= lam <= hi:
            lam = (lo + hi) // 2
    best = int(F[m - 1])
    both((n - P)[::-1].copy(), lam, B, kb_fewest, kb_most)
    finder = _lowest_cuts.py_func if big else _lowest_cuts
    return finder(F, k_fewest, k_most, B, kb_fewest, kb_most, ce, best)


_SMALL_N = 1 << 30  # below, the integers of the kernels (at most 3 n^2 + lam) fit in int64
_WINDOWED_FACTOR = 12  # the windowed program runs when its candidates * log2 are at most this * m


def _efd_gap_cuts(gaps: np.ndarray, n: int, ce: int) -> np.ndarray:
    """The EFD cuts (indices into the ascending gap positions `gaps`) for ce intervals of n values:
    the nearest-gap cuts where they have the least sum of squared sizes (certain, with no search,
    when they are balanced), else the componentwise smallest cuts of least sum of squared sizes,
    found by the cheaper of two exact programs (which give the same cuts)."""
    if ce <= 1:
        return np.empty(0, np.int64)
    big = n >= _SMALL_N
    g = gaps.astype(object) if big else np.ascontiguousarray(gaps, dtype=np.int64)
    nearest, unmoved = (_efd_nearest.py_func if big else _efd_nearest)(g, n, ce)
    pos = np.concatenate(([0], np.asarray(gaps, dtype=np.int64)[nearest], [n]))
    sizes = np.diff(pos)
    q = n // ce
    if unmoved and sizes.min() >= q and sizes.max() <= (q if n % ce == 0 else q + 1):
        return nearest  # balanced: least sum of squares, and the nearest-gap cuts
    bound = sum(int(s) * int(s) for s in sizes)
    lo, hi = _efd_windows(gaps, n, ce, bound)
    candidates = int((hi - lo).sum())
    if candidates * max(1, candidates.bit_length()) <= _WINDOWED_FACTOR * (gaps.shape[0] + 2):
        inf = (1 << 200) if big else np.iinfo(np.int64).max
        cuts = (_efd_windowed.py_func if big else _efd_windowed)(g, n, ce, lo, hi, inf)
    else:
        cuts = _efd_aliens(g, n, ce, big)
    if cuts.shape[0] != ce - 1 or (cuts < 0).any():
        raise AssertionError("efd: the balanced cut search found no solution")
    low = np.concatenate(([0], np.asarray(gaps, dtype=np.int64)[cuts], [n]))
    if sum(int(s) * int(s) for s in np.diff(low)) == bound:
        return nearest  # the nearest-gap cuts are optimal too: they win the tie
    return cuts


def _efd_bounds(v: np.ndarray, c: int) -> np.ndarray:
    """Interval bounds 0 = b_0 < ... < b_c' = n of the sorted values (interval t is v[b_t:b_t+1])."""
    n = v.shape[0]
    gaps = np.flatnonzero(v[1:] != v[:-1]) + 1
    ce = min(c, gaps.shape[0] + 1)
    cuts = gaps[_efd_gap_cuts(gaps, n, ce)]
    return np.concatenate(([0], cuts, [n])).astype(np.int64)


def efd_split(counts, c) -> np.ndarray:
    """The EFD intervals over a (distinct value, count) summary: `counts[i]` >= 1 is the number of
    values equal to the i-th smallest distinct value (the values themselves do not matter). Returns
    bounds 0 = d_0 < d_1 < ... < d_c' = m over the m distinct values: interval t holds the distinct
    values d_t .. d_t+1 - 1. c' = min(c, m); the cut rule is the module docstring's. A distributed
    engine aggregates a column to its distinct values and counts, calls this, and labels each value
    by a lookup, which gives the labels `discretise_labels(x, c, 'efd')` gives.

    Cost: O(m) for the gaps plus O(c' log m) for the nearest-gap cuts, which are final when balanced
    (always without ties). Otherwise one of two exact programs, whichever is cheaper: dynamic
    programming over the W gaps an optimal cut can reach from its ideal position t n / c' (a bound
    from the nearest-gap cuts' cost), O(W log W); or a penalty per interval tuned by secant steps,
    O(m) per step, typically about ten passes (one value holding a large share of the column, such
    as zero-inflated data, takes this path)."""
    func = "efd_split"
    c = COUNT.check(c, func, "c")
    counts = np.asarray(counts)
    if counts.ndim != 1 or counts.shape[0] == 0:
        raise fail(func, f"counts must be a non-empty 1-D array, got shape {counts.shape}")
    if counts.dtype.kind not in "iu" and not (counts.dtype.kind == "f" and np.all(np.mod(counts, 1) == 0)):
        raise fail(func, f"counts must be integers, got dtype {counts.dtype}")
    if (counts < 1).any():
        raise fail(func, f"every count must be >= 1, got {counts[counts < 1][0]}")
    ints = [int(k) for k in counts] if counts.dtype.kind == "f" else None
    total = sum(ints) if ints is not None else int(counts.sum(dtype=object))
    if total >= _SMALL_N:
        positions = np.cumsum(np.array(ints if ints is not None else counts, dtype=object))
    else:
        positions = np.cumsum(counts.astype(np.int64))
    m = counts.shape[0]
    ce = min(c, m)
    gaps = positions[:-1]
    cuts = _efd_gap_cuts(gaps if total >= _SMALL_N else gaps.astype(np.int64), total, ce)
    return np.concatenate(([0], cuts + 1, [m])).astype(np.int64)


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


# NumPy's default bit generator (PCG64: 128-bit LCG, XSL-RR output, the upper half of a 64-bit output
# kept for the next 32-bit draw) and its Generator.integers(0, g) (Lemire's multiply-and-shift on
# 32-bit draws, rejecting below 2^32 mod g; no draw for g = 1), in compiled code: the same stream as
# `rng.integers(0, g)` called one draw at a time, several times faster than Numba's Generator.integers
_PCG_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_PCG_MUL_LO = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)


@nb.njit(cache=True, nogil=True)
def _pcg_next64(s):
    """The next 64-bit output of the PCG64 state s = [state high, state low, increment high, increment
    low, has a kept 32-bit half, the kept half]."""
    hi = s[0]
    lo = s[1]
    ph, pl = mul128(lo, _PCG_MUL_LO)
    ph = ph + lo * _PCG_MUL_HI + hi * _PCG_MUL_LO
    nl = pl + s[3]
    nh = ph + s[2] + (np.uint64(1) if nl < pl else np.uint64(0))
    s[0] = nh
    s[1] = nl
    x = nh ^ nl
    rot = nh >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@nb.njit(cache=True, nogil=True)
def _pcg_next32(s):
    if s[4] != 0:
        s[4] = np.uint64(0)
        return s[5]
    out = _pcg_next64(s)
    s[4] = np.uint64(1)
    s[5] = out >> np.uint64(32)
    return out & _LOW32


@nb.njit(cache=True, nogil=True)
def _pcg_below(s, g):
    """Generator.integers(0, g) for 1 <= g <= 2^32, drawn from s."""
    top = np.uint64(g - 1)
    if top == 0:
        return 0
    if top == _LOW32:
        return np.int64(_pcg_next32(s))
    span = top + np.uint64(1)
    m = _pcg_next32(s) * span
    if (m & _LOW32) < span:
        threshold = (_LOW32 - top) % span
        while (m & _LOW32) < threshold:
            m = _pcg_next32(s) * span
    return np.int64(m >> np.uint64(32))


def _pcg_state(rng: np.random.Generator) -> np.ndarray:
    st = rng.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise TypeError("the bootstrap's compiled draws follow NumPy's PCG64 generator")
    state, inc = st["state"]["state"], st["state"]["inc"]
    mask = (1 << 64) - 1
    return np.array([state >> 64, state & mask, inc >> 64, inc & mask, st["has_uint32"], st["uinteger"]],
                    dtype=np.uint64)


def _pcg_restore(rng: np.random.Generator, s: np.ndarray) -> None:
    st = rng.bit_generator.state
    st["state"]["state"] = (int(s[0]) << 64) | int(s[1])
    st["has_uint32"], st["uinteger"] = int(s[4]), int(s[5])
    rng.bit_generator.state = st


@nb.njit(cache=True, nogil=True)
def _centroids_by_position(v, a, g, median, s, out, k):
    """out[k:k + g]: the centroids of g bootstrap samples of the group v[a:a + g], each drawn as g
    positions integers(0, g) one at a time from the PCG64 state s. A mean is the sum of the drawn
    values centred on the group's middle value, divided by g; a median walks the counts of the
    positions in sorted order."""
    centre = v[a + (g - 1) // 2]
    counts = np.zeros(g if median else 1, np.int64)
    lo_rank = (g - 1) // 2
    hi_rank = g // 2
    for j in range(g):
        if not median:
            total = 0.0
            for _ in range(g):
                total += v[a + _pcg_below(s, g)] - centre
            out[k + j] = centre + total / g
            continue
        counts[:] = 0
        for _ in range(g):
            counts[_pcg_below(s, g)] += 1
        seen = 0
        lo_val = 0.0
        hi_val = 0.0
        for i in range(g):
            c = counts[i]
            if c == 0:
                continue
            if seen <= lo_rank < seen + c:
                lo_val = v[a + i]
            if seen <= hi_rank < seen + c:
                hi_val = v[a + i]
                break
            seen += c
        out[k + j] = 0.5 * (lo_val + hi_val) if lo_rank != hi_rank else lo_val


@nb.njit(cache=True, nogil=True)
def _centroids_by_value(v, a, g, median, rng, out, k):
    """out[k:k + g] for a group of d heavily repeated values (4 d <= g): each sample as binomial
    counts value by value, the count of the i-th distinct value Binomial(draws left, its repeats /
    repeats of the values from i on), stopping when no draw is left (O(d) per sample)."""
    centre = v[a + (g - 1) // 2]
    d = 1
    for i in range(a + 1, a + g):
        if v[i] != v[i - 1]:
            d += 1
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
    counts = np.zeros(d, np.int64)
    lo_rank = (g - 1) // 2
    hi_rank = g // 2
    for j in range(g):
        counts[:] = 0
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
        if not median:
            total = 0.0
            for i in range(d):
                if counts[i] > 0:
                    total += counts[i] * (v[a + first[i]] - centre)
            out[k + j] = centre + total / g
            continue
        seen = 0
        lo_val = 0.0
        hi_val = 0.0
        for i in range(d):
            c = counts[i]
            if c == 0:
                continue
            val = v[a + first[i]]
            if seen <= lo_rank < seen + c:
                lo_val = val
            if seen <= hi_rank < seen + c:
                hi_val = val
                break
            seen += c
        out[k + j] = 0.5 * (lo_val + hi_val) if lo_rank != hi_rank else lo_val


def _bootstrap_centroids(v: np.ndarray, bounds: np.ndarray, median: bool, rng: np.random.Generator,
                         func: str = "rbd_round") -> np.ndarray:
    """For each group v[bounds[t]:bounds[t+1]] of size g: g bootstrap samples of size g, each reduced
    to its mean or median, in group order from one random stream.

    A sample is the number of draws that fall on each of the group's d distinct values (a
    multinomial count over the values, weighted by their repeats), drawn in one of two exact ways:
    with 4 d > g, as g positions rng.integers(0, g) one at a time (O(g) per sample,
    `_centroids_by_position`); with 4 d <= g (heavily repeated values), value by value as binomial
    counts (O(d) per sample, `_centroids_by_value`). So a group costs O(g min(g, d)) and repeated
    values never cost more than distinct ones. Refused (naming `func`) before any draw when the draws
    exceed RBD_DRAWS_MAX."""
    out = np.empty(v.shape[0], np.float64)
    sizes = np.diff(bounds).astype(np.int64)
    distinct = np.array([int(np.count_nonzero(v[a + 1:a + g] != v[a:a + g - 1])) + 1 for a, g in zip(bounds[:-1], sizes)])
    by_value = 4 * distinct <= sizes
    draws = int(np.sum(np.where(by_value, sizes * distinct, sizes * sizes)))
    if draws > RBD_DRAWS_MAX:
        n = int(v.shape[0])
        groups = -(-n * n // RBD_DRAWS_MAX)
        raise fail(func, f"Algorithm 1 draws a bootstrap sample of its group's size for every value: {draws:,} "
                         f"random draws for these {n:,} values in {sizes.shape[0]} groups, more than the limit "
                         f"{RBD_DRAWS_MAX:,} (the draws cost about n^2 / groups); use groups := {groups} or more, "
                         "or kmd_round (exact k-means of the values themselves)", "groups")
    for t in range(bounds.shape[0] - 1):
        a, g = int(bounds[t]), int(sizes[t])
        if by_value[t]:
            _centroids_by_value(v, a, g, median, rng, out, a)
        else:
            s = _pcg_state(rng)
            _centroids_by_position(v, a, g, median, s, out, a)
            _pcg_restore(rng, s)
    return out


def _nearest_sorted(v: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Index of the nearest point (ascending `points`) for every value; exact ties to the lower."""
    right = np.searchsorted(points, v, side="left")
    right = np.minimum(right, points.shape[0] - 1)
    left = np.maximum(right - 1, 0)
    take_left = (v - points[left]) <= (points[right] - v)
    return np.where(take_left, left, right)


def _rbd(v: np.ndarray, c: int, groups: int, median_centroid: bool, rep: str, rng, func: str = "rbd_round"):
    """Labels (sorted order) and rounding points of re-sampling based discretisation."""
    bounds = _efd_bounds(v, groups)
    centroids = np.sort(_bootstrap_centroids(v, bounds, median_centroid, rng, func))
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
    method = _METHOD.check(method, func, "method")
    x = finite_values(func, "x", x)
    c = INTERVALS.check(c, func, "c")
    rep = POINT.check(representative, func, "representative")
    opts = {}
    if method == "rbd":
        opts["groups"] = COUNT.check(groups, func, "groups")
        opts["median_centroid"] = CENTROID.check(centroid, func, "centroid") == "median"
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
    res = run_unit(func, method, x, c, rep, opts, stochastic, rng)
    return _Result(lambda: res.labels, lambda: np.ldexp(res.rounded, e), lambda: res.groups)


def run_unit(func, method, x, c, rep, opts, stochastic, rng) -> _Result:
    """One discretisation of the finite values x (unweighted): its labels, rounded values and groups."""
    n = x.shape[0]
    if method == "ewd" and c != AUTO and rep != "median":
        return _run_ewd(func, x, c, rep, stochastic, rng)
    by_value = method == "efd" or method == "kmd"  # the intervals are found again by value
    if by_value:
        v = np.sort(x)  # values only
    else:
        order, v = sort_column(x)
    if c == AUTO:
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
        width, top = ewd_width(func, lo, hi, c)
        bins = ewd_bins(v, lo, width, top) if width > 0 else np.zeros(n)
        lab, ids = np.unique(bins, return_inverse=True)  # occupied bins, ids in sorted order
        g = lab.shape[0]
        points = (lo + (lab + 0.5) * width if rep == "midpoint" and width > 0
                  else _points_sorted(v, ids, g, rep if rep != "midpoint" else "mean"))
        groups = lambda: unsort(order, bins)  # noqa: E731
        labels = lambda: _ewd_labels(func, groups(), c)  # noqa: E731
    else:
        ids, points = _rbd(v, c, opts["groups"], opts["median_centroid"], rep, rng, func)
        labels = groups = lambda: unsort(order, ids)  # noqa: E731
    if stochastic:  # element by element, so in input order
        rounded = stochastic_round(x, points, rng.random(n))
        return _Result(labels, lambda: rounded, groups)
    return _Result(labels, lambda: unsort(order, points[ids]), groups)


def _run_ewd(func, x, c, rep, stochastic, rng) -> _Result:
    """Equal width without sorting (mean and midpoint points)."""
    lo, hi = float(x.min()), float(x.max())
    width, top = ewd_width(func, lo, hi, c)
    bins = ewd_bins(x, lo, width, top) if width > 0 else np.zeros(x.shape[0])
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


def _name(method, kind: str) -> str:
    """The function errors name: the method's SQL function (`ewd_round` for 'ewd')."""
    return f"{method}_{kind}" if method in METHODS else "discretise"


def discretise(x, c, method: str = "efd", representative: str = "mean", *, stochastic=False,
               seed=None, groups=DEFAULT_GROUPS, centroid: str = "mean") -> np.ndarray:
    """Round x by discretisation into c intervals (or c = 'auto'); see the module docstring. Errors
    name the method's rounding function (`ewd_round` for method 'ewd')."""
    func = _name(method, "round")
    method, x, c, rep, opts = _check(func, method, x, c, representative, groups, centroid)
    stochastic = FLAG.check(stochastic, func, "stochastic")
    seed = SEED.check(seed, func, "seed")
    res = _run(func, method, x, c, rep, opts, stochastic, seed)
    if c == AUTO and x.shape[0] > 0:
        refuse_a_lone_value(func, x, res.groups)
    return res.rounded


AUTO_MIN_SET = 2  # the smallest set of attraction that c = 'auto' may leave (a release's MIN_SET)


def refuse_a_lone_value(func: str, x: np.ndarray, groups: np.ndarray) -> None:
    """c = 'auto' must not release a value unchanged: the Freedman-Diaconis number of intervals grows
    with the range, so one outlier can give more intervals than there are distinct values (0..199
    and 1e6: 29,000 intervals, every value its own). Refused when a set of attraction holds fewer than
    AUTO_MIN_SET values, as a release refuses it."""
    _, counts = np.unique(groups, return_counts=True)
    smallest = int(counts.min())
    if smallest < AUTO_MIN_SET:
        chosen = intervals_sorted(np.sort(to_unit(x)[0]))  # as _run chooses it: on the scaled values
        raise lone_value_error(func, chosen, smallest)


def lone_value_error(func: str, chosen: int, smallest: int):
    """The refusal of c = 'auto' that chose `chosen` intervals and left a set of `smallest` values."""
    return fail(func, f"c = 'auto' chose {chosen} intervals (Freedman-Diaconis) and left a set of attraction of "
                      f"{smallest} value, which would be released unchanged; give c (fewer intervals: "
                      f"{func.removesuffix('_round')}_sizes shows the sets), or use microaggregation with "
                      "k := 'auto', whose groups hold at least 2 values", "c")


def discretise_labels(x, c, method: str = "efd", *, seed=None, groups=DEFAULT_GROUPS,
                      centroid: str = "mean") -> np.ndarray:
    """Interval numbers (aligned with x) of the discretisation; see the module docstring. Errors name
    `<method>_labels`."""
    func = _name(method, "labels")
    method, x, c, rep, opts = _check(func, method, x, c, "mean", groups, centroid)
    seed = SEED.check(seed, func, "seed")
    return _run(func, method, x, c, rep, opts, False, seed).labels


def attraction_sizes(x, c, method: str = "efd", *, seed=None, groups=DEFAULT_GROUPS,
                     centroid: str = "mean") -> np.ndarray:
    """For every value, the size of its set of attraction: how many values are rounded to the same
    rounding point (deterministic rounding). Errors name `<method>_sizes`."""
    func = _name(method, "sizes")
    method, x, c, _, opts = _check(func, method, x, c, "mean", groups, centroid)
    seed = SEED.check(seed, func, "seed")
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
    "efd_split",
    "ewd_round",
    "kmd_partition_sorted",
    "kmd_round",
    "rbd_round",
    "stochastic_round",
]
