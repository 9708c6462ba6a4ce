"""Exact univariate k-means: the partition of sorted values into c groups of consecutive values with
the smallest total within-group sum of squares (SSE), globally optimal and deterministic.

In one dimension an optimal k-means clustering consists of intervals of the sorted values, so the
problem is a shortest path with c links over the sorted values (Wang & Song 2011, Ckmeans.1d.dp).
An optimal clustering never splits a group of equal values (moving one copy to the other group's
side strictly lowers the SSE), so the values are first reduced to their m distinct values with
weights (the run lengths); c >= m gives one cluster per distinct value.

The interval cost w(i, j) = SSE of the distinct values i..j-1 comes from prefix sums W, S, Q of the
weights, of the values and of their squares. The values are scaled by a power of two into [-1, 1],
centred on their median and multiplied by a power of two that brings the largest deviation into
[0.5, 1): that scaling is exact in binary
floating point, so it changes no comparison, and it bounds every quantity the solvers form (|S| <=
W, Q <= W, products of three by W^3), so no data scale can overflow or underflow them. The sums are
compensated. w satisfies the quadrangle inequality w(a, c) + w(b, d) <= w(a, d) + w(b, c) for a <= b
<= c <= d. Two exact solvers use that:

* layered: D[q][j] = min_i D[q-1][i] + w(i, j), one layer per cluster, each layer by divide and
  conquer over the monotone optimal split points (the last layer only at j = m): O(c m log m)
  time, O(c m) memory for the splits. Used when c m is small and for c = 2 (one scan).
* penalised (Lagrangian, "search on the penalty"): for a penalty lam >= 0 per cluster,
  E[j] = min_i E[i] + w(i, j) + lam over partitions with any number of clusters, in one sweep over
  the end points j with a queue of candidate split points (`_sweep`). A partition that minimises
  SSE + lam * (number of clusters) over all partitions and has exactly c clusters is an optimal
  c-clustering (any c-clustering with a smaller SSE would have a smaller penalised cost).

The sweep. Candidate i's value at end point t is f_i(t) = E[i] + w(i, t) + lam. By the quadrangle
inequality, once a later candidate j is at least as good as an earlier one b at some t, it is at
every later t ("j beats b from h(j, b) on", the hand-over point; "j beats b at t" is monotone in t).
The queue holds candidates in increasing order, each with the first end point it owns; the head
owns the current end point, so E[j] is one evaluation. Candidate j is then appended: every queue
tail b that j already beats at the first end point s_b that b owns is removed (b would own nothing),
and j's own first end point is h(j, b) against the remaining tail b. That hand-over point is found
by a search on the monotone predicate, bracketed as tightly as the queue allows:

* after a tail b' was removed, j beats b' at s_b', where b' beats b, so j beats b at s_b' and
  h(j, b) <= s_b'. The search starts there and probes s_b' - 1 first: usually j does not beat b
  there, and then (monotone) not at s_b either, so b stays and j starts at s_b' (two comparisons
  for the whole step). Otherwise b is checked for removal at s_b and the search gallops down.
* without a removal, j does not beat b at s_b, so h(j, b) > s_b: it probes s_b + 1 first (usually
  the answer); if not, j must beat b at the last end point or it never does and is dropped;
  then it gallops up.

Bracketing from the removed tail is what makes a sweep fast when clusters are huge (an upward search
from s_b would cross millions of values for every j). Every probe compares two candidates at one
end point, A_j - d_j^2 / x <= A_b - d_b^2 / y with A = E - Q, d the sum of the centred values over
the cluster and x, y > 0 the weights of the two clusters; it is evaluated cross-multiplied,
(A_j - A_b) x y <= d_j^2 y - d_b^2 x, the same inequality (x y > 0) without a division. O(m log m)
per penalty at worst, three to four comparisons per value in practice; O(m) memory.

Two cores: for m >= `_order.PARALLEL_MIN` the sweep runs forward over the end points 1..h and,
on a second thread, backward (the mirror image: suffix costs, clusters [t, j) seen from their right
end) over the start points m-1..h+1, h = m // 2. Every partition has exactly one cluster [i, j) with
i <= h < j, so the penalised optimum is min over i <= h < j of E_fwd[i] + w(i, j) + lam + E_bwd[j].
When the forward sweep has appended candidate h, its queue is the lower envelope of all candidates
i <= h for every later end point, so min over i <= h is one evaluation per j (read off the queue,
split between the two threads); the best j gives the partition. Both halves are exact, so the
combination is the exact optimum as well. The split point h is fixed, so the result does not depend
on thread timing.

The penalty search. The penalty is first searched on a coarse version of the problem (split points
restricted to every s-th distinct value and to a grid of values), whose window of penalties giving
c clusters almost always contains a penalty that gives c clusters on the full problem; the full
problem is then solved at that penalty, and the search continues by bisection on the full problem if
it does not. When no penalty gives exactly c clusters (the optimal SSE is not strictly convex in c at
c, which needs exactly tied costs), the layered solver is used.

Among several partitions with the same SSE (possible with tied costs), each solver returns one of
them, always the same for the same input; which one is not specified. Costs are float64 prefix-sum
differences, so "the same SSE" means equal up to their rounding, about 1e-16 times the total sum of
squares around the median: partitions closer than that are ties to every solver here.
"""

