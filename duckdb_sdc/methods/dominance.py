"""Clusters without sensitive cells, the two ways the seed (issue 5, seed 002) leaves open besides
suppression and merging (dynamic k):

* `remove_sensitive`: the variant of dynamic k that removes the records that make a cell sensitive
  instead of growing the cluster;
* `mdav_cells_partition`: microaggregation re-formulated with the sensitivity rule as a constraint
  on the clusters it forms (the seed's way forward): MDAV whose every group grows, record by record
  in order of distance, until none of its cells is sensitive, in the way Soria-Comas, Domingo-Ferrer,
  Sanchez & Martinez (2015, "t-Closeness through microaggregation", IEEE TKDE 28(5)) grow clusters
  until t-closeness holds (their "t-closeness first" algorithm), and as Domingo-Ferrer & Mateo-Sanz
  (2002) form MDAV's groups.

Both keep the rule's vocabulary (`sensitivity.Rule`: dominance, p%, pq, threshold) and its choices
(contributions >= 0 unless absolute; exact comparisons).

A union of cells that are not sensitive is not sensitive under each rule (p%, pq: the union's
remainder is at least the larger part's; dominance: its n largest are at most the sum of each
part's n largest; threshold: counts add), so merging clusters that comply keeps them compliant.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numba as nb
import numpy as np

from .._validate import named
from ..params import CLUSTER_SIZE, FLAG, Integer
from .multivariate import as_records, centroids, standardised
from .protection import COST, Suppression, suppress
from .sensitivity import (Rule, compact_labels, checked_contributions, dominance_rule, merge_sensitive, p_percent_rule,
                          sensitive_cells)

MIN_SIZE = Integer(1, nullable=True, doc="the least size of a released cluster (NULL: the smallest cluster given)")


def _flags(rule: Rule, C: np.ndarray) -> np.ndarray:
    """(p,) whether the cell of each attribute formed by the records C (rows: contributions as the
    rule sees them) is sensitive; none for no record. Scaled exactly as `sensitivity.cell_summaries`."""
    if C.shape[0] == 0:
        return np.zeros(C.shape[1], bool)
    top = -np.sort(-C, axis=0)
    m = max(rule.top, 2)
    tops = np.zeros((m, C.shape[1]))
    tops[: min(m, top.shape[0])] = top[:m]
    e = np.frexp(tops[0])[1]
    tops = np.ldexp(tops, -e)
    total = np.ldexp(C, -e).sum(axis=0)
    return np.asarray(rule.flags(C.shape[0], total, tops.T[:, : rule.top] if rule.kind == "dominance" else tops.T))


# ---------------------------------------------------------------------------------------------
# removing the records that make a cell sensitive


@dataclass(frozen=True)
class Removal:
    """remove_sensitive's result."""

    labels: np.ndarray  # (n,) cluster 0..g'-1 of every kept record, -1 for a removed one
    removed: np.ndarray  # (n,) records removed from their clusters (released without their values)
    suppression: Suppression  # the kept clusters and, last, the removed records as one cell (see below)

    @property
    def release(self) -> np.ndarray:
        """(n, p): every kept record's cluster centroid, NaN for removed records and suppressed cells."""
        out = self.suppression.release.copy()
        out[self.removed] = np.nan
        return out


@nb.njit(cache=True, nogil=True)
def _nearest_alive(zsum, count, alive, a):
    """The live cluster other than a whose centroid (zsum / count) is nearest to a's; first minimum."""
    g, p = zsum.shape
    best, arg = np.inf, -1
    for b in range(g):
        if b == a or not alive[b]:
            continue
        s = 0.0
        for j in range(p):
            u = zsum[b, j] / count[b] - zsum[a, j] / count[a]
            s += u * u
        if s < best:
            best, arg = s, b
    return arg


def _count_limit(rule: Rule) -> int:
    """The most contributors a cell can have and still be sensitive for its number alone: removing
    records cannot help it (dominance: t <= n; p% and pq: t <= 2, whose remainder is 0; threshold:
    t < n)."""
    return {"dominance": rule.n, "threshold": rule.n - 1}.get(rule.kind, 2)


