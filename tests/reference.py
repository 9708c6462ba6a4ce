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