from __future__ import annotations

import math
import threading

import numba as nb
import numpy as np

from .._numerics import exponent
from ._order import PARALLEL_LOCK, PARALLEL_MIN

LAYERED_MAX_WORK = 10_000  # c * m up to which the layered solver is used (measured: faster below)
COARSE_POINTS = 1 << 15  # split points of the coarse problem for the penalty search
FULL_ITERATIONS = 40  # bisection steps on the full problem before falling back to layers


@nb.njit(cache=True, nogil=True)
def _accumulate(v, centre, scale, SW, Q):
    """SW[t] = (S, W) and Q[t] over the first t values, each of weight 1 (compensated sums)."""
    SW[0, 0] = 0.0
    SW[0, 1] = 0.0
    Q[0] = 0.0
    s = 0.0
    cs = 0.0
    q = 0.0
    cq = 0.0
    for i in range(v.shape[0]):
        y = (v[i] - centre) * scale
        a = y - cs
        b = s + a
        cs = (b - s) - a
        s = b
        a = y * y - cq
        b = q + a
        cq = (b - q) - a
        q = b
        SW[i + 1, 0] = s
        SW[i + 1, 1] = i + 1.0
        Q[i + 1] = q


@nb.njit(cache=True, nogil=True)
def _accumulate_weighted(u, w, centre, scale, SW, Q):
    """As `_accumulate` for the values u with weights w."""
    SW[0, 0] = 0.0
    SW[0, 1] = 0.0
    Q[0] = 0.0
    s = 0.0
    cs = 0.0
    q = 0.0
    cq = 0.0
    cw = 0.0
    for i in range(u.shape[0]):
        y = (u[i] - centre) * scale
        a = w[i] * y - cs
        b = s + a
        cs = (b - s) - a
        s = b
        a = w[i] * y * y - cq
        b = q + a
        cq = (b - q) - a
        q = b
        cw += w[i]
        SW[i + 1, 0] = s
        SW[i + 1, 1] = cw
        Q[i + 1] = q


@nb.njit(cache=True, nogil=True)
def _run_starts(v, start):
    """Fill start (length m + 1) with the position of each distinct value of sorted v, then n."""
    t = 0
    start[0] = 0
    for i in range(1, v.shape[0]):
        if v[i] != v[i - 1]:
            t += 1
            start[t] = i
    start[t + 1] = v.shape[0]


