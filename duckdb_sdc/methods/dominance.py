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

from dataclasses import dataclass

import numpy as np

from .._validate import named
from ..params import CLUSTER_SIZE, FLAG, Integer
from .multivariate import as_records, standardised
from .protection import COST, Suppression, suppress
from .sensitivity import Rule, _compact, _contributions, merge_sensitive

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


def _nearest(Z: np.ndarray, lab: np.ndarray, a: int, others: np.ndarray) -> int:
    """The cluster of `others` whose centroid (rows of Z) is nearest to a's; ties: the first."""
    ca = Z[lab == a].mean(axis=0)
    d = np.array([((Z[lab == b].mean(axis=0) - ca) ** 2).sum() for b in others])
    return int(others[np.argmin(d)])


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
    C = _contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    _, lab = _compact(func, labels, A.shape[0])
    n = A.shape[0]
    least = int(np.bincount(lab).min()) if n else 1
    least = least if min_size is None else MIN_SIZE.check(min_size, func, "min_size")
    limit = _count_limit(rule)
    new = lab.copy()
    removed = np.zeros(n, bool)
    Z = standardised(A) if n else A

    def merge(a: int) -> None:
        others = np.unique(new[new >= 0])
        others = others[others != a]
        if others.size == 0:  # nothing left to merge with: removed whole
            removed[new == a] = True
            new[new == a] = -1
            return
        b = _nearest(Z, new, a, others)
        new[new == max(a, b)] = min(a, b)

    while True:
        alive = np.unique(new[new >= 0])
        a = next((int(c) for c in alive if _flags(rule, C[new == c]).any()), None)
        if a is None:
            break
        members = np.flatnonzero(new == a)
        flags = _flags(rule, C[members])
        if members.size > limit:
            j = int(np.argmax(flags))
            top = members[np.argmax(C[members, j])]  # first maximum: the record that comes first
            removed[top] = True
            new[top] = -1
            if members.size - 1 < least:
                merge(a)
        else:
            merge(a)
    kept = new >= 0
    final = np.full(n, -1, np.int64)
    if kept.any():
        final[kept] = np.unique(new[kept], return_inverse=True)[1]
    g2 = int(final.max()) + 1
    with_removed = np.where(removed, g2, final)
    return Removal(final, removed, suppress(A, with_removed, rule, cost=cost))


# ---------------------------------------------------------------------------------------------
# MDAV whose groups have no sensitive cell


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
    C = _contributions(func, A.ravel(), rule, "rows").reshape(A.shape)
    Z = standardised(A) if FLAG.check(standardise, func, "standardise") else A
    labels = np.full(n, -1, np.int64)
    remaining = np.ones(n, bool)
    g = 0

    def grow(r: int) -> None:
        nonlocal g
        idx = np.flatnonzero(remaining & (np.arange(n) != r))
        d = ((Z[idx] - Z[r]) ** 2).sum(axis=1)
        order = np.concatenate([[r], idx[np.lexsort((idx, d))]])  # r, then nearest first (ties: first)
        take = min(k, order.size)
        group = list(order[:take])
        while take < order.size and _flags(rule, C[group]).any():
            group.append(order[take])
            take += 1
        labels[group] = g
        remaining[group] = False
        g += 1

    def farthest(point: np.ndarray | None) -> int:
        """The remaining record farthest from `point`, or from their centroid (None); first maximum."""
        idx = np.flatnonzero(remaining)
        if point is None:
            d = ((idx.size * Z[idx] - Z[idx].sum(axis=0)) ** 2).sum(axis=1)
        else:
            d = ((Z[idx] - point) ** 2).sum(axis=1)
        return int(idx[np.argmax(d)])

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