@named
def remove_sensitive(X, labels, rule: Rule, *, min_size=None, cost: str = "cells") -> Removal:
    """Dynamic k by removing the records that make a cell sensitive (the seed's variant): while a
    cluster has a sensitive cell, take the first such cluster (in order of ids) and

    * if one of its sensitive cells has more contributors than the rule's count limit (dominance:
      n; p% and pq: 2; threshold: n - 1), remove from the cluster the record with the largest
      contribution to the first such cell (the one that dominates it; ties: the record that comes
      first): it is released without its values;
    * else (the cell is sensitive for having few contributors, which removing cannot change) merge
      the cluster with its nearest cluster (centroids on the standardised attributes, ties: the
      first), as `merge_sensitive` does;

    and whenever a cluster falls below `min_size` records (default: the smallest cluster given, so
    a k-anonymous partition stays k-anonymous), merge it with its nearest cluster. A cluster with no
    other cluster left to merge with is removed whole. At the end no cell is sensitive and every
    cluster has at least min_size records.

    The removed records of the partition are a cell of their own: from the partition's total and
    the published clusters, their total follows. So they are added as one more cluster (the last)
    and the pattern is protected as `protection.suppress` protects one (with `cost`): if that cell
    is sensitive, it is suppressed with secondary cells that meet its protection levels. Returns the
    new labels, the removed records and that suppression (its `unprotected` says what no pattern
    could protect). Cost: O(s log s) per step for clusters of at most s records and O(g p) per merge
    (g clusters), then the suppression."""
    func = "remove_sensitive"
    cost = COST.check(cost, func, "cost")
    A = as_records(func, X)
    C = checked_contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    _, lab = compact_labels(func, labels, A.shape[0])
    n = A.shape[0]
    least = int(np.bincount(lab).min()) if n else 1
    least = least if min_size is None else MIN_SIZE.check(min_size, func, "min_size")
    limit = _count_limit(rule)
    new = lab.copy()
    removed = np.zeros(n, bool)
    g = int(lab.max()) + 1 if n else 0
    Z = standardised(A) if n else A
    by_cluster = np.argsort(lab, kind="stable")
    members = dict(enumerate(a.tolist() for a in np.split(by_cluster, np.cumsum(np.bincount(lab, minlength=g))[:-1])))
    zsum = np.zeros((g, A.shape[1]))
    np.add.at(zsum, lab, Z)
    count = np.bincount(lab, minlength=g).astype(np.float64)
    alive = np.ones(g, bool)

    def sensitive(c: int) -> bool:
        return bool(_flags(rule, C[members[c]]).any())

    def merge(a: int) -> int | None:
        """Merge a into its nearest live cluster (the lower id survives); None when it was removed."""
        if alive.sum() == 1:  # nothing left to merge with: removed whole
            removed[members[a]] = True
            new[members[a]] = -1
            alive[a] = False
            return None
        b = _nearest_alive(zsum, count, alive, a)  # first minimum: the cluster that comes first
        keep, gone = min(a, b), max(a, b)
        members[keep] = sorted(members[keep] + members[gone])
        new[members[gone]] = keep
        zsum[keep] += zsum[gone]
        count[keep] += count[gone]
        alive[gone] = False
        return keep

    heap = np.flatnonzero(sensitive_cells(C, lab, rule).any(axis=1)).tolist() if n else []  # ascending: a heap
    while heap:
        a = heapq.heappop(heap)
        if not alive[a] or not sensitive(a):
            continue
        rows = members[a]
        if len(rows) > limit:
            j = int(np.argmax(_flags(rule, C[rows])))
            top = rows[int(np.argmax(C[rows, j]))]  # first maximum: the record that comes first
            removed[top] = True
            new[top] = -1
            rows.remove(top)
            zsum[a] -= Z[top]
            count[a] -= 1
            changed = merge(a) if len(rows) < least else a
        else:
            changed = merge(a)
        if changed is not None and sensitive(changed):
            heapq.heappush(heap, changed)
    kept = new >= 0
    final = np.full(n, -1, np.int64)
    if kept.any():
        final[kept] = np.unique(new[kept], return_inverse=True)[1]
    g2 = int(final.max()) + 1
    with_removed = np.where(removed, g2, final)
    return Removal(final, removed, suppress(A, with_removed, rule, cost=cost))


