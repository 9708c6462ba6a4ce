"""Slow, obviously correct references for rounding by discretisation: literal loops over the values,
brute force over all partitions, and textbook Lloyd iterations."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np


def ewd_labels_reference(x, c):
    """Interval of each value: min(floor((x - min) / w), c - 1), w = (max - min) / c."""
    lo, hi = min(x), max(x)
    if lo == hi:
        return np.zeros(len(x), dtype=np.int64)
    w = (hi - lo) / c
    return np.array([min(math.floor((v - lo) / w), c - 1) for v in x], dtype=np.int64)


def _cut_positions(counts) -> tuple[int, list[int]]:
    pos = [0]
    for k in counts:
        pos.append(pos[-1] + int(k))
    return pos[-1], pos[1:-1]


def efd_lowest_optimum(counts, c):
    """Among cut sets at gaps (positions between distinct values) for c' = min(c, m) intervals, the
    lexicographically smallest of least sum of squared sizes, by a plain dynamic program over every
    pair of gaps. Returns the cut positions b_1 < ... < b_c'-1 (counts of values below each cut)."""
    n, gaps = _cut_positions(counts)
    ce = min(c, len(counts))
    if ce == 1:
        return []
    # best[j]: the least (sum of squared sizes, cuts) of cuts 1..t with cut t at gaps[j]
    best = {j: (g * g, (g,)) for j, g in enumerate(gaps)}
    for _ in range(2, ce):
        nxt = {}
        for j, g in enumerate(gaps):
            options = [(p + (g - cuts[-1]) ** 2, cuts + (g,)) for p, cuts in best.values() if cuts[-1] < g]
            if options:
                nxt[j] = min(options)
        best = nxt
    return list(min((p + (n - cuts[-1]) ** 2, cuts) for p, cuts in best.values())[1])


def efd_nearest_gap(counts, c):
    """The classic nearest-gap cuts, literally: cut t at the gap nearest to t n / c' (exact
    rationals, the lower gap on a tie), moved up above cut t - 1 and down to leave a gap for each
    later cut."""
    n, gaps = _cut_positions(counts)
    ce = min(c, len(counts))
    cuts, prev = [], -1
    for t in range(1, ce):
        allowed = range(prev + 1, len(gaps) - (ce - 1 - t))
        best = min(allowed, key=lambda j: (abs(Fraction(gaps[j]) - Fraction(t * n, ce)), j))
        cuts.append(gaps[best])
        prev = best
    return cuts


def squared_sizes(cuts, n) -> int:
    b = [0, *cuts, n]
    return sum((b[i + 1] - b[i]) ** 2 for i in range(len(b) - 1))


def efd_cuts_reference(counts, c):
    """The documented EFD rule: the nearest-gap cuts if they have the least sum of squared sizes,
    else the lowest cut set that has."""
    n, _ = _cut_positions(counts)
    lowest = efd_lowest_optimum(counts, c)
    near = efd_nearest_gap(counts, c)
    return near if squared_sizes(near, n) == squared_sizes(lowest, n) else lowest


def efd_labels_reference(x, c):
    """The documented EFD rule (`efd_cuts_reference`) applied to the sorted values."""
    x = [float(v) for v in x]
    n = len(x)
    order = sorted(range(n), key=lambda i: (x[i], i))
    v = [x[i] for i in order]
    counts = []
    for s in range(n):
        if s == 0 or v[s - 1] < v[s]:
            counts.append(0)
        counts[-1] += 1
    cuts = efd_cuts_reference(counts, c)
    labels = np.empty(n, dtype=np.int64)
    for rank, i in enumerate(order):
        labels[i] = sum(1 for s in cuts if s <= rank)
    return labels


def sse_of_labels(x, labels) -> float:
    x = np.asarray(x, dtype=np.float64)
    total = 0.0
    for g in np.unique(labels):
        part = x[labels == g]
        total += math.fsum((part - math.fsum(part) / len(part)) ** 2)
    return total


def kmeans_bruteforce(x, c):
    """All partitions of the sorted values into min(c, m) groups of consecutive values (m distinct
    values; equal values may be split here): the smallest SSE and the list of (SSE, labels aligned
    with x) of every partition."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    order = np.argsort(x, kind="stable")
    results = []
    for cuts in combinations(range(1, n), min(c, len(np.unique(x))) - 1):
        bounds = (0, *cuts, n)
        labels = np.empty(n, dtype=np.int64)
        for g, (a, b) in enumerate(zip(bounds, bounds[1:])):
            labels[order[a:b]] = g
        results.append((sse_of_labels(x, labels), labels))
    return min(r[0] for r in results), results


def lloyd(x, c, rng, iterations=100):
    """Textbook Lloyd iterations from c distinct random values as initial centres; returns the
    final SSE (a local optimum)."""
    x = np.asarray(x, dtype=np.float64)
    centres = np.sort(rng.choice(np.unique(x), size=min(c, len(np.unique(x))), replace=False))
    for _ in range(iterations):
        labels = np.argmin(np.abs(x[:, None] - centres[None, :]), axis=1)
        new = np.array([x[labels == g].mean() if np.any(labels == g) else centres[g]
                        for g in range(len(centres))])
        if np.array_equal(new, centres):
            break
        centres = new
    labels = np.argmin(np.abs(x[:, None] - centres[None, :]), axis=1)
    return sse_of_labels(x, labels)


def rbd_reference(x, c, groups, median_centroid, seed):
    """Algorithm 1 of the seed paper step by step with the same random stream as the fast code:
    quantile groups by the equal-frequency rule, for each group of size g, g samples of g positions
    drawn by rng.integers(0, g) one at a time, or, when the group has d distinct values with 4 d <= g,
    of binomial counts value by value (the count of each value, in increasing order, drawn from the
    draws left with probability its repeats / the repeats of the values from it on, the last value
    taking the rest); exact k-means (brute force) of the sorted centroids;
    nearest rounding point (mean of each cluster), ties to the lower point."""
    x = np.asarray(x, dtype=np.float64)
    rng = np.random.default_rng(seed)
    q = efd_labels_reference(x, groups)
    v = np.sort(x, kind="stable")
    qs = np.sort(q, kind="stable")
    centroids = []
    for t in range(qs.max() + 1):
        grp = v[qs == t]
        g = len(grp)
        values, repeats = np.unique(grp, return_counts=True)
        for _ in range(g):
            if 4 * len(values) <= g:  # heavily repeated values: binomial counts value by value
                sample, left, weight = [], g, g
                for value, w in zip(values[:-1], repeats[:-1]):
                    if left == 0:
                        break
                    count = int(rng.binomial(left, w / weight))
                    sample += [value] * count
                    left -= count
                    weight -= w
                sample += [values[-1]] * left
            else:
                sample = [grp[rng.integers(0, g)] for _ in range(g)]
            centroids.append(float(np.median(sample)) if median_centroid else math.fsum(sample) / g)
    centroids = np.sort(np.array(centroids))
    best, results = kmeans_bruteforce(centroids, c)
    labels = min((r for r in results if r[0] <= best * (1 + 1e-12) + 1e-12), key=lambda r: r[0])[1]
    points = np.array([centroids[labels == g].mean() for g in range(labels.max() + 1)])
    out = []
    for val in x:
        d = np.abs(points - val)
        out.append(points[int(np.flatnonzero(d == d.min())[0])])
    return np.array(out), points
