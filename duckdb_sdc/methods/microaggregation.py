"""Univariate microaggregation: partitions of one column into groups of at least k values.

All four methods work on the column sorted by (value, input position), see `_order.stable_argsort`.
They return group labels aligned with the input, numbered 0..g-1 in increasing order of the groups'
values (a group's number is the rank of its first member in sorted order). Representation (mean or
median of each group) is the separate step `partition.represent`; rounding = represent(partition(x)).

Tie rules (applied identically by the fast methods here and by the O(n^2) textbook references in the
tests):

* Every "farthest" and "nearest" choice of MDAV and V-MDAV breaks ties in favour of the record that
  comes first in the input (smallest position). In one dimension this means that records of equal
  value are always taken in input order, whichever end of the sorted column a group grows from.
* Distances are squared Euclidean distances, computed on the values centred by their median (exact
  for integer data, and the same partitions when the data are shifted). MDAV's choice of the end a
  group is taken from is decided exactly on those values (`_mdav_sorted`, `_exact`): a float
  running total would decide an exact tie by its rounding, and differently from an engine that adds
  the same values in another order.
* The optimal method prefers, among equally good partitions, the one whose last group is smallest
  (strict improvement is needed to take a larger last group); records of equal value are assigned in
  input order.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import exponent
from .._validate import finite_values, named
from ._exact import LIMBS, add_range, midpoint_side
from ..params import AUTO, GROUP_SIZE_AUTO, NONNEGATIVE, REPRESENTATIVE, choice
from ._order import sort_column, unsort
from .freedman_diaconis import group_size_sorted
from .partition import group_stats_sorted


# ---------------------------------------------------------------------------------------------
# shared steps


@nb.njit(cache=True, nogil=True)
def _top_block(v, hi, cache_s, cache_e):
    """Bounds [s, e) in the full sorted column of the tie block holding position hi - 1.

    Reuses the cached bounds while hi - 1 stays inside them; hi only decreases, so every block is
    scanned at most once and the total cost stays O(n)."""
    if cache_s <= hi - 1 < cache_e:
        return cache_s, cache_e
    s = hi - 1
    while s > 0 and v[s - 1] == v[hi - 1]:
        s -= 1
    e = hi
    while e < v.shape[0] and v[e] == v[hi - 1]:
        e += 1
    return s, e


@nb.njit(cache=True, nogil=True)
def _bottom_is_farther(v, order, lo, hi, total, count, cache):
    """V-MDAV's choice of end: is the low end of the remaining sorted range [lo, hi) farther than the high end from the
    centroid c = total / count?

    Compared as |count v - total|, without dividing, so that equal distances are recognised exactly
    for integer data (c = 24/7 is not a float). On a tie the end holding the record that comes first
    in the input wins. Records of equal value are consumed in input order from whichever end reaches
    them, so the first remaining record at the low end is order[lo] and at the high end it is the one
    after the (block end - hi) records of its tie block already taken. `cache` holds the high end's
    tie block.
    """
    dlo = abs(count * v[lo] - total)
    dhi = abs(count * v[hi - 1] - total)
    if dlo != dhi:
        return dlo > dhi
    if v[lo] == v[hi - 1]:
        return True  # all remaining values equal: both ends give the same groups
    s, e = _top_block(v, hi, cache[0], cache[1])
    cache[0] = s
    cache[1] = e
    return order[lo] <= order[s + (e - hi)]


@nb.njit(cache=True, nogil=True)
def _finish_labels(v, when, grp, g):
    """Turn per-position groups into final labels, in place in `grp`.

    Positions hold the sorted values; inside a run of equal values they are in input order. A group
    that took some of those records took them first-come-first-served in input order, so inside
    each run the groups are re-dealt by the step (`when`) at which they took their members. Labels are
    then renumbered 0..g-1 by first occurrence along the sorted order.
    """
    n = v.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and v[j] == v[i]:
            j += 1
        if j - i > 1:
            lo = when[i]
            hi = when[i]
            for t in range(i + 1, j):
                lo = min(lo, when[t])
                hi = max(hi, when[t])
            if grp[i:j].min() == grp[i:j].max():
                pass
            elif hi - lo > 4 * (j - i):  # steps far apart: a comparison sort of the run
                perm = np.argsort(when[i:j], kind="mergesort")
                run = grp[i:j].copy()
                for t in range(j - i):
                    grp[i + t] = run[perm[t]]
            else:
                # a stable counting sort of the run by step, so that a long run of identical values
                # costs O(run), not a comparison sort
                count = np.zeros(hi - lo + 2, np.int64)
                for t in range(i, j):
                    count[when[t] - lo + 1] += 1
                for s in range(1, hi - lo + 2):
                    count[s] += count[s - 1]
                run = np.empty(j - i, np.int64)
                for t in range(i, j):
                    run[count[when[t] - lo]] = grp[t]
                    count[when[t] - lo] += 1
                grp[i:j] = run
        i = j
    remap = np.full(g, -1, np.int64)
    nxt = 0
    for i in range(n):
        r = remap[grp[i]]
        if r < 0:
            r = nxt
            remap[grp[i]] = r
            nxt += 1
        grp[i] = r
    return grp


# ---------------------------------------------------------------------------------------------
# MDAV


_U2 = 2.0**-52  # twice the unit roundoff of float64


@nb.njit(cache=True, nogil=True)
def _mdav_tie(v, order, lo, hi, acc, synced, work, cache):
    """`_mdav_sorted`'s decision where the float test cannot tell (the two ends equally far within about
    1e-15 of their distances): the sign of S = 2 T - c (a + b) in exact arithmetic (`_exact`), T from an
    exact sum of the remaining values (`acc`, brought up to date from the range `synced` it last held,
    so that the exact sums cost O(n) in all over a partition, and nothing when no decision is close).
    At an exact tie the end holding the record that comes first in the input wins: records of equal
    value are consumed in input order from whichever end reaches them, so the first remaining record
    at the low end is order[lo] and at the high end the one after the (block end - hi) records of its
    tie block already taken (`cache` holds the high end's tie block)."""
    if synced[0] < 0:
        add_range(acc, v, lo, hi, 1)
    else:
        add_range(acc, v, synced[0], lo, -1)
        add_range(acc, v, hi, synced[1], -1)
    synced[0] = lo
    synced[1] = hi
    side = midpoint_side(acc, hi - lo, v[lo], v[hi - 1], work)
    if side != 0:
        return side > 0
    s0, e0 = _top_block(v, hi, cache[0], cache[1])
    cache[0] = s0
    cache[1] = e0
    return order[lo] <= order[s0 + (e0 - hi)]


@nb.njit(cache=True, nogil=True)
def _mdav_sorted(v, order, k):
    """Univariate MDAV on the sorted values v (ties in input order, `order`), decided exactly.

    Each decision: is the low end of the remaining range [lo, hi) farther than its high end from the
    mean of the remaining values? With a = v[lo], b = v[hi - 1], c = hi - lo and T the exact sum of
    the remaining values, a <= T / c <= b, so |c a - T| - |c b - T| = 2 T - c (a + b) =: S, and the low
    end is farther when S > 0. S is computed from a compensated running total (T = total + comp
    within err: Neumaier's sum, comp adding up the exact rounding error of every addition to total,
    found by TwoSum; only the additions to comp round, each by at most u |comp|); when |S| exceeds the
    bound of its rounding its sign is certain, else `_mdav_tie` decides exactly. So two implementations
    that add the values in different orders (the Spark engine's buckets) take the same decisions, and
    a tie is a tie."""
    n = v.shape[0]
    grp = np.empty(n, np.int64)
    cache = np.array([0, 0], np.int64)
    acc = np.zeros(LIMBS + 1, np.int64)  # the exact sum of the remaining values, when needed
    work = np.zeros(LIMBS + 1, np.int64)
    synced = np.array([-1, -1], np.int64)
    total = 0.0
    comp = 0.0
    err = 0.0
    for i in range(n):
        x = v[i]
        s = total + x
        bp = s - total
        comp += (total - (s - bp)) + (x - bp)
        err += _U2 * abs(comp)
        total = s
    lo = 0
    hi = n
    g = 0
    while hi - lo >= 2 * k:
        a = v[lo]
        b = v[hi - 1]
        if a == b:
            bottom = True  # all remaining values equal: both ends give the same groups
        else:
            c = hi - lo
            t2 = 2.0 * total
            c2 = 2.0 * comp
            p1 = c * a
            p2 = c * b
            s = ((t2 - p1) - p2) + c2
            # two products and three sums rounded (each by at most u times its result), the total's
            # error, and the absolute error of a product that is a subnormal number
            bound = 2.0 * err + 3.0 * _U2 * (abs(t2) + abs(p1) + abs(p2) + abs(c2)) + 2.0**-1070
            if abs(s) > bound:
                bottom = s > 0.0
            else:
                bottom = _mdav_tie(v, order, lo, hi, acc, synced, work, cache)
        rounds = 2 if hi - lo >= 3 * k else 1
        for _ in range(rounds):
            if bottom:
                first = lo
                lo += k
            else:
                first = hi - k
                hi -= k
            for t in range(first, first + k):
                grp[t] = g
                x = -v[t]
                s = total + x
                bp = s - total
                comp += (total - (s - bp)) + (x - bp)
                err += _U2 * abs(comp)
                total = s
            g += 1
            bottom = not bottom
    for t in range(lo, hi):
        grp[t] = g
    g += 1
    return _finish_labels(v, grp, grp, g)


# ---------------------------------------------------------------------------------------------
# V-MDAV


@nb.njit(cache=True, nogil=True)
def _vmdav_sorted(v, order, k, gamma):
    n = v.shape[0]
    grp = np.empty(n, np.int64)
    when = np.empty(n, np.int64)
    cache = np.array([0, 0], np.int64)
    gsum = np.empty(n // k + 1, np.float64)
    gcnt = np.empty(n // k + 1, np.int64)
    total = 0.0
    for i in range(n):
        total += v[i]
    lo = 0
    hi = n
    g = 0
    while hi - lo >= k:
        if _bottom_is_farther(v, order, lo, hi, total, n, cache):
            a = lo
            lo += k
            while lo - a < 2 * k - 1 and lo < hi:
                if lo + 1 < hi and not (v[lo] - v[lo - 1] < gamma * (v[lo + 1] - v[lo])):
                    break
                lo += 1
            b = lo
        else:
            b = hi
            hi -= k
            while b - hi < 2 * k - 1 and lo < hi:
                if hi - 1 > lo and not (v[hi] - v[hi - 1] < gamma * (v[hi - 1] - v[hi - 2])):
                    break
                hi -= 1
            a = hi
        s = 0.0
        for t in range(a, b):
            grp[t] = g
            when[t] = g
            s += v[t]
        gsum[g] = s
        gcnt[g] = b - a
        g += 1
    for i in range(lo, hi):
        # nearest group mean, compared as |v m_t - s_t| m_best < |v m_best - s_best| m_t (exact
        # for integer data); ties go to the group formed first
        best = 0
        for t in range(1, g):
            if abs(v[i] * gcnt[t] - gsum[t]) * gcnt[best] < abs(v[i] * gcnt[best] - gsum[best]) * gcnt[t]:
                best = t
        grp[i] = best
        when[i] = g
    return _finish_labels(v, when, grp, g)


# ---------------------------------------------------------------------------------------------
# optimal univariate microaggregation (Hansen & Mukherjee 2003)

_CHUNK = 4096


@nb.njit(cache=True, nogil=True)
def _oma_sorted(v, k):
    """Shortest path over sorted data: groups of k..2k-1 consecutive values, minimum total SSE.

    dp[j] = min over m in [k, 2k-1] of dp[j - m] + SSE(j - m, j). SSE is a Monge cost, so the
    largest optimal predecessor is non-decreasing in j and each search starts at the previous one
    (about half the window on average). The SSE of a window comes from prefix sums rebuilt for every
    chunk of 4096 end points relative to a value inside the chunk, so the sums stay local and their
    differences keep full precision for any n and any offset. Only the last 2k values of dp are kept
    (a ring); the length of each end point's last group (int32) is kept for the way back.
    O(n k) time, O(n) memory (4 bytes per value).
    """
    n = v.shape[0]
    kmax = 2 * k - 1
    ring = 1
    while ring < kmax + 1:
        ring *= 2
    mask = ring - 1  # a power of two: i % ring is i & mask
    dp = np.full(ring, np.inf)
    dp[0] = 0.0
    last = np.zeros(n + 1, np.int32)  # length of the last group of the best path to j
    inv = np.empty(kmax + 1, np.float64)
    for m in range(1, kmax + 1):
        inv[m] = 1.0 / m
    lp = np.empty(_CHUNK + kmax + 1, np.float64)
    lq = np.empty(_CHUNK + kmax + 1, np.float64)
    prev = 0  # the optimal predecessor of j - 1
    j0 = k
    while j0 <= n:
        j1 = min(n + 1, j0 + _CHUNK)
        a = max(0, j0 - kmax)
        ref = v[a]
        lp[0] = 0.0
        lq[0] = 0.0
        s = 0.0
        q = 0.0
        for t in range(a, j1 - 1):
            d = v[t] - ref
            s += d
            q += d * d
            lp[t - a + 1] = s
            lq[t - a + 1] = q
        for j in range(j0, j1):
            best = np.inf
            bi = -1
            # Monge costs: the largest optimal predecessor never decreases with j, so candidates
            # before that of j - 1 cannot win (scanning from the largest i keeps the largest optimum).
            lo_i = max(j - kmax, prev, 0)
            for i in range(j - k, lo_i - 1, -1):
                di = dp[i & mask]
                if di == np.inf:
                    continue
                ds = lp[j - a] - lp[i - a]
                sse = (lq[j - a] - lq[i - a]) - ds * ds * inv[j - i]
                cost = di + (sse if sse > 0.0 else 0.0)
                if cost < best:
                    best = cost
                    bi = i
            dp[j & mask] = best
            last[j] = j - bi
            prev = bi
        j0 = j1
    g = 0
    j = n
    while j > 0:
        g += 1
        j -= last[j]
    lab = np.empty(n, np.int64)
    j = n
    t = g
    while j > 0:
        t -= 1
        i = j - last[j]
        for s in range(i, j):
            lab[s] = t
        j = i
    return lab


# ---------------------------------------------------------------------------------------------
# individual ranking


@nb.njit(cache=True, nogil=True)
def _ranking_sorted(n, k):
    g = n // k
    lab = np.empty(n, np.int64)
    for i in range(n):
        t = i // k
        lab[i] = t if t < g else g - 1
    return lab


# ---------------------------------------------------------------------------------------------
# numpy API

METHODS = ("mdav", "vmdav", "oma", "ranking")


def sorted_labels(method: str, order, v, k: int, gamma: float) -> np.ndarray:
    """Group labels of the sorted values v (ascending, `order` their positions) by `method`."""
    if method == "mdav":
        return _mdav_sorted(v, order, k)
    if method == "vmdav":
        return _vmdav_sorted(v, order, k, gamma)
    if method == "oma":
        return _oma_sorted(v, k)
    return _ranking_sorted(v.shape[0], k)


_METHOD = choice(*METHODS)


def prepare_input(func: str, x, k, gamma):
    """The checked input, k resolved ('auto'), and the sorted values scaled and centred:
    (x, k, gamma, order, v, center, e)."""
    x = finite_values(func, "x", x)
    k = GROUP_SIZE_AUTO.check(k, func, "k", n=x.shape[0])
    gamma = NONNEGATIVE.check(gamma, func, "gamma")
    order, v = sort_column(x)
    # scale invariance (duckdb_sdc._numerics): the sorted values scaled by the power of two that
    # puts the largest magnitude in [1/2, 1), so no sum or square overflows or underflows
    e = exponent(v[[0, -1]]) if v.shape[0] else 0
    np.ldexp(v, -e, out=v)
    if k == AUTO:
        # Freedman-Diaconis: k = ceil(n / c), c = ceil(range / (2 IQR / n^(1/3))); see
        # methods.freedman_diaconis for the fallback when IQR = 0; and at least the minimum group size
        k = GROUP_SIZE_AUTO.check(max(group_size_sorted(v), GROUP_SIZE_AUTO.minimum), func, "k", n=x.shape[0])
    center = v[(v.shape[0] - 1) // 2] if v.shape[0] else 0.0
    v -= center
    return x, k, gamma, order, v, center, e


def partition(x, k, method: str = "mdav", *, gamma: float = 0.2) -> np.ndarray:
    """Group labels 0..g-1 (aligned with x) of a univariate microaggregation of x.

    method: 'mdav' (`mdav_partition`), 'vmdav', 'oma' or 'ranking'; gamma is V-MDAV's parameter.
    k may be 'auto': k = ceil(n / c) with c from the Freedman-Diaconis rule
    (`freedman_diaconis.group_size_sorted`, which documents the fallback for IQR = 0).
    """
    func = "partition"
    method = _METHOD.check(method, func, "method")
    _, k, gamma, order, v, _, _ = prepare_input(func, x, k, gamma)
    return unsort(order, sorted_labels(method, order, v, k, gamma))


def microaggregate(x, k, method: str = "mdav", representative: str = "mean", *, gamma: float = 0.2) -> np.ndarray:
    """Round x by univariate microaggregation: every value is replaced by the mean (or median) of its
    group. Same as represent(x, partition(x, k, method)), computed without leaving sorted order.
    Errors name the method's rounding function (`mdav_round` for method 'mdav').

    Scale invariant (`duckdb_sdc._numerics`): the work is done on x scaled by a power of two, so the
    partition of x * 2^k is that of x and the rounded values are those of x times 2^k, at any scale
    from subnormal numbers to 1.8e308."""
    func = f"{method}_round" if method in METHODS else "microaggregate"
    method = _METHOD.check(method, func, "method")
    rep = REPRESENTATIVE.check(representative, func, "representative")
    _, k, gamma, order, v, center, e = prepare_input(func, x, k, gamma)
    lab = sorted_labels(method, order, v, k, gamma)
    g = int(lab.max()) + 1
    reps = np.ldexp(group_stats_sorted(v, lab, g, rep == "median") + center, e)  # within the data's range
    return unsort(order, reps[lab])


@named
def mdav_partition(x, k) -> np.ndarray:
    """Univariate MDAV (Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005) on one column.

    Exactly the partition that the canonical multivariate MDAV heuristic produces on the single column:
    while at least 3k values remain, the value r farthest from the mean of the remaining values forms
    a group with its k-1 nearest, then the remaining value farthest from r forms a group with its k-1
    nearest; with 2k..3k-1 left, one group of k around the value farthest from their mean and the rest
    as the last group; fewer than 2k: one group. (The second farthest value is looked for among the
    values left after r's group is formed; this differs from looking before only when equal values
    make both choices equally far.) On sorted data every group is taken from one end, so after the
    O(n log n) sort the partition costs O(n). Groups have k..2k-1 members.
    """
    return partition(x, k, "mdav")


@named
def vmdav_partition(x, k, gamma: float = 0.2) -> np.ndarray:
    """Univariate V-MDAV (Solanas & Martinez-Balleste 2006), variable group sizes.

    The centroid c of all values is computed once. While at least k values are unassigned: the
    unassigned value e farthest from c forms a group with its k-1 nearest unassigned values; the group
    then takes the unassigned value nearest to it while that value's distance to the group (d_in, to
    its nearest member) is strictly below gamma times its distance to the nearest other unassigned
    value (d_out; when no other value is unassigned the value joins), up to 2k-1 members. Fewer than k
    values left: each joins the group whose mean (before any of them joins) is nearest, ties to the
    group formed first; that group may then exceed 2k-1 members. O(n log n) sort, then O(n).
    """
    return partition(x, k, "vmdav", gamma=gamma)


@named
def oma_partition(x, k) -> np.ndarray:
    """Optimal univariate microaggregation (Hansen & Mukherjee 2003).

    Among all partitions of the sorted values into groups of consecutive values with sizes k..2k-1
    (an optimal partition never needs larger groups), the one with the smallest within-group sum of
    squares, found as a shortest path over the sorted values in O(n k) after the sort.
    """
    return partition(x, k, "oma")


@named
def ranking_partition(x, k) -> np.ndarray:
    """Individual ranking with fixed group size: groups of k consecutive sorted values; the last group
    also takes the n mod k remaining values (so it has k..2k-1 members)."""
    return partition(x, k, "ranking")