# ---------------------------------------------------------------------------------------------
# MDAV whose groups have no sensitive cell


@nb.njit(cache=True, nogil=True)
def _distances(Z, remaining, point):
    """Squared Euclidean distance of every remaining record to point; inf for the others."""
    n, p = Z.shape
    d = np.full(n, np.inf)
    for i in range(n):
        if remaining[i]:
            s = 0.0
            for j in range(p):
                u = Z[i, j] - point[j]
                s += u * u
            d[i] = s
    return d


@nb.njit(cache=True, nogil=True)
def _nearest_m(Z, remaining, point, m):
    """The m remaining records nearest to point, nearest first, ties: the record that comes first
    (fewer when fewer remain): one pass keeping the m best so far, in order."""
    n, p = Z.shape
    best_d = np.empty(m)
    best_i = np.empty(m, np.int64)
    count = 0
    for i in range(n):
        if not remaining[i]:
            continue
        s = 0.0
        for j in range(p):
            u = Z[i, j] - point[j]
            s += u * u
        if count == m and not s < best_d[m - 1]:  # a tie with the m-th comes later: not better
            continue
        pos = count if count < m else m - 1
        while pos > 0 and s < best_d[pos - 1]:
            if pos < m:
                best_d[pos] = best_d[pos - 1]
                best_i[pos] = best_i[pos - 1]
            pos -= 1
        best_d[pos] = s
        best_i[pos] = i
        if count < m:
            count += 1
    return best_i[:count]


@nb.njit(cache=True, nogil=True)
def _farthest(Z, remaining, point, from_centroid):
    """The remaining record farthest from point (first maximum), or, with from_centroid, from the
    remaining records' centroid, found as the largest |m z - sum of z|^2 (exact for integer data)."""
    n, p = Z.shape
    scale = 1.0
    centre = point.copy()
    if from_centroid:
        centre[:] = 0.0
        m = 0
        for i in range(n):
            if remaining[i]:
                m += 1
                for j in range(p):
                    centre[j] += Z[i, j]
        scale = float(m)
    best, arg = -1.0, -1
    for i in range(n):
        if remaining[i]:
            s = 0.0
            for j in range(p):
                u = scale * Z[i, j] - centre[j]
                s += u * u
            if s > best:
                best, arg = s, i
    return arg


