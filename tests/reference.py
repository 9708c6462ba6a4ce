"""Slow, obviously correct reference implementations that the fast methods are tested against.

They follow the papers' textbook statements literally (multivariate distance computations over all
remaining records, O(n^2) or worse) with the documented tie rules: every "farthest"/"nearest" choice
goes to the record with the smallest input position.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np


def as_matrix(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(len(x), -1)


def canonical(labels) -> np.ndarray:
    """Relabel a partition by first occurrence in input order, so partitions compare with ==."""
    labels = np.asarray(labels)
    mapping: dict = {}
    return np.array([mapping.setdefault(lab, len(mapping)) for lab in labels.tolist()], dtype=np.int64)


def _exact(X):
    """The data as exact rationals: centroids such as 24/7 and 46/7 then tie exactly when they
    should, which floating point would decide by rounding."""
    return [[Fraction(float(v)) for v in row] for row in X]


def _centroid(F, rows):
    p = len(F[0])
    return [sum(F[i][j] for i in rows) / len(rows) for j in range(p)]


def _d2(F, rows, point):
    return [sum((F[i][j] - point[j]) ** 2 for j in range(len(point))) for i in rows]


def _first_max(values):
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best


def _first_min(values):
    best = 0
    for i, v in enumerate(values):
        if v < values[best]:
            best = i
    return best


def _farthest(F, rows, point):
    return rows[_first_max(_d2(F, rows, point))]  # first maximum: smallest position


def _group_around(F, rows, r, k):
    others = [i for i in rows if i != r]
    d = _d2(F, others, F[r])
    nearest = sorted(range(len(others)), key=lambda t: (d[t], others[t]))[: k - 1]
    return [r] + [others[t] for t in nearest]


def mdav_reference(x, k):
    """Textbook multivariate MDAV (Domingo-Ferrer & Torra 2005), O(n^2/k) distance computations."""
    F = _exact(as_matrix(x))
    n = len(F)
    labels = np.full(n, -1, dtype=np.int64)
    rest = list(range(n))
    g = 0

    def take(group):
        nonlocal rest, g
        labels[group] = g
        g += 1
        chosen = set(group)
        rest = [i for i in rest if i not in chosen]

    while len(rest) >= 3 * k:
        r = _farthest(F, rest, _centroid(F, rest))
        take(_group_around(F, rest, r, k))
        s = _farthest(F, rest, F[r])
        take(_group_around(F, rest, s, k))
    if len(rest) >= 2 * k:
        r = _farthest(F, rest, _centroid(F, rest))
        take(_group_around(F, rest, r, k))
    if rest:
        take(list(rest))
    return labels


def vmdav_reference(x, k, gamma):
    """Textbook V-MDAV (Solanas & Martinez-Balleste 2006) with the documented rules. Distances to
    centroids are exact; d_in < gamma * d_out is evaluated in float64, as an implementation would."""
    F = _exact(as_matrix(x))
    n = len(F)
    c = _centroid(F, list(range(n)))
    labels = np.full(n, -1, dtype=np.int64)
    free = list(range(n))
    groups: list[list[int]] = []
    while len(free) >= k:
        e = _farthest(F, free, c)
        group = _group_around(F, free, e, k)
        free = [i for i in free if i not in set(group)]
        while len(group) < 2 * k - 1 and free:
            to_group = [min(_d2(F, group, F[u])) for u in free]
            pick = _first_min(to_group)
            u = free[pick]
            d_in = math.sqrt(float(to_group[pick]))
            others = [i for i in free if i != u]
            d_out = math.sqrt(float(min(_d2(F, others, F[u])))) if others else math.inf
            if d_out == math.inf or d_in < gamma * d_out:
                group.append(u)
                free.remove(u)
            else:
                break
        groups.append(group)
    for t, group in enumerate(groups):
        labels[group] = t
    centroids = [_centroid(F, group) for group in groups]
    for u in free:
        labels[u] = _first_min([_d2(F, [u], cen)[0] for cen in centroids])  # ties: group formed first
    return labels


def ranking_reference(x, k):
    order = np.argsort(np.asarray(x, dtype=np.float64), kind="stable")
    n = len(order)
    g = n // k
    labels = np.empty(n, dtype=np.int64)
    for pos, i in enumerate(order):
        labels[i] = min(pos // k, g - 1)
    return labels


def sse(x, labels) -> float:
    x = np.asarray(x, dtype=np.float64)
    total = 0.0
    for lab in np.unique(labels):
        part = x[labels == lab]
        total += math.fsum((part - math.fsum(part) / len(part)) ** 2)
    return total


def optimal_sse_bruteforce(x, k) -> float:
    """Minimum SSE over all partitions of the sorted values into consecutive groups of size >= k
    (no upper bound on the size): enumerate every set of cut points."""
    v = np.sort(np.asarray(x, dtype=np.float64))
    n = len(v)
    best = math.inf
    inner = range(1, n)
    for m in range(0, n // k):
        for cuts in combinations(inner, m):
            bounds = (0, *cuts, n)
            if any(b - a < k for a, b in zip(bounds, bounds[1:])):
                continue
            total = 0.0
            for a, b in zip(bounds, bounds[1:]):
                part = v[a:b]
                total += math.fsum((part - math.fsum(part) / len(part)) ** 2)
            best = min(best, total)
    return best


def standardized(x):
    """z-scores with the population sd (constant columns become 0), as the numpy layer uses."""
    X = as_matrix(x)
    sd = X.std(axis=0)
    Z = X - X.mean(axis=0)
    Z[:, sd > 0] /= sd[sd > 0]
    return Z


def mondrian_reference(x, k, mode):
    """Textbook Mondrian (LeFevre, DeWitt & Ramakrishnan 2006), recursive, with the documented rules:
    widest normalised range first (ties: first attribute); strict cuts at the lower median (<= left)
    only when both sides keep >= k records, trying the next widest attribute otherwise; relaxed
    halves of floor/ceil(m/2) records in (value, position) order. Labels numbered left to right."""
    X = as_matrix(x)
    n, p = X.shape
    span = [float(X[:, j].max() - X[:, j].min()) for j in range(p)]
    labels = np.full(n, -1, dtype=np.int64)
    counter = [0]

    def widths(rows):
        return [(float(max(X[rows, j]) - min(X[rows, j])) / span[j]) if span[j] > 0 else 0.0 for j in range(p)]

    def split(rows):
        if len(rows) < 2 * k:
            return None
        w = widths(rows)
        dims = sorted(range(p), key=lambda j: (-w[j], j))
        if mode == "relaxed":
            d = dims[0]
            ordered = sorted(rows, key=lambda i: (X[i, d], i))
            half = len(rows) // 2
            return sorted(ordered[:half]), sorted(ordered[half:])
        for d in dims:
            if w[d] == 0:
                return None
            vals = sorted(X[i, d] for i in rows)
            median = vals[(len(vals) - 1) // 2]
            left = [i for i in rows if X[i, d] <= median]
            right = [i for i in rows if X[i, d] > median]
            if len(left) >= k and len(right) >= k:
                return left, right
        return None

    def anonymize(rows):
        cut = split(rows)
        if cut is None:
            labels[rows] = counter[0]
            counter[0] += 1
            return
        anonymize(cut[0])
        anonymize(cut[1])

    anonymize(list(range(n)))
    return labels


def relaxed_sizes(n, k):
    """Cluster sizes of relaxed Mondrian, left to right: halve every part of >= 2k records."""
    if n < 2 * k:
        return [n]
    return relaxed_sizes(n // 2, k) + relaxed_sizes(n - n // 2, k)


def il_sse_sst(x, labels) -> float:
    """100 SSE / SST of replacing every record by its cluster centroid, straight from the formula,
    on the data as given (standardise first for the literature's figure)."""
    X = as_matrix(x)
    labels = np.asarray(labels)
    sse = 0.0
    for lab in np.unique(labels):
        part = X[labels == lab]
        sse += math.fsum(((part - part.mean(axis=0)) ** 2).ravel())
    sst = math.fsum(((X - X.mean(axis=0)) ** 2).ravel())
    return 100.0 * sse / sst


def mdav_scan_reference(x, k):
    """Textbook multivariate MDAV as a plain O(n^2/k) numpy scan over the remaining records, in
    floating point with the documented tie rules (distances to the centroid as |m x - S|^2). Equal to
    `mdav_reference` wherever float64 is exact (integer data), and fast enough for thousands of
    records."""
    X = as_matrix(x)
    n = X.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n)
    g = 0

    def farthest(points, a, b):
        score = ((a * X[points] - b) ** 2).sum(axis=1)
        return points[np.flatnonzero(score == score.max())[0]]

    def take(points, r):
        nonlocal g
        d = ((X[points] - X[r]) ** 2).sum(axis=1)
        d[points == r] = -1.0
        group = points[np.lexsort((points, d))[:k]]
        labels[group] = g
        g += 1
        return points[labels[points] < 0]

    while len(rest) >= 3 * k:
        r = farthest(rest, len(rest), X[rest].sum(axis=0))
        rest = take(rest, r)
        s = farthest(rest, 1.0, X[r])
        rest = take(rest, s)
    if len(rest) >= 2 * k:
        rest = take(rest, farthest(rest, len(rest), X[rest].sum(axis=0)))
    labels[rest] = g
    return labels


