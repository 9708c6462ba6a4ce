"""Multivariate k-anonymous microaggregation: MDAV and Mondrian on a matrix of records.

Both are partitions (cluster labels aligned with the rows of X); releasing a record as its cluster's
centroid (the mean of every attribute over the cluster) makes the release k-anonymous on those
attributes. Partition and representation are separate steps, as for the univariate methods.

MDAV (Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005), on the standardised attributes
(z-scores with the population sd; see `standardised`), squared Euclidean distances:

* while at least 3k records remain: c = centroid of the remaining records; r = the remaining record
  farthest from c; a group of r and its k-1 nearest remaining records; s = the remaining record
  farthest from r (looked for after r's group is removed); a group of s and its k-1 nearest;
* with 2k..3k-1 records left: one group of k around the record farthest from their centroid, the rest
  as the last group; with fewer than 2k left: one group (remainder='group', the textbook ending);
  or (remainder='nearest') groups of k go on being formed the same way while k records remain, and
  the n mod k left join their nearest clusters, the ending that reproduces the published figures.

Ties: every "farthest" and "nearest" choice goes to the record that comes first in the input
(smallest row position); the k-1 nearest are the first k-1 in the order (distance, position).
Distances to the centroid are compared as |m x - S|^2 (m remaining records, S their sum), which is
exact for integer data, so a centroid such as 24/7 ties exactly when it should.

The fast implementation keeps the remaining records in a k-d tree whose boxes, counts and smallest
positions are updated as records are removed. Nearest-record and farthest-record queries are branch
and bound searches over the tree; a box is skipped only when its bound is strictly worse than the best
record found (or equal, with no smaller position inside), and the bounds are computed with the same
floating-point operations as the distances, so the result is exactly that of the O(n^2/k) textbook
scan (tested against an exact-arithmetic reference). The record farthest from the centroid is found
from a list sorted by distance to an earlier centroid (`_farthest_from_centroid`). Far below the scan
in practice (100x at 100k records, see the README); on adversarial data (all records on a sphere
around the centroid) the farthest queries degrade towards the scan.

Mondrian (LeFevre, DeWitt & Ramakrishnan 2006), multidimensional, on the raw attributes: a partition
is cut at the median of the attribute with the widest normalised range (its range inside the
partition divided by its range over all records; ties to the attribute that comes first), and both
halves are cut again, until no cut is allowed.

* strict: the cut value is the lower median v[(m-1)//2] of the partition's m values; records <= it
  go left, the others right; a cut is allowed only if both sides keep >= k records. When the widest
  attribute has no allowed cut (equal values around the median), the next widest is tried; a
  partition with no allowed cut on any attribute becomes a cluster (size >= k, possibly >= 2k).
* relaxed: the records are ordered by (value, position) on the widest attribute and the first
  floor(m/2) go left, so records equal to the median may fall on both sides; every partition of
  m >= 2k records is cut, and the cluster sizes depend only on n and k (each between k and 2k-1).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .._numerics import column_exponents, to_unit
from .._validate import fail, named, refuse_nonfinite
from ..params import CLUSTER_SIZE, FLAG, MONDRIAN_MODE, REMAINDER
from ._order import distinct_rows

LEAF_SIZE = 16
ANCHOR_BUDGET = 16.0
MONDRIAN_MODES = MONDRIAN_MODE.options
MDAV_REMAINDERS = REMAINDER.options


# ---------------------------------------------------------------------------------------------
# input and standardisation


def as_records(func: str, X, param: str = "rows") -> np.ndarray:
    """X as a C-contiguous float64 (n, p) matrix with p >= 1 and only finite values."""
    A = np.ascontiguousarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise fail(func, f"{param} must be a matrix (one row per record), got shape {A.shape}")
    if A.shape[0] and A.shape[1] == 0:
        raise fail(func, f"{param} must have at least one attribute")
    refuse_nonfinite(func, param, A)
    return A


def per_column_unit(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A with every column scaled by the power of two that puts its largest magnitude in [1/2, 1),
    the exponents): the columns of `duckdb_sdc._numerics.to_unit`, exact and scale invariant."""
    e = column_exponents(A)
    return np.ldexp(A, -e), e


