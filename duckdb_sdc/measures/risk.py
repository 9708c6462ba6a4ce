"""Disclosure risk of masked data xm released for original data x (n records, p columns, record i of
xm masks record i of x). Every function returns a share in [0, 1]: the higher, the riskier.

Every share is scale free: each column of x and xm is scaled by the same power of two first
(`_input.unit_columns`, `duckdb_sdc._numerics`), so the risk at 1e308 or among subnormal numbers is
the risk at 1.

Interval disclosure asks whether an intruder who sees a masked value can bound the original value;
record linkage asks whether the intruder can find a masked record's original by distance.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .._validate import fail
from ..methods._order import PARALLEL_LOCK, PARALLEL_MIN, distinct_rows, gather, sort_column
from ..params import NONNEGATIVE, NONNEGATIVE_INTEGER, POSITIVE, GroupSize
from ._input import column_moments, pair, unit_columns

PERCENTS = tuple(range(1, 11))  # the p = 1..10 percent of the textbook interval disclosure
GLOBAL_LINKAGE_MAX_N = 5000


def column_spread(A: np.ndarray) -> np.ndarray:
    """Sample sd (n - 1) of every column; 0 for a single record (one value has no spread)."""
    return column_moments(A)[1]


def interval_disclosure(x, xm, k: float = 0.05, *, max_outside: int = 0) -> float:
    """Interval disclosure risk (Templ's sdcMicro `dRisk`): around every masked value the closed interval
    x' +- k * sd(x'_j), sd the sample sd (n - 1) of masked column j (0 when n = 1). A record is at risk
    when all its original values lie inside (at most `max_outside` of them outside); the risk is the
    share of records at risk.

    max_outside = 0 is the definition the literature states, and what sdcMicro's dRisk counts since
    5.5.2 (September 2020: `rowSums(...) == 0`); before, its code counted a record with at most ONE
    value outside (`%in% 0:1`), which `max_outside=1` reproduces (with one column every record is then
    at risk). Cost O(n p).
    """
    X, XM, _ = unit_columns(*pair("interval_disclosure", x, xm))
    k = NONNEGATIVE.check(k, "interval_disclosure", "k")
    max_outside = NONNEGATIVE_INTEGER.check(max_outside, "interval_disclosure", "max_outside")
    half = k * column_spread(XM)
    outside = ((X < XM - half) | (X > XM + half)).sum(axis=1)
    return float(np.mean(outside <= max_outside))


def sd_interval_disclosure(x, xm, percents=PERCENTS) -> float:
    """SD-based interval disclosure (Domingo-Ferrer & Torra): for each p in `percents` (default 1..10),
    the share of values x_ij inside the closed interval x'_ij +- p/100 * S_j (S_j the sample sd of
    ORIGINAL column j, 0 when n = 1); the risk is the average of these shares over p. Per value (cell),
    not per record. Cost O(n p |percents|)."""
    X, XM, _ = unit_columns(*pair("sd_interval_disclosure", x, xm))
    percents = _percents("sd_interval_disclosure", percents)
    sd = column_spread(X)
    dist = np.abs(X - XM)
    return float(np.mean([np.mean(dist <= (q / 100.0) * sd) for q in percents]))


def rank_interval_disclosure(x, xm, percents=PERCENTS) -> float:
    """Rank-based interval disclosure (Domingo-Ferrer & Torra): for each p in `percents` (default 1..10)
    and each masked value x'_ij, the interval spans the masked values of column j whose rank differs
    by less than p% of n from the rank of x'_ij: ranks within w = ceil(p n / 100) - 1 of it. Tied masked
    values share all their ranks (a..b), so the interval runs from the value of rank a - w to the value
    of rank b + w (clipped to 1..n), whatever order ties come in. The share of original values x_ij
    inside their interval is averaged over p. Per value (cell). Cost O(p n log n)."""
    X, XM = pair("rank_interval_disclosure", x, xm)
    percents = _percents("rank_interval_disclosure", percents)
    n = X.shape[0]
    widths = [math.ceil(q * n / 100) - 1 for q in percents]
    inside = [0] * len(widths)
    for j in range(X.shape[1]):  # one sort per column, whatever the number of percents
        v = np.sort(XM[:, j])
        a = np.searchsorted(v, XM[:, j], side="left")
        b = np.searchsorted(v, XM[:, j], side="right") - 1
        for t, w in enumerate(widths):
            lo = v[np.maximum(a - w, 0)]
            hi = v[np.minimum(b + w, n - 1)]
            inside[t] += int(np.count_nonzero((X[:, j] >= lo) & (X[:, j] <= hi)))
    return float(np.mean([count / X.size for count in inside]))


def _percents(func: str, percents) -> tuple[float, ...]:
    out = tuple(POSITIVE.check(q, func, "percents") for q in percents)
    if not out:
        raise fail(func, "percents must not be empty")
    return out


def standardise(func: str, x, xm) -> tuple[np.ndarray, np.ndarray]:
    """Both sides standardised with the ORIGINAL's column mean and sample sd (n - 1). Columns that are
    constant in the original are dropped: they add the same amount to a masked record's distance to
    every original record, so they change no linkage (this also covers n = 1)."""
    X, XM, _ = unit_columns(*pair(func, x, xm))
    keep = np.ptp(X, axis=0) > 0
    X, XM = X[:, keep], XM[:, keep]
    if X.shape[1] == 0:
        return X, XM
    mean, sd = column_moments(X)
    return np.ascontiguousarray((X - mean) / sd), np.ascontiguousarray((XM - mean) / sd)


@nb.njit(cache=True, nogil=True)
def _within(z, k, v, d2, strict):
    d = z[k] - v
    return d * d < d2 if strict else d * d <= d2


@nb.njit(cache=True, nogil=True)
def _count_below(z, v, d2, pos, strict):
    """Among sorted z, the number of values whose (z - v)^2 is < d2 (strict) or <= d2; pos is the first
    index with z >= v. fl(z - v) is monotone in z, so (z - v)^2 is non-decreasing to the right of pos
    and non-increasing to its left: on each side a galloping search (steps 1, 2, 4, ... outwards from
    pos, then bisection of the last step) finds the edge in O(log count) reads near pos."""
    n = z.shape[0]
    lo, hi, step = pos, pos, 1  # right side: [pos, lo) within the bound, hi the first index known beyond
    while hi < n and _within(z, hi, v, d2, strict):
        lo = hi + 1
        hi = min(n, pos + step)
        step *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if _within(z, mid, v, d2, strict):
            lo = mid + 1
        else:
            hi = mid
    right = lo
    lo, hi, step = pos, pos, 1  # left side: [hi, pos) within the bound, lo - 1 the last index known beyond
    while lo > 0 and _within(z, lo - 1, v, d2, strict):
        hi = lo - 1
        lo = max(0, pos - step)
        step *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if _within(z, mid, v, d2, strict):
            hi = mid
        else:
            lo = mid + 1
    return right - hi


_WALK_MAX = 8


@nb.njit(cache=True, nogil=True)
def _link_block(z_sorted, z_true, zm, rank, start, stop, a, t):
    """(a, t) for the masked records start..stop-1, taken in increasing order of their values zm:
    a the originals strictly nearer than the true original (exact when a < rank, else any value
    >= rank), t the originals at exactly the true original's squared distance, the true one included.
    The position of each masked value among the sorted originals moves forward only. For rank <=
    _WALK_MAX a walk of `rank` steps outwards finds the rank-th nearest original; only when that one
    is not strictly nearer than the true original are the exact counts taken (always for a larger
    rank)."""
    n = z_sorted.shape[0]
    pos = np.searchsorted(z_sorted, zm[start]) if start < stop else 0
    for i in range(start, stop):
        v = zm[i]
        while pos < n and z_sorted[pos] < v:
            pos += 1
        d = z_true[i] - v
        d2 = d * d
        lo, hi = pos - 1, pos
        kth = np.inf  # a larger rank goes straight to the counts (O(log) where the walk is O(rank))
        for _ in range(rank if rank <= _WALK_MAX else 0):
            if lo < 0 or (hi < n and (z_sorted[hi] - v) * (z_sorted[hi] - v) <= (z_sorted[lo] - v) * (z_sorted[lo] - v)):
                kth = (z_sorted[hi] - v) * (z_sorted[hi] - v)
                hi += 1
            else:
                kth = (z_sorted[lo] - v) * (z_sorted[lo] - v)
                lo -= 1
        if kth < d2:
            a[i] = rank
            t[i] = 1
            continue
        below = _count_below(z_sorted, v, d2, pos, True)
        a[i] = below
        t[i] = _count_below(z_sorted, v, d2, pos, False) - below


@nb.njit(cache=True, nogil=True, parallel=True)
def _link_parallel(z_sorted, z_true, zm, rank, a, t, blocks):
    n = zm.shape[0]
    for b in nb.prange(blocks):
        _link_block(z_sorted, z_true, zm, rank, n * b // blocks, n * (b + 1) // blocks, a, t)


def _linkage_1d(z: np.ndarray, zm: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, t) as described in _link_block for every masked record of one standardised column, in the
    order of the sorted masked values (the risk is a mean, so the order does not matter)."""
    n = z.shape[0]
    z_sorted = np.sort(z)
    order, zm_sorted = sort_column(np.ascontiguousarray(zm))
    z_true = gather(z, order)
    a = np.empty(n, np.int64)
    t = np.empty(n, np.int64)
    if n < PARALLEL_MIN:
        _link_block(z_sorted, z_true, zm_sorted, rank, 0, n, a, t)
    else:
        with PARALLEL_LOCK:
            _link_parallel(z_sorted, z_true, zm_sorted, rank, a, t, 4 * nb.get_num_threads())
    return a, t


