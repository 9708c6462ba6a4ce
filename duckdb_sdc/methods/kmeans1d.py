"""Exact univariate k-means: the partition of sorted values into c groups of consecutive values with
the smallest total within-group sum of squares (SSE), globally optimal and deterministic.

In one dimension an optimal k-means clustering consists of intervals of the sorted values, so the
problem is a shortest path with c links over the sorted values (Wang & Song 2011, Ckmeans.1d.dp).
An optimal clustering never splits a group of equal values (moving one copy to the other group's
side strictly lowers the SSE), so the values are first reduced to their m distinct values with
weights; c >= m gives one cluster per distinct value.

The interval cost w(i, j) = SSE of the distinct values i..j-1 comes from prefix sums of the weights,
of the values and of their squares (values centred on their median, sums compensated), and it
satisfies the quadrangle inequality w(a, c) + w(b, d) <= w(a, d) + w(b, c) for a <= b <= c <= d.
Two exact solvers use that:

* layered: D[q][j] = min_i D[q-1][i] + w(i, j), one layer per cluster, each layer by divide and
  conquer over the monotone optimal split points: O(c m log m) time, O(c m) memory for the
  splits. Used when c m is small.
* penalised (Lagrangian, "search on the penalty"): for a penalty lam >= 0 per cluster,
  E[j] = min_i E[i] + w(i, j) + lam over partitions with any number of clusters, computed in one
  pass with a queue of candidate split points (a later candidate that beats an earlier one for some
  end point beats it for every later end point, by the quadrangle inequality; the hand-over point
  is found by galloping search, usually within a few steps): O(m log m) per penalty, O(m) memory. A partition that minimises
  SSE + lam * (number of clusters) over all partitions and has exactly c clusters is an optimal
  c-clustering (any c-clustering with a smaller SSE would have a smaller penalised cost). The
  penalty is first searched on a coarse version of the problem (split points restricted to every
  s-th distinct value), whose window of penalties giving c clusters almost always contains a
  penalty that gives c clusters on the full problem; the full problem is then solved at that
  penalty, and the search continues by bisection on the full problem if it does not. When no
  penalty gives exactly c clusters (the optimal SSE is not strictly convex in c at c, which needs
  exactly tied costs), the layered solver is used.

Among several partitions with the same SSE (possible with tied costs), each solver returns one of
them, always the same for the same input; which one is not specified.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

LAYERED_MAX_WORK = 4_000_000  # c * m up to which the layered solver is used
COARSE_POINTS = 1 << 15  # split points of the coarse problem for the penalty search
FULL_ITERATIONS = 40  # bisection steps on the full problem before falling back to layers


@nb.njit(cache=True, nogil=True)
def runs_sorted(v):
    """Distinct values of the sorted array v, their multiplicities and the start of each run."""
    n = v.shape[0]
    m = 0
    for i in range(n):
        if i == 0 or v[i] != v[i - 1]:
            m += 1
    u = np.empty(m, np.float64)
    w = np.empty(m, np.float64)
    start = np.empty(m + 1, np.int64)
    t = -1
    for i in range(n):
        if i == 0 or v[i] != v[i - 1]:
            t += 1
            u[t] = v[i]
            start[t] = i
            w[t] = 0.0
        w[t] += 1.0
    start[m] = n
    return u, w, start


@nb.njit(cache=True, nogil=True)
def prefix_sums(u, w):
    """Compensated prefix sums W, S, Q (length m + 1) of w, w u and w u^2."""
    m = u.shape[0]
    W = np.empty(m + 1, np.float64)
    S = np.empty(m + 1, np.float64)
    Q = np.empty(m + 1, np.float64)
    W[0] = 0.0
    S[0] = 0.0
    Q[0] = 0.0
    cs = 0.0
    cq = 0.0
    s = 0.0
    q = 0.0
    cw = 0.0
    for i in range(m):
        cw += w[i]
        W[i + 1] = cw
        y = w[i] * u[i] - cs
        t = s + y
        cs = (t - s) - y
        s = t
        S[i + 1] = s
        y = w[i] * u[i] * u[i] - cq
        t = q + y
        cq = (t - q) - y
        q = t
        Q[i + 1] = q
    return W, S, Q


@nb.njit(cache=True, nogil=True, inline="always")
def _cost(W, S, Q, i, j):
    ds = S[j] - S[i]
    r = (Q[j] - Q[i]) - ds * ds / (W[j] - W[i])
    return r if r > 0.0 else 0.0


# ---------------------------------------------------------------------------------------------
# layered dynamic program


@nb.njit(cache=True, nogil=True)
def layered(W, S, Q, c):
    """Optimal split points for c clusters of the values behind the prefix sums W, S, Q (length
    p + 1). Returns the c + 1 split points and the SSE. Divide and conquer per layer; the leftmost
    optimal split is kept."""
    p = W.shape[0] - 1
    prev = np.empty(p + 1, np.float64)
    cur = np.empty(p + 1, np.float64)
    arg = np.zeros((c + 1, p + 1), np.int32)
    for j in range(p + 1):
        prev[j] = _cost(W, S, Q, 0, j) if j > 0 else np.inf
    stack = np.empty((64, 4), np.int64)
    for q in range(2, c + 1):
        lo_j = q
        hi_j = p - (c - q)
        for j in range(p + 1):
            cur[j] = np.inf
        top = 0
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
                val = prev[i] + _cost(W, S, Q, i, jm)
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
    splits = np.empty(c + 1, np.int64)
    splits[c] = p
    j = p
    for q in range(c, 1, -1):
        j = arg[q, j]
        splits[q - 1] = j
    splits[0] = 0
    return splits, prev[p]


# ---------------------------------------------------------------------------------------------
# penalised dynamic program


@nb.njit(cache=True, nogil=True)
def penalised(W, S, Q, lam):
    """min over partitions of SSE + lam * clusters for the prefix sums W, S, Q (length p + 1; split
    points anywhere). Returns the number of clusters and the predecessor array.

    Candidate i's value at end point j is E[i] + w(i, j) + lam = A[i] + Q[j] + lam - (S[j] - S[i])^2
    / (W[j] - W[i]) with A[i] = E[i] - Q[i]; comparing two candidates at the same end point j needs
    only A, S, W at the candidates (kept in registers) and S[j], W[j]."""
    p = W.shape[0] - 1
    A = np.empty(p + 1, np.float64)
    pred = np.zeros(p + 1, np.int64)
    dq_c = np.empty(p + 1, np.int64)  # candidates, increasing
    dq_s = np.empty(p + 1, np.int64)  # first end point each candidate owns
    head = 0
    A[0] = -Q[0]
    dq_c[0] = 0
    dq_s[0] = 1
    tail = 1
    for j in range(1, p + 1):
        while tail - head >= 2 and dq_s[head + 1] <= j:
            head += 1
        a = dq_c[head]
        ds = S[j] - S[a]
        cost = (Q[j] - Q[a]) - ds * ds / (W[j] - W[a])
        e = A[a] + Q[a] + (cost if cost > 0.0 else 0.0) + lam
        A[j] = e - Q[j]
        pred[j] = a
        if j == p:
            break
        # insert candidate j for end points > j; j beats b at end point t when
        # A[j] - (S[t] - S[j])^2 / (W[t] - W[j]) <= A[b] - (S[t] - S[b])^2 / (W[t] - W[b])
        aj = A[j]
        sj = S[j]
        wj = W[j]
        while tail - head >= 1:
            t = dq_s[tail - 1]
            if t <= j:
                break
            b = dq_c[tail - 1]
            d1 = S[t] - sj
            d2 = S[t] - S[b]
            if aj - d1 * d1 / (W[t] - wj) <= A[b] - d2 * d2 / (W[t] - W[b]):
                tail -= 1
            else:
                break
        if tail == head:
            dq_c[tail] = j
            dq_s[tail] = j + 1
            tail += 1
            continue
        b = dq_c[tail - 1]
        ab = A[b]
        sb = S[b]
        wb = W[b]
        lo = max(dq_s[tail - 1], j + 1)
        # the hand-over point is usually close to lo: gallop, then bisect
        step = 1
        hi = p + 1  # p + 1: j never beats b
        while lo + step <= p:
            t = lo + step
            d1 = S[t] - sj
            d2 = S[t] - sb
            if aj - d1 * d1 / (W[t] - wj) <= ab - d2 * d2 / (W[t] - wb):
                hi = t
                break
            lo = t + 1
            step *= 2
        if hi == p + 1 and lo <= p:
            d1 = S[p] - sj
            d2 = S[p] - sb
            if aj - d1 * d1 / (W[p] - wj) <= ab - d2 * d2 / (W[p] - wb):
                hi = p
            else:
                continue  # j never beats b
        while lo < hi:
            t = (lo + hi) // 2
            d1 = S[t] - sj
            d2 = S[t] - sb
            if aj - d1 * d1 / (W[t] - wj) <= ab - d2 * d2 / (W[t] - wb):
                hi = t
            else:
                lo = t + 1
        if lo > p:
            continue
        dq_c[tail] = j
        dq_s[tail] = lo
        tail += 1
    count = 0
    j = p
    while j > 0:
        j = pred[j]
        count += 1
    return count, pred


@nb.njit(cache=True, nogil=True)
def _splits_from_pred(pred, count):
    splits = np.empty(count + 1, np.int64)
    j = pred.shape[0] - 1
    t = count
    splits[t] = j
    while j > 0:
        j = pred[j]
        t -= 1
        splits[t] = j
    return splits


def _search_window(W, S, Q, c, total):
    """A penalty interval [a, b] whose penalties give exactly c clusters on the problem with split
    points behind W, S, Q (None if none was found). Bisection on log(penalty): the count never increases with
    the penalty."""
    lo, hi = total * 1e-30, total * 2.0 + 1e-300  # count(lo) >= c (practically all points), count(hi) = 1
    found = None
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        k = penalised(W, S, Q, mid)[0]
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
        if penalised(W, S, Q, mid)[0] == c:
            a_hi = mid
        else:
            a_lo = mid
        mid = math.sqrt(b_lo * b_hi)
        if penalised(W, S, Q, mid)[0] == c:
            b_lo = mid
        else:
            b_hi = mid
    return a_hi, b_lo


def _full_search(W, S, Q, c, total, window):
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
        k, pred = penalised(W, S, Q, lam)
        if k == c:
            return _splits_from_pred(pred, k)
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


def optimal_splits(u, w, c: int, *, solver: str = "auto") -> np.ndarray:
    """Split points 0 = s_0 < s_1 < ... < s_c' = m of an optimal clustering of the distinct sorted
    values u (weights w) into c' = min(c, m) clusters: cluster t holds u[s_t:s_{t+1}].

    solver: 'auto', 'layered' or 'penalised' (the latter still falls back to 'layered' when no
    penalty gives exactly c clusters)."""
    m = u.shape[0]
    if c >= m:
        return np.arange(m + 1, dtype=np.int64)
    if c == 1:
        return np.array([0, m], dtype=np.int64)
    centre = u[(m - 1) // 2]
    W, S, Q = prefix_sums(u - centre, w)
    if solver == "layered" or (solver == "auto" and (c * m <= LAYERED_MAX_WORK or c <= 2)):
        return layered(W, S, Q, c)[0]
    total = _cost(W, S, Q, 0, m)
    window = None
    if m > 4 * COARSE_POINTS and c * 16 <= COARSE_POINTS:
        # split points every m / 2^14 distinct values and at every 1 / 2^14 of the value range,
        # so that both dense and sparse stretches (long tails) are resolved
        half = COARSE_POINTS // 2
        by_rank = np.linspace(0, m, half + 1).astype(np.int64)
        by_value = np.searchsorted(u, np.linspace(u[0], u[-1], half + 1))
        coarse = np.unique(np.concatenate((by_rank, by_value, [0, m])))
        window = _search_window(W[coarse], S[coarse], Q[coarse], c, total)
    splits = _full_search(W, S, Q, c, total, window)
    if splits is None:
        return layered(W, S, Q, c)[0]
    return splits


def sse_of_splits(u, w, splits) -> float:
    """Total within-cluster sum of squares of the clustering given by split points (exact sums)."""
    total = 0.0
    for a, b in zip(splits[:-1], splits[1:]):
        uu, ww = u[a:b], w[a:b]
        mean = math.fsum(uu * ww) / math.fsum(ww)
        total += math.fsum(ww * (uu - mean) ** 2)
    return total