def mdav_nearest_reference(x, k):
    """MDAV with the 'nearest' remainder, exact arithmetic: groups of k (around the record farthest
    from the centroid, then around the record farthest from that one) while at least k records
    remain; each of the fewer than k left, farthest from their centroid first, joins the cluster whose
    centroid (counting records that joined) is nearest (ties: smallest position, first cluster)."""
    F = _exact(as_matrix(x))
    n = len(F)
    labels = np.full(n, -1, dtype=np.int64)
    rest = list(range(n))
    groups: list[list[int]] = []

    def take(group):
        nonlocal rest
        labels[group] = len(groups)
        groups.append(list(group))
        rest = [i for i in rest if i not in set(group)]

    while len(rest) >= k:
        r = _farthest(F, rest, _centroid(F, rest))
        take(_group_around(F, rest, r, k))
        if len(rest) >= k:
            take(_group_around(F, rest, _farthest(F, rest, F[r]), k))
    while rest:
        x_ = _farthest(F, rest, _centroid(F, rest))
        c = _first_min([_d2(F, [x_], _centroid(F, grp))[0] for grp in groups])
        labels[x_] = c
        groups[c].append(x_)
        rest.remove(x_)
    return labels


def dominance_reference(values, n, r):
    """(n, r) dominance rule by a direct loop in exact arithmetic, r read as the decimal it prints as."""
    c = sorted((Fraction(float(v)) for v in values), reverse=True)
    if not c:
        return None
    if len(c) <= n:
        return True
    return sum(c[:n]) > Fraction(repr(float(r))) * sum(c)