@named
def mdav_cells_partition(X, k, rule: Rule, *, standardise: bool = True) -> np.ndarray:
    """Multivariate MDAV (Domingo-Ferrer & Mateo-Sanz 2002; `multivariate.mdav_multi_partition`) on
    the standardised attributes, whose every group is formed under the constraint that none of its
    cells is sensitive under `rule` (contributions: the original values of X): a group starts as
    MDAV's (the record r and its k - 1 nearest among the remaining ones) and then takes the next
    nearest remaining record to r, one at a time, until no cell of it is sensitive or no record
    remains. As in MDAV: while at least 3k records remain, a group around the record r farthest from
    their centroid and (if k records are still left) one around the record s farthest from r; with
    2k..3k-1 left, one group around r and the rest; with k..2k-1, the rest as one group. Records left fewer than k by a grown
    group join their nearest groups one by one (nearest centroid), and a last group that is still
    sensitive is merged with its nearest group until none is (`sensitivity.merge_sensitive`; an
    error if even all records in one group are sensitive). Every group has at least k records and
    no sensitive cell. Ties: the record (or group) that comes first. Labels 0..g-1 in order of
    formation. Distances on z-scores (population sd) unless standardise=False; the record farthest
    from the centroid of m records is found as the largest |m z - sum of z|^2 (exact for integer
    data). Cost: O(n log n) per group (the records in order of distance), O(n^2 log n / k) in all."""
    func = "mdav_cells_partition"
    A = as_records(func, X)
    n = A.shape[0]
    k = CLUSTER_SIZE.check(k, func, "k", n=n)
    C = checked_contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    Z = standardised(A) if FLAG.check(standardise, func, "standardise") else A
    labels = np.full(n, -1, np.int64)
    remaining = np.ones(n, bool)
    g = 0

    def nearest(d: np.ndarray, m: int, left: int) -> np.ndarray:
        """The m remaining records nearest (d: inf for the others), nearest first, ties: the record that
        comes first; all `left` of them when m >= left. Every record as near as the m-th is kept
        before cutting, so the order is that of a full sort."""
        m = min(m, left)
        if m == 0:
            return np.empty(0, np.int64)
        cut = np.partition(d, m - 1)[m - 1]
        idx = np.flatnonzero(d <= cut)
        return idx[np.lexsort((idx, d[idx]))][:m]

    def grow(r: int) -> None:
        nonlocal g
        remaining[r] = False
        left = int(remaining.sum())
        m = k - 1
        order = np.concatenate([[r], _nearest_m(Z, remaining, Z[r], m)])  # r, then its k - 1 nearest
        group = list(order)
        take = len(group)
        d = None
        while _flags(rule, C[group]).any():
            if take == len(order):  # the next nearest ones, twice as many each time
                if len(order) - 1 >= left:
                    break
                m = 2 * m + 1
                d = _distances(Z, remaining, Z[r]) if d is None else d
                order = np.concatenate([[r], nearest(d, m, left)])
            group.append(order[take])
            take += 1
        labels[group] = g
        remaining[group] = False
        g += 1

    def farthest(point: np.ndarray | None) -> int:
        """The remaining record farthest from `point`, or from their centroid (None); first maximum."""
        return _farthest(Z, remaining, point if point is not None else np.zeros(Z.shape[1]), point is None)

    while remaining.sum() >= 3 * k:
        r = farthest(None)
        grow(r)
        if remaining.sum() >= k:
            grow(farthest(Z[r]))
    left = int(remaining.sum())
    if left >= 2 * k:
        grow(farthest(None))
        left = int(remaining.sum())
    if left >= k:
        labels[remaining] = g
        remaining[:] = False
        g += 1
    for i in np.flatnonzero(remaining):  # fewer than k left by a grown group: each joins its nearest
        cent = np.array([Z[labels == c].mean(axis=0) for c in range(g)])
        labels[i] = int(np.argmin(((cent - Z[i]) ** 2).sum(axis=1)))
    if n == 0:
        return labels
    return merge_sensitive(A, labels, rule)  # the last group, if sensitive (keeps the order of formation)


def mdav_cells_round(X, k, rule: Rule, *, standardise: bool = True) -> np.ndarray:
    """Every record replaced by the centroid (attribute means, original units) of its group of
    `mdav_cells_partition`: k-anonymous, and no released cell is sensitive under `rule`."""
    A = as_records("mdav_cells_round", X)
    lab = mdav_cells_partition(A, k, rule, standardise=standardise)
    return centroids(A, lab)[lab]


@named
def mdav_dominance_round(X, k, n, r, *, absolute: bool = False, standardise: bool = True) -> np.ndarray:
    """mdav_cells_round under the (n, r) dominance rule."""
    return mdav_cells_round(X, k, dominance_rule(n, r, absolute=absolute), standardise=standardise)


@named
def mdav_p_percent_round(X, k, p, *, absolute: bool = False, standardise: bool = True) -> np.ndarray:
    """mdav_cells_round under the p% rule."""
    return mdav_cells_round(X, k, p_percent_rule(p, absolute=absolute), standardise=standardise)