def standardised(X) -> np.ndarray:
    """z-scores of every column with the population sd (divisor n); a constant column becomes 0.

    Which sd is used does not matter for MDAV: the two differ by the factor sqrt(n / (n - 1)) on
    every column, which scales every distance alike (same partition) and cancels in 100 SSE/SST.
    Every column is first scaled by a power of two (`per_column_unit`), which changes no z-score but
    keeps the sums of squares finite and normal for data at 1e308 or 1e-300."""
    A, _ = per_column_unit(np.asarray(X, dtype=np.float64))
    mean = A.mean(axis=0)
    sd = A.std(axis=0)
    Z = A - mean
    nonzero = sd > 0
    Z[:, nonzero] /= sd[nonzero]
    return np.ascontiguousarray(Z)


def lower_median(A: np.ndarray) -> np.ndarray:
    """Per column, the lower median (a data value, so integer data stay integer)."""
    n = A.shape[0]
    return np.partition(A, (n - 1) // 2, axis=0)[(n - 1) // 2]


def _lower_median_center(A: np.ndarray) -> np.ndarray:
    """A scaled by the one power of two that puts its largest magnitude in [1/2, 1) (one for all
    columns, so distances keep their proportions) minus, per column, its lower median."""
    A, _ = to_unit(A)
    return np.ascontiguousarray(A - lower_median(A))


# ---------------------------------------------------------------------------------------------
# k-d tree over the remaining records, one entry per distinct point
#
# Records at the same point are interchangeable except for their position, and every choice of MDAV
# (farthest, nearest, in the order (distance, position)) takes the records of a point smallest
# position first. So the tree holds each distinct point once, with its records' positions in
# increasing order: mem[fr[t]:en[t]] are the live records of the point at tree position t, fr[t]
# advancing as they are taken. Repeated records thus cost what one record costs (a data set of
# identical records is one point), and distinct records cost what they did.
#
# Node arrays (one row per node, packed so that a visit touches few cache lines):
#   box[node, 0, :] / box[node, 1, :]  lower / upper corner of the box of the node's live points
#   info[node] = (left, right, parent, start, end, live records, smallest live record position)
# A leaf has left = right = -1 and holds the tree positions [start, end).

_LEFT, _RIGHT, _PARENT, _START, _END, _CNT, _MINPOS = range(7)


@nb.njit(cache=True, nogil=True)
def _build_tree(Y, pt, key, count, leaf_size):
    """Reorder the points Y (and their numbers pt) in place into k-d tree order: every node is split
    at the median of its widest coordinate (equal values keep their order). key[u] is the smallest
    record position of point u, count[u] its number of records. Returns (box, info, leaf_of),
    leaf_of giving the leaf of every tree position."""
    n, p = Y.shape
    max_nodes = 2 * (n // max(1, leaf_size // 2) + 1) + 1
    box = np.empty((max_nodes, 2, p))
    info = np.full((max_nodes, 7), -1, np.int64)
    leaf_of = np.empty(n, np.int64)
    stack = np.empty(128, np.int64)
    tmp = np.empty((n, p))
    tmp_pt = np.empty(n, np.int64)
    n_nodes = 1
    info[0, _START] = 0
    info[0, _END] = n
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        s = info[node, _START]
        e = info[node, _END]
        for j in range(p):
            box[node, 0, j] = Y[s, j]
            box[node, 1, j] = Y[s, j]
        for i in range(s + 1, e):
            for j in range(p):
                v = Y[i, j]
                if v < box[node, 0, j]:
                    box[node, 0, j] = v
                elif v > box[node, 1, j]:
                    box[node, 1, j] = v
        if e - s <= leaf_size:
            for i in range(s, e):
                leaf_of[i] = node
            continue
        dim = 0
        width = box[node, 1, 0] - box[node, 0, 0]
        for j in range(1, p):
            w = box[node, 1, j] - box[node, 0, j]
            if w > width:
                width = w
                dim = j
        perm = np.argsort(Y[s:e, dim], kind="mergesort")
        for t in range(e - s):
            tmp_pt[t] = pt[s + perm[t]]
            for j in range(p):
                tmp[t, j] = Y[s + perm[t], j]
        for t in range(e - s):
            pt[s + t] = tmp_pt[t]
            for j in range(p):
                Y[s + t, j] = tmp[t, j]
        mid = (s + e) // 2
        a = n_nodes
        b = n_nodes + 1
        n_nodes += 2
        info[node, _LEFT] = a
        info[node, _RIGHT] = b
        info[a, _PARENT] = node
        info[b, _PARENT] = node
        info[a, _START] = s
        info[a, _END] = mid
        info[b, _START] = mid
        info[b, _END] = e
        stack[top] = a
        stack[top + 1] = b
        top += 2
    for node in range(n_nodes - 1, -1, -1):  # children are numbered after their parent
        if info[node, _LEFT] < 0:
            m = key[pt[info[node, _START]]]
            c = 0
            for i in range(info[node, _START], info[node, _END]):
                m = min(m, key[pt[i]])
                c += count[pt[i]]
            info[node, _MINPOS] = m
            info[node, _CNT] = c
        else:
            a = info[node, _LEFT]
            b = info[node, _RIGHT]
            info[node, _MINPOS] = min(info[a, _MINPOS], info[b, _MINPOS])
            info[node, _CNT] = info[a, _CNT] + info[b, _CNT]
    return box[:n_nodes].copy(), info[:n_nodes].copy(), leaf_of


@nb.njit(cache=True, nogil=True)
def _take(box, info, leaf_of, Y, mem, fr, en, pos):
    """Take the first live record of the point at tree position pos; update the live counts and
    smallest positions on the path to the root, and the boxes when the point has no record left.
    Returns 1 if the point is now empty, else 0."""
    p = Y.shape[1]
    fr[pos] += 1
    died = fr[pos] == en[pos]
    node = leaf_of[pos]
    c = 0
    mp = np.int64(0)
    for i in range(info[node, _START], info[node, _END]):
        if fr[i] == en[i]:
            continue
        if c == 0:
            mp = mem[fr[i]]
            if died:
                for j in range(p):
                    box[node, 0, j] = Y[i, j]
                    box[node, 1, j] = Y[i, j]
        else:
            mp = min(mp, mem[fr[i]])
            if died:
                for j in range(p):
                    v = Y[i, j]
                    if v < box[node, 0, j]:
                        box[node, 0, j] = v
                    elif v > box[node, 1, j]:
                        box[node, 1, j] = v
        c += 1
    info[node, _CNT] -= 1
    info[node, _MINPOS] = mp
    node = info[node, _PARENT]
    while node >= 0:
        a = info[node, _LEFT]
        b = info[node, _RIGHT]
        info[node, _CNT] -= 1
        if info[a, _CNT] == 0:
            a = b
        elif info[b, _CNT] == 0:
            b = a
        if info[node, _CNT] > 0:
            if died:
                for j in range(p):
                    box[node, 0, j] = min(box[a, 0, j], box[b, 0, j])
                    box[node, 1, j] = max(box[a, 1, j], box[b, 1, j])
            info[node, _MINPOS] = min(info[a, _MINPOS], info[b, _MINPOS])
        node = info[node, _PARENT]
    return 1 if died else 0


@nb.njit(cache=True, nogil=True)
def _far_bound(box, node, a, b):
    """Upper bound of sum_j (a x_j - b_j)^2 over the node's box, with the same rounding steps as
    `_far_score` (rounding is monotone), so it is never below the score of a record inside."""
    s = 0.0
    for j in range(b.shape[0]):
        u = a * box[node, 0, j] - b[j]
        w = a * box[node, 1, j] - b[j]
        u = u * u
        w = w * w
        s += u if u > w else w
    return s


@nb.njit(cache=True, nogil=True)
def _far_score(Y, i, a, b):
    s = 0.0
    for j in range(b.shape[0]):
        u = a * Y[i, j] - b[j]
        s += u * u
    return s


@nb.njit(cache=True, nogil=True)
def _farthest(box, info, Y, mem, fr, en, a, b):
    """Tree position of the live point maximising sum_j (a x_j - b_j)^2; ties: the point holding the
    smallest live record position. Depth first, the more promising child first; a node is skipped
    when its bound is below the best score, or equal to it with no smaller position inside."""
    stack = np.empty(256, np.int64)
    bound = np.empty(256)
    best = -1.0
    best_id = np.int64(-1)
    best_pos = np.int64(-1)
    stack[0] = 0
    bound[0] = _far_bound(box, 0, a, b)
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        ub = bound[top]
        if ub < best or (ub == best and info[node, _MINPOS] > best_id):
            continue
        c1 = info[node, _LEFT]
        if c1 < 0:
            for i in range(info[node, _START], info[node, _END]):
                if fr[i] == en[i]:
                    continue
                sc = _far_score(Y, i, a, b)
                idx = mem[fr[i]]
                if sc > best or (sc == best and idx < best_id):
                    best = sc
                    best_id = idx
                    best_pos = i
            continue
        c2 = info[node, _RIGHT]
        b1 = _far_bound(box, c1, a, b) if info[c1, _CNT] > 0 else -1.0
        b2 = _far_bound(box, c2, a, b) if info[c2, _CNT] > 0 else -1.0
        if b1 > b2:
            c1, c2 = c2, c1
            b1, b2 = b2, b1
        if b1 >= 0.0:  # the weaker child is pushed first, so the stronger one is searched first
            stack[top] = c1
            bound[top] = b1
            top += 1
        if b2 >= 0.0:
            stack[top] = c2
            bound[top] = b2
            top += 1
    return best_pos


@nb.njit(cache=True, nogil=True)
def _near_bound(box, node, q):
    """Lower bound of the squared distance from q to the node's box (same rounding as `_near_score`)."""
    s = 0.0
    for j in range(q.shape[0]):
        if q[j] < box[node, 0, j]:
            u = box[node, 0, j] - q[j]
            s += u * u
        elif q[j] > box[node, 1, j]:
            u = q[j] - box[node, 1, j]
            s += u * u
    return s


@nb.njit(cache=True, nogil=True)
def _near_score(Y, i, q):
    s = 0.0
    for j in range(q.shape[0]):
        u = Y[i, j] - q[j]
        s += u * u
    return s


@nb.njit(cache=True, nogil=True)
def _nearest(box, info, Y, mem, fr, en, q, m, out_pos, out_id):
    """Fill out_pos[:m] (tree positions of points) and out_id[:m] (record positions) with the m live
    records nearest to q, in the order (squared distance, record position); a point's records enter
    smallest position first. The caller guarantees at least m live records."""
    if m == 0:
        return
    bd = np.empty(m)
    c = 0
    stack = np.empty(256, np.int64)
    bound = np.empty(256)
    stack[0] = 0
    bound[0] = _near_bound(box, 0, q)
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        lb = bound[top]
        if c == m and (lb > bd[m - 1] or (lb == bd[m - 1] and info[node, _MINPOS] > out_id[m - 1])):
            continue
        c1 = info[node, _LEFT]
        if c1 < 0:
            for i in range(info[node, _START], info[node, _END]):
                if fr[i] == en[i]:
                    continue
                d = _near_score(Y, i, q)
                for r in range(fr[i], en[i]):
                    idx = mem[r]
                    if c == m and (d > bd[m - 1] or (d == bd[m - 1] and idx > out_id[m - 1])):
                        break  # the point's later records come after this one too
                    t = c if c < m else m - 1  # insertion into the sorted candidates
                    while t > 0 and (bd[t - 1] > d or (bd[t - 1] == d and out_id[t - 1] > idx)):
                        bd[t] = bd[t - 1]
                        out_id[t] = out_id[t - 1]
                        out_pos[t] = out_pos[t - 1]
                        t -= 1
                    bd[t] = d
                    out_id[t] = idx
                    out_pos[t] = i
                    if c < m:
                        c += 1
            continue
        c2 = info[node, _RIGHT]
        b1 = _near_bound(box, c1, q) if info[c1, _CNT] > 0 else np.inf
        b2 = _near_bound(box, c2, q) if info[c2, _CNT] > 0 else np.inf
        if b1 < b2:
            c1, c2 = c2, c1
            b1, b2 = b2, b1
        if b1 < np.inf:  # the farther child is pushed first, so the nearer one is searched first
            stack[top] = c1
            bound[top] = b1
            top += 1
        if b2 < np.inf:
            stack[top] = c2
            bound[top] = b2
            top += 1


# ---------------------------------------------------------------------------------------------
# MDAV


@nb.njit(cache=True, nogil=True)
def _anchor(Y, fr, en, total, remaining, c0, order, d0, meta):
    """Sort the live points by decreasing distance to c0 = the current centroid of the records."""
    n, p = Y.shape
    for j in range(p):
        c0[j] = total[j] / remaining
    m = 0
    for i in range(n):
        if fr[i] < en[i]:
            order[m] = i
            s = 0.0
            for j in range(p):
                u = Y[i, j] - c0[j]
                s += u * u
            d0[m] = -np.sqrt(s)
            m += 1
    perm = np.argsort(d0[:m])
    order[:m] = order[:m][perm]
    d0[:m] = -d0[:m][perm]
    meta[0] = m  # entries
    meta[1] = 0  # first entry that may be live
    meta[2] = 0  # points scored since the anchor was set


@nb.njit(cache=True, nogil=True)
def _farthest_from_centroid(Y, mem, fr, en, total, remaining, live, c0, order, d0, meta, budget):
    """Tree position of the live point farthest from the centroid c = total / remaining of the
    records, scored as |remaining x - total|^2 (ties: the point holding the smallest live record
    position).

    The live points are kept sorted by their distance d0 to an anchor c0 (an earlier centroid).
    By the triangle inequality |x - c| <= d0(x) + |c - c0|, so the scan in decreasing d0 stops at the
    first point with d0 + |c - c0| below the best distance found (with a relative safety margin far
    above rounding error, so no point that could win or tie is skipped). The anchor is moved to the
    current centroid once the points scored since the last move exceed budget * (live points + 64),
    about the cost of a fresh sort for the default budget."""
    p = Y.shape[1]
    m = float(remaining)
    delta = 0.0
    for j in range(p):
        u = total[j] / m - c0[j]
        delta += u * u
    delta = np.sqrt(delta)
    best = -1.0
    best_id = np.int64(-1)
    best_pos = np.int64(-1)
    limit = -1.0
    i = meta[1]
    scanned = 0
    while i < meta[0]:
        pos = order[i]
        if fr[pos] == en[pos]:
            if i == meta[1]:
                meta[1] += 1
            i += 1
            continue
        if (d0[i] + delta) * (1.0 + 1e-9) < limit:
            break
        sc = _far_score(Y, pos, m, total)
        scanned += 1
        idx = mem[fr[pos]]
        if sc > best or (sc == best and idx < best_id):
            best = sc
            best_id = idx
            best_pos = pos
            limit = np.sqrt(best) / m
        i += 1
    meta[2] += scanned
    if meta[2] > budget * (live + 64):
        _anchor(Y, fr, en, total, remaining, c0, order, d0, meta)
    return best_pos


@nb.njit(cache=True, nogil=True)
def _join_nearest(Y, labels, g, leftover):
    """The records in `leftover` (fewer than k) join clusters 0..g-1 one at a time: the one farthest
    from the centroid of those still left joins the cluster whose centroid (with the records that
    joined before) is nearest; ties to the smallest position and to the cluster formed first."""
    n, p = Y.shape
    csum = np.zeros((g, p))
    cnt = np.zeros(g)
    for i in range(n):
        c = labels[i]
        if c >= 0:
            cnt[c] += 1.0
            for j in range(p):
                csum[c, j] += Y[i, j]
    left = leftover.copy()
    m = left.shape[0]
    lsum = np.zeros(p)
    for t in range(m):
        for j in range(p):
            lsum[j] += Y[left[t], j]
    while m > 0:
        best = -1.0
        bt = 0
        # left is in increasing position, so the first maximum wins ties; two records are always
        # equally far from their midpoint, which rounding might not show
        for t in range(m if m > 2 else 0):
            sc = _far_score(Y, left[t], float(m), lsum)
            if sc > best:
                best = sc
                bt = t
        x = left[bt]
        # nearest centroid S_c / m_c, compared as |m_c x - S_c|^2 m_b^2 < |m_b x - S_b|^2 m_c^2
        bc = 0
        bd = _far_score(Y, x, cnt[0], csum[0])
        for c in range(1, g):
            d = _far_score(Y, x, cnt[c], csum[c])
            if d * cnt[bc] * cnt[bc] < bd * cnt[c] * cnt[c]:
                bc = c
                bd = d
        labels[x] = bc
        cnt[bc] += 1.0
        for j in range(p):
            csum[bc, j] += Y[x, j]
            lsum[j] -= Y[x, j]
        for t in range(bt, m - 1):
            left[t] = left[t + 1]
        m -= 1


@nb.njit(cache=True, nogil=True)
def _mdav_points(Y, U, mem, starts, k, leaf_size, budget, join_nearest):
    """MDAV labels (in order of group formation) of the records Y, whose distinct points are U with
    the records mem[starts[u]:starts[u+1]] (increasing positions); see `mdav_multi_partition`."""
    n, p = Y.shape
    npts = U.shape[0]
    Yt = U.copy()
    pt = np.arange(npts)
    key = np.empty(npts, np.int64)
    count = np.empty(npts, np.int64)
    for u in range(npts):
        key[u] = mem[starts[u]]
        count[u] = starts[u + 1] - starts[u]
    box, info, leaf_of = _build_tree(Yt, pt, key, count, leaf_size)
    fr = np.empty(npts, np.int64)
    en = np.empty(npts, np.int64)
    for t in range(npts):
        fr[t] = starts[pt[t]]
        en[t] = starts[pt[t] + 1]
    labels = np.full(n, -1, np.int64)
    total = np.zeros(p)
    for i in range(n):
        for j in range(p):
            total[j] += Y[i, j]
    remaining = n
    live = npts
    members = np.empty(max(k - 1, 1), np.int64)
    member_ids = np.empty(max(k - 1, 1), np.int64)
    q = np.empty(p)
    c0 = np.empty(p)
    order = np.empty(npts, np.int64)
    d0 = np.empty(npts)
    meta = np.zeros(3, np.int64)
    _anchor(Yt, fr, en, total, remaining, c0, order, d0, meta)
    # textbook: pairs of groups while >= 3k remain, one more group with 2k..3k-1, the rest a group;
    # join_nearest: pairs while >= 2k remain, one more group with k..2k-1, the rest join clusters
    lowest = k if join_nearest else 2 * k
    pair = 2 * k if join_nearest else 3 * k
    g = 0
    while remaining >= lowest:
        two = remaining >= pair
        if remaining == 2:  # k = 1: two records are equally far from their midpoint; the first wins
            pos = -1
            for i in range(npts):
                if fr[i] < en[i] and (pos < 0 or mem[fr[i]] < mem[fr[pos]]):
                    pos = i
        else:
            pos = _farthest_from_centroid(Yt, mem, fr, en, total, remaining, live, c0, order, d0, meta, budget)
        for rnd in range(2 if two else 1):
            if rnd == 1:
                pos = _farthest(box, info, Yt, mem, fr, en, 1.0, q)
            for j in range(p):
                q[j] = Yt[pos, j]
            labels[mem[fr[pos]]] = g
            live -= _take(box, info, leaf_of, Yt, mem, fr, en, pos)
            for j in range(p):
                total[j] -= Yt[pos, j]
            _nearest(box, info, Yt, mem, fr, en, q, k - 1, members, member_ids)
            for t in range(k - 1):
                i = members[t]
                labels[member_ids[t]] = g  # the point's first live record (see _nearest)
                live -= _take(box, info, leaf_of, Yt, mem, fr, en, i)
                for j in range(p):
                    total[j] -= Yt[i, j]
            remaining -= k
            g += 1
    if remaining > 0:
        if join_nearest:
            leftover = np.empty(remaining, np.int64)
            t = 0
            for i in range(n):
                if labels[i] < 0:
                    leftover[t] = i
                    t += 1
            _join_nearest(Y, labels, g, leftover)
        else:
            for i in range(n):
                if labels[i] < 0:
                    labels[i] = g
    return labels


def _mdav_tree(Y, k, leaf_size, budget, join_nearest):
    """MDAV labels of the rows of Y (see `mdav_multi_partition`), on the distinct points of Y."""
    U, owner, count = distinct_rows(Y)
    mem = np.argsort(owner, kind="stable")  # the records of every point, in increasing position
    starts = np.zeros(U.shape[0] + 1, np.int64)
    np.cumsum(count, out=starts[1:])
    return _mdav_points(Y, U, mem, starts, k, leaf_size, budget, join_nearest)


def mdav_multi_partition(X, k, *, remainder: str = "group", standardise: bool = True) -> np.ndarray:
    """Multivariate MDAV cluster labels 0..g-1 of the rows of X (numbered in order of formation).

    remainder='group' (the default) is the textbook ending: with 2k..3k-1 records left, one group of
    k around the record farthest from their centroid and the rest as the last group; fewer than 2k
    left form one group (so groups have k..2k-1 records, one group when n < 2k).
    remainder='nearest' keeps forming groups of k in the same way (record farthest from the
    centroid, then the one farthest from it) while at least k records remain, and the n mod k
    records left over join the cluster with the nearest centroid one at a time (the one farthest from
    the centroid of those left first; centroids include the records that joined): floor(n/k)
    clusters. Both endings reproduce the MDAV information loss figures that the literature prints for
    the Tarragona, Census and EIA data sets (see the README); at four decimals they differ only where
    n mod 2k leaves a tail that they split differently.

    standardise=True (the default) runs MDAV on the z-scores of every column (`standardised`), as the
    literature does; False uses the values as given. See the module docstring for the tie rules.
    """
    func = "mdav_multi_partition"
    remainder = REMAINDER.check(remainder, func, "remainder")
    standardise = FLAG.check(standardise, func, "standardise")
    A = as_records(func, X)
    n = A.shape[0]
    k = CLUSTER_SIZE.check(k, func, "k", n=n)
    Y = standardised(A) if standardise else _lower_median_center(A)
    return _mdav_tree(Y, k, LEAF_SIZE, ANCHOR_BUDGET, remainder == "nearest")


# ---------------------------------------------------------------------------------------------
# Mondrian


@nb.njit(cache=True, nogil=True)
def spread_at_least(v, eps, l):
    """Whether the values v (sorted) hold l values pairwise at least eps apart (greedy from the
    smallest, which finds the largest such set)."""
    if v.shape[0] == 0:
        return l <= 0
    count = 1
    last = v[0]
    for t in range(1, v.shape[0]):
        if count >= l:
            return True
        if v[t] - last >= eps:
            count += 1
            last = v[t]
    return count >= l


@nb.njit(cache=True, nogil=True)
def _diverse(X, ids, eps, l):
    for j in range(X.shape[1]):
        v = np.empty(ids.shape[0])
        for t in range(ids.shape[0]):
            v[t] = X[ids[t], j]
        if not spread_at_least(np.sort(v), eps[j], l):
            return False
    return True


@nb.njit(cache=True, nogil=True)
def mondrian_engine(X, k, relaxed, span, a, l, eps):
    """Mondrian labels 0..g-1, numbered left to right (lower halves first). Every partition is a
    slice of `idx` kept in increasing input position.

    The attribute to cut is the one with the largest score: the normalised width (range in the
    partition / span) for plain Mondrian (a has no rows), or the width times the partition's mean
    sensitivity a[:, j] for the characteristic-aware Mondrian of box anonymisation. relaxed: cut the
    best attribute at the (value, position) median into floor/ceil halves. Otherwise (strict): cut at
    the lower median, records <= it to the left, only if both sides keep >= k records and, with
    l > 1, both sides hold l values eps[j] apart in every attribute; else try the next attribute."""
    n, p = X.shape
    aware = a.shape[0] > 0
    idx = np.arange(n)
    labels = np.empty(n, np.int64)
    stack = np.empty((2 * (n // max(k, 1)) + 64, 2), np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    top = 1
    g = 0
    score = np.empty(p)
    buf = np.empty(n, np.int64)
    while top > 0:
        top -= 1
        s = stack[top, 0]
        e = stack[top, 1]
        m = e - s
        cut = -1
        if m >= 2 * k:
            for j in range(p):
                lo = X[idx[s], j]
                hi = lo
                total = 0.0
                for t in range(s, e):
                    v = X[idx[t], j]
                    if v < lo:
                        lo = v
                    elif v > hi:
                        hi = v
                    if aware:
                        total += a[idx[t], j]
                if aware:
                    score[j] = (hi - lo) * (total / m)
                else:
                    score[j] = (hi - lo) / span[j] if span[j] > 0 else 0.0
            dims = np.argsort(-score, kind="mergesort")  # best first, ties to the first attribute
            if relaxed:
                dim = dims[0]
                vals = np.empty(m)
                for t in range(m):
                    vals[t] = X[idx[s + t], dim]
                perm = np.argsort(vals, kind="mergesort")  # (value, position)
                half = m // 2
                for t in range(m):
                    buf[t] = idx[s + perm[t]]
                left = np.sort(buf[:half])
                right = np.sort(buf[half:m])
                idx[s:s + half] = left
                idx[s + half:e] = right
                cut = s + half
            else:
                for q in range(p):
                    dim = dims[q]
                    if not score[dim] > 0.0:
                        break
                    vals = np.empty(m)
                    for t in range(m):
                        vals[t] = X[idx[s + t], dim]
                    split = np.sort(vals)[(m - 1) // 2]
                    n_left = 0
                    for t in range(m):
                        if vals[t] <= split:
                            n_left += 1
                    if n_left < k or m - n_left < k:
                        continue
                    a_pos = 0
                    b_pos = n_left
                    for t in range(m):
                        if vals[t] <= split:
                            buf[a_pos] = idx[s + t]
                            a_pos += 1
                        else:
                            buf[b_pos] = idx[s + t]
                            b_pos += 1
                    if l > 1 and not (_diverse(X, buf[:n_left], eps, l) and _diverse(X, buf[n_left:m], eps, l)):
                        continue
                    idx[s:e] = buf[:m]
                    cut = s + n_left
                    break
        if cut < 0:
            for t in range(s, e):
                labels[idx[t]] = g
            g += 1
            continue
        stack[top, 0] = cut  # upper half pushed first: the lower half is numbered first
        stack[top, 1] = e
        stack[top + 1, 0] = s
        stack[top + 1, 1] = cut
        top += 2
    return labels


def mondrian_partition(X, k, mode: str = "strict") -> np.ndarray:
    """Mondrian cluster labels 0..g-1 of the rows of X, numbered left to right (the records <= the
    cut value of every split first). mode 'strict' or 'relaxed'; see the module docstring.
    Strict clusters have >= k records; relaxed ones k..2k-1 (a single cluster when n < 2k).
    O(n log n log(n/k))."""
    func = "mondrian_partition"
    mode = MONDRIAN_MODE.check(mode, func, "mode")
    A = as_records(func, X)
    k = CLUSTER_SIZE.check(k, func, "k", n=A.shape[0])
    A, _ = per_column_unit(A)  # the same cuts, and no range overflows at 1e308
    span = A.max(axis=0) - A.min(axis=0)
    return mondrian_engine(A, k, mode == "relaxed", span, np.empty((0, A.shape[1])), 1, np.zeros(A.shape[1]))


# ---------------------------------------------------------------------------------------------
# representation


def centroids(X, labels) -> np.ndarray:
    """(g, p) matrix of the mean of every attribute over each cluster 0..g-1. Every column is scaled
    by a power of two (`per_column_unit`) and centred on its lower median before summing, so neither
    a large common offset nor the scale costs precision (exact scale invariance,
    `duckdb_sdc._numerics`)."""
    func = "centroids"
    A = as_records(func, X)
    lab = np.ascontiguousarray(labels, dtype=np.int64)
    if lab.shape != (A.shape[0],):
        raise fail(func, f"labels has {lab.shape[0] if lab.ndim else 0} entries but X has {A.shape[0]} rows")
    if A.shape[0] == 0:
        return np.empty((0, A.shape[1]))
    if lab.min() < 0:
        raise fail(func, f"labels must be >= 0, got {lab.min()}")
    g = int(lab.max()) + 1
    A, e = per_column_unit(A)
    med = lower_median(A)
    counts = np.bincount(lab, minlength=g).astype(np.float64)
    out = np.empty((g, A.shape[1]))
    for j in range(A.shape[1]):
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = np.bincount(lab, weights=A[:, j] - med[j], minlength=g) / counts + med[j]
    return np.ldexp(out, e)  # means lie within each column's range: no overflow


@named
def mdav_multi_round(X, k, *, remainder: str = "group", standardise: bool = True) -> np.ndarray:
    """Every record replaced by the centroid (attribute means, original units) of its MDAV cluster."""
    A = as_records("mdav_multi_round", X)
    lab = mdav_multi_partition(A, k, remainder=remainder, standardise=standardise)
    return centroids(A, lab)[lab]


@named
def mondrian_round(X, k, mode: str = "strict") -> np.ndarray:
    """Every record replaced by the centroid (attribute means) of its Mondrian cluster."""
    A = as_records("mondrian_round", X)
    lab = mondrian_partition(A, k, mode)
    return centroids(A, lab)[lab]