def p_percent_reference(values, p):
    """p% rule by a direct loop in exact arithmetic: T - c(1) - c(2) < p c(1)."""
    c = sorted((Fraction(float(v)) for v in values), reverse=True)
    if not c:
        return None
    c1 = c[0]
    c2 = c[1] if len(c) > 1 else Fraction(0)
    return sum(c) - c1 - c2 < Fraction(repr(float(p))) * c1


def cells_reference(X, labels, rule):
    """{(cluster, attribute): sensitive} with `rule(values)` applied to every cell."""
    X = as_matrix(X)
    return {(int(g), j): rule(X[labels == g, j].tolist()) for g in np.unique(labels) for j in range(X.shape[1])}


def nearest_cluster_reference(X, labels, a, candidates):
    """The candidate cluster whose centroid on the standardised attributes is nearest to a's (first
    minimum wins)."""
    Z = standardized(X)
    ca = Z[labels == a].mean(axis=0)
    d = [float(((Z[labels == b].mean(axis=0) - ca) ** 2).sum()) for b in candidates]
    return candidates[_first_min(d)]


def merge_reference(X, labels, rule):
    """Dynamic k by the obvious loop: recompute every cell, merge the first cluster with a sensitive
    cell into its nearest cluster (the merged cluster keeps the smaller label), repeat."""
    labels = np.asarray(labels).copy()
    while True:
        cells = cells_reference(X, labels, rule)
        bad = sorted({g for (g, _), s in cells.items() if s})
        if not bad:
            break
        a = bad[0]
        others = [int(g) for g in np.unique(labels) if g != a]
        if not others:
            raise ValueError("one cluster is still sensitive")
        b = nearest_cluster_reference(X, labels, a, others)
        keep, gone = min(a, b), max(a, b)
        labels[labels == gone] = keep
    return canonical_sorted(labels)


def canonical_sorted(labels):
    """Relabel 0..g-1 in increasing order of the labels' values."""
    _, inv = np.unique(labels, return_inverse=True)
    return inv.astype(np.int64)
