"""Slow, obviously correct references for clusters without sensitive cells: MDAV whose groups grow
until no cell is sensitive, and dynamic k by removing the records that make a cell sensitive. Exact
rational arithmetic for the data and the rules; nearest clusters as reference.merge_reference finds
them."""

from __future__ import annotations

import numpy as np

from reference import _centroid, _d2, _exact, _first_max, _first_min, as_matrix, merge_reference, standardized
from reference_protection import sensitive_reference


def _sensitive(F, rows, rule) -> list[bool]:
    p = len(F[0])
    return [bool(rows) and sensitive_reference([F[i][j] for i in rows], rule) for j in range(p)]


def mdav_cells_reference(X, k, rule: dict):
    """MDAV (on X as given) whose every group, r and its k - 1 nearest, takes the next nearest record
    to r while one of its cells is sensitive; the documented remainders; then dynamic k."""
    F = _exact(as_matrix(X))
    n = len(F)
    labels = np.full(n, -1, dtype=np.int64)
    rest = list(range(n))
    g = 0

    def grow(r):
        nonlocal rest, g
        others = [i for i in rest if i != r]
        d = _d2(F, others, F[r])
        order = [r] + [others[t] for t in sorted(range(len(others)), key=lambda t: (d[t], others[t]))]
        group = order[:k]
        while len(group) < len(order) and any(_sensitive(F, group, rule)):
            group.append(order[len(group)])
        labels[group] = g
        g += 1
        rest = [i for i in rest if i not in set(group)]

    def farthest(point):
        return rest[_first_max(_d2(F, rest, point))]

    while len(rest) >= 3 * k:
        r = farthest(_centroid(F, rest))
        grow(r)
        if len(rest) >= k:
            grow(farthest(F[r]))
    if len(rest) >= 2 * k:
        grow(farthest(_centroid(F, rest)))
    if len(rest) >= k:
        labels[rest] = g
        g += 1
        rest = []
    for i in list(rest):
        centroids = [_centroid(F, [t for t in range(n) if labels[t] == c]) for c in range(g)]
        labels[i] = _first_min([sum((F[i][j] - c[j]) ** 2 for j in range(len(c))) for c in centroids])
    rule_of = lambda c: sensitive_reference(c, rule)  # noqa: E731
    return merge_reference(X, labels, rule_of)


def remove_reference(X, labels, rule: dict, min_size=None):
    """Dynamic k by removal, the documented loop: (labels with -1 for removed records, removed)."""
    X = as_matrix(X)
    F = _exact(X)
    labels = np.asarray(labels).copy()
    least = int(np.bincount(np.unique(labels, return_inverse=True)[1]).min()) if min_size is None else min_size
    limit = {"dominance": rule.get("n"), "threshold": rule.get("n", 1) - 1}.get(rule["kind"], 2)
    removed = np.zeros(len(F), bool)

    def merge(a):
        others = [int(c) for c in np.unique(labels[labels >= 0]) if c != a]
        if not others:
            removed[labels == a] = True
            labels[labels == a] = -1
            return
        # nearest on the z-scores of every record (removed ones too), as the numpy layer standardises
        b = others[_nearest_kept(X, labels, a, others)]
        labels[labels == max(a, b)] = min(a, b)

    while True:
        alive = sorted(int(c) for c in np.unique(labels[labels >= 0]))
        bad = [c for c in alive if any(_sensitive(F, list(np.flatnonzero(labels == c)), rule))]
        if not bad:
            break
        a = bad[0]
        members = list(np.flatnonzero(labels == a))
        flags = _sensitive(F, members, rule)
        if len(members) > limit:
            j = flags.index(True)
            top = members[_first_max([F[i][j] for i in members])]
            removed[top] = True
            labels[top] = -1
            if len(members) - 1 < least:
                merge(a)
        else:
            merge(a)
    final = np.full(len(F), -1, np.int64)
    kept = labels >= 0
    if kept.any():
        final[kept] = np.unique(labels[kept], return_inverse=True)[1]
    return final, removed


def _nearest_kept(X, labels, a, others):
    """The index in others of the kept cluster whose centroid is nearest to a's (first minimum)."""
    Z = standardized(X)
    ca = Z[labels == a].mean(axis=0)
    d = [float(((Z[labels == b].mean(axis=0) - ca) ** 2).sum()) for b in others]
    return _first_min(d)