def prefix_sums(v):
    """Run starts and prefix sums of the sorted values v: (start, SW, Q) with start[t] the position
    of the t-th distinct value in v (start[m] = n; an empty array when all n values are distinct),
    SW[:, 0] = S and SW[:, 1] = W (length m + 1, interleaved so that one comparison touches one cache
    line) and Q, the compensated prefix sums of w y, w and w y^2 over the distinct values, where y is
    the value centred on v's median and scaled by the power of two that puts max |y| in [0.5, 1).
    (Large arrays are allocated by NumPy, which asks for huge pages: far fewer page faults than
    allocating inside a kernel.)

    Values whose largest magnitude is outside [1/2, 1) are first scaled there by a power of two (a
    copy; `duckdb_sdc._numerics`), so that centring cannot overflow at 1e308 and the spread is a
    normal number (at least 2^-54 or 0) whose scaling power of two is representable."""
    e = exponent(v[[0, -1]]) if v.shape[0] else 0
    if e != 0:
        v = np.ldexp(v, -e)
    n = v.shape[0]
    m = n - int(np.count_nonzero(v[1:] == v[:-1]))
    centre = float(v[(n - 1) // 2])
    dev = max(centre - float(v[0]), float(v[-1]) - centre)
    scale = math.ldexp(1.0, -math.frexp(dev)[1]) if dev > 0.0 else 1.0
    SW = np.empty((m + 1, 2), np.float64)
    Q = np.empty(m + 1, np.float64)
    if m == n:
        start = np.empty(0, np.int64)
        _accumulate(v, centre, scale, SW, Q)
    else:
        start = np.empty(m + 1, np.int64)
        _run_starts(v, start)
        _accumulate_weighted(v[start[:-1]], np.diff(start).astype(np.float64), centre, scale, SW, Q)
    return start, SW, Q


@nb.njit(cache=True, nogil=True, inline="always")
def _cost(SW, Q, i, j):
    ds = SW[j, 0] - SW[i, 0]
    r = (Q[j] - Q[i]) - ds * ds / (SW[j, 1] - SW[i, 1])
    return r if r > 0.0 else 0.0


# ---------------------------------------------------------------------------------------------
# layered dynamic program


@nb.njit(cache=True, nogil=True)
def layered(SW, Q, c):
    """Optimal split points for c clusters of the values behind the prefix sums SW, Q (length
    p + 1). Returns the c + 1 split points and the SSE. Divide and conquer per layer (the last one
    only at p); the leftmost optimal split is kept."""
    p = SW.shape[0] - 1
    prev = np.empty(p + 1, np.float64)
    cur = np.empty(p + 1, np.float64)
    arg = np.zeros((c + 1, p + 1), np.int32)
    for j in range(p + 1):
        prev[j] = _cost(SW, Q, 0, j) if j > 0 else np.inf
    stack = np.empty((64, 4), np.int64)
    for q in range(2, c):
        lo_j = q
        hi_j = p - (c - q)
        for j in range(p + 1):
            cur[j] = np.inf
        stack[0, 0] = lo_j
        stack[0, 1] = hi_j
        stack[0, 2] = q - 1
        stack[0, 3] = hi_j - 1
        top = 1
        while top > 0:
            top -= 1
            jl = stack[top, 0]
            jh = stack[top, 1]
            il = stack[top, 2]
            ih = stack[top, 3]
            if jl > jh:
                continue
            jm = (jl + jh) // 2
            best = np.inf
            bi = il
            end = min(ih, jm - 1)
            for i in range(il, end + 1):
                val = prev[i] + _cost(SW, Q, i, jm)
                if val < best:
                    best = val
                    bi = i
            cur[jm] = best
            arg[q, jm] = bi
            stack[top, 0] = jl
            stack[top, 1] = jm - 1
            stack[top, 2] = il
            stack[top, 3] = bi
            top += 1
            stack[top, 0] = jm + 1
            stack[top, 1] = jh
            stack[top, 2] = bi
            stack[top, 3] = ih
            top += 1
        prev, cur = cur, prev
    # the last layer is needed at p only
    best = np.inf
    bi = c - 1
    for i in range(c - 1, p):
        val = prev[i] + _cost(SW, Q, i, p)
        if val < best:
            best = val
            bi = i
    splits = np.empty(c + 1, np.int64)
    splits[c] = p
    splits[c - 1] = bi
    j = bi
    for q in range(c - 1, 1, -1):
        j = arg[q, j]
        splits[q - 1] = j
    splits[0] = 0
    return splits, best


# ---------------------------------------------------------------------------------------------
# penalised dynamic program


@nb.njit(cache=True, nogil=True, inline="always")
def _beats(aj, sj, wj, ab, sb, wb, st, wt, d):
    """Is candidate j (the later one) at least as good as candidate b at end point t? a = A, s = S,
    w = W of each; d = +1.0 forward, -1.0 backward (so that both cluster weights are positive)."""
    d1 = st - sj
    d2 = st - sb
    x = d * (wt - wj)
    y = d * (wt - wb)
    return (aj - ab) * x * y <= d1 * d1 * y - d2 * d2 * x


@nb.njit(cache=True, nogil=True)
def _sweep(SW, Q, lam, base, d, stop, A, pred, dq_c, dq_s):
    """The penalised sweep over the end points 1..stop in the coordinates r = 0..P of position
    base + d r (P = the number of distinct values; forward: base 0, d 1; backward: base P, d -1).
    Fills A[r] = E[r] - d Q[base + d r] and pred[r] (the start of the last cluster, in r) for
    r <= stop, E being the optimal penalised cost of the values between positions base and
    base + d r. Returns the queue (head, tail) after candidate stop is appended (when stop < P):
    entries dq_c[head:tail] with their first end points dq_s[head:tail]."""
    P = SW.shape[0] - 1
    dd = float(d)
    A[0] = -dd * Q[base]
    pred[0] = 0
    dq_c[0] = 0
    dq_s[0] = 1
    head = 0
    tail = 1
    for j in range(1, stop + 1):
        while tail - head >= 2 and dq_s[head + 1] <= j:
            head += 1
        a = dq_c[head]
        pj = base + d * j
        pa = base + d * a
        ds = SW[pj, 0] - SW[pa, 0]
        cost = dd * (Q[pj] - Q[pa]) - ds * ds / (dd * (SW[pj, 1] - SW[pa, 1]))
        A[j] = A[a] + dd * Q[pa] + (cost if cost > 0.0 else 0.0) + lam - dd * Q[pj]
        pred[j] = a
        if j == P:
            break
        aj = A[j]
        sj = SW[pj, 0]
        wj = SW[pj, 1]
        # Remove the tails that j beats where they start (the head owns j itself and stays), then
        # find where j takes over from the remaining tail b: the first end point in [lo, hi]
        # where j beats b, with j known to beat b at hi (hi = P + 1: not known) and known not to
        # before lo.
        hi = P + 1
        while True:
            b = dq_c[tail - 1]
            s = dq_s[tail - 1]  # > j unless b is the head
            pb = base + d * b
            ab = A[b]
            sb = SW[pb, 0]
            wb = SW[pb, 1]
            if hi <= P and hi - 1 > s and hi - 1 > j:
                # j beat the removed tail at hi, so it beats b there; usually it does not at
                # hi - 1, and then not at s either: b stays and j starts at hi
                pt = base + d * (hi - 1)
                if not _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                    lo = hi
                    break
                hi -= 1
            if s > j:
                pt = base + d * s
                if _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                    tail -= 1
                    hi = s
                    continue
                lo = s + 1
            else:
                lo = j + 1
            if hi <= P:  # gallop down from hi
                step = 1
                while hi - step >= lo:
                    pt = base + d * (hi - step)
                    if _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                        hi -= step
                        step *= 2
                    else:
                        lo = hi - step + 1
                        break
            elif lo <= P:  # usually j beats b at lo; if not, it must at the last end point
                pt = base + d * lo
                if _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                    hi = lo
                else:
                    pt = base + d * P
                    if lo < P and _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                        lo += 1
                        hi = P
                        step = 1  # gallop up
                        while lo + step - 1 < hi:
                            pt = base + d * (lo + step - 1)
                            if _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                                hi = lo + step - 1
                                break
                            lo += step
                            step *= 2
                    else:
                        lo = P + 1  # j never beats b
            while lo < hi:
                t = (lo + hi) >> 1
                pt = base + d * t
                if _beats(aj, sj, wj, ab, sb, wb, SW[pt, 0], SW[pt, 1], dd):
                    hi = t
                else:
                    lo = t + 1
            break
        if lo > P:
            continue  # j never beats b: it owns nothing
        dq_c[tail] = j
        dq_s[tail] = lo
        tail += 1
    return head, tail


@nb.njit(cache=True, nogil=True)
def _cross(SW, Q, lam, h, j0, j1, Af, dq_c, dq_s, head, tail, Ab):
    """Best cluster [i, j) across the middle h for the end points j in [j0, j1): min over i <= h
    (the forward queue after candidate h, read at j) of E_fwd[i] + w(i, j) + lam + E_bwd[j].
    Returns (value, i, j); ties go to the smaller j."""
    P = SW.shape[0] - 1
    lo = head
    hi = tail - 1
    while lo < hi:  # last entry whose first end point is <= j0 (the head owns everything before)
        k = (lo + hi + 1) >> 1
        if dq_s[k] <= j0:
            lo = k
        else:
            hi = k - 1
    head = lo
    best = np.inf
    bi = -1
    bj = -1
    for j in range(j0, j1):
        while tail - head >= 2 and dq_s[head + 1] <= j:
            head += 1
        a = dq_c[head]
        val = (Af[a] + Q[a] + _cost(SW, Q, a, j) + lam) + (Ab[P - j] - Q[j])
        if val < best:
            best = val
            bi = a
            bj = j
    return best, bi, bj


@nb.njit(cache=True, nogil=True)
def _chain_length(pred, r):
    count = 0
    while r > 0:
        r = pred[r]
        count += 1
    return count


def _index_dtype(p: int):
    return np.int32 if p < 2**31 - 1 else np.int64


def _penalised_serial(SW, Q, lam):
    p = SW.shape[0] - 1
    it = _index_dtype(p)
    A = np.empty(p + 1, np.float64)
    pred = np.empty(p + 1, it)
    _sweep(SW, Q, lam, 0, 1, p, A, pred, np.empty(p + 1, it), np.empty(p + 1, it))
    count = _chain_length(pred, p)
    splits = np.empty(count + 1, np.int64)
    r = p
    for t in range(count, 0, -1):
        splits[t] = r
        r = pred[r]
    splits[0] = 0
    return splits


def _penalised_halves(SW, Q, lam):
    p = SW.shape[0] - 1
    it = _index_dtype(p)
    h = p // 2
    Af = np.empty(h + 1, np.float64)
    pf = np.empty(h + 1, it)
    cf = np.empty(h + 1, it)
    sf = np.empty(h + 1, it)
    nb_ = p - h  # backward coordinates r = 0..p-h-1 are the positions p..h+1
    Ab = np.empty(nb_, np.float64)
    pb = np.empty(nb_, it)
    with PARALLEL_LOCK:
        worker = threading.Thread(target=_sweep, args=(SW, Q, lam, p, -1, nb_ - 1, Ab, pb,
                                                         np.empty(nb_, it), np.empty(nb_, it)))
        worker.start()
        head, tail = _sweep(SW, Q, lam, 0, 1, h, Af, pf, cf, sf)
        worker.join()
        q = (h + 1 + p + 1) // 2
        results = [None]
        worker = threading.Thread(target=lambda: results.__setitem__(
            0, _cross(SW, Q, lam, h, q, p + 1, Af, cf, sf, head, tail, Ab)))
        worker.start()
        first = _cross(SW, Q, lam, h, h + 1, q, Af, cf, sf, head, tail, Ab)
        worker.join()
    second = results[0]
    _, i, j = first if first[0] <= second[0] else second
    left = _chain_length(pf, i)
    right = _chain_length(pb, p - j)
    splits = np.empty(left + right + 2, np.int64)
    r = i
    for t in range(left, 0, -1):
        splits[t] = r
        r = pf[r]
    splits[0] = 0
    r = p - j
    for t in range(left + 1, left + right + 1):
        splits[t] = p - r
        r = pb[r]
    splits[left + right + 1] = p
    return splits


def penalised(SW, Q, lam):
    """Split points of a partition minimising SSE + lam * clusters for the prefix sums SW, Q
    (length p + 1; split points anywhere); both cores for large p (see the module docstring)."""
    if SW.shape[0] - 1 >= PARALLEL_MIN:
        return _penalised_halves(SW, Q, lam)
    return _penalised_serial(SW, Q, lam)


def _search_window(SW, Q, c, total):
    """A penalty interval [a, b] whose penalties give exactly c clusters on the problem with split
    points behind SW, Q (None if none was found). Bisection on log(penalty): the count never
    increases with the penalty."""
    lo, hi = total * 1e-30, total * 2.0 + 1e-300  # count(lo) >= c (practically all points), count(hi) = 1
    found = None
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        k = penalised(SW, Q, mid).shape[0] - 1
        if k == c:
            found = mid
            break
        if k > c:
            lo = mid
        else:
            hi = mid
        if hi <= lo * (1 + 1e-15):
            return None
    if found is None:
        return None
    # widen to the window's edges (a few steps are enough for a centre)
    a_lo, a_hi = lo, found
    b_lo, b_hi = found, hi
    for _ in range(12):
        mid = math.sqrt(a_lo * a_hi)
        if penalised(SW, Q, mid).shape[0] - 1 == c:
            a_hi = mid
        else:
            a_lo = mid
        mid = math.sqrt(b_lo * b_hi)
        if penalised(SW, Q, mid).shape[0] - 1 == c:
            b_lo = mid
        else:
            b_hi = mid
    return a_hi, b_lo


def _full_search(SW, Q, c, total, window):
    """Split points of an optimal c-clustering via the penalty, or None when no penalty found
    gives exactly c clusters."""
    lo, hi = 0.0, math.inf  # count(lo) > c > count(hi) once both are finite and positive
    if window is not None:
        lam = math.sqrt(window[0] * window[1])
        step = max(window[1] / window[0], 1.01)
    else:
        lam = total / (c * c)
        step = 4.0
    for _ in range(FULL_ITERATIONS):
        splits = penalised(SW, Q, lam)
        k = splits.shape[0] - 1
        if k == c:
            return splits
        if k > c:
            lo = lam
        else:
            hi = lam
        if lo > 0 and hi < math.inf:
            if hi <= lo * (1 + 1e-12):
                return None
            lam = math.sqrt(lo * hi)
        else:  # expand the bracket geometrically
            lam = lam * step if k > c else lam / step
            step *= step
    return None


def optimal_splits(v, c: int, *, solver: str = "auto") -> np.ndarray:
    """Split positions 0 = s_0 < s_1 < ... < s_c' = n of an optimal clustering of the sorted
    values v into c' = min(c, m) clusters (m distinct values): cluster t holds v[s_t:s_{t+1}], and
    equal values are never split.

    solver: 'auto', 'layered' or 'penalised' (the latter still falls back to 'layered' when no
    penalty gives exactly c clusters)."""
    start, SW, Q = prefix_sums(v)
    m = SW.shape[0] - 1
    if c >= m:
        splits = np.arange(m + 1, dtype=np.int64)
    elif c == 1:
        splits = np.array([0, m], dtype=np.int64)
    elif solver == "layered" or (solver == "auto" and (c * m <= LAYERED_MAX_WORK or c <= 2)):
        splits = layered(SW, Q, c)[0]
    else:
        splits = _penalised_splits(v, start, SW, Q, c)
    return splits if start.shape[0] == 0 else start[splits]


def _penalised_splits(v, start, SW, Q, c):
    m = SW.shape[0] - 1
    total = _cost(SW, Q, 0, m)
    window = None
    if m > 4 * COARSE_POINTS and c * 16 <= COARSE_POINTS:
        # split points every m / 2^14 distinct values and at every 1 / 2^14 of the value range,
        # so that both dense and sparse stretches (long tails) are resolved
        half = COARSE_POINTS // 2
        by_rank = np.linspace(0, m, half + 1).astype(np.int64)
        by_value = np.searchsorted(v, np.linspace(v[0], v[-1], half + 1))  # positions of run starts
        if start.shape[0]:
            by_value = np.searchsorted(start, by_value)
        coarse = np.unique(np.concatenate((by_rank, by_value, [0, m])))
        window = _search_window(SW[coarse], Q[coarse], c, total)
    splits = _full_search(SW, Q, c, total, window)
    if splits is None:
        return layered(SW, Q, c)[0]
    return splits