_QUERY_BUDGET = 1 << 22  # candidate distances held at once (records x candidates x columns)


def linkage_kd(Z: np.ndarray, ZM: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, t) as in _link_block (here in input order), in several dimensions with a k-d tree.

    The tree holds the distinct original points, each with the number of records at it (masked data
    are often full of repeated points; one tree entry per record would make the candidate lists
    grow with every repeat). It gives every masked record its k = rank + 1 nearest points. If the
    points that hold the rank-th nearest original are clearly nearer than the true original (by a
    relative margin of 1e-9, far beyond rounding), at least `rank` originals are strictly nearer and
    the record gets no credit. The others (the risky records) are settled exactly: the candidates'
    squared distances are recomputed here in one fixed order, so ties are exact and do not depend on
    the tree's arithmetic, and k doubles until `rank` originals are strictly nearer or the tree's
    farthest candidate lies clearly beyond the true original (every original at its distance is then
    a candidate). Records are queried in batches of at most _QUERY_BUDGET candidate coordinates, in
    the tree's leaf order of their originals (neighbouring queries visit the same leaves: 3x faster
    at 1M x 5 than input order)."""
    n, p = Z.shape
    U, owner, count = distinct_rows(Z)
    m = U.shape[0]
    from scipy.spatial import cKDTree  # scipy is imported by the measures that use it, not at connect

    tree = cKDTree(U)
    d_true = ((ZM - Z) ** 2).sum(axis=1)
    reach = np.sqrt(d_true)
    a = np.empty(n, np.int64)
    t = np.ones(n, np.int64)
    leaf = np.empty(m, np.int64)
    leaf[tree.indices] = np.arange(m)
    todo = np.argsort(leaf[owner], kind="stable")
    k = min(m, rank + 1)
    while todo.size:
        step = max(1, _QUERY_BUDGET // (k * p))
        left = [_settle(tree, U, count, ZM, d_true, reach, rank, k, todo[s:s + step], a, t)
                for s in range(0, todo.size, step)]
        todo = np.concatenate(left)
        k = min(m, 2 * k)
    return a, t


def _settle(tree, U, count, ZM, d_true, reach, rank, k, todo, a, t) -> np.ndarray:
    """One query round for the records `todo` with k candidate points each: writes a and t of the
    records it settles and returns the others."""
    dist, idx = tree.query(ZM[todo], k=k, workers=-1)
    dist = dist.reshape(todo.size, k)
    idx = idx.reshape(todo.size, k)
    near = reach[todo]
    w = count[idx]  # originals at each candidate point
    reached = np.cumsum(w, axis=1) >= rank
    kth = np.where(reached.any(axis=1), dist[np.arange(todo.size), reached.argmax(axis=1)], np.inf)
    clear = kth < near * (1 - 1e-9)  # rank originals clearly nearer: no credit
    a[todo[clear]] = rank
    todo, dist, idx, near, w = todo[~clear], dist[~clear], idx[~clear], near[~clear], w[~clear]
    d2 = ((ZM[todo][:, None, :] - U[idx]) ** 2).sum(axis=2)
    dt = d_true[todo][:, None]
    below = (w * (d2 < dt)).sum(axis=1)
    ties = (w * (d2 == dt)).sum(axis=1)
    beyond = dist[:, -1] > near * (1 + 1e-9) + 1e-300
    settled = (below >= rank) | beyond | (k == U.shape[0])
    done = todo[settled]
    a[done] = below[settled]
    t[done] = ties[settled]
    return todo[~settled]


LINKAGE_RANK = GroupSize(1, doc="1: nearest, 2: second nearest, ...")


def record_linkage(x, xm, rank: int = 1) -> float:
    """Distance-based record linkage risk (DDR). Both sides are standardised with the original's mean
    and sample sd (constant original columns dropped, see `standardise`); every masked record is
    linked to its nearest original record (Euclidean). The risk is the share of masked records whose
    true original (the same row) is the nearest, with credit 1/t when t originals, the true one among
    them, tie at that distance (a random pick among them would be right with probability 1/t).

    rank = 2 gives the share linked at the second nearest, and so on: with a originals strictly nearer
    than the true one and t at its distance, the true one is at rank r with probability 1/t for
    a < r <= a + t. Ties are exact equalities of the squared distances computed in floating point.
    One column: a sort of each side and a forward walk, O(n log n). Several: a k-d tree (scipy):
    one nearest-neighbour query per record, more only for the records that may score.
    """
    X, XM = pair("record_linkage", x, xm)
    n = X.shape[0]
    rank = LINKAGE_RANK.check(rank, "record_linkage", "rank", n=n)
    Z, ZM = standardise("record_linkage", X, XM)
    if Z.shape[1] == 0:  # every original record is the same point
        return 1.0 / n
    if Z.shape[1] == 1:
        a, t = _linkage_1d(Z[:, 0], ZM[:, 0], rank)
    else:
        a, t = linkage_kd(Z, ZM, rank)
    hit = (a < rank) & (rank <= a + t)
    ties, count = np.unique(t[hit], return_counts=True)  # the credits grouped by t: the sum does not
    return math.fsum(int(c) / int(k) for k, c in zip(ties, count)) / n  # depend on the record order


def global_linkage(x, xm) -> float:
    """Global one-to-one distance-based record linkage (Herranz et al.): the masked records are matched
    to the original records by the one-to-one assignment of least total Euclidean distance (on data
    standardised as in `record_linkage`), solved exactly by scipy's linear_sum_assignment (Hungarian
    type, O(n^3)); the risk is the share of masked records matched to their own original. Where
    several assignments are optimal the solver's is taken. For n up to 5000: the n x n distance
    matrix is built column by column (two n x n float64 matrices, 400 MB at n = 5000, whatever p)."""
    X, XM = pair("global_linkage", x, xm)
    n = X.shape[0]
    if n > GLOBAL_LINKAGE_MAX_N:
        raise fail("global_linkage", f"n = {n} records is too many for the O(n^3) assignment "
                                     f"(at most {GLOBAL_LINKAGE_MAX_N})")
    Z, ZM = standardise("global_linkage", X, XM)
    cost = np.zeros((n, n))
    term = np.empty((n, n))
    for j in range(Z.shape[1]):  # column by column: two n x n matrices, never n x n x p
        np.subtract.outer(ZM[:, j], Z[:, j], out=term)
        term *= term
        cost += term
    np.sqrt(cost, out=cost)
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return float(np.mean(cols[np.argsort(rows)] == np.arange(n)))
